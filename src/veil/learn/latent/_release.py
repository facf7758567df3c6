"""``mask_latent``: a table released as latent codes (an autoencoder's or PCA's), with the
utility kept and what the codes still reveal measured side by side."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil._deprecated import UNSET, renamed_seed
from veil._html import Shown
from veil.exceptions import ParameterError
from veil.learn.latent._codec import TableCodec
from veil.learn.latent._network import Training
from veil.progress import Progress
from veil.risk import latent_attacks as _attacks

METHODS = ("autoencoder", "pca")
INVERTIBLE_RECOVERY = 0.5  # mean share of the way from the marginals to the truth
INVERTIBLE_LINKS = 0.05  # share of rows re-identified (and at least twice the baseline)
#: membership advantage (2 AUC - 1) from which the published encoder tells who was in the table
MEMBERSHIP_LIMIT = 0.25


@dataclass
class LatentRelease(Shown):
    """The release (codes, the target, the columns kept) and what was measured about it."""

    data: pd.DataFrame
    method: str
    dim: int
    utility: dict[str, Any]
    attacks: dict[str, Any]
    invertible: bool
    epsilon: float | None
    delta: float | None
    quasi_identifiers: list[str]
    rows: dict[str, int]
    notes: list[str] = field(default_factory=list)
    training: Training | None = None
    explained_variance: float | None = None
    seconds: float = 0.0
    embeddings: dict[str, tuple[list[str], np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def membership_disclosed(self) -> bool:
        """With the encoder published, whether a person was in the table is told apart from
        the codes (the membership advantage reaches ``MEMBERSHIP_LIMIT``)."""
        advantage = self.attacks.get("membership_advantage")
        return advantage is not None and advantage >= MEMBERSHIP_LIMIT

    @property
    def disclosive(self) -> bool:
        """Invertible or disclosing membership: ``veil mask-latent`` writes such a release only
        with ``--allow-invertible``."""
        return self.invertible or self.membership_disclosed

    @property
    def label(self) -> str:
        """What the release is called wherever it is shown: never "anonymized"."""
        if self.invertible:
            return "INVERTIBLE: the codes give the quasi-identifiers back; not anonymized"
        if self.membership_disclosed:
            return (
                f"INVERTIBLE (membership): with the encoder, who was in the table is told "
                f"apart (advantage {self.attacks['membership_advantage']:.2f}); "
                "not anonymized"
            )
        return "not inverted by the attacks measured (a measurement, not a guarantee)"

    @property
    def advice(self) -> str:
        """What to try when the release is disclosive. Quasi-identifiers recovered: less code
        (a smaller dim), DP-SGD, no trees in the encoder. Membership alone comes from each code
        being a fixed function of its row: whoever holds the encoder and a person's row finds
        that code in the release, whatever the training (adult: 0.84 with dim 2 or 3,
        supervised or not, DP-SGD at epsilon 3): only keeping the encoder private helps."""
        if not self.invertible and self.membership_disclosed:
            return (
                "no training setting changes membership (each code is a fixed function of "
                "its row): keep the encoder private (veil writes only the codes), and pass "
                "--allow-invertible if that is the release you mean"
            )
        tries = []
        if self.epsilon is None and self.method == "autoencoder":
            tries.append("--epsilon 3 (DP-SGD)")
        if self.dim > 2:
            tries.append(f"a smaller --dim (now {self.dim})")
        if self.method == "pca":
            tries.append("--method autoencoder (PCA keeps the directions of most variance)")
        if self.notes and any("gradient boosting" in n for n in self.notes):
            tries.append("--unsupervised (no trees fitted on the released rows in the encoder)")
        return "try " + ("; ".join(tries) or "a smaller --dim")

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``veil mask-latent --format json``."""
        training = None
        if self.training is not None:
            t = self.training
            training = {
                "epochs": t.epochs,
                "stopped_early": t.stopped_early,
                "seconds": round(t.seconds, 2),
                "noise_multiplier": t.noise_multiplier,
                "max_grad_norm": t.max_grad_norm,
            }
        return {
            "method": self.method,
            "dim": self.dim,
            "utility": self.utility,
            "attacks": self.attacks,
            "invertible": self.invertible,
            "membership_disclosed": self.membership_disclosed,
            "label": self.label,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "quasi_identifiers": self.quasi_identifiers,
            "rows": self.rows,
            "explained_variance": self.explained_variance,
            "training": training,
            "notes": self.notes,
            "seconds": round(self.seconds, 2),
        }


