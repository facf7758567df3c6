"""The package as a user meets it: what `import veil` costs, and every transform from YAML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import KEEP_PEOPLE_IDS
from tests.loaded import loaded_by
from tests.transforms.test_contract import CASES
from veil import anonymize
from veil.policy import Policy
from veil.transforms import TRANSFORMS

EXTRAS = ["torch", "opendp", "diffprivlib", "flwr", "phe", "matplotlib", "presidio_analyzer"]


def test_import_veil_loads_no_extra() -> None:
    code = f"import sys, json, veil; print(json.dumps([m for m in {EXTRAS!r} if m in sys.modules]))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert loaded == []


def test_public_api_is_curated() -> None:
    import veil

    assert set(veil.__all__) >= {"read", "write", "anonymize", "Policy", "ColumnRole"}
    for name in veil.__all__:
        assert hasattr(veil, name), name


@pytest.mark.parametrize(
    "package", ["veil.dp", "veil.io", "veil.privacy", "veil.rights", "veil.synth"]
)
def test_a_lazy_package_lists_what_it_loads(package: str) -> None:
    """A package whose names load on first use (``veil._lazy``) names each of them in
    ``__all__`` and in its table of where it lives: a name left out of either would fail only
    when a user asks for it."""
    import importlib

    module = importlib.import_module(package)
    lazy = module._LAZY
    assert set(lazy) <= set(module.__all__), sorted(set(lazy) - set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None, name  # resolves (AttributeError otherwise)
        if name in lazy:
            home = importlib.import_module(lazy[name])
            assert getattr(module, name) is getattr(home, name), name


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_runs_from_a_yaml_policy(
    name: str, people: pd.DataFrame, key_env: str
) -> None:
    """The parameters used from Python survive a trip through YAML and give the same release."""
    transform = CASES[name]()
    params = {
        k: (list(v) if isinstance(v, tuple) else v)
        for k, v in transform.get_params().items()
        if v != type(transform)().get_params().get(k)
    }
    spec = {"version": 1, "columns": KEEP_PEOPLE_IDS, "steps": [{name: params}]}
    text = yaml.safe_dump(spec, sort_keys=False)
    if "columns" not in params and name not in {"rename_columns", "suppress_rows"}:
        pytest.fail(f"case for {name} must name columns to be usable as a table-level step")
    release = anonymize(people, Policy.from_yaml(text))
    expected = transform.fit_transform(people)
    # the release's rows are shuffled; each keeps its index label
    pd.testing.assert_frame_equal(release.data.loc[expected.index], expected)
    assert release.certificate.steps[0].name == name


def test_design_api_names() -> None:
    import veil
    from veil.scan import ScanResult, classify  # the subpackage stays importable

    frame = pd.DataFrame({"email": [f"u{i}@example.com" for i in range(30)]})
    found = veil.scan(frame)
    assert isinstance(found, ScanResult)
    assert found.column("email").entity == "EMAIL"
    assert callable(classify)
    policy = veil.suggest_policy(found, frame)
    assert policy.columns["email"].steps == [{"drop": {}}]


def test_import_veil_loads_nothing_heavy_and_modules_stay_importable() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, veil; "
        "print(sorted(m for m in ('pandas', 'numpy', 'sklearn', 'scipy', 'matplotlib', "
        "'pyarrow') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.stdout.strip() == "[]", loaded.stderr
    import pandas as pd

    import veil
    import veil.api as module
    import veil.scan.recognizers as recognizers

    assert recognizers.__name__ == "veil.scan.recognizers"
    assert callable(module.anonymize)
    found = veil.scan(pd.DataFrame({"phone": ["0712345678", "0722000111"] * 10}))
    assert found.columns[0].entity == "PHONE"
    assert veil.anonymize is module.anonymize  # the function, not its module


def _public_definitions() -> list[tuple[str, object]]:
    """Every public class, function and method defined in a public veil module."""
    import importlib
    import inspect
    import pkgutil

    import veil

    found: list[tuple[str, object]] = []
    for info in pkgutil.walk_packages(veil.__path__, "veil."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or info.name.endswith("pycanon_runner"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            home = str(getattr(obj, "__module__", ""))
            # defined here, or in a private module of this package and exported by it
            if name.startswith("_") or not (home == info.name or home.startswith(info.name + "._")):
                continue
            if inspect.isfunction(obj):
                found.append((f"{info.name}.{name}", obj))
            elif inspect.isclass(obj):
                found.append((f"{info.name}.{name}", obj))
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(member, property):
                        doc_owner: object = member
                        inherited = [vars(b)[attr] for b in obj.__mro__[1:] if attr in vars(b)]
                        if not member.__doc__ and inherited:
                            doc_owner = inherited[0]
                        found.append((f"{info.name}.{name}.{attr}", doc_owner))
                    elif inspect.isfunction(getattr(member, "__func__", member)):
                        found.append((f"{info.name}.{name}.{attr}", getattr(obj, attr)))
    return found


def test_the_public_api_is_documented() -> None:
    """Every public class, function and method says what it does (scikit-learn's and
    diffprivlib's standard); the main entry points carry examples that run as doctests."""

    definitions = _public_definitions()
    assert len(definitions) > 400
    undocumented = [name for name, obj in definitions if not _own_doc(obj)]
    assert undocumented == []


def _own_doc(obj: object) -> str | None:
    """``obj``'s own docstring: not one inherited from a base class (pydantic's, a protocol's)
    nor the signature dataclasses write where there is none."""
    import inspect

    if isinstance(obj, property):
        return obj.__doc__
    if inspect.isclass(obj):
        doc = vars(obj).get("__doc__")
        return None if doc is None or doc.startswith(f"{obj.__name__}(") else doc
    return getattr(obj, "__doc__", None)


def test_the_docstring_test_reads_each_objects_own_docstring() -> None:
    """A class that inherits its docstring, or has only the signature dataclasses write, has
    none of its own."""
    from dataclasses import dataclass

    from pydantic import BaseModel

    class Bare(BaseModel):
        value: int = 0

    @dataclass
    class Plain:
        value: int = 0

    class Base:
        def run(self) -> None:
            """Documented here."""

    class Child(Base):
        def run(self) -> None:
            pass

    assert _own_doc(Bare) is None
    assert _own_doc(Plain) is None
    assert _own_doc(Child.run) is None
    assert _own_doc(Base.run) == "Documented here."


#: veil's entry points: numpydoc's validator holds their docstrings to the form scikit-learn's
#: follow (every parameter documented, none unknown, a Returns section).
ENTRY_POINTS = [
    "veil.api.anonymize",
    "veil.api.check",
    "veil.api.evaluate",
    "veil.api.mask_latent",
    "veil.api.simulate",
    "veil.api.synthesize",
    "veil.api.verify",
    "veil.scan.api.scan",
    "veil.io.read",
    "veil.io.write",
    "veil.io.Source",
    "veil.policy.load_policy",
    "veil.policy.Policy.with_goals",
    "veil.privacy.suggest.suggest_policy",
    "veil.privacy.scanned.scan_and_suggest",
    "veil.report.build_report",
    "veil.report.report_files",
    "veil.dp.answer",
    "veil.synth.Synthesizer.fit",
    "veil.synth.Synthesizer.sample",
    "veil.synth.synthesize_mst",
]


def test_the_entry_points_follow_numpydoc() -> None:
    import inspect

    import numpydoc.validate

    import veil

    exported = [f"veil.{n}" for n in veil.__all__ if inspect.isfunction(getattr(veil, n, None))]
    assert {"veil.anonymize", "veil.check", "veil.verify", "veil.read"} <= set(exported)
    broken = {}
    for name in [*ENTRY_POINTS, *exported]:
        errors = numpydoc.validate.validate(name)["errors"]
        found = [
            f"{code}: {message}"
            for code, message in errors
            if code in {"GL08", "PR01", "PR02", "RT01", "SS01"}
        ]
        if found:
            broken[name] = found
    assert not broken, broken


def test_a_report_of_a_release_loads_no_evaluation_library(tmp_path) -> None:
    """``veil report`` of an anonymized release draws its plots but measures no model or
    attack: scikit-learn and scipy.stats (0.5 s to import) stay unloaded, in a process of its
    own, while the report is written."""
    table = tmp_path / "t.csv"
    table.write_text(
        "age,county\n" + "\n".join(f"{30 + i % 3},{['Lamu', 'Meru'][i % 2]}" for i in range(24))
    )
    release, certificate = tmp_path / "r.csv", tmp_path / "c.json"
    run = [sys.executable, "-m", "veil"]
    subprocess.run(
        [
            *run,
            "anonymize",
            str(table),
            "-k",
            "2",
            "-o",
            str(release),
            "--certificate",
            str(certificate),
        ],
        check=True,
        capture_output=True,
    )
    out = tmp_path / "report.html"
    report = ["report", release, "--certificate", certificate, "-o", out]
    loaded, _ = loaded_by(report, ["sklearn", "scipy.stats", "torch"])
    assert "<html" in out.read_text()[:500].lower()
    assert loaded == []


def test_a_lazy_registry_member_is_imported_when_asked_for_and_dp_synthesis_loads_no_copula() -> (
    None
):
    """``veil.synth`` lists every synthesizer without importing any: MST's module, asked for by
    its name, loads neither the copula's scipy.stats nor Faker (in a process of its own); and
    a registry's lazy member is the very class once asked for, its names and errors as an
    eager one's."""
    import subprocess
    import sys

    from veil.exceptions import ParameterError
    from veil.registry import Registry

    probe = (
        "import sys, veil.synth as s; names = list(s.METHODS); cls = s.METHODS['mst']; "
        "print(names, cls.__name__, sorted(m for m in ('scipy.stats', 'faker', 'sklearn') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['marginals', 'copula', 'tvae', 'mst', 'aim'] MST []"
    shapes: Registry[type] = Registry("shape")
    shapes.add_lazy("ordered", "collections:OrderedDict", aliases=("sorted",))
    assert "sorted" in shapes
    assert list(shapes) == ["ordered"]
    import collections

    assert shapes["sorted"] is collections.OrderedDict
    with pytest.raises(ValueError, match="registered twice"):
        shapes.add("sorted", dict)
    with pytest.raises(ParameterError, match="did you mean 'ordered'"):
        shapes["orderd"]


@pytest.mark.parametrize("fails", [False, True])
def test_the_command_leaves_its_objects_to_the_exit_and_atexit_still_runs(
    tmp_path, fails: bool
) -> None:
    """``veil``'s own process freezes its objects once the command is done (the exit's garbage
    collections then skip what the imports made): its output is whole and renamed by then,
    its exit code unchanged, and atexit handlers still run (in a process of its own)."""
    import subprocess
    import sys

    table = tmp_path / "t.csv"
    table.write_text("age,county\n" + "\n".join(f"{30 + i % 3},Lamu" for i in range(24)))
    release = tmp_path / "r.csv"
    probe = (
        "import atexit, gc, sys\n"
        "from veil.cli import run\n"
        "atexit.register(lambda: print('atexit', gc.get_freeze_count() > 0))\n"
        "sys.argv = ['veil', *sys.argv[1:]]\n"
        "print('code', run())\n"
    )
    k = "99" if fails else "2"  # 24 rows cannot be 99-anonymous: exit 1, nothing written
    done = subprocess.run(
        [sys.executable, "-c", probe, "anonymize", str(table), "-k", k, "-o", str(release)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-2:] == [f"code {int(fails)}", "atexit True"], done.stdout
    assert release.exists() is not fails
    if not fails:
        assert len(release.read_text().splitlines()) == 25
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == (["t.csv"] if fails else ["r.csv", "t.csv"])


def test_a_privacy_model_builds_its_validator_when_first_used() -> None:
    """Importing the privacy models builds none of their pydantic validators: a k check builds
    k-anonymity's alone, and it still refuses what it refused (in a process of its own)."""
    import subprocess
    import sys

    probe = (
        "import pydantic\n"
        "from veil.privacy import criteria as c\n"
        "before = [m.__pydantic_complete__ for m in c.MODELS]\n"
        "c.build({'model': 'k_anonymity', 'k': 3})\n"
        "after = [m.__pydantic_complete__ for m in c.MODELS]\n"
        "try:\n    c.KAnonymity(k='3')\n"
        "except pydantic.ValidationError:\n    after.append('refused')\n"
        "print(before, after)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "[False, False, False, False, False] [True, False, False, False, False, 'refused']"
    )


def test_a_scan_loads_neither_the_policy_nor_the_search(tmp_path: Path) -> None:
    """``veil scan`` without ``--suggest-policy`` writes no policy: it imports neither the
    policy's models (pydantic) nor the search (0.05 s of its start-up)."""
    table = tmp_path / "t.csv"
    table.write_text("name,age,county\nJane Wanjiku,34,Nairobi\nJohn Otieno,45,Kisumu\n" * 3)
    heavy = ["veil.policy", "pydantic", "veil.privacy.suggest", "veil.privacy.lattice"]
    loaded, printed = loaded_by(["scan", table], heavy)
    assert "county" in printed  # the scan ran and printed its table
    assert loaded == []
