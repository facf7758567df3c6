"""The solution space (``veil.privacy.explore``): every node listed and measured as the search
measures it, on ARX's adult with ARX's hierarchies (a table and hierarchies the space was not
built on). The brute force over the listed nodes must agree with the branch and bound, and a
minimal node picked through ``max_levels`` must be the node released."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from veil.exceptions import PolicyError
from veil.hierarchy import load_hierarchies
from veil.privacy import anonymize, explore, verify

DATA = Path(__file__).resolve().parents[1] / "data" / "arx_adult"
QUASI = ["age", "sex", "race", "marital-status", "education"]


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict]:
    frame = pd.read_csv(DATA / "adult.csv.gz", sep=";", dtype=str).head(6000)
    return frame, load_hierarchies(DATA, "adult", columns=QUASI)


def policy(frame: pd.DataFrame, **privacy: object) -> dict:
    columns = {c: {"role": "quasi_identifier" if c in QUASI else "insensitive"} for c in frame}
    return {"columns": columns, "privacy": {"k": 5, "max_suppression": 0.02, **privacy}}


@pytest.mark.parametrize("metric", ["loss", "entropy", "discernibility"])
def test_brute_force_over_the_space_finds_the_search_s_optimum(adult, metric: str) -> None:
    frame, hierarchies = adult
    space = explore(frame, policy(frame, metric=metric), hierarchies=hierarchies)
    assert space.complete
    assert (
        len(space.nodes)
        == math.prod(space.heights)
        == math.prod(h.height for h in hierarchies.values())
    )
    best = min(n.loss for n in space.nodes if n.anonymous)
    assert space.node(space.chosen).anonymous
    assert space.node(space.chosen).loss == pytest.approx(best, rel=1e-12)
    # the release anonymize makes is the chosen node, with the suppression listed
    release = anonymize(frame, policy(frame, metric=metric), hierarchies=hierarchies)
    search = release.certificate.search
    assert search is not None
    assert tuple(search["levels"][q] for q in space.quasi) == space.chosen
    assert release.certificate.rows_suppressed == space.node(space.chosen).suppressed


def test_monotone_goals_mark_the_frontier(adult) -> None:
    frame, hierarchies = adult
    space = explore(frame, policy(frame), hierarchies=hierarchies)
    top = tuple(h - 1 for h in space.heights)
    assert space.node(top).anonymous
    assert not space.node((0,) * len(space.heights)).anonymous
    listed = {n.levels: n for n in space.nodes}
    for node in space.nodes:  # k with suppression is monotone: everything above holds too
        if node.anonymous:
            for i, level in enumerate(node.levels):
                if level + 1 < space.heights[i]:
                    up = (*node.levels[:i], level + 1, *node.levels[i + 1 :])
                    assert listed[up].anonymous, (node.levels, up)
    assert len(space.candidates) >= 3
    assert all(n.minimal and n.anonymous for n in space.candidates)


def test_a_picked_minimal_node_is_the_node_released(adult) -> None:
    frame, hierarchies = adult
    space = explore(frame, policy(frame), hierarchies=hierarchies)
    picked = [n for n in space.candidates if n.levels != space.chosen][-1]  # the costliest
    chosen = policy(frame, max_levels=space.levels_of(picked.levels))
    release = anonymize(frame, chosen, hierarchies=hierarchies)
    search = release.certificate.search
    assert search is not None
    assert tuple(search["levels"][q] for q in space.quasi) == picked.levels
    assert release.certificate.rows_suppressed == picked.suppressed
    assert verify(release.data, release.certificate.to_dict()).ok


def test_a_policy_without_a_goal_has_no_space(adult) -> None:
    frame, hierarchies = adult
    goalless = policy(frame)
    del goalless["privacy"]
    with pytest.raises(PolicyError, match="no privacy goal"):
        explore(frame, goalless, hierarchies=hierarchies)


def test_a_lattice_beyond_the_limit_is_listed_in_part(adult) -> None:
    frame, hierarchies = adult
    space = explore(frame, policy(frame), hierarchies=hierarchies, limit=50)
    assert not space.complete
    assert len(space.nodes) == 50
    sums = [sum(n.levels) for n in space.nodes]
    assert sums == sorted(sums)  # the lowest total levels first
    assert space.nodes[0].levels == (0,) * len(space.heights)