def _identifiers(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Direct identifiers (never encoded: a code would carry them) and quasi-identifiers, as
    veil's scan reads the table."""
    from veil.scan import scan
    from veil.schema import ColumnRole

    found = scan(frame).columns
    direct = [str(c.name) for c in found if c.role is ColumnRole.IDENTIFIER]
    quasi = [str(c.name) for c in found if c.role is ColumnRole.QUASI_IDENTIFIER]
    return direct, quasi


def mask_latent(
    frame: pd.DataFrame,
    *,
    dim: int | str,
    method: str = "autoencoder",
    target: str | None = None,
    keep: Sequence[str] = (),
    quasi_identifiers: Sequence[str] | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    accountant: Any = None,
    holdout_fraction: float = 0.2,
    insider_share: float = 0.01,
    random_state: int = 0,
    epochs: int | None = None,
    supervised: bool = True,
    keep_order: bool = False,
    progress: Progress | None = None,
    seed: Any = UNSET,
) -> LatentRelease:
    """Release ``frame`` as ``dim`` latent columns (plus ``target`` and the ``keep`` columns
    as they are), fitted on all but ``holdout_fraction`` of the rows; the held-out rows
    measure utility and membership. ``epsilon`` trains the autoencoder with DP-SGD, charged
    with ``delta`` (default 1 / (10 n)) to ``accountant``. With a ``target`` (and
    ``supervised``), the autoencoder also learns to predict it from the code, so the code
    keeps what predicts the target (which is released anyway), and without ``epsilon`` its
    encoder reads gradient boosting's score of the target too (:class:`_Booster`).
    ``random_state`` seeds the split, the training and the attacks (``seed``: its old name,
    deprecated).

    The released rows are shuffled with fresh randomness from the operating system (never
    ``random_state``, which is public by default) and renumbered, as ``anonymize`` does: in the
    input's order, anyone who knows it (sequential ids) links each code to its person without an
    attack. ``keep_order`` keeps it, with a note."""
    start = time.perf_counter()
    random_state = renamed_seed(random_state, seed, "mask_latent")
    _check(frame, method, target, keep, quasi_identifiers, epsilon, accountant, holdout_fraction)
    columns = _Columns.of(frame, target, keep, quasi_identifiers)
    inputs, notes = columns.inputs, list(columns.notes)
    order = np.random.default_rng(random_state).permutation(len(frame))
    cut = round(len(frame) * holdout_fraction)
    train = frame.iloc[np.sort(order[cut:])]
    holdout = frame.iloc[np.sort(order[:cut])]
    codec = TableCodec.fit(train[inputs])
    width = len(inputs) if method == "autoencoder" else codec.one_hot(train.head(1)).shape[1]
    size = _dimension(dim, width, method)
    fitted = _fit(
        method,
        codec,
        train[inputs],
        size,
        seed=random_state,
        epochs=epochs,
        epsilon=epsilon,
        delta=delta if delta is not None else 1 / (10 * len(train)),
        accountant=accountant,
        progress=progress,
        labels=train[target] if target and supervised else None,
    )
    codes = fitted.encode(train[inputs])
    data = _released(train, codes, [target, *keep] if target else list(keep), keep_order, notes)
    held_codes = fitted.encode(holdout[inputs]) if len(holdout) else np.empty((0, size))
    utility = _utility(train, holdout, codec, target, codes, held_codes, random_state)
    attacks = _measure(
        train,
        columns.qis,
        columns.clear,
        codec,
        codes,
        held_codes,
        fitted,
        insider_share,
        random_state,
    )
    notes += _training_notes(fitted, method, target if supervised else None, epsilon)
    return LatentRelease(
        data,
        method,
        codes.shape[1],
        utility,
        attacks,
        _invertible(attacks),
        fitted.training.epsilon if fitted.training else None,
        fitted.training.delta if fitted.training else None,
        columns.qis,
        {"released": len(train), "holdout": len(holdout), "features": len(inputs)},
        notes,
        fitted.training,
        fitted.explained_variance,
        time.perf_counter() - start,
        fitted.embeddings(),
    )


def _invertible(attacks: dict[str, Any]) -> bool:
    """Whether the attacks recover the quasi-identifiers, or re-identify rows well above the
    baseline, from the codes."""
    base_links = attacks["reidentification_baseline"]
    return bool(
        attacks["recovery"] >= INVERTIBLE_RECOVERY
        or (attacks["reidentification_rate"] >= max(INVERTIBLE_LINKS, 2 * base_links))
    )


def _check(
    frame: pd.DataFrame,
    method: str,
    target: str | None,
    keep: Sequence[str],
    quasi_identifiers: Sequence[str] | None,
    epsilon: float | None,
    accountant: Any,
    holdout_fraction: float,
) -> None:
    """``mask_latent``'s parameters, each refused in one line that names it."""
    if method not in METHODS:
        raise ParameterError(f"--method must be one of {METHODS}, got {method!r}")
    for name, given in (
        ("--target", [target] if target else []),
        ("--keep", list(keep)),
        ("--quasi-identifiers", list(quasi_identifiers or [])),
    ):
        missing = [c for c in given if c not in frame.columns]
        if missing:
            raise ParameterError(
                f"{name}: {missing[0]!r} is not a column of the data; columns: "
                f"{', '.join(map(str, frame.columns))}"
            )
    if epsilon is not None and method != "autoencoder":
        raise ParameterError(
            "--epsilon trains the autoencoder with DP-SGD; --method pca has no "
            "DP training here (veil.dp.models.PCA is DP PCA)"
        )
    if epsilon is not None and accountant is None:
        raise ParameterError("a DP-trained release is charged to a budget: give an accountant")
    if not 0 <= holdout_fraction < 1:
        raise ParameterError(f"--holdout-fraction must be in [0, 1), got {holdout_fraction}")


@dataclass
class _Columns:
    """What is encoded (``inputs``), the quasi-identifiers the attacks know (``qis``), those
    released in clear (``clear``), and what was left out, said in ``notes``."""

    inputs: list[str]
    qis: list[str]
    clear: list[str]
    notes: list[str]

    @classmethod
    def of(
        cls,
        frame: pd.DataFrame,
        target: str | None,
        keep: Sequence[str],
        quasi_identifiers: Sequence[str] | None,
    ) -> _Columns:
        direct, scanned = _identifiers(frame)
        notes: list[str] = []
        inputs = [c for c in frame.columns if c != target and c not in keep and c not in direct]
        left_out = [c for c in direct if c != target and c not in keep]
        if left_out:
            notes.append(f"direct identifiers left out (never encoded): {', '.join(left_out)}")
        if not inputs:
            raise ParameterError(
                "no numeric or categorical features are left to encode (the "
                "target, --keep and direct identifiers removed)"
            )
        qis = [c for c in (quasi_identifiers or scanned) if c in inputs] or list(inputs)
        clear = [c for c in (quasi_identifiers or scanned) if c in keep]
        if clear:
            notes.append(
                f"quasi-identifiers released in clear by --keep: {', '.join(clear)}; "
                "re-identification uses them as they are"
            )
        return cls(inputs, qis, clear, notes)


def _released(
    train: pd.DataFrame, codes: np.ndarray, kept: list[str], keep_order: bool, notes: list[str]
) -> pd.DataFrame:
    """The released rows: the codes and the columns kept, shuffled with fresh randomness from
    the operating system unless ``keep_order`` (said in ``notes``)."""
    names = [f"latent{i + 1}" for i in range(codes.shape[1])]
    data = pd.DataFrame(codes, index=train.index, columns=names)
    for column in kept:
        data[column] = train[column]
    if keep_order:
        notes.append(
            "rows kept in the input's order (keep_order): whoever knows that order "
            "links each code to its person"
        )
        return data
    order = np.random.default_rng(secrets.randbits(128)).permutation(len(data))
    return data.iloc[order].reset_index(drop=True)


def _training_notes(
    fitted: Any, method: str, target: str | None, epsilon: float | None
) -> list[str]:
    """What the release's notes say of how the encoder was trained (``target``: the one it
    learned to predict, if supervised)."""
    notes = []
    if target and method == "autoencoder":
        notes.append(
            f"the autoencoder learned to predict {target!r} from the code too (a "
            "supervised autoencoder): the code keeps what predicts it"
        )
        if getattr(fitted, "booster", None) is not None:
            notes.append(
                f"the encoder reads gradient boosting's score of {target!r} beside "
                "the columns (trees fitted on the released rows, cross-fitted while "
                "the network learned): the trees are part of the published encoder"
            )
    if epsilon is not None:
        notes.append(
            "epsilon covers the encoder's weights (DP-SGD); each released code is "
            "still computed from its own row, so the attacks above measure what the "
            "codes reveal"
        )
        notes.append(
            "Opacus draws DP-SGD's noise from torch's generator, not a "
            "cryptographically secure one (its secure_mode needs torchcsprng, which "
            "has no build for torch 2.13)"
        )
    return notes


def _dimension(dim: int | str, width: int, method: str) -> int:
    if dim == "all":
        if method != "pca":
            raise ParameterError(
                "--dim all keeps every principal component: it applies to --method pca"
            )
        return width
    try:
        size = int(dim)
    except ValueError as err:
        raise ParameterError(f"--dim must be a whole number or 'all', got {dim!r}") from err
    if not 1 <= size < width:
        what = "columns" if method == "autoencoder" else "one-hot columns"
        also = " or --dim all" if method == "pca" else ""
        raise ParameterError(
            f"--dim {size}: the data has {width} features to encode ({what}); "
            f"a latent of as many or more keeps everything; choose 1 to "
            f"{width - 1}{also}"
        )
    return size


class _Fitted:
    """An encoder and its decoder (what a white-box attacker holds)."""

    training: Training | None = None
    explained_variance: float | None = None

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        raise NotImplementedError

    def decode(self, codes: np.ndarray) -> pd.DataFrame:
        raise NotImplementedError

    def embeddings(self) -> dict[str, tuple[list[str], np.ndarray]]:
        return {}


class _PCA(_Fitted):
    def __init__(self, codec: TableCodec, frame: pd.DataFrame, size: int, seed: int) -> None:
        from veil.transforms import PCAMask

        self.codec = codec
        design = codec.one_hot(frame)
        self.mask = PCAMask(
            columns=list(design.columns), n_components=size, prefix="latent", random_state=seed
        ).fit(design)
        self.explained_variance = float(np.sum(self.mask.explained_variance_ratio_))

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        design = self.codec.one_hot(frame)
        return self.mask.transform(design)[self.mask.component_names()].to_numpy()

    def decode(self, codes: np.ndarray) -> pd.DataFrame:
        matrix = self.mask.scaler_.inverse_transform(self.mask.pca_.inverse_transform(codes))
        return self.codec.from_one_hot(matrix)


class _Autoencoder(_Fitted):
    def __init__(
        self,
        codec: TableCodec,
        frame: pd.DataFrame,
        size: int,
        seed: int,
        epochs: int | None,
        dp: tuple[float, float] | None,
        labels: pd.Series | None,
        progress: Progress | None,
    ) -> None:
        from veil.learn.latent._network import build, seeded, torch_module, train
        from veil.learn.utility import _task

        self.torch = torch_module()
        self.codec = codec
        self.booster: _Booster | None = None
        target, outputs, extra = None, 0, None
        if labels is not None and _task(labels) == "classification":
            _, target = np.unique(labels.astype(str).to_numpy(), return_inverse=True)
            outputs = int(target.max()) + 1
        elif labels is not None:
            target = TableCodec.fit(labels.to_frame()).numbers(labels.to_frame())[:, 0]
            outputs = 1
        if target is not None and dp is None and _Booster.usable(target, outputs > 1):
            # not with DP: the trees would see the rows outside DP-SGD's accountant
            self.booster = _Booster(codec, frame, target, outputs > 1, seed)
            extra = self.booster.cross_fitted
        with seeded(seed):
            self.model = build(
                codec.cardinalities,
                len(codec.numeric),
                size,
                target=outputs,
                inputs=0 if extra is None else extra.shape[1],
            )
            self.training = train(
                self.model,
                codec.codes(frame),
                codec.numbers(frame),
                seed=seed,
                labels=target,
                extra=extra,
                dp=dp,
                progress=progress,
                epochs=epochs or (20 if dp else 60),
            )

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        torch = self.torch
        extra = None if self.booster is None else torch.as_tensor(self.booster.scores(frame))
        with torch.no_grad():
            code, _ = self.model.encode(
                torch.as_tensor(self.codec.codes(frame)),
                torch.as_tensor(self.codec.numbers(frame)),
                extra,
            )
        return np.asarray(code.numpy(), dtype=np.float64)

    def decode(self, codes: np.ndarray) -> pd.DataFrame:
        torch = self.torch
        with torch.no_grad():
            logits, numbers = self.model.decode(torch.as_tensor(codes, dtype=torch.float32))
        return self.codec.decode([x.argmax(dim=1).numpy() for x in logits], numbers.numpy())

    def embeddings(self) -> dict[str, tuple[list[str], np.ndarray]]:
        out = {}
        for j, name in enumerate(self.codec.categorical):
            first = 0 if name in self.codec.blanks else 1  # "(missing)" only where it occurred
            weights = self.model.embeddings[j].weight.detach().numpy()[first:].copy()
            out[name] = (self.codec.categories[name][first:], weights)
        return out


class _Booster:
    """Gradient boosting's score of the target as an input of the supervised encoder, as boosted
    trees feed a network in He et al. (2014): a network alone predicts adult's income at ROC-AUC
    ~0.90, the trees at 0.93, and a code can keep only what its encoder can compute. The network
    learns from scores cross-fitted on the rows (each row's from trees that never saw it), so it
    trusts them as much as a new row's; rows are then encoded with trees fitted on them all
    (part of the published encoder a white-box attacker holds)."""

    def __init__(
        self, codec: TableCodec, frame: pd.DataFrame, y: np.ndarray, classify: bool, seed: int
    ) -> None:
        """``y``: class numbers, or a number's normal scores (what the network's head learns)."""
        from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

        self.codec = codec
        self.model = _boosted(codec, classify, seed)
        x = design(codec, frame)
        folds = (StratifiedKFold if classify else KFold)(5, shuffle=True, random_state=seed)
        how = "decision_function" if classify else "predict"
        scores = _columns(cross_val_predict(self.model, x, y, cv=folds, method=how))
        self.model.fit(x, y)
        self.how = how
        self.mean, self.scale = scores.mean(axis=0), scores.std(axis=0) + 1e-12
        self.cross_fitted = ((scores - self.mean) / self.scale).astype(np.float32)

    @staticmethod
    def usable(y: np.ndarray, classify: bool) -> bool:
        """Enough rows to cross-fit: 5 folds of 10 rows, each class in every fold."""
        return len(y) >= 50 and (not classify or int(np.bincount(y).min()) >= 5)

    def scores(self, frame: pd.DataFrame) -> np.ndarray:
        """Standardized scores of ``frame``'s rows from the trees fitted on every row."""
        raw = _columns(getattr(self.model, self.how)(design(self.codec, frame)))
        return ((raw - self.mean) / self.scale).astype(np.float32)


def _columns(scores: np.ndarray) -> np.ndarray:
    return scores.reshape(len(scores), -1).astype(float)


def design(codec: TableCodec, frame: pd.DataFrame) -> np.ndarray:
    """The raw features as gradient boosting reads them: numbers, then category codes."""
    return np.column_stack([codec.numbers(frame), codec.codes(frame)])


def _boosted(codec: TableCodec | None, classify: bool, seed: int) -> Any:
    """scikit-learn's histogram gradient boosting; with a codec, its categories are split
    natively (those with at most 255 codes, what its bins hold)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    kind = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
    if codec is None:
        return kind(random_state=seed)
    flags = [False] * len(codec.numeric) + [n <= 255 for n in codec.cardinalities]
    return kind(random_state=seed, categorical_features=flags)


def _fit(
    method: str,
    codec: TableCodec,
    frame: pd.DataFrame,
    size: int,
    *,
    seed: int,
    epochs: int | None,
    epsilon: float | None,
    delta: float,
    accountant: Any,
    labels: pd.Series | None,
    progress: Progress | None,
) -> _Fitted:
    if method == "pca":
        return _PCA(codec, frame, size, seed)
    if epsilon is None:
        return _Autoencoder(codec, frame, size, seed, epochs, None, labels, progress)
    from veil.dp.budget import check_epsilon_delta, dataset_id

    check_epsilon_delta(epsilon, delta)
    what = f"mask-latent: autoencoder trained with DP-SGD (dim {size})"
    with accountant.spend(epsilon, delta, what=what, dataset=dataset_id(frame)):
        return _Autoencoder(codec, frame, size, seed, epochs, (epsilon, delta), labels, progress)


def _utility(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    codec: TableCodec,
    target: str | None,
    codes: np.ndarray,
    test_codes: np.ndarray,
    seed: int,
) -> dict[str, Any]:
    """The same classifier on the raw features and on the codes, trained on the released rows,
    scored on the held-out ones: gradient boosting (scikit-learn's, categories split natively
    on the raw side), and a linear model beside it (one-hot raw features; codes scaled)."""
    if target is None:
        return {"metric": None, "raw": None, "latent": None, "reason": "no --target"}
    if len(holdout) < 10:
        return {
            "metric": None,
            "raw": None,
            "latent": None,
            "reason": "too few held-out rows: raise --holdout-fraction",
        }
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from veil.learn.utility import _task

    task = _task(train[target])
    classify = task != "regression"
    linear = LogisticRegression(max_iter=2_000) if classify else Ridge()
    metric, raw_score = _score(
        _boosted(codec, classify, seed),
        design(codec, train),
        design(codec, holdout),
        train[target],
        holdout[target],
        task,
    )
    _, latent_score = _score(
        _boosted(None, classify, seed), codes, test_codes, train[target], holdout[target], task
    )
    scaled = make_pipeline(StandardScaler(), linear)
    linear_raw = _score(
        scaled,
        codec.one_hot(train).to_numpy(),
        codec.one_hot(holdout).to_numpy(),
        train[target],
        holdout[target],
        task,
    )[1]
    linear_latent = _score(scaled, codes, test_codes, train[target], holdout[target], task)[1]
    return {
        "metric": metric,
        "raw": raw_score,
        "latent": latent_score,
        "model": "gradient boosting",
        "linear": {"raw": linear_raw, "latent": linear_latent},
    }


def _score(
    model: Any,
    x_train: np.ndarray,
    x_test: np.ndarray,
    y_train: pd.Series,
    y_test: pd.Series,
    task: str,
) -> tuple[str, float]:
    """(metric, value) of ``model`` fitted on the training rows, on the test rows: R² for a
    number, ROC-AUC for two classes, else accuracy."""
    from sklearn.base import clone
    from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

    model = clone(model)
    if task == "regression":
        model.fit(x_train, y_train.astype(float))
        return "r2", float(r2_score(y_test.astype(float), model.predict(x_test)))
    truth = y_test.astype(str).to_numpy()
    model.fit(x_train, y_train.astype(str).to_numpy())
    if len(model.classes_) == 2 and len(set(truth)) == 2:
        positive = model.predict_proba(x_test)[:, 1]
        return "roc_auc", float(roc_auc_score(truth == model.classes_[1], positive))
    return "accuracy", float(accuracy_score(truth, model.predict(x_test)))


def _measure(
    train: pd.DataFrame,
    qis: list[str],
    clear: list[str],
    codec: TableCodec,
    codes: np.ndarray,
    held_codes: np.ndarray,
    fitted: _Fitted,
    insider_share: float,
    seed: int,
) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 1)
    truth = train[qis].reset_index(drop=True)
    numeric = [c for c in qis if c in codec.numeric]
    white = fitted.decode(codes)[qis]
    known = rng.choice(len(train), max(10, round(insider_share * len(train))), replace=False)
    unknown = np.setdiff1d(np.arange(len(train)), known)
    inside = _attacks.insider(codes, truth, numeric, known, seed)
    base = _attacks.baseline(truth, truth.iloc[unknown], numeric)  # public marginals
    hidden = truth.iloc[unknown].reset_index(drop=True)
    white_scores = _attacks.scores(hidden, white.iloc[unknown].reset_index(drop=True), numeric)
    inside_scores = _attacks.scores(hidden, inside.iloc[unknown].reset_index(drop=True), numeric)
    linked = [*qis, *clear]
    everyone = train[linked].reset_index(drop=True)
    rows = np.sort(rng.choice(unknown, min(_attacks.SAMPLE, len(unknown)), replace=False))

    def with_clear(guess: pd.DataFrame) -> pd.DataFrame:
        out = guess.reset_index(drop=True).copy()
        for column in clear:
            out[column] = everyone[column]
        return out[linked]

    numeric_linked = [
        c
        for c in linked
        if c in numeric or (c in clear and pd.api.types.is_numeric_dtype(train[c]))
    ]
    rates = {
        name: _attacks.reidentification(everyone, with_clear(guess), numeric_linked, rows)
        for name, guess in (("white_box", white), ("insider", inside))
    }
    guesses = _attacks.marginal_guesses(truth, len(truth), rng)
    random_rate = _attacks.reidentification(everyone, with_clear(guesses), numeric_linked, rows)
    membership = None
    if len(held_codes) >= 10:
        picked = rng.choice(len(codes), min(len(codes), len(held_codes)), replace=False)
        members = fitted.encode(train.iloc[np.sort(picked)])  # the attacker encodes them
        membership = _attacks.membership_advantage(codes, members, held_codes)
    recovery = max(
        _attacks.recovery(white_scores, base, numeric),
        _attacks.recovery(inside_scores, base, numeric),
    )
    return {
        "reconstruction": {
            "white_box": white_scores,
            "insider": inside_scores,
            "baseline": base,
            "metric": {c: "mae" if c in numeric else "accuracy" for c in qis},
        },
        "recovery": recovery,
        "reidentification_rate": max(rates.values()),
        "reidentification": rates,
        "reidentification_baseline": random_rate,
        "uniqueness": _attacks.uniqueness(everyone),
        "membership_advantage": membership,
        "insider_rows": len(known),
    }
