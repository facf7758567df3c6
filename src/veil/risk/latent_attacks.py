"""What a latent release still tells about people, measured beside its utility.

- Reconstruction, two attackers. White-box: holds the published decoder (or PCA's components)
  and decodes every released code. Insider: knows a few people's raw rows (1% by default)
  with their codes, fits an inverse map (k nearest neighbours in the latent space, a column at
  a time) and applies it to everyone else. Per quasi-identifier: the share recovered exactly
  (categories) or the mean absolute error (numbers, in the column's unit; dates in days),
  beside a baseline that knows only the marginals (the most common category; the median).
- Re-identification: each reconstructed row linked to the original table by Gower distance on
  the quasi-identifiers; the share whose one nearest row is itself (a tie is no link), beside
  the same for guesses drawn from the marginals.
- Membership: the attacker encodes a candidate's row with the published encoder and looks for
  the code in the release; the advantage (2 AUC - 1) over released rows against held-out ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.risk.distance import Encoder, unique_nearest

SAMPLE = 2_000  # rows re-identified (each compared with every original row)


def kinds_of(frame: pd.DataFrame, numeric: list[str]) -> dict[str, str]:
    """Each column's kind for the distance encoder: ``numeric`` ones, the rest categorical."""
    return {c: "numeric" if c in numeric else "categorical" for c in frame.columns}


def _numbers(series: pd.Series) -> np.ndarray:
    from veil.schema import as_numbers

    return as_numbers(series)


def scores(truth: pd.DataFrame, guess: pd.DataFrame, numeric: list[str]) -> dict[str, float]:
    """Per column: accuracy (categories; missing equals missing) or mean absolute error."""
    out: dict[str, float] = {}
    for column in truth.columns:
        if column in numeric:
            gap = np.abs(_numbers(truth[column]) - _numbers(guess[column].reset_index(drop=True)))
            out[column] = float(np.nanmean(gap))
        else:
            a = truth[column].astype("string").fillna("(missing)").to_numpy()
            b = guess[column].astype("string").fillna("(missing)").to_numpy()
            out[column] = float(np.mean(a == b))
    return out


def baseline(known: pd.DataFrame, truth: pd.DataFrame, numeric: list[str]) -> dict[str, float]:
    """The best guess from the marginals of ``known`` rows: the mode, or the median."""
    guess = {}
    for column in truth.columns:
        if column in numeric:
            values = _numbers(known[column])
            guess[column] = np.full(len(truth), np.nanmedian(values))
        else:
            mode = known[column].astype("string").fillna("(missing)").mode().iloc[0]
            guess[column] = np.full(len(truth), mode, dtype=object)
    frame = pd.DataFrame(guess)
    for column in numeric:
        if column in truth.columns and pd.api.types.is_datetime64_any_dtype(truth[column]):
            from veil.schema import DAY_NS

            frame[column] = pd.to_datetime((frame[column] * DAY_NS).astype("int64"))
    return scores(truth.reset_index(drop=True), frame, numeric)


def recovery(score: dict[str, float], base: dict[str, float], numeric: list[str]) -> float:
    """The mean share of the way from the baseline to a perfect guess (0: nothing beyond the
    marginals; 1: every value recovered)."""
    shares = []
    for column, value in score.items():
        if column in numeric:
            shares.append(1 - value / base[column] if base[column] > 0 else 0.0)
        else:
            shares.append((value - base[column]) / (1 - base[column]) if base[column] < 1 else 0.0)
    return float(np.mean(np.clip(shares, 0, 1))) if shares else 0.0


def insider(
    codes: np.ndarray, truth: pd.DataFrame, numeric: list[str], known: np.ndarray, seed: int
) -> pd.DataFrame:
    """The insider's guesses for every row (its known rows included, as it knows them)."""
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(codes[known])
    space = scaler.transform(codes)
    k = max(1, min(5, len(known) // 2))
    out: dict[str, np.ndarray] = {}
    for column in truth.columns:
        if column in numeric:
            model = KNeighborsRegressor(k, weights="distance").fit(
                space[known], np.nan_to_num(_numbers(truth[column].iloc[known]))
            )
            out[column] = model.predict(space)
        else:
            labels = truth[column].astype("string").fillna("(missing)").to_numpy()
            model = KNeighborsClassifier(k, weights="distance").fit(space[known], labels[known])
            out[column] = model.predict(space)
    frame = pd.DataFrame(out)
    for column in numeric:
        if pd.api.types.is_datetime64_any_dtype(truth[column]):
            from veil.schema import DAY_NS

            frame[column] = pd.to_datetime((frame[column] * DAY_NS).astype("int64"))
    return frame


def reidentification(
    truth: pd.DataFrame, guess: pd.DataFrame, numeric: list[str], rows: np.ndarray
) -> float:
    """The share of ``rows`` whose guessed quasi-identifiers link to themselves alone."""
    kinds = kinds_of(truth, numeric)
    prepared_truth, prepared_guess = _comparable(truth, numeric), _comparable(guess, numeric)
    encoder = Encoder(prepared_truth, kinds)
    reference = encoder.encode(prepared_truth)
    query = encoder.encode(prepared_guess.iloc[rows])
    return float(np.mean(unique_nearest(query, reference) == rows))


def _comparable(frame: pd.DataFrame, numeric: list[str]) -> pd.DataFrame:
    out: dict[str, object] = {}
    for column in frame.columns:
        if column in numeric:
            out[column] = _numbers(frame[column])
        else:
            out[column] = frame[column].astype("string").fillna("(missing)").astype(object)
    return pd.DataFrame(out)


def marginal_guesses(known: pd.DataFrame, rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """Rows drawn column by column from the marginals of ``known``."""
    return pd.DataFrame(
        {c: known[c].to_numpy()[rng.integers(0, len(known), rows)] for c in known.columns}
    )


def uniqueness(frame: pd.DataFrame) -> float:
    """The share of rows whose quasi-identifier combination no other row has."""
    from veil.frequency import class_sizes

    klass, sizes = class_sizes(frame, list(frame.columns))
    return float(np.mean(sizes[klass] == 1)) if len(frame) else 0.0


def membership_advantage(released: np.ndarray, members: np.ndarray, others: np.ndarray) -> float:
    """veil evaluate's membership advantage on codes: how near a candidate's code (from the
    published encoder) lies to a released one, members against held-out rows."""
    from veil.risk.distance import Encoder, nearest
    from veil.risk.distance import membership_advantage as advantage

    names = [f"c{i}" for i in range(released.shape[1])]
    space = Encoder(pd.DataFrame(released, columns=names), dict.fromkeys(names, "numeric"))
    target = space.encode(pd.DataFrame(released, columns=names))
    m = min(len(members), len(others))
    gaps = [
        nearest(space.encode(pd.DataFrame(x[:m], columns=names)), target)[0]
        for x in (members, others)
    ]
    return advantage(gaps[0], gaps[1])
