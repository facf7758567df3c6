"""veil's Loss equals ARX's to the last digit on ARX's own fars test case (its JUnit
``TestAnonymizationHeuristic``: k = 5, suppression up to 100%, the Loss metric, optimum levels
[3, 0, 1, 1, 0, 0, 1, 0], loss 0.15285378029058072). The fars age hierarchy lists the value 99
twice, and ARX's domain shares count every listed row: so must veil's, or the fourth digit
differs (0.15301)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from veil.hierarchy import load_hierarchies
from veil.privacy.criteria import KAnonymity
from veil.privacy.lattice import CodedFrequencies, check
from veil.privacy.metrics import make_metric

FARS = Path(__file__).parents[1] / "data" / "arx_fars"
ARX_LOSS = 0.15285378029058072  # src/test/.../TestAnonymizationHeuristic.java, ARX 3.9.2


def test_fars_loss_is_arxs_to_the_last_digit() -> None:
    frame = pd.read_csv(FARS / "fars_int.csv.gz", sep=";", dtype=str, keep_default_na=False)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        trees = load_hierarchies(FARS, "fars_int")
    assert any("lists 1 value(s) twice" in str(w.message) for w in said)
    columns = list(frame.columns)
    table = CodedFrequencies.build(frame, columns, [trees[c] for c in columns])
    metric = make_metric("loss")
    metric.prepare(table)
    groups = table.roll_up(table.bottom, [3, 0, 1, 1, 0, 0, 1, 0])
    evaluation = check(groups, [KAnonymity(k=5)], table.rows)
    assert metric.loss(evaluation) == ARX_LOSS
    assert trees["iage"].listed == 100
    assert trees["iage"].domain_size == 99


# ARX 3.9.2's JUnit TestAnonymizationKAnonymity, fars, monotonic DM*
DM_STAR = [
    (5, 0.04, 4469271.0, (0, 2, 2, 2, 1, 2, 1, 0)),
    (100, 0.04, 5.6052481e7, (0, 2, 3, 3, 1, 2, 2, 2)),
    (5, 0.0, 1.42377891e8, (1, 2, 3, 3, 1, 2, 1, 2)),
    (100, 0.0, 4.36925397e8, (5, 2, 3, 3, 1, 2, 0, 2)),
]


def test_dm_star_finds_arxs_optima_on_fars() -> None:
    from veil.privacy.search import search

    frame = pd.read_csv(FARS / "fars_int.csv.gz", sep=";", dtype=str, keep_default_na=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trees = load_hierarchies(FARS, "fars_int")
    columns = list(frame.columns)
    table = CodedFrequencies.build(frame, columns, [trees[c] for c in columns])
    for k, suppression, loss, levels in DM_STAR:
        found = search(table, [KAnonymity(k=k)], make_metric("dm*"), max_suppression=suppression)
        assert found.loss == loss, (k, suppression)
        assert found.levels == levels, (k, suppression)
        assert found.optimal
