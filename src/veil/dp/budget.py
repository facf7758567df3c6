"""One privacy budget per ledger, kept in SQLite so it survives restarts and is shared safely
by concurrent processes.

Every release is *check -> reserve -> compute*: everything that does not depend on the data
(parameters, column names, dtypes, bounds) is checked first and a bad request costs nothing;
``Accountant.spend`` then reserves the cost inside an ``IMMEDIATE`` transaction (the database's
write lock serializes reservations across processes, so two processes can never both take the
last of the budget), and the computation runs. Once it has run the cost is spent, whether it
succeeded or failed: a failure that depends on the data tells something about it (an error
saying that a group holds no number is an answer), so it is never free. A reservation left by a
crashed process keeps counting (the safe way).

Neighbours: epsilon bounds what adding or removing one record can change (``NEIGHBOURS``);
under replace-one neighbours the same mechanisms cost up to twice as much (a histogram 2 epsilon).

Composition: ``sequential`` (epsilons and deltas add up) or ``advanced`` (Dwork, Rothblum and
Vadhan's bound for heterogeneous mechanisms: eps = sqrt(2 ln(1/d') sum eps_i^2) +
sum eps_i (e^eps_i - 1), delta = sum delta_i + d', with d' half the budget's delta).
"""

from __future__ import annotations

import math
import os
import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veil.exceptions import BudgetExceededError, InputError, ParameterError, PrivacyLeakWarning

__all__ = [
    "COMPOSITIONS",
    "NEIGHBOURS",
    "Accountant",
    "Budget",
    "Entry",
    "check_epsilon_delta",
    "dataset_id",
    "default_ledger",
]

LEDGER_ENV = "VEIL_LEDGER"

#: The neighbouring relation every epsilon in veil refers to: said in the CLI, the results and
#: the report, since the same epsilon means twice the protection under replace-one.
NEIGHBOURS = "add/remove one record"


#: Rows sampled to name a ledger's dataset (``dataset_id``).
DATASET_SAMPLE = 10_000


def dataset_id(frame: Any) -> str:
    """The name a ledger gives a dataset: a hash of evenly spaced rows, the row count and the
    columns. It only decides whether to warn that a release reads other data than the
    ledger's; a certificate pins its tables with full hashes."""
    from veil.io import fingerprint

    return fingerprint(frame, sample=DATASET_SAMPLE)


def default_ledger() -> Path:
    """Where the privacy-budget ledger lives unless one is named: ``$VEIL_LEDGER``, else the
    user's data directory (``$XDG_DATA_HOME/veil/budget.db``, by default
    ``~/.local/share/veil/budget.db``) — with the user, never beside the data, where shared
    data folders would hand it to everyone who reads them."""
    named = os.environ.get(LEDGER_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "veil" / "budget.db"


COMPOSITIONS = ("sequential", "advanced")
#: The smallest epsilon one release may spend (OpenDP cannot calibrate 1e-300 either).
MIN_EPSILON = 1e-6
_SCHEMA = """
CREATE TABLE IF NOT EXISTS budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epsilon REAL NOT NULL, delta REAL NOT NULL, composition TEXT NOT NULL,
    dataset TEXT, created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL, what TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL,
    dataset TEXT, status TEXT NOT NULL CHECK (status IN ('reserved', 'spent')), pid INTEGER
);
"""


def check_epsilon_delta(epsilon: float, delta: float = 0.0, *, allow_zero: bool = False) -> None:
    """Validate a privacy-loss pair (as diffprivlib's check_epsilon_delta does)."""
    # bool is an int to Python: epsilon=True would be charged as 1 without a word
    if (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, int | float)
        or not math.isfinite(epsilon)
        or epsilon < 0
    ):
        raise ParameterError(f"epsilon must be a finite non-negative number, got {epsilon!r}")
    if 0 < epsilon < MIN_EPSILON and not allow_zero:
        raise ParameterError(
            f"epsilon must be at least {MIN_EPSILON:g} for a release, got {epsilon!r}: "
            f"below that the noise is over {1 / MIN_EPSILON:,.0f} times what one record can "
            "change, and the answer carries no information"
        )
    if isinstance(delta, bool) or not isinstance(delta, int | float) or not 0 <= delta <= 1:
        raise ParameterError(f"delta must be a number in [0, 1], got {delta!r}")
    if epsilon + delta == 0 and not allow_zero:
        raise ParameterError("epsilon and delta cannot both be zero: that is no release at all")


