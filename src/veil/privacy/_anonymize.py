"""``anonymize``: a policy applied to a table in memory and the release certified, by the one
release engine (``veil.privacy._passes``) over the table as a single batch: the table is its own
sample, the steps run once, and the writer holds the rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import pandas as pd

from veil.frequency import Frequencies
from veil.hierarchy import Hierarchy
from veil.io import beside, content_sha256
from veil.privacy import _passes as engine
from veil.privacy._passes import Passes, Written, release_in_passes, row_hashes, solution_space
from veil.privacy._plan import PolicyLike, shuffle_order
from veil.privacy.certificate import Release
from veil.privacy.space import MAX_NODES, SolutionSpace
from veil.progress import Progress, as_progress


class FramePasses(Passes):
    """A DataFrame as the release engine's source: one batch, its own sample; the release held
    in memory (shuffled in ``shuffle_order``'s order: the index labels go with their rows)."""

    whole = True

    def __init__(self, frame: pd.DataFrame, report: Progress) -> None:
        # rows are paired by index label between the input and the release (the free-text
        # scrub): labels that repeat are replaced by positions
        self.frame = frame if frame.index.is_unique else frame.reset_index(drop=True)
        self.report = report
        self.columns = list(frame.columns)
        self.rows = len(frame)
        self.hashed = row_hashes

    def sample(self, rows: int) -> pd.DataFrame:
        """The table itself: the policy is checked and the roles decided on every row."""
        return self.frame

    def fold(self, label: str, fn: engine.Fold, merge: engine.Merge, start: Any) -> Any:
        self.report.step(label)
        return merge(start, fn(self.frame, 0))

    def release(
        self,
        produce: engine.Produce,
        measured: list[str],
        seed: int | bool | None,
        columns: list[str],
    ) -> engine.Released:
        self.report.step("applying the release, shuffling rows and measuring it")
        # shuffled as the rows are made: each quasi-identifier's codes are taken in the new
        # order, not its released texts again (adult grown to 10M rows: 3.6 s less)
        order = (
            None
            if seed is False
            else partial(shuffle_order, random_state=None if seed is True else seed)
        )
        codes: dict[str, Any] = {}
        coded = getattr(produce, "coded", None)  # the engine's, with the codes of its texts
        if coded is not None:
            out, tallies, codes = coded(self.frame, order)
        else:
            out, tallies = produce(self.frame, order)
        self.report.step("certifying the release (a hash of every cell)")
        digest = beside(content_sha256, out)  # on the other core while the release is counted
        # counted from the codes the generalization made the texts from (the verification
        # counts the texts themselves, apart)
        counts = Frequencies.of(out, measured, codes=codes) if measured and len(out) else None
        written = Written(digest.result(), counts, len(out), list(out.columns), data=out)
        return written, [tallies]


def anonymize(
    data: pd.DataFrame,
    policy: PolicyLike | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
) -> Release:
    """Apply ``policy``'s steps to ``data`` (never modified) and certify the release.

    Parameters
    ----------
    data : pandas.DataFrame
        The table, in memory.
    policy : Policy, mapping, str or path, optional
        The policy (its object, dictionary or YAML file); none: every column's role and step
        as the scan decides.
    hierarchies : mapping of str to Hierarchy, optional
        Generalization hierarchies by column, over the policy's.
    progress : callable or Progress, optional
        Where the steps are reported.

    Returns
    -------
    Release
        The released rows (shuffled unless the policy keeps the order) and their certificate.

    Raises
    ------
    PolicyError
        When the policy does not fit the data (unknown column, untreated identifier, bad step
        parameter: the message says where in the policy).
    CheckFailedError
        When the release misses the policy's privacy goals.
    """
    passes = FramePasses(data, as_progress(progress))
    certificate = release_in_passes(passes, policy, hierarchies=hierarchies, progress=progress)
    written = passes.released
    assert written is not None
    assert written.data is not None
    return Release(written.data, certificate)


def explore(
    data: pd.DataFrame,
    policy: PolicyLike | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    limit: int = MAX_NODES,
    progress: Callable[[str], None] | Progress | None = None,
) -> SolutionSpace:
    """The solution space of ``policy``'s search on ``data`` (ARX's explore view): every
    generalization of the quasi-identifiers with its loss, the records it suppresses and
    whether it meets the goals, and the node ``anonymize`` would choose.

    Parameters
    ----------
    data : pandas.DataFrame
        The table, in memory (never modified).
    policy : Policy, mapping, str or path, optional
        The policy, with privacy goals; none: the scan's roles, which set no goal.
    hierarchies : mapping of str to Hierarchy, optional
        Generalization hierarchies by column, over the policy's.
    limit : int
        Nodes evaluated at most, lowest total level first (``SolutionSpace.complete`` says
        whether that was the whole lattice).
    progress : callable or Progress, optional
        Where the steps are reported.

    Returns
    -------
    SolutionSpace
        Every node, and the chosen one. To release another minimal node, set the policy's
        ``privacy.max_levels`` to its levels (``SolutionSpace.levels_of``).

    Raises
    ------
    PolicyError
        When the policy does not fit the data or sets no goal to search for.
    CheckFailedError
        When no node meets the goals.
    """
    passes = FramePasses(data, as_progress(progress))
    return solution_space(passes, policy, hierarchies=hierarchies, progress=progress, limit=limit)
