"""The shape every synthesizer has, as scikit-learn's estimators: ``fit(frame)``, then
``sample(n, random_state=...)``, and ``describe()`` saying how each column was modelled."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Self

import pandas as pd

from veil._deprecated import UNSET, renamed_seed
from veil.exceptions import InputError

__all__ = ["Synthesizer"]


class Synthesizer(ABC):
    """A model of a table that makes new rows like its rows.

    Subclasses implement ``_fit`` and ``_sample``; ``fit`` and ``sample`` take the seed as
    ``random_state`` (``seed=``, the name of earlier releases, is accepted with a
    ``DeprecationWarning``). ``differentially_private`` says whether fitting is charged to a
    privacy budget (then only what ``fit`` released is read by ``sample``).
    """

    method: ClassVar[str]
    differentially_private: ClassVar[bool] = False
    progress: Callable[[str], None]

    def fit(self, frame: pd.DataFrame, *, random_state: int | None = 0, seed: Any = UNSET) -> Self:
        """Learn the model from ``frame``; ``random_state`` fixes the fitting's random parts.

        Parameters
        ----------
        frame : DataFrame
            The real rows (never modified).
        random_state : int, optional
            Seed of the fitting's random parts.
        seed : int, optional
            Deprecated: ``random_state``.

        Returns
        -------
        Synthesizer
            This synthesizer, fitted.
        """
        self._fit(frame, renamed_seed(random_state, seed, "fit"))
        return self

    def sample(
        self, n: int | None = None, *, random_state: int | None = None, seed: Any = UNSET
    ) -> pd.DataFrame:
        """``n`` synthetic rows (default: as many as fitted); same seed, same rows.

        Parameters
        ----------
        n : int, optional
            Rows to make.
        random_state : int, optional
            Seed of the sampling (None: fresh randomness).
        seed : int, optional
            Deprecated: ``random_state``.

        Returns
        -------
        DataFrame
            The synthetic rows.
        """
        return self._sample(n, renamed_seed(random_state, seed, "sample"))

    @abstractmethod
    def _fit(self, frame: pd.DataFrame, random_state: int | None) -> None: ...

    @abstractmethod
    def _sample(self, n: int | None, random_state: int | None) -> pd.DataFrame: ...

    @abstractmethod
    def describe(self) -> list[str]:
        """One line per column: how it was modelled (for the command line and the report)."""


def refuse_held(series: pd.Series, what: str) -> None:
    """A column modelled by its values must hold no direct identifier, however rare (the scan
    decides on a sample, and one e-mail address in 30,000 rows is seldom in it): ``what`` its
    values become would hand it to a synthetic row. One line naming the rows and the way out."""
    from veil.scan.core import held_identifiers

    held = held_identifiers(series)
    if held is not None:
        raise InputError(
            f"column {series.name!r}: {held}, and {what}; name it in identifiers (new "
            "values), or leave it out"
        )
