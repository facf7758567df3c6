"""TVAE: the latent autoencoder's variational twin as a synthesizer (``veil synth --method
tvae``). The network (``veil.learn.latent``) encodes each row to a Gaussian in a ``dim``-
dimensional space and learns to decode it; new rows are decoded from the prior N(0, I):
categories drawn from the decoder's softmax, numbers its prediction plus the noise it left on
the training rows. Direct identifiers get fresh values, as every synthesizer of veil gives
them. Not differentially private: judge its rows with ``veil evaluate``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.progress import Progress
from veil.schema import is_continuous
from veil.synth._marginals import ColumnModel, Marginals, in_dtype, refuse_copies


class TVAE(Marginals):
    """A variational autoencoder of the table, sampled from its prior."""

    method = "tvae"

    def __init__(self, *, dim: int = 16, epochs: int = 100, **options: Any) -> None:
        super().__init__(**options)
        self.dim = dim
        self.epochs = epochs

    def _fit(self, frame: pd.DataFrame, seed: int | None) -> None:
        """The column models (for identifiers, dtypes and missing rates), then the network."""
        from veil.learn.latent._codec import TableCodec
        from veil.learn.latent._network import build, seeded, torch_module, train

        super()._fit(frame, seed)
        torch = torch_module()
        columns = [n for n, m in self.models_.items() if m.kind != "identifier"]
        self.codec_ = TableCodec.fit(frame[columns])
        codes, numbers = self.codec_.codes(frame[columns]), self.codec_.numbers(frame[columns])
        progress = self.progress if isinstance(self.progress, Progress) else None
        with seeded(seed or 0):
            self.network_ = build(
                self.codec_.cardinalities, len(self.codec_.numeric), self.dim, variational=True
            )
            self.training_ = train(
                self.network_, codes, numbers, seed=seed or 0, epochs=self.epochs, progress=progress
            )
            with torch.no_grad():
                mean, _ = self.network_.encode(torch.as_tensor(codes), torch.as_tensor(numbers))
                _, predicted = self.network_.decode(mean)
        self.noise_ = np.std(predicted.numpy() - numbers, axis=0) if numbers.shape[1] else None

    def _fit_column(
        self, series: pd.Series, missing: float, rng: np.random.Generator
    ) -> ColumnModel:
        """The network models the values: a column needs only its missing rate here (no
        distributions fitted), and the refusal of columns that would copy real values."""
        present = series.dropna()
        if not is_continuous(present):
            refuse_copies(series, present.value_counts())
        # whole numbers (an integer dtype, or codes stored as floats: 28.0) are drawn whole
        whole = pd.api.types.is_numeric_dtype(present) and not pd.api.types.is_bool_dtype(present)
        whole = whole and len(present) > 0 and bool(np.all(present == np.round(present)))
        return ColumnModel(str(series.name), "network", missing, integer=whole)

    def _sample(self, n: int | None, seed: int | None) -> pd.DataFrame:
        """``n`` rows decoded from the prior; same seed, same rows."""
        from veil.learn.latent._network import seeded, torch_module

        self._check_fitted()
        torch = torch_module()
        rows = self.n_rows_ if n is None else int(n)
        rng = np.random.default_rng(seed)
        with seeded(int(rng.integers(2**31))), torch.no_grad():
            logits, numbers = self.network_.decode(torch.randn(rows, self.dim))
        codes = []
        for name, block in zip(self.codec_.categorical, logits, strict=True):
            probabilities = torch.softmax(block, dim=1).numpy().astype(float)
            if name not in self.codec_.blanks:  # code 0, missing: never where none was
                probabilities[:, 0] = 0.0
                probabilities[:, 1:] += 1e-12  # a row whose every other code underflowed
            cumulative = probabilities.cumsum(axis=1)
            draws = rng.random((rows, 1)) * cumulative[:, -1:]
            codes.append((cumulative < draws).sum(axis=1).clip(0, block.shape[1] - 1))
        values = numbers.numpy().astype(float)
        if self.noise_ is not None:
            values = values + rng.normal(size=values.shape) * self.noise_
        decoded = self.codec_.decode(codes, values)
        out = {}
        for name, model in self.models_.items():
            blank = rng.random(rows) < model.missing
            if model.kind == "identifier":
                out[name] = self._fresh(model, rows, rng, blank).reset_index(drop=True)
            elif name in self.codec_.numeric:
                column = pd.Series(decoded[name]).mask(blank)
                column = column.round() if model.integer else column
                out[name] = in_dtype(column, self.dtypes_[name]).reset_index(drop=True)
            else:  # missing is one of its categories, drawn with the rest
                out[name] = in_dtype(pd.Series(decoded[name]), self.dtypes_[name])
        return pd.DataFrame(out)

    def describe(self) -> list[str]:
        """How it was modelled (for the CLI and the report)."""
        self._check_fitted()
        t = self.training_
        early = " (stopped early)" if t.stopped_early else ""
        lines = [
            f"variational autoencoder, {self.dim}-dimensional latent, "
            f"{len(self.codec_.categorical)} categorical and {len(self.codec_.numeric)} "
            f"numeric columns, {t.epochs} epochs in {t.seconds:.1f} s{early}"
        ]
        lines += [
            f"{n}: fresh identifiers" for n, m in self.models_.items() if m.kind == "identifier"
        ]
        return lines + [f"{c}: {why}" for c, why in self.left_out_.items()]
