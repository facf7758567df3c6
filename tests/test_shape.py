"""The codebase's shape, checked on its syntax trees and its exported names: the command line
only speaks (short functions, no private imports: the library decides), no two public classes
share a name, and every result a user is handed shows itself the same ways (``to_dict``,
``to_json``, ``_repr_html_`` for notebooks)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
from collections import defaultdict
from pathlib import Path

import pytest

import veil

SRC = Path(__file__).resolve().parents[1] / "src"
CLI = SRC / "veil" / "cli"
#: The longest a command-line function may be: it parses, calls one library function, prints.
CLI_LINES = 60


def _trees(folder: Path) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(folder.rglob("*.py"))]


def test_no_command_line_function_is_longer_than_60_lines() -> None:
    long = [
        f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for path, tree in _trees(CLI)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > CLI_LINES
    ]
    assert not long, f"command-line functions over {CLI_LINES} lines: {long}"


#: The longest any function may be, its docstring not counted.
FUNCTION_LINES = 80


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines without its docstring."""
    assert node.end_lineno is not None
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if docstring and first.end_lineno is not None:
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_function_is_longer_than_80_lines() -> None:
    long = [
        f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({_code_lines(node)})"
        for path, tree in _trees(SRC / "veil")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _code_lines(node) > FUNCTION_LINES
    ]
    assert not long, f"functions over {FUNCTION_LINES} lines (docstrings aside): {long}"
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES + 1))
    (node,) = ast.parse(f'def f():\n    """doc"""\n{body}\n').body
    assert isinstance(node, ast.FunctionDef)
    assert _code_lines(node) == FUNCTION_LINES + 2  # the check can fail


def _private(module: str, names: list[str]) -> bool:
    """Whether ``from module import names`` reaches into a private part of veil outside the
    command line (``veil.io._batches``, ``veil.rights._audit``, ``from veil.x import _y``)."""
    parts = module.split(".")
    if parts[0] != "veil" or parts[1:2] == ["cli"]:
        return False
    if names and all(n.startswith("__") for n in names):
        return False  # the package's dunders (veil._version's __version__)
    hidden = [p for p in parts[1:] if p.startswith("_")]
    return bool(hidden) or any(n.startswith("_") and not n.startswith("__") for n in names)


def test_the_command_line_imports_no_private_module() -> None:
    found = []
    for path, tree in _trees(CLI):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [alias.name for alias in node.names]
                if _private(node.module, names):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if _private(alias.name, []):
                        found.append(f"{path.relative_to(SRC)}:{node.lineno} import {alias.name}")
    assert not found, f"the command line imports private modules: {found}"


def test_the_private_import_check_can_fail() -> None:
    assert _private("veil.io._batches", ["TableStream"])
    assert _private("veil.rights", ["_audit"])
    assert not _private("veil.cli._common", ["out"])
    assert not _private("veil.io", ["Source"])


#: The options every command spells the same way, made only by ``veil.cli._common``.
SHARED_WORDS = {"--output", "-o", "--seed", "--epsilon", "--format"}


def _spelled_apart(tree: ast.AST) -> list[int]:
    """Lines where a ``typer.Option`` names one of the shared words itself."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "Option"
        and any(isinstance(a, ast.Constant) and a.value in SHARED_WORDS for a in node.args)
    ]


def test_shared_options_are_spelled_once() -> None:
    """``-o/--output``, ``--seed``, ``--epsilon`` and ``--format`` come from
    ``veil.cli._common`` (``output_option``, ``seed_option``, ``epsilon_option``, ``Format``):
    one spelling and one vocabulary on every command."""
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for path, tree in _trees(CLI)
        if path.name != "_common.py"
        for line in _spelled_apart(tree)
    ]
    assert not found, f"options spelled outside veil.cli._common: {found}"
    assert _spelled_apart(ast.parse('typer.Option("--seed", help="x")')) == [1]  # it can fail


def test_no_two_public_classes_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path, tree in _trees(SRC / "veil"):
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].append(str(path.relative_to(SRC)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"public classes defined twice: {twice}"


def _exported_classes() -> dict[str, type]:
    """Every class a public veil module exports (``__all__``), by its qualified name."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(veil.__path__, "veil."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[0] == "cli":
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if inspect.isclass(obj) and obj.__module__.startswith("veil."):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


#: The results veil's entry points hand back: each shows itself three ways.
RESULTS = [
    "veil.api.Synthesized",
    "veil.dp._mechanisms.DPResult",
    "veil.evaluate.Evaluation",
    "veil.federated.result.FederatedResult",
    "veil.learn.latent._release.LatentRelease",
    "veil.learn.utility.ModelComparison",
    "veil.privacy._measures.CheckResult",
    "veil.privacy._dask.DaskRelease",
    "veil.privacy._stream.StreamedRelease",
    "veil.privacy._verify.Verification",
    "veil.privacy.certificate.Certificate",
    "veil.privacy.certificate.Release",
    "veil.privacy.classes.ClassStats",
    "veil.privacy.scanned.Suggested",
    "veil.report.model.Report",
    "veil.rights.erase.Erasure",
    "veil.rights.retention.RetentionResult",
    "veil.rights.retrieve.Retrieval",
    "veil.scan.core.ScanResult",
    "veil.risk.assess.RiskSummary",
    "veil.synth._mst.Synthetic",
]


