"""The policy file: per column a role and the steps to apply, table-level steps, privacy goals.

```yaml
version: 1
random_state: 2022            # reproducible PRAM, noise, shuffles, fakes: a SECRET (see below)
read: {dates: [Date_of_entry], dayfirst: true}
columns:
  ID_number: {role: identifier, steps: [drop: {}]}
  Tax_id:    {role: identifier, steps: [{pseudonymize: {format: preserve}}]}
  Age:       {role: quasi_identifier, steps: [{generalize: {bins: [18, 30, 45, 60, .inf]}}]}
  Illness_category: {role: sensitive}
steps:                        # table-level, after the column steps, in order
  - suppress_rows: {rare: 2, columns: [Age, Gender]}
privacy: {k: 2}
```

Column steps run first (in column order, except that a column whose fake reads another column,
``name_column`` or ``gender_column``, runs after it), then table-level ``steps`` in order; a
table-level step names its ``columns`` itself. Errors name the key, the column and the allowed
values.

Random steps draw from the operating system's CSPRNG afresh for each release unless
``random_state`` asks for reproducibility. Whoever holds that number can replay every draw and
undo PRAM, noise, shuffles and resampling (the release's row order too): keep a policy with a
``random_state`` as private as the key. It is never written in a certificate, report or
release, and the policy's fingerprint is taken without it.

Nothing personal leaves unless chosen: columns the policy does not list get the role the scan
finds (``unlisted: scan``, the default; or ``drop`` / ``error``), and a direct identifier is
released as it is only with ``keep: true`` and a ``reason``.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from veil.exceptions import ParameterError, PolicyError, one_line, shown
from veil.privacy.criteria import (
    SHORTHAND,
    PrivacyModel,
    ShorthandError,
    by_name,
    expand_shorthand,
    override,
)
from veil.schema import ColumnRole, Schema

if TYPE_CHECKING:
    from veil.transforms import ColumnTransform

__all__ = [
    "ColumnPolicy",
    "Policy",
    "PrivacySettings",
    "ReadSettings",
    "Step",
    "identifier_treatments",
    "load_policy",
    "treat_identifiers",
]


def _transforms() -> Any:
    """The transforms' registry, imported when a step is first checked or built: a policy
    without steps (a check, a search) never loads the transforms (nor scikit-learn, whose
    estimators they are)."""
    from veil.transforms import TRANSFORMS

    return TRANSFORMS


@functools.cache
def identifier_treatments() -> frozenset[str]:
    """The steps a direct identifier may be given: the transforms that declare they treat
    one."""
    return frozenset(name for name, t in _transforms().items() if t.treats_identifiers)


def treat_identifiers() -> str:
    """The fix an error names when an identifier would be released as it is."""
    names = sorted(identifier_treatments())
    return (
        f"give each a {', '.join(names[:-1])} or {names[-1]} step (redact: free text), or "
        "keep: true with a reason"
    )


def __getattr__(name: str) -> Any:
    """``IDENTIFIER_TREATMENTS`` and ``TREAT_IDENTIFIERS``, computed on first use."""
    if name == "IDENTIFIER_TREATMENTS":
        return identifier_treatments()
    if name == "TREAT_IDENTIFIERS":
        return treat_identifiers()
    raise AttributeError(f"module 'veil.policy' has no attribute {name!r}")


def _parameters(name: str) -> list[str]:
    signature = inspect.signature(_transforms()[name].__init__)
    return [p for p in signature.parameters if p != "self"]


class StepError(ValueError):
    """A bad step, with its position in the steps list (for the error's location)."""

    def __init__(self, index: int, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.name = name  # the transform, when the step names one


def _check_steps(value: Any, *, table_level: bool) -> list[Step]:
    if not isinstance(value, list):
        raise ValueError(f"steps must be a list of steps, got {value!r}")
    steps = []
    for i, raw in enumerate(value):
        try:
            steps.append(_check_step(raw, table_level=table_level))
        except ParameterError as err:
            raise StepError(i, str(err), name=next(iter(raw))) from err
        except ValueError as err:
            raise StepError(i, str(err)) from err
    return steps


def _check_step(raw: Any, *, table_level: bool) -> dict[str, dict[str, Any]]:
    """A step is ``{transform_name: {parameter: value}}``; returns it normalized."""
    if isinstance(raw, str):
        raw = {raw: {}}
    if not isinstance(raw, dict) or len(raw) != 1:
        raise ValueError(
            "a step must be one transform name with its parameters, e.g. "
            f"'generalize: {{bins: [18, 30, 60]}}', got {raw!r}"
        )
    ((name, params),) = raw.items()
    known = _transforms()
    if name not in known:
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown transform {name!r}{hint}; allowed: {', '.join(known)}")
    params = {} if params is None else params
    if not isinstance(params, dict):
        raise ValueError(f"the parameters of {name!r} must be a mapping, got {params!r}")
    allowed = _parameters(name)
    if not table_level:
        allowed = [p for p in allowed if p != "columns"]
    unknown = [p for p in params if p not in allowed]
    if unknown:
        where = (
            " (a column step applies to its own column)"
            if unknown[0] == "columns" and not table_level
            else ""
        )
        raise ValueError(
            f"{name!r} has no parameter {unknown[0]!r}{where}; allowed: {', '.join(allowed)}"
        )
    if table_level and "columns" not in params and name not in {"rename_columns", "suppress_rows"}:
        raise ValueError(
            f"a table-level {name!r} step needs columns: [...]; or put it under "
            "columns.<name>.steps"
        )
    # each parameter's constraints, declared by its transform, checked before any data is read
    # (a column's own step applies to that column: a stand-in name fills columns)
    given = (
        params
        if table_level or "columns" not in _parameters(name)
        else {**params, "columns": ["column"]}
    )
    known[name](**given).check_parameters()
    return {str(name): dict(params)}


Step = dict[str, dict[str, Any]]


class ReadSettings(BaseModel):
    """How to read the data (the CLI's --sep, --dates... override these)."""

    model_config = ConfigDict(extra="forbid")
    sep: str | None = None
    encoding: str | None = None
    dates: list[str] = Field(default_factory=list)
    dayfirst: bool | None = None  # None: detected from the values that read only one way
    date_format: str | None = None
    coerce_dates: bool = False  # values that are no dates become missing (counted)
    sheet: str | int | None = None
    table: str | None = None
    query: str | None = None


class ColumnPolicy(BaseModel):
    """One column's role and its steps (or ``keep`` with a reason) in a policy."""

    model_config = ConfigDict(extra="forbid")
    role: ColumnRole = ColumnRole.INSENSITIVE
    steps: list[Step] = Field(default_factory=list)
    # Release a direct identifier (or a column the scan calls one) as it is: only on purpose,
    # with the reason, which the certificate and the report repeat.
    keep: bool = False
    reason: str | None = None

    @field_validator("steps", mode="before")
    @classmethod
    def _steps(cls, value: Any) -> list[Step]:
        return _check_steps(value or [], table_level=False)

    @model_validator(mode="after")
    def _keep_needs_reason(self) -> ColumnPolicy:
        if self.keep and not (self.reason and self.reason.strip()):
            raise ValueError(
                "keep: true releases the column as it is and needs a reason, e.g. "
                "reason: 'public registry number, consented'"
            )
        treatments = [
            name for step in self.steps for name in step if name in identifier_treatments()
        ]
        if self.keep and treatments:
            raise ValueError(
                f"keep: true releases the column as it is, but its steps {treatments} change "
                "it; remove keep or the steps"
            )
        return self


class PrivacySettings(BaseModel):
    """Privacy goals for the release: the search finds the generalization of the
    quasi-identifiers with the least loss that meets them, and the release is checked again.

    ``models`` lists the privacy models (``veil.privacy.criteria.MODELS``, each named by
    ``model:``); ``k``, ``l`` (with ``l_variant``, ``c``) and ``t`` (with ``t_distance``) are
    shorthand for them."""

    model_config = ConfigDict(extra="forbid")
    models: list[PrivacyModel] = Field(default_factory=list)
    sensitive: list[str] = Field(default_factory=list)
    # a column naming each row's person (or household): k then counts people, not rows
    person_id: str | None = None
    # share of the records entering the search that it may withhold; the policy's own
    # suppress_rows steps are counted apart (default 0: the search suppresses nothing)
    max_suppression: float = Field(default=0.0, ge=0, le=1)
    metric: str = "loss"
    method: Literal["optimal", "heuristic", "mondrian"] = "optimal"
    # a folder of ARX-style CSVs, or per column: a CSV path, auto, {groups: {...}},
    # {intervals: [5, 10, 20]}, {mask: true} or {dates: true}
    hierarchies: str | dict[str, Any] | None = None
    # per quasi-identifier, the highest level of its hierarchy the search may choose (ARX's
    # maximum generalization): {age: 3} keeps age from being generalized to one value
    max_levels: dict[str, int] = Field(default_factory=dict)
    time_limit: float | None = Field(default=None, gt=0)

    @field_validator("max_levels")
    @classmethod
    def _levels(cls, value: dict[str, int]) -> dict[str, int]:
        for column, level in value.items():
            if level < 0:
                raise ValueError(
                    f"max_levels.{column} must be a level >= 0 (0 keeps the values), got {level}"
                )
        return value

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return expand_shorthand(value) if isinstance(value, Mapping) else value

    @model_validator(mode="after")
    def _methods(self) -> PrivacySettings:
        if self.method == "mondrian":
            unsupported = [m.name for m in self.models if not m.mondrian]
            if unsupported:
                raise ValueError(
                    f"{unsupported[0]} is not supported with method mondrian: Mondrian checks "
                    "k-anonymity and distinct l-diversity; use method optimal for the others"
                )
        return self


class Policy(BaseModel):
    """What to do with a table: how to read it, each column's role and steps, table-level steps
    and the privacy goals (``privacy:``), validated when loaded; see the module's
    documentation for the YAML form."""

    model_config = ConfigDict(extra="forbid")
    version: Literal[1] = 1
    description: str | None = None
    random_state: int | None = None
    read: ReadSettings = Field(default_factory=ReadSettings)
    columns: dict[str, ColumnPolicy] = Field(default_factory=dict)
    steps: list[Step] = Field(default_factory=list)
    privacy: PrivacySettings | None = None
    # Columns the policy does not list: `scan` gives them the role the scan finds (identifiers
    # get the suggested drop or pseudonym), `drop` leaves them out, `error` refuses the table.
    unlisted: Literal["scan", "drop", "error"] = "scan"
    # A secret when set: it replays every random draw (PRAM, noise, shuffles, resampling).
    # The release's rows are shuffled (seeded by random_state) so that a row's position does not
    # point at its place in the input (a pseudonym of a sequential id would sit near it);
    # keep_order: true keeps the input's order (data that is public in that order).
    keep_order: bool = False
    # relative paths in the policy (key_file) are relative to the policy file's folder
    _base_dir: Path | None = PrivateAttr(default=None)
    _file: Path | None = PrivateAttr(default=None)  # the file it was loaded from: an input

    @field_validator("steps", mode="before")
    @classmethod
    def _steps(cls, value: Any) -> list[Step]:
        return _check_steps(value or [], table_level=True)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, text: str, *, source: str = "policy") -> Policy:
        """A policy from YAML text; errors say where in it and what is allowed.

        >>> from veil.policy import Policy
        >>> policy = Policy.from_yaml("{columns: {Age: {role: quasi_identifier}}, privacy: {k: 5}}")
        >>> policy.privacy.models[0].goal
        'k >= 5'
        """
        raw = _load_yaml(text, source)
        return cls.from_dict({} if raw is None else raw, source=source)

    @classmethod
    def from_dict(cls, raw: Any, *, source: str = "policy") -> Policy:
        """Validate a mapping with the policy's shape; errors say where and what is allowed."""
        if not isinstance(raw, Mapping):
            raise PolicyError(
                f"{source}: must be a YAML mapping (version:, columns:...), got {shown(raw)}"
            )
        try:
            return cls.model_validate(dict(raw))
        except ValidationError as err:
            raise PolicyError(_explain(err, source)) from err

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Policy:
        """The policy in the YAML file at ``path`` (paths in it are relative to its folder)."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError as err:
            raise PolicyError(f"{p}: no such policy file; check the --policy path") from err
        except (OSError, UnicodeDecodeError) as err:
            raise PolicyError(f"{p}: cannot be read as UTF-8 text ({err})") from err
        policy = cls.from_yaml(text, source=str(p))
        policy._base_dir = p.resolve().parent
        policy._file = p
        return policy

    def with_goals(
        self, models: Sequence[Mapping[str, Any]] = (), *, search: bool = False, **settings: Any
    ) -> Policy:
        """This policy with the privacy goals and settings given over its own: the command
        line's ``-k 10`` over a policy's ``k: 5`` (a flag for one part of a goal keeps the rest
        of the policy's), ``models`` added to its models. ``None`` is "not given"; ``search``
        asks for a privacy section even when nothing else is given (hierarchies given).

        Parameters
        ----------
        models : list of mappings
            Privacy models to add (``{"model": "entropy_l_diversity", "l": 2}``).
        search : bool
            Make a privacy section (the search) even with no goal given.
        **settings
            The shorthand goals (``k``, ``l``, ``l_variant``, ``c``, ``t``, ``t_distance``) and
            any ``privacy:`` setting (``max_suppression``, ``metric``, ``method``...).

        Returns
        -------
        Policy
            A new policy; this one is unchanged.
        """
        asked = {key: value for key, value in settings.items() if value is not None}
        if not (asked or models or search):
            return self
        base = self.privacy.model_dump(exclude_unset=True) if self.privacy else {}
        goals = {key: asked.pop(key) for key in SHORTHAND if key in asked}
        merged = {**override(base, goals), **asked}
        merged["models"] = [*merged.get("models", []), *models]
        privacy = Policy.from_dict({"privacy": merged}).privacy
        return self.model_copy(update={"privacy": privacy})

    def to_yaml(self) -> str:
        # python mode keeps .inf in bins (json mode would turn it into null)
        """The policy as YAML, without defaults: what ``from_yaml`` reads back as this policy."""
        data = {"version": self.version, **_plain(self.model_dump(exclude_defaults=True))}
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

    def fingerprint(self) -> str:
        """SHA-256 of the policy's YAML without ``random_state``: the certificate names the
        policy by it. The seed is a secret and left out: a small number hashed with the rest
        of a policy the certificate describes would be found by trying each."""
        public = self.model_copy(update={"random_state": None})
        return hashlib.sha256(public.to_yaml().encode()).hexdigest()

    # -- reading it ------------------------------------------------------------------------
    @property
    def file(self) -> Path | None:
        """The YAML file the policy was loaded from (an input: never written over)."""
        return self._file

    def resolve(self, path: str) -> Path:
        """A path from the policy, relative to the policy file's folder."""
        p = Path(path)
        return p if p.is_absolute() or self._base_dir is None else self._base_dir / p

    def to_schema(self) -> Schema:
        """The roles the policy gives its columns, as a ``Schema``."""
        return Schema.from_roles({name: col.role for name, col in self.columns.items()})

    def planned_steps(self) -> Iterator[PlannedStep]:
        """Each step as an unfitted transform, in execution order, with where it came from.

        A column whose steps read another column (a fake e-mail built from ``name_column``, a
        fake name matching ``gender_column``) runs after that column's own steps, so that it
        reads the released value, never the original."""
        for name, params, where, columns, index in self._ordered():
            yield PlannedStep(name, self._build(name, dict(params), index), where, columns)

    def _ordered(self) -> list[tuple[str, dict[str, Any], str, tuple[str, ...], int]]:
        """(transform, parameters, where, columns, seed index) in execution order; the seed
        index is the step's position in the file, so reordering changes no random stream."""
        blocks: dict[str, list[tuple[str, dict[str, Any], str, tuple[str, ...], int]]] = {}
        index = 0
        for column, spec in self.columns.items():
            blocks[column] = []
            for i, step in enumerate(spec.steps):
                ((name, params),) = step.items()
                blocks[column].append(
                    (
                        name,
                        {"columns": [column], **params},
                        f"columns.{column}.steps[{i}]",
                        (column,),
                        index,
                    )
                )
                index += 1
        ordered = [s for column in _dependency_order(blocks) for s in blocks[column]]
        for i, step in enumerate(self.steps):
            ((name, params),) = step.items()
            cols = params.get("columns")
            cols_t = tuple([cols] if isinstance(cols, str) else cols or ())
            ordered.append((name, dict(params), f"steps[{i}]", cols_t, index))
            index += 1
        _check_derived_fakes(ordered, {c for c, spec in self.columns.items() if spec.keep})
        return ordered

    def _build(self, name: str, params: dict[str, Any], index: int) -> ColumnTransform:
        cls = _transforms()[name]
        if (
            self.random_state is not None
            and "random_state" in _parameters(name)
            and "random_state" not in params
        ):
            params["random_state"] = self.random_state + index  # distinct streams per step
        key_file = params.get("key_file")
        if key_file is not None and self._base_dir is not None and not Path(key_file).is_absolute():
            params["key_file"] = str(self._base_dir / key_file)
        return cls(**params)

    def identifier_treatments(self) -> dict[str, str]:
        """Column -> the first drop/pseudonymize/mask/fake step that protects it."""
        found: dict[str, str] = {}
        for step in self.planned_steps():
            if step.name in identifier_treatments():
                for column in step.columns:
                    found.setdefault(column, step.name)
        return found

    def untreated_identifiers(self) -> list[str]:
        """Identifier columns that no drop/pseudonymize/mask/fake step touches."""
        treated = self.identifier_treatments()
        kept = {name for name, col in self.columns.items() if col.keep}
        return [c for c in self.to_schema().identifiers if c not in treated and c not in kept]


@dataclass(frozen=True)
class PlannedStep:
    """One step of the policy as an unfitted transform, with where in the policy it came from."""

    name: str
    transform: ColumnTransform
    where: str
    columns: tuple[str, ...]


#: Parameters by which a step reads another column than its own.
_READS = ("name_column", "gender_column")


def _reads(params: Mapping[str, Any]) -> list[str]:
    return [str(params[key]) for key in _READS if params.get(key) is not None]


def _dependency_order(blocks: Mapping[str, list[tuple[Any, ...]]]) -> list[str]:
    """The columns in policy order, except that a column whose steps read another listed column
    comes after it (a stable topological sort); a cycle is refused."""
    needs = {
        column: [c for step in steps for c in _reads(step[1]) if c in blocks and c != column]
        for column, steps in blocks.items()
    }
    order: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 placed

    def place(column: str, path: list[str]) -> None:
        if state.get(column) == 2:
            return
        if state.get(column) == 1:
            cycle = " -> ".join([*path[path.index(column) :], column])
            raise PolicyError(
                f"the column steps read each other in a circle ({cycle}); a fake can build on "
                "another column's fake only one way round"
            )
        state[column] = 1
        for other in needs[column]:
            place(other, [*path, column])
        state[column] = 2
        order.append(column)

    for column in blocks:
        place(column, [])
    return order


def _check_derived_fakes(
    ordered: list[tuple[str, dict[str, Any], str, tuple[str, ...], int]], kept: set[str]
) -> None:
    """A fake e-mail built from ``name_column`` must read a fake name: built from the original
    it would carry the person's real name beside the fake one. Refused unless an earlier step
    fakes that column, or the policy releases it as it is (``keep``)."""
    faked: set[str] = set()
    for name, params, where, columns, _ in ordered:
        source = params.get("name_column")
        if name == "fake" and source is not None and str(source) not in faked | kept:
            raise PolicyError(
                f"{where} (fake): the e-mails would be built from the real values of "
                f"{source!r}, so they would carry the person's real name; fake {source!r} "
                f"first (columns.{source}.steps: [fake: {{kind: name}}]) or leave out "
                "name_column"
            )
        if name == "fake":
            faked.update(columns)
        elif name in identifier_treatments():  # real values gone, and no fake name to build on
            faked.difference_update(columns)


def _plain(value: Any) -> Any:
    """Enums to their values, recursively, so YAML's safe dumper can write them."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """The policy in the YAML file at ``path`` (``Policy.load``).

    Parameters
    ----------
    path : str or path
        The YAML file; paths in it are relative to its folder.

    Returns
    -------
    Policy
        The validated policy.
    """
    return Policy.load(path)


#: A policy is a page of settings. These bounds stop a hostile one (a "billion laughs" of
#: nested aliases expands 1 KB into gigabytes) before it costs time or memory.
MAX_POLICY_BYTES = 1 << 20
MAX_POLICY_VALUES = 100_000


def _load_yaml(text: str, source: str) -> Any:
    """``yaml.safe_load`` with bounds: the text's size, and the number of values it holds once
    its aliases (``*name``) are expanded, counted on the parsed graph before anything is built
    (each node once, so counting costs what parsing did)."""
    if len(text) > MAX_POLICY_BYTES:
        raise PolicyError(
            f"{source}: is {len(text):,} characters; a policy is at most "
            f"{MAX_POLICY_BYTES:,} (is this the data file?)"
        )
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, {}, set()) > MAX_POLICY_VALUES:
            raise PolicyError(
                f"{source}: expands to more than {MAX_POLICY_VALUES:,} values through its "
                "aliases (&anchor / *alias); a policy never needs that many: write it out"
            )
        return loader.construct_document(node)
    except RecursionError as err:
        raise PolicyError(f"{source}: is nested too deeply to be a policy") from err
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise PolicyError(f"{source}:{where}: not valid YAML ({one_line(problem)})") from err
    finally:
        loader.dispose()


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_: set[int]) -> int:
    """How many values ``node`` holds with every alias written out (a cycle counts as too
    many: safe_load would build a structure that contains itself)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        return MAX_POLICY_VALUES + 1
    open_.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        children: list[yaml.Node] = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    else:
        children = []
    for child in children:
        total += _expanded_size(child, sizes, open_)
        if total > MAX_POLICY_VALUES:
            break
    open_.discard(key)
    sizes[key] = total
    return total


def _explain(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors()[:5]:
        loc = ".".join(str(part) for part in e["loc"]) or "(top level)"
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, StepError):
            loc = f"{loc}[{cause.index}]" + (f" ({cause.name})" if cause.name else "")
        if isinstance(cause, ShorthandError):
            loc = f"{loc}.{cause.key}"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            parent = e["loc"][:-1]
            model = _model_at(parent)
            allowed = (
                ", ".join([*model.model_fields, *(SHORTHAND if model is PrivacySettings else ())])
                if model
                else ""
            )
            msg = f"unknown key {e['loc'][-1]!r}; allowed: {allowed}"
        got = e.get("input")
        if e["type"] not in {"extra_forbidden", "value_error"} and not isinstance(got, dict):
            msg = f"{msg}, got {shown(got)}"
        lines.append(f"{source}: {loc}: {msg}")
    more = len(err.errors()) - 5
    if more > 0:
        lines.append(f"... and {more} more")
    return "; ".join(lines)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model a location points into (for listing its allowed keys)."""
    model: type[BaseModel] = Policy
    i = 0
    while i < len(loc):
        key = loc[i]
        if key == "columns" and model is Policy:
            model, i = ColumnPolicy, i + 2  # skip the column name
            continue
        if key == "models" and model is PrivacySettings and i + 2 < len(loc):
            kind = by_name(str(loc[i + 2]))  # models.<index>.<model name>
            if kind is None:
                return None
            model, i = kind, i + 3
            continue
        field = model.model_fields.get(str(key))
        if field is None:
            return None
        sections: dict[str, type[BaseModel]] = {"read": ReadSettings, "privacy": PrivacySettings}
        nested = sections.get(str(key))
        if nested is None:
            return None
        model, i = nested, i + 1
    return model
