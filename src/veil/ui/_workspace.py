"""What one workbench holds and does: the open table, its scan, the policy (a YAML file in the
workspace folder, the one source of truth every page reads and changes), the hierarchies (ARX
CSVs beside it), the solution space, the picked release and the export. Every step is the
library call the CLI makes: ``scan_and_suggest``, ``build_hierarchy``, ``veil.privacy.explore``
and ``veil.api.anonymize``; nothing is computed twice."""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from veil.exceptions import ParameterError, PolicyError, VeilError
from veil.io import atomic_open
from veil.policy import Policy
from veil.ui._folders import Folders

if TYPE_CHECKING:
    import pandas as pd

    from veil.hierarchy import Hierarchy
    from veil.privacy.certificate import Release
    from veil.privacy.space import SolutionSpace
    from veil.scan.core import ScanResult

__all__ = ["ROLES", "TABLES", "TREATMENTS", "Workspace", "check_export_name"]

ROLES = ("identifier", "quasi_identifier", "sensitive", "insensitive")
#: What a direct identifier may get, as its one step.
TREATMENTS = ("pseudonymize", "drop", "mask", "fake", "redact")
TABLES = (".csv", ".parquet", ".xlsx", ".tsv", ".txt")
KEY_FILE = "policy.key"


class Workspace:
    """The workbench's state, kept in ``folder`` (policy.yaml, policy.key, hierarchies/,
    exports); one lock serializes the changes of concurrent requests."""

    def __init__(self, folders: Folders, folder: Path, rights_map: Path | None = None) -> None:
        self.folders = folders
        self.folder = folder
        self.rights_map = rights_map
        self.lock = threading.RLock()
        self.source: str | None = None  # the path or URL opened
        self.table: str | None = None  # a SQL source's table
        self.frame: pd.DataFrame | None = None
        self.scan: ScanResult | None = None
        self.space: SolutionSpace | None = None
        self.release: Release | None = None
        self.exported: dict[str, str] = {}
        self.requests: dict[str, Any] = {}  # the requests page's last answer
        self.evaluated: str | None = None  # the evaluation's report, once measured

    # -- data ----------------------------------------------------------------------------
    @property
    def policy_path(self) -> Path:
        """The policy the pages edit."""
        return self.folder / "policy.yaml"

    def open(self, given: str, table: str | None = None) -> None:
        """Read a file from an allowed folder, or a SQL URL's table (a SQLite file must lie in
        an allowed folder too); the scan, space and release of an earlier table are dropped."""
        from veil.io import Source

        given = given.strip()
        if "://" in given:
            if not table:
                raise ParameterError("a SQL URL needs the table to read")
            if given.startswith("sqlite"):
                self.folders.file(given.split(":///", 1)[-1])
            source = Source.of(given, table=table)
        else:
            path = self.folders.file(given)
            if path.suffix.lower() not in TABLES:
                raise ParameterError(f"{given}: open a {', '.join(TABLES)} file")
            source, given = Source.of(str(path)), str(path)
        frame = source.frame()
        with self.lock:
            self.source, self.table, self.frame = given, table, frame
            self.scan = self.space = self.release = None
            self.exported = {}
            self.evaluated = None

    def data(self) -> pd.DataFrame:
        """The open table; a clear error when none is."""
        if self.frame is None:
            raise ParameterError("open a table first (Data)")
        return self.frame

    def types(self) -> list[tuple[str, str, int, int]]:
        """Each column's name, type, distinct and missing values."""
        frame = self.data()
        return [
            (str(c), str(frame[c].dtype), int(frame[c].nunique()), int(frame[c].isna().sum()))
            for c in frame.columns
        ]

    # -- scan and policy -----------------------------------------------------------------
    def run_scan(self, progress: Any = None) -> ScanResult:
        """Scan the table and write the suggested policy (``veil scan --suggest-policy``), its
        pseudonyms keyed by a key file in the workspace that only its owner can read."""
        from veil.keys import ensure_key_file
        from veil.privacy.scanned import scan_and_suggest
        from veil.privacy.suggest import suggest_policy_yaml

        frame = self.data()
        self.folder.mkdir(parents=True, exist_ok=True)
        found = scan_and_suggest(frame, progress=progress)
        name = Path(self.source or "table").name
        text = suggest_policy_yaml(found.scan, frame, source=name, key_file=KEY_FILE)
        if f"key_file: {KEY_FILE}" in text:
            ensure_key_file(self.folder / KEY_FILE)
        with self.lock:
            self.scan = found.scan
            self._write(text)
        return found.scan

    def policy_text(self) -> str:
        """The policy's YAML, as written."""
        if not self.policy_path.exists():
            raise ParameterError("scan the table first (Scan): it writes the starting policy")
        return self.policy_path.read_text(encoding="utf-8")

    def policy(self) -> dict[str, Any]:
        """The policy as a mapping."""
        loaded = yaml.safe_load(self.policy_text()) or {}
        return loaded if isinstance(loaded, dict) else {}

    def validate(self, text: str) -> str | None:
        """Why ``text`` is not a policy for the open table, in one line; None when it is."""
        try:
            policy = Policy.from_yaml(text, source="policy")
        except VeilError as err:
            return str(err)
        if self.frame is not None:
            unknown = [c for c in policy.columns if c not in self.frame.columns]
            if unknown:
                return f"columns.{unknown[0]}: no such column in the table"
        return None

    def set_policy_text(self, text: str) -> None:
        """Replace the policy by ``text`` once it validates (else a ``PolicyError``)."""
        problem = self.validate(text)
        if problem is not None:
            raise PolicyError(problem)
        with self.lock:
            self._write(text)

    def _write(self, text: str) -> None:
        with atomic_open(self.policy_path, force=True) as handle:
            handle.write(text)
        self.space = self.release = self.evaluated = None

    def _change(self, policy: dict[str, Any]) -> None:
        self.set_policy_text(yaml.safe_dump(policy, sort_keys=False, allow_unicode=True))

    def set_role(self, column: str, role: str, treatment: str | None = None) -> None:
        """Give ``column`` ``role`` (an identifier gets ``treatment`` as its one step)."""
        if column not in self.data().columns:
            raise ParameterError(f"{column!r}: no such column")
        if role not in ROLES:
            raise ParameterError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        with self.lock:
            policy = self.policy()
            entry: dict[str, Any] = {"role": role}
            if role == "identifier":
                chosen = treatment or "pseudonymize"
                if chosen not in TREATMENTS:
                    raise ParameterError(f"treatment must be one of {', '.join(TREATMENTS)}")
                options = {"key_file": KEY_FILE} if chosen == "pseudonymize" else {}
                entry["steps"] = [{chosen: options}]
                if chosen == "pseudonymize":
                    from veil.keys import ensure_key_file

                    ensure_key_file(self.folder / KEY_FILE)
            policy.setdefault("columns", {})[column] = entry
            privacy = policy.get("privacy") or {}
            if role != "quasi_identifier":
                for key in ("max_levels", "hierarchies"):
                    if isinstance(privacy.get(key), dict):
                        privacy[key].pop(column, None)
            if role != "sensitive" and column in (privacy.get("sensitive") or []):
                privacy["sensitive"].remove(column)
            self._change(policy)

    def roles(self) -> dict[str, dict[str, Any]]:
        """Each column's entry in the policy."""
        columns = self.policy().get("columns") or {}
        return {str(k): v or {} for k, v in columns.items()}

    def quasi(self) -> list[str]:
        """The policy's quasi-identifiers, in the table's order."""
        roles = self.roles()
        return [
            str(c)
            for c in self.data().columns
            if roles.get(str(c), {}).get("role") == "quasi_identifier"
        ]

    # -- hierarchies ---------------------------------------------------------------------
    def hierarchy(self, column: str) -> Hierarchy:
        """The hierarchy the search uses for ``column``: the policy's, else the one veil
        builds (``veil hierarchy``)."""
        from veil.hierarchy import hierarchy_from_spec
        from veil.scan.hierarchies import build_hierarchy

        specs = (self.policy().get("privacy") or {}).get("hierarchies") or {}
        spec = specs.get(column, "auto") if isinstance(specs, dict) else "auto"
        values = self.data()[column]
        return hierarchy_from_spec(
            column, spec, values, base=self.folder, auto=lambda n, v: build_hierarchy(n, v)
        )

    def set_hierarchy(self, column: str, kind: str, parameter: str) -> Hierarchy:
        """Build ``column``'s hierarchy by the wizard's rule (``intervals`` widths, ``groups``
        lines ``group: value, value``, ``dates``, ``mask``, ``auto``, or ``levels``: the
        current hierarchy with only the levels listed, e.g. a date's month and year), save it
        in ARX's CSV form in the workspace and point the policy at it."""
        from veil.hierarchy import hierarchy_from_spec
        from veil.scan.hierarchies import build_hierarchy

        if column not in self.quasi():
            raise ParameterError(f"{column!r} is not a quasi-identifier of the policy")
        if kind == "levels":
            built = _kept_levels(self.hierarchy(column), parameter)
        else:
            spec = _wizard_spec(kind, parameter)
            built = hierarchy_from_spec(
                column, spec, self.data()[column], auto=lambda n, v: build_hierarchy(n, v)
            )
        name = f"hierarchies/{_file_name(column)}.csv"
        (self.folder / "hierarchies").mkdir(parents=True, exist_ok=True)
        with self.lock:
            with atomic_open(self.folder / name, force=True) as handle:
                handle.write(built.to_csv())
            policy = self.policy()
            privacy = policy.setdefault("privacy", {}) or {}
            policy["privacy"] = privacy
            if not isinstance(privacy.get("hierarchies"), dict):
                privacy["hierarchies"] = {}
            privacy["hierarchies"][column] = name
            if isinstance(privacy.get("max_levels"), dict):
                privacy["max_levels"].pop(column, None)  # the levels of the old hierarchy
            self._change(policy)
        return built

    # -- goals, search, pick -------------------------------------------------------------
    def set_goals(self, goals: dict[str, Any]) -> None:
        """Set the privacy goals (k, l, t, max_suppression, method; empty ones removed)."""
        with self.lock:
            policy = self.policy()
            privacy = policy.get("privacy") or {}
            for key in ("k", "l", "t", "max_suppression", "method"):
                if goals.get(key) in (None, ""):
                    privacy.pop(key, None)
                else:
                    privacy[key] = goals[key]
            if "l" not in privacy and "t" not in privacy:
                privacy.pop("sensitive", None) if not privacy.get("sensitive") else None
            privacy.pop("max_levels", None)  # a new goal: the search chooses again
            policy["privacy"] = privacy
            self._change(policy)

    def explore(self, progress: Any = None) -> SolutionSpace:
        """The policy's solution space on the table (``veil.privacy.explore``)."""
        from veil.privacy import explore

        space = explore(self.data(), str(self.policy_path), progress=progress)
        with self.lock:
            self.space = space
        return space

    def pick(self, levels: list[int], progress: Any = None) -> Release:
        """Release the minimal node at ``levels``: the policy's ``max_levels`` set to them (so
        the CLI makes the same release from the policy), then the release made in memory."""
        space = self.space
        if space is None:
            raise ParameterError("run the search first (Search)")
        node = space.node(levels)
        if not node.anonymous:
            raise ParameterError(f"{list(node.levels)} does not meet the goals: pick another")
        with self.lock:
            policy = self.policy()
            policy.setdefault("privacy", {})["max_levels"] = space.levels_of(node.levels)
            self._change(policy)
            self.space = space  # the same lattice: only the choice changed
        return self.preview(progress)

    def preview(self, progress: Any = None) -> Release:
        """The release the policy makes, in memory (``veil.privacy.anonymize``)."""
        from veil.privacy import anonymize

        release = anonymize(self.data(), str(self.policy_path), progress=progress)
        with self.lock:
            self.release = release
        return release

    def holdout(self, given: str) -> Path:
        """The holdout file ``given`` names: in an allowed folder, not the table itself."""
        rows = self.folders.file(given)
        if self.source is not None and "://" not in self.source and rows == Path(self.source):
            raise ParameterError(
                "the holdout must be other rows than the table the release was made from"
            )
        return rows

    def attack(self, holdout: str, target: str | None = None, progress: Any = None) -> str:
        """Measure the release as ``veil evaluate`` does (fidelity, utility with ``target``, and
        against real ``holdout`` rows the release was not made from: DCR, membership, singling
        out, linkability and inference, with their intervals); the report's path."""
        from veil.api import evaluate

        release = self.release
        if release is None:
            raise ParameterError("run the search first (Search): it makes the release")
        rows = self.holdout(holdout)
        report = self.folder / "evaluation" / "report.html"
        report.parent.mkdir(parents=True, exist_ok=True)
        evaluate(
            self.data(),
            release.data,
            holdout=str(rows),
            target=target or None,
            report=report,
            force=True,
            progress=progress,
        )
        with self.lock:
            self.evaluated = str(report)
        return str(report)

    # -- export --------------------------------------------------------------------------
    def export(self, name: str, target: str | None = None, progress: Any = None) -> dict[str, str]:
        """Write the release, its certificate and report (``veil anonymize`` with ``-o``,
        ``--certificate``, ``--report``: all appear or none) and a copy of the policy into the
        folder ``name`` of the workspace."""
        from veil.api import anonymize

        check_export_name(name)
        folder = self.folders.folder(str(self.folder / name))
        source = self.source
        if source is None:
            raise ParameterError("open a table first (Data)")
        reading: dict[str, Any] = {"table": self.table} if self.table else {}
        files = {
            "release": folder / "release.csv",
            "certificate": folder / "certificate.json",
            "report": folder / "report.html",
        }
        anonymize(
            source,
            str(self.policy_path),
            output=files["release"],
            certificate=files["certificate"],
            report=files["report"],
            target=target or None,
            progress=progress,
            **reading,
        )
        with atomic_open(folder / "policy.yaml", force=True) as handle:
            handle.write(_moved(self.policy(), "../"))
        written = {k: str(v) for k, v in files.items()} | {"policy": str(folder / "policy.yaml")}
        with self.lock:
            self.exported = written
        return written