def test_every_result_is_exported() -> None:
    exported = _exported_classes()
    missing = [name for name in RESULTS if name not in exported]
    assert not missing, f"results not in any public __all__: {missing}"


@pytest.mark.parametrize("name", RESULTS)
def test_every_result_shows_itself_as_a_dict_json_and_html(name: str) -> None:
    from veil._html import Shown

    cls = _exported_classes()[name]
    lacking = [m for m in ("to_dict", "to_json", "_repr_html_") if not callable(getattr(cls, m, 0))]
    assert not lacking, f"{name} lacks {lacking}"
    # Shown's to_dict only raises: each result says what it is itself
    assert cls.to_dict is not Shown.to_dict, f"{name} has no to_dict of its own"


def test_a_result_renders_its_own_values_escaped() -> None:
    """One result end to end: to_json is JSON of to_dict, and the card escapes a hostile
    column name."""
    import pandas as pd

    found = veil.check(pd.DataFrame({"<b>age</b>": [30, 30, 40, 40]}), ["<b>age</b>"], k=2)
    assert json.loads(found.to_json()) == json.loads(json.dumps(found.to_dict()))
    html = found._repr_html_()
    assert "<b>age</b>" not in html
    assert "&lt;b&gt;age&lt;/b&gt;" in html


def test_no_file_cites_a_document_the_repository_lacks() -> None:
    """The repository documents itself: a markdown file named in its code, tests, benchmarks or
    README is one of its own files."""
    import re

    root = SRC.parent
    cited = re.compile(r"\b([A-Za-z_][\w-]*\.md)\b")
    have = {p.name for p in root.rglob("*.md") if ".venv" not in p.parts}
    missing = []
    for folder in ("src", "tests", "bench"):
        for path in (root / folder).rglob("*.py"):
            missing += [
                f"{path.relative_to(root)}: {name}"
                for name in cited.findall(path.read_text())
                if name not in have
            ]
    missing += [
        f"README.md: {n}" for n in cited.findall((root / "README.md").read_text()) if n not in have
    ]
    assert not missing, f"documents cited that the repository lacks: {missing}"


def _counts_classes(node: ast.Call) -> bool:
    """``x.groupby(...).size()`` / ``.count()`` / ``.transform("size")``: classes counted by
    hand."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        return False
    inner = func.value
    if isinstance(inner, ast.Subscript):  # x.groupby(...)[column].transform("size")
        inner = inner.value
    grouped = (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr == "groupby"
    )
    if not grouped:
        return False
    if func.attr in {"size", "count"}:
        return True
    said = [a.value for a in node.args if isinstance(a, ast.Constant)]
    return func.attr == "transform" and bool({"size", "count"} & set(said))


def test_classes_are_counted_by_the_frequency_table_alone() -> None:
    """Equivalence classes are counted in ``veil/frequency.py`` only: every other module asks
    it (``class_sizes``, ``CodedColumns``, ``Frequencies``) rather than grouping by hand."""
    found = []
    for path, tree in _trees(SRC / "veil"):
        if path.name == "frequency.py" and path.parent.name == "veil":
            continue
        found += [
            f"{path.relative_to(SRC)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _counts_classes(node)
        ]
    assert not found, f"classes counted outside veil/frequency.py: {found}"


def test_the_counting_check_can_fail() -> None:
    for text in ('df.groupby(["a", "b"]).size()', 'df.groupby("a")["b"].transform("size")'):
        call = ast.parse(text, mode="eval").body
        assert isinstance(call, ast.Call)
        assert _counts_classes(call)
    assert not _counts_classes(ast.parse('df.groupby("a")["b"].sum()', mode="eval").body)  # type: ignore[arg-type]


def test_one_definition_of_the_frequency_table() -> None:
    """The frequency table (``Frequencies``: values, counts, weights, histograms; built,
    merged, summed batch by batch with ``FrequencySum``) and its coded view for the lattice
    (``CodedFrequencies``, with the classes at a node, ``Groups``) are defined in
    ``veil/frequency.py`` and nowhere else."""
    defined: dict[str, list[str]] = defaultdict(list)
    for path, tree in _trees(SRC / "veil"):
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and (
                "frequenc" in node.name.lower() or node.name in {"Groups", "CodedColumns"}
            ):
                defined[node.name].append(str(path.relative_to(SRC)))
    assert set(defined) == {
        "Frequencies",
        "FrequencySum",
        "CodedFrequencies",
        "CodedColumns",
        "Groups",
    }
    assert all(paths == ["veil/frequency.py"] for paths in defined.values()), defined


def test_the_formatters_output_is_accepted() -> None:
    """No ``# fmt: skip`` or ``# fmt: off``: the code is laid out as ``ruff format`` lays it."""
    root = SRC.parent
    fighting = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("src", "tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.rstrip().endswith(("# fmt: skip", "# fmt: off"))
    ]
    assert not fighting, f"lines that refuse the formatter: {fighting}"
