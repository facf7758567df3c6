"""Test data from a schema alone, no real rows: Faker per column in a locale, categorical and
numeric distributions, and scikit-learn's ``make_classification`` / ``make_blobs``.

    locale: en_KE
    rows: 1000
    columns:
      gender:  {choice: {Female: 0.52, Male: 0.48}}
      name:    {faker: name, gender_column: gender, unique: true}   # names follow the gender
      email:   {faker: email, name_column: name}                    # built from the name
      county:  {choice: {Nairobi: 0.4, Mombasa: 0.25, Kisumu: 0.2, Nakuru: 0.15}}
      age:     {distribution: norm, params: {loc: 40, scale: 12}, min: 18, max: 90, integer: true}
      income:  {distribution: lognorm, params: [0.6, 0, 30000], missing: 0.05}
      joined:  {date: {start: 2015-01-01, end: 2024-12-31}}
      kra_pin: {pattern: "A#########?"}

``kind: classification`` (``features``, ``informative``, ``classes``, ``weights``, ``target``)
and ``kind: blobs`` (``centers``, ``features``, ``std``, ``target``) make scikit-learn's test
tables instead. A column reading another (``gender_column``, ``name_column``) comes after it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from veil._deprecated import UNSET, renamed_seed
from veil.exceptions import InputError, ParameterError
from veil.transforms.fake import Fake

_KINDS = ("table", "classification", "blobs")
_COLUMN_FORMS = ("faker", "choice", "pattern", "date", "distribution")


def load_schema(source: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """A schema from a mapping or a YAML file, its top-level keys checked."""
    if isinstance(source, Mapping):
        schema = dict(source)
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{path}: no such schema file")
        try:
            schema = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as err:
            raise InputError(f"{path}: not valid YAML ({err.__class__.__name__})") from err
    if not isinstance(schema, dict):
        raise ParameterError("a schema is a mapping with columns (or kind: classification/blobs)")
    known = {
        "locale",
        "rows",
        "seed",
        "kind",
        "columns",
        "features",
        "informative",
        "classes",
        "weights",
        "centers",
        "std",
        "target",
    }
    unknown = set(schema) - known
    if unknown:
        raise ParameterError(f"schema: unknown keys {sorted(unknown)}")
    kind = schema.get("kind", "table")
    if kind not in _KINDS:
        raise ParameterError(f"schema kind must be one of {list(_KINDS)}, got {kind!r}")
    if kind == "table" and not schema.get("columns"):
        raise ParameterError(
            "schema: give columns (name: {faker|choice|pattern|date|"
            "distribution: ...}), or kind: classification or blobs"
        )
    return schema


def from_schema(
    source: Mapping[str, Any] | str | os.PathLike[str],
    rows: int | None = None,
    *,
    random_state: int | None = None,
    seed: Any = UNSET,
) -> pd.DataFrame:
    """``rows`` rows (default: the schema's ``rows``, else 1,000) made from ``source``,
    seeded by ``random_state`` (else the schema's ``seed``; the keyword ``seed`` is its old
    name, deprecated)."""
    seed = renamed_seed(random_state, seed, "from_schema")
    schema = load_schema(source)
    n = int(rows if rows is not None else schema.get("rows", 1000))
    if n < 1:
        raise ParameterError(f"rows must be at least 1, got {n}")
    seed = seed if seed is not None else schema.get("seed")
    kind = schema.get("kind", "table")
    if kind != "table":
        return _sklearn(kind, schema, n, seed)
    rng = np.random.default_rng(seed)
    locale = schema.get("locale", "en_KE")
    frame = pd.DataFrame(index=range(n))
    columns = _in_dependency_order(schema["columns"])
    for name in columns:
        spec = schema["columns"][name]
        if not isinstance(spec, Mapping):
            raise ParameterError(
                f"schema column {name!r}: give a mapping such as "
                "{faker: name} or {choice: {A: 0.5, B: 0.5}}"
            )
        forms = [f for f in _COLUMN_FORMS if f in spec]
        if len(forms) != 1:
            raise ParameterError(
                f"schema column {name!r}: give exactly one of "
                f"{list(_COLUMN_FORMS)}, got {forms or 'none'}"
            )
        values = _column(str(name), forms[0], spec, frame, n, rng, locale)
        missing = float(spec.get("missing", 0))
        if not 0 <= missing < 1:
            raise ParameterError(f"schema column {name!r}: missing must be in [0, 1)")
        if missing:
            values = values.mask(rng.random(n) < missing)
        frame[name] = values.to_numpy()
    return frame[list(schema["columns"])]  # in the schema's order


def _in_dependency_order(columns: Mapping[str, Any]) -> list[str]:
    """The columns, each after the ones it reads (``gender_column``, ``name_column``)."""
    reads = {}
    for name, spec in columns.items():
        needs = [
            spec.get(k)
            for k in ("gender_column", "name_column")
            if isinstance(spec, Mapping) and spec.get(k) is not None
        ]
        for other in needs:
            if other not in columns:
                raise ParameterError(
                    f"schema column {name!r} reads {other!r}, which the schema does not have"
                )
        reads[name] = needs
    order: list[str] = []
    while len(order) < len(columns):
        ready = [c for c in columns if c not in order and all(d in order for d in reads[c])]
        if not ready:
            stuck = [c for c in columns if c not in order]
            raise ParameterError(f"schema columns {stuck} read each other in a circle")
        order += ready
    return order


def _column(
    name: str,
    form: str,
    spec: Mapping[str, Any],
    frame: pd.DataFrame,
    n: int,
    rng: np.random.Generator,
    locale: str,
) -> pd.Series:
    if form == "distribution":
        return _numbers(name, spec, n, rng)
    options: dict[str, Any] = {
        "locale": spec.get("locale", locale),
        "consistent": False,
        "unique": bool(spec.get("unique", False)),
        "random_state": int(rng.integers(2**31)),
    }
    if form == "faker":
        options["kind"] = str(spec["faker"])
        options["gender_column"] = spec.get("gender_column")
        options["name_column"] = spec.get("name_column")
    elif form == "choice":
        choices = spec["choice"]
        options["kind"] = "choice"
        if isinstance(choices, Mapping):
            options["choices"] = list(choices)
            options["probabilities"] = [float(p) for p in choices.values()]
        else:
            options["choices"] = list(choices)
    elif form == "pattern":
        options.update(kind="pattern", pattern=str(spec["pattern"]))
    else:
        bounds = spec["date"] if isinstance(spec["date"], Mapping) else {}
        options.update(kind="date", start=bounds.get("start"), end=bounds.get("end"))
    work = frame.copy()
    work[name] = "x"  # a value for each row to replace; every row gets its own fake
    try:
        return Fake([name], **options).fit_transform(work)[name]
    except ParameterError as err:
        raise ParameterError(f"schema column {name!r}: {err}") from err


def _numbers(name: str, spec: Mapping[str, Any], n: int, rng: np.random.Generator) -> pd.Series:
    family = getattr(stats, str(spec["distribution"]), None)
    if not isinstance(family, (stats.rv_continuous, stats.rv_discrete)):
        raise ParameterError(
            f"schema column {name!r}: {spec['distribution']!r} is not a scipy.stats "
            "distribution (e.g. norm, lognorm, gamma, poisson)"
        )
    params = spec.get("params", {})
    try:
        frozen = family(**params) if isinstance(params, Mapping) else family(*params)
        values = np.asarray(frozen.rvs(size=n, random_state=rng), dtype=float)
    except (TypeError, ValueError) as err:
        raise ParameterError(
            f"schema column {name!r}: params {params!r} do not fit {spec['distribution']} ({err})"
        ) from err
    values = np.clip(values, spec.get("min", -np.inf), spec.get("max", np.inf))
    if spec.get("integer"):
        return pd.Series(np.round(values)).astype("int64")
    return pd.Series(values)


def _sklearn(kind: str, schema: Mapping[str, Any], n: int, seed: int | None) -> pd.DataFrame:
    from sklearn.datasets import make_blobs, make_classification

    target = str(schema.get("target", "target"))
    features = int(schema.get("features", 5 if kind == "classification" else 2))
    try:
        if kind == "classification":
            x, y = make_classification(
                n_samples=n,
                n_features=features,
                n_informative=int(schema.get("informative", min(3, features))),
                n_redundant=0,
                n_classes=int(schema.get("classes", 2)),
                weights=schema.get("weights"),
                random_state=seed,
            )
        else:
            x, y = make_blobs(
                n_samples=n,
                n_features=features,
                centers=schema.get("centers", 3),
                cluster_std=float(schema.get("std", 1.0)),
                random_state=seed,
            )
    except ValueError as err:
        raise ParameterError(f"schema ({kind}): {err}") from err
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(features)])
    frame[target] = y
    return frame
