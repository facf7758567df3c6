"""The shape the README's Architecture section draws, checked on the code: no import cycle
between files, each layer importing only downward, the frequency table at the bottom (built
from batches, merged)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.frequency import Frequencies, class_sizes, histograms

SRC = Path(__file__).resolve().parents[1] / "src"

#: The README's layers (Architecture), lowest first; a module may import its own layer or lower
#: ones.
LAYERS = [
    {
        "veil._version",
        "veil._html",
        "veil._pause",
        "veil._deprecated",
        "veil._lazy",
        "veil._codes",
        "veil.registry",
        "veil.exceptions",
        "veil.progress",
        "veil.keys",
        "veil.plotting",
        "veil.memory",
    },
    {
        "veil.io",
        "veil.schema",
        "veil.hierarchy",
        "veil.frequency",
        "veil.privacy.criteria",
        "veil.data",
    },
    {"veil.scan", "veil.risk", "veil.transforms", "veil.dp", "veil.policy", "veil.suggest"},
    {"veil.privacy", "veil.learn", "veil.synth", "veil.evaluate", "veil.federated", "veil.rights"},
    {"veil.report"},
    {"veil.api", "veil.checking"},
    {"veil.demo", "veil.ui"},
    {"veil.cli", "veil.__main__"},
]


def modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "veil").rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The veil modules a file imports, at any depth but ``if TYPE_CHECKING:``."""
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" not in ast.dump(node.test):
                self.generic_visit(node)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level == 0 and node.module and node.module.startswith("veil"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in known else node.module)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names if a.name.startswith("veil"))

    Visitor().visit(ast.parse(path.read_text()))
    return {name for name in found if name in known}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, known) - {name} for name, path in known.items()}


def layer(name: str) -> int:
    """The layer of the most specific entry of ``LAYERS`` that holds ``name``."""
    found = [
        (len(m), depth)
        for depth, members in enumerate(LAYERS)
        for m in members
        if name == m or name.startswith(m + ".")
    ]
    if not found:
        raise AssertionError(
            f"{name} is in no layer of the README's Architecture: add it to LAYERS"
        )
    return max(found)[1]


def test_no_import_cycle_between_files() -> None:
    edges = graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            assert state.get(nxt) != 1, f"import cycle: {' -> '.join([*path, node, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [])


def test_each_layer_imports_only_downward_and_nothing_imports_the_cli() -> None:
    upward = [
        f"{name} -> {dep}"
        for name, deps in graph().items()
        for dep in deps
        if name != "veil" and layer(dep) > layer(name)
    ]
    assert upward == []


def test_scan_privacy_and_report_count_classes_with_the_frequency_module() -> None:
    edges = graph()
    for name, deps in edges.items():
        if name.startswith(("veil.privacy", "veil.report")):
            assert "veil.risk.assess" not in deps, name  # no sideways import for class sizes
    users = {n for n, d in edges.items() if "veil.frequency" in d}
    assert {"veil.risk.assess", "veil.privacy.classes", "veil.report.sections.privacy"} <= users


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["20s", "30s", None]),
            st.sampled_from(["Nyeri", "Lamu"]),
            st.sampled_from(["HIV", "hiv ", "Flu", "flu"]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(min_value=0, max_value=40),
)
def test_frequencies_built_in_batches_and_merged_equal_the_whole(rows, cut) -> None:
    frame = pd.DataFrame(rows, columns=["age", "county", "diagnosis"])
    qis = ["age", "county"]
    parts = [frame.iloc[:cut], frame.iloc[cut:]]
    merged = Frequencies.of_batches([p for p in parts if len(p)], qis, "diagnosis")
    whole = Frequencies.of(frame, qis, "diagnosis")
    assert merged.rows == whole.rows == len(frame)
    assert sorted(merged.sizes().tolist()) == sorted(class_sizes(frame, qis)[1].tolist())
    klass, sizes = class_sizes(frame, qis)
    direct, _ = histograms(frame, klass, "diagnosis", len(sizes))
    batched, _ = merged.histograms()
    assert sorted(map(sorted, batched.tolist())) == sorted(map(sorted, direct.tolist()))
    assert np.array_equal(np.sort(batched.sum(axis=1)), np.sort(sizes))


def test_a_small_table_of_many_values_is_counted_in_memory_of_its_size() -> None:
    """Three columns of 300 values over 300 rows make a code space of 27M combinations:
    counted with a bincount over that space, each count took 216 MB whatever the rows (the
    risk summary counts hundreds of combinations: a 300-row scan took 5.5 s). Each row's class
    size is pandas' group-by's, and the count takes a few MB."""
    import tracemalloc

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({c: rng.permutation(300) for c in "abc"})  # 300 values each
    frame.loc[::7, "b"] = None  # a missing value is a value of its own, as dropna=False
    frame = pd.concat([frame, frame.sample(60, random_state=1)], ignore_index=True)
    tracemalloc.start()
    try:
        klass, sizes = class_sizes(frame, ["a", "b", "c"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    oracle = frame.groupby(["a", "b", "c"], dropna=False)["a"].transform("size")
    assert np.array_equal(sizes[klass], oracle.to_numpy())
    assert sizes.max() > 1
    assert len(sizes) > 250
    assert peak < 8 * 2**20, peak


def test_every_report_section_is_one_module_listed_once_in_build() -> None:
    """A section is a module in veil/report/sections with a ``build``; build.py lists each
    exactly once, in the order a reader meets them, and holds no section code itself."""
    import importlib

    from veil.report.build import SECTIONS

    folder = SRC / "veil" / "report" / "sections"
    found = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    listed = list(SECTIONS)  # a registry: each section's name, in the order a reader meets them
    assert sorted(listed) == sorted(found)
    assert len(set(listed)) == len(listed)
    for name in found:
        assert callable(importlib.import_module(f"veil.report.sections.{name}").build), name
    build = (SRC / "veil" / "report" / "build.py").read_text()
    assert "Section(" not in build  # build.py orders sections; it does not make one


def test_no_generic_module_imports_a_country_folder() -> None:
    """A country is one folder: generic code reaches it through ``countries`` (found by
    listing the folders), never by name."""
    folder = SRC / "veil" / "scan" / "recognizers"
    countries = {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    assert {"ke", "us", "gb"} <= countries
    prefixes = tuple(f"veil.scan.recognizers.{c}" for c in countries)
    for name, deps in graph().items():
        if name.startswith(prefixes):
            continue
        assert not [d for d in deps if d.startswith(prefixes)], name