@dataclass(frozen=True)
class Budget:
    """A privacy loss (epsilon, delta)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        check_epsilon_delta(self.epsilon, self.delta, allow_zero=True)


@dataclass(frozen=True)
class Entry:
    """One charge to the ledger: what was released, when, its epsilon and delta, and the dataset
    it read."""

    id: int
    at: str
    what: str
    epsilon: float
    delta: float
    dataset: str | None
    status: str


def compose(entries: Sequence[tuple[float, float]], composition: str, slack: float) -> Budget:
    """The total privacy loss of ``entries`` (epsilon, delta) under ``composition``."""
    if not entries:
        return Budget(0.0, 0.0)
    epsilons = [e for e, _ in entries]
    deltas = [d for _, d in entries]
    if composition == "sequential" or slack <= 0:
        return Budget(sum(epsilons), min(1.0, sum(deltas)))
    advanced = math.sqrt(2 * math.log(1 / slack) * sum(e * e for e in epsilons)) + sum(
        e * (math.exp(e) - 1) for e in epsilons
    )
    # advanced composition is never worse than sequential: take the better of the two
    if advanced < sum(epsilons):
        return Budget(advanced, min(1.0, sum(deltas) + slack))
    return Budget(sum(epsilons), min(1.0, sum(deltas)))


class Accountant:
    """The budget and ledger in one SQLite file."""

    def __init__(self, path: str | os.PathLike[str], *, other_dataset: bool = False) -> None:
        """The ledger at ``path``. ``other_dataset``: charge releases of a table the ledger was
        not made for (a subset, a new version of the data) on purpose; without it they are
        refused."""
        self.path = Path(path)
        self.other_dataset = other_dataset
        if not self.path.exists():
            raise InputError(
                f"no privacy budget at {self.path}; create one with `veil budget init DATA "
                "--epsilon 3`"
            )
        self._budget = self._read_budget()

    # -- set-up ----------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        budget: Budget,
        *,
        composition: str = "sequential",
        dataset: str | None = None,
        overwrite: bool = False,
    ) -> Accountant:
        """A new ledger at ``path`` holding ``budget`` for one dataset.

        Parameters
        ----------
        path : path
            The SQLite file; refused if it holds a ledger, unless ``overwrite`` (and never if that
            ledger has entries).
        budget : Budget
            The total epsilon (and delta) every release of the dataset may spend.
        composition : str
            ``sequential`` (epsilons add up) or ``zcdp`` (zero-concentrated DP, tighter for many
            Gaussian releases).
        dataset : str, optional
            The dataset's id (``veil.dp.budget.dataset_id``), so releases of other data are refused.

        Returns
        -------
        Accountant

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from veil import dp
        >>> ledger = dp.Accountant.create(pathlib.Path(tempfile.mkdtemp()) / "b.db", dp.Budget(2.0))
        >>> ledger.remaining().epsilon
        2.0
        """
        if composition not in COMPOSITIONS:
            raise ParameterError(
                f"composition must be one of {list(COMPOSITIONS)}, got {composition!r}"
            )
        if budget.epsilon <= 0:
            raise ParameterError(f"the budget's epsilon must be positive, got {budget.epsilon}")
        p = Path(path)
        if p.exists() and not overwrite:
            raise InputError(
                f"a privacy budget already exists at {p}; it is never replaced silently "
                "(`veil budget reset --yes` starts over; --ledger FILE keeps another "
                "dataset's budget apart)"
            )
        p.parent.mkdir(parents=True, exist_ok=True)
        # One exclusive transaction: of two processes creating the same ledger at once, one
        # creates it and the other finds it made (never both "succeed").
        with _connect(p) as db:
            db.execute("BEGIN EXCLUSIVE")
            try:
                made = db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'budget'"
                ).fetchone()
                if made and not overwrite:
                    raise InputError(
                        f"a privacy budget already exists at {p} (made by another process "
                        "just now); it is never replaced silently"
                    )
                if made:
                    spent = db.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
                    if spent:
                        raise InputError(
                            f"the ledger {p} holds {spent} DP release(s); a ledger with "
                            "entries is never reset (move it away, or give another file)"
                        )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                if db.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"
                ).fetchone():
                    db.execute("DELETE FROM sqlite_sequence WHERE name = 'ledger'")  # ids from 1
                db.execute("DELETE FROM budget")
                db.execute(
                    "INSERT INTO budget VALUES (1, ?, ?, ?, ?, ?)",
                    (budget.epsilon, budget.delta, composition, dataset, _now()),
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        return cls(p)

    def _read_budget(self) -> tuple[Budget, str, str | None]:
        try:
            with _connect(self.path) as db:
                row = db.execute(
                    "SELECT epsilon, delta, composition, dataset FROM budget"
                ).fetchone()
        except sqlite3.DatabaseError as err:
            raise InputError(f"{self.path}: not a veil budget ledger ({err})") from err
        if row is None:
            raise InputError(f"{self.path}: the ledger holds no budget; run `veil budget init`")
        return Budget(row[0], row[1]), row[2], row[3]

    @property
    def budget(self) -> Budget:
        """The total budget the ledger was created with."""
        return self._budget[0]

    @property
    def composition(self) -> str:
        """How spending adds up: ``sequential`` or ``zcdp``."""
        return self._budget[1]

    @property
    def dataset(self) -> str | None:
        """The id of the dataset the ledger is for (None if it was made without one)."""
        return self._budget[2]

    # -- reading ---------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """Every release charged to the ledger, oldest first, with its cost and status."""
        with _connect(self.path) as db:
            rows = db.execute(
                "SELECT id, at, what, epsilon, delta, dataset, status FROM ledger ORDER BY id"
            ).fetchall()
        return [Entry(*row) for row in rows]

    def _slack(self) -> float:
        return self.budget.delta / 2 if self.composition == "advanced" else 0.0

    def spent(self) -> Budget:
        """What the spent entries cost together, under the ledger's composition."""
        return compose(
            [(e.epsilon, e.delta) for e in self.entries()], self.composition, self._slack()
        )

    def remaining(self) -> Budget:
        """What is left of the budget: a release costing more is refused."""
        total = self.spent()
        return Budget(
            max(self.budget.epsilon - total.epsilon, 0.0), max(self.budget.delta - total.delta, 0.0)
        )

    # -- spending --------------------------------------------------------------------------
    @contextmanager
    def spend(
        self, epsilon: float, delta: float = 0.0, *, what: str, dataset: str | None = None
    ) -> Iterator[None]:
        """Reserve (epsilon, delta) for ``what`` and spend it when the block ends, whether it
        succeeded or not: the block reads the data, and a failure there tells something about
        it. Check every data-independent parameter before calling this.

        Raises ``BudgetExceededError`` before the block runs when the budget cannot afford it.
        Refuses (``ParameterError``) a ``dataset`` other than the one the ledger was made for,
        unless the accountant was made with ``other_dataset=True``: then it warns
        (``PrivacyLeakWarning``) and counts that data's release here.
        """
        check_epsilon_delta(epsilon, delta)
        if dataset is not None and self.dataset is not None and dataset != self.dataset:
            if not self.other_dataset:
                raise ParameterError(
                    f"the ledger {self.path} was made for dataset {self.dataset}, but {what!r} "
                    f"reads dataset {dataset}: refused, nothing spent; give that table its own "
                    "ledger (--ledger), or pass --other-dataset (other_dataset=True) to charge "
                    "it here on purpose (a subset or a new version of the same data)"
                )
            warnings.warn(
                f"the ledger {self.path} was made for dataset {self.dataset}, but {what!r} "
                f"reads dataset {dataset}: it is charged here, not to that data's own ledger "
                "(--other-dataset: a subset or a new version of the ledger's data)",
                PrivacyLeakWarning,
                stacklevel=3,
            )
        with _connect(self.path) as db:
            db.execute("BEGIN IMMEDIATE")  # the write lock: reservations are serialized
            rows = db.execute("SELECT epsilon, delta FROM ledger").fetchall()
            after = compose([*rows, (epsilon, delta)], self.composition, self._slack())
            if (
                after.epsilon > self.budget.epsilon + 1e-12
                or after.delta > self.budget.delta + 1e-15
            ):
                db.execute("ROLLBACK")
                left = self.remaining()
                raise BudgetExceededError(
                    f"{what!r} asks for epsilon {epsilon:g}, delta {delta:g}, but only epsilon "
                    f"{left.epsilon:g}, delta {left.delta:g} of the budget (epsilon "
                    f"{self.budget.epsilon:g}, delta {self.budget.delta:g}) remain in "
                    f"{self.path}; ask for less, or start a new budget"
                )
            cursor = db.execute(
                "INSERT INTO ledger (at, what, epsilon, delta, dataset, status, pid) "
                "VALUES (?, ?, ?, ?, ?, 'reserved', ?)",
                (_now(), what, epsilon, delta, dataset, os.getpid()),
            )
            entry = cursor.lastrowid
            db.execute("COMMIT")
        try:
            yield
        except BaseException as err:
            with _connect(self.path) as db:
                db.execute(
                    "UPDATE ledger SET status = 'spent', what = ? WHERE id = ?",
                    (f"{what} (failed: {type(err).__name__})", entry),
                )
            raise
        with _connect(self.path) as db:
            db.execute("UPDATE ledger SET status = 'spent' WHERE id = ?", (entry,))

    def reset(self) -> None:
        """Forget every entry (the budget stays)."""
        with _connect(self.path) as db:
            db.execute("DELETE FROM ledger")


#: How long a ledger waits for another process's transaction before giving up.
LOCK_TIMEOUT = 60.0


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    # autocommit mode (isolation_level=None): transactions are explicit, BEGIN IMMEDIATE above
    try:
        db = sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise _ledger_error(path, err) from err
    try:
        db.execute("PRAGMA journal_mode=WAL")
        yield db
    except sqlite3.OperationalError as err:
        raise _ledger_error(path, err) from err
    finally:
        db.close()


def _ledger_error(path: Path, err: sqlite3.Error) -> InputError:
    """The ledger's database errors as what happened and what to do."""
    text = str(err)
    if "locked" in text or "busy" in text:
        return InputError(
            f"ledger {path} is locked: another process has held it for over "
            f"{LOCK_TIMEOUT:.0f} s; wait for that veil run to finish (or end it) and try again"
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return InputError(
            f"ledger {path} cannot be written ({text}); check that its folder exists and is "
            "writable, or give --ledger another file"
        )
    return InputError(f"ledger {path}: {text}")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