def check_export_name(name: str) -> None:
    """An export's folder is one plain name inside the workspace: no path, nothing hidden."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name or "") or ".." in name:
        raise ParameterError("name the export with letters, digits, '.', '_' or '-'")


def _kept_levels(hierarchy: Hierarchy, parameter: str) -> Hierarchy:
    """``hierarchy`` with the values, the levels listed in ``parameter`` and its top: coarser
    levels are functions of finer ones, so any subset still nests."""
    from veil.hierarchy import Hierarchy

    top = hierarchy.height - 1
    try:
        kept = sorted({int(v) for v in re.split(r"[,\s]+", parameter.strip()) if v})
    except ValueError as err:
        raise ParameterError(f"list the levels to keep as numbers, e.g. 1, 3 ({err})") from err
    wrong = [level for level in kept if not 0 < level < top]
    if not kept or wrong:
        raise ParameterError(f"keep levels between 1 and {top - 1} (0 and {top} always stay)")
    rows = [[row[0], *(row[level] for level in kept), row[top]] for row in hierarchy.table]
    return Hierarchy(hierarchy.name, rows)


def _wizard_spec(kind: str, parameter: str) -> Any:
    """The policy's hierarchy entry for the wizard's choice."""
    if kind == "auto":
        return "auto"
    if kind in ("dates", "mask"):
        return {kind: True}
    if kind == "intervals":
        try:
            widths = [float(w) for w in re.split(r"[,\s]+", parameter.strip()) if w]
        except ValueError as err:
            raise ParameterError(
                f"interval widths must be numbers, e.g. 5, 10, 20 ({err})"
            ) from err
        if not widths or any(w <= 0 for w in widths) or widths != sorted(widths):
            raise ParameterError("interval widths must be positive and growing, e.g. 5, 10, 20")
        return {"intervals": [int(w) if w.is_integer() else w for w in widths]}
    if kind == "groups":
        groups: dict[str, list[str]] = {}
        for number, line in enumerate(parameter.splitlines(), 1):
            if not line.strip():
                continue
            group, sep, values = line.partition(":")
            if not sep or not group.strip():
                raise ParameterError(f"groups line {number}: write 'group: value, value'")
            groups[group.strip()] = [v.strip() for v in values.split(",") if v.strip()]
        if not groups:
            raise ParameterError("give at least one group, as 'group: value, value'")
        return {"groups": groups}
    raise ParameterError("the hierarchy is built by auto, intervals, groups, dates or mask")


def _moved(policy: dict[str, Any], up: str) -> str:
    """The policy as YAML for a folder below the workspace: its key file and hierarchy files
    named from there (the key itself stays where it is, readable by its owner only)."""
    for entry in (policy.get("columns") or {}).values():
        for step in (entry or {}).get("steps") or []:
            for options in step.values() if isinstance(step, dict) else []:
                if isinstance(options, dict) and isinstance(options.get("key_file"), str):
                    options["key_file"] = up + options["key_file"]
    hierarchies = (policy.get("privacy") or {}).get("hierarchies")
    if isinstance(hierarchies, dict):
        for column, spec in hierarchies.items():
            if isinstance(spec, str) and spec != "auto":
                hierarchies[column] = up + spec
    return yaml.safe_dump(policy, sort_keys=False, allow_unicode=True)


def _file_name(column: str) -> str:
    """A file name for ``column``'s hierarchy that no column name can turn into a path."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", column)[:40] or "column"
    return f"{safe}-{hashlib.sha256(column.encode()).hexdigest()[:8]}"
