"""The pipeline's threads (``veil.io._ahead``): the same items in the same order, the work on
another thread, at most ``depth`` items made ahead, an error raised where its item is taken,
and nothing left running when the caller stops early; several items at once with a copy of
the function each (``in_order``), what one call keeps never seen by another."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from veil.io import Behind, ahead, beside, in_order


class Made:
    """A source that records which thread made each item and how far ahead of the taker it
    ran."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at = n, fail_at
        self.threads: set[str] = set()
        self.made = 0
        self.taken = 0
        self.most_ahead = 0
        self.closed = False

    def __iter__(self) -> Iterator[int]:
        try:
            for i in range(self.n):
                if i == self.fail_at:
                    raise ValueError(f"item {i} cannot be made")
                time.sleep(0.002)
                self.threads.add(threading.current_thread().name)
                self.made += 1
                self.most_ahead = max(self.most_ahead, self.made - self.taken)
                yield i
        finally:
            self.closed = True


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_ahead_gives_every_item_in_order_made_on_its_own_thread(depth: int) -> None:
    source = Made(40)
    got = []
    for item in ahead(iter(source), depth=depth):
        source.taken += 1
        got.append(item)
    assert got == list(range(40))
    assert source.threads == {t for t in source.threads if t.startswith("veil-ahead")}
    assert threading.current_thread().name not in source.threads
    # one being taken, at most depth more made
    assert 1 <= source.most_ahead <= depth + 1
    assert source.closed


def test_ahead_raises_where_the_failing_item_is_taken() -> None:
    source = Made(10, fail_at=4)
    got: list[int] = []

    def take_all() -> None:
        for item in ahead(iter(source)):
            got.append(item)

    with pytest.raises(ValueError, match="item 4 cannot be made"):
        take_all()
    assert got == [0, 1, 2, 3]  # every item before the failing one was handed over


def test_ahead_stopped_early_closes_its_source_and_leaves_no_thread() -> None:
    before = {t.name for t in threading.enumerate()}
    source = Made(1000)
    taken = ahead(iter(source), depth=2)
    assert [next(taken), next(taken)] == [0, 1]
    taken.close()  # the caller stops: e.g. ``head`` returns after its first batch
    assert source.closed
    assert source.made <= 5  # it did not go on making the other 995
    time.sleep(0.05)
    left = {t.name for t in threading.enumerate()} - before
    assert not [name for name in left if name.startswith("veil-ahead")]


def test_ahead_of_nothing() -> None:
    assert list(ahead(iter([]))) == []


def test_behind_runs_in_the_order_submitted_on_its_own_thread() -> None:
    seen: list[tuple[int, str]] = []

    def work(item: int) -> None:
        time.sleep(0.001 * (item % 3))  # uneven work: the order must not depend on it
        seen.append((item, threading.current_thread().name))

    with Behind(work, depth=2) as behind:
        for i in range(30):
            behind.submit(i)
    assert [i for i, _ in seen] == list(range(30))
    assert {name.split("_")[0] for _, name in seen} == {"veil-behind"}


def test_behind_waits_when_depth_items_are_waiting() -> None:
    started = threading.Event()
    release = threading.Event()
    done: list[int] = []

    def work(item: int) -> None:
        started.set()
        release.wait(5)
        done.append(item)

    behind = Behind(work, depth=1)
    behind.submit(0)
    started.wait(5)
    submitted = threading.Event()

    def second() -> None:
        behind.submit(1)  # item 0 is still being worked on: this waits for it
        submitted.set()

    threading.Thread(target=second).start()
    assert not submitted.wait(0.2)
    release.set()
    assert submitted.wait(5)
    behind.finish()
    behind.__exit__(None, None, None)
    assert done == [0, 1]


def test_behind_raises_what_its_function_raised() -> None:
    def work(item: int) -> None:
        if item == 3:
            raise OSError("disk full at item 3")

    def submit_all() -> None:
        with Behind(work) as behind:
            for i in range(10):
                behind.submit(i)

    with pytest.raises(OSError, match="disk full at item 3"):
        submit_all()


def test_behind_left_on_an_error_drops_what_waits() -> None:
    done: list[int] = []

    def work(item: int) -> None:
        time.sleep(0.01)
        done.append(item)

    def fail_midway() -> None:
        with Behind(work, depth=5) as behind:
            for i in range(5):
                behind.submit(i)
            raise KeyError("the caller failed")

    with pytest.raises(KeyError):
        fail_midway()
    assert len(done) < 5  # the ones not started were cancelled


def test_beside_returns_and_raises() -> None:
    assert beside(lambda a, b: a + b, 2, 3).result() == 5
    names = beside(lambda: threading.current_thread().name).result()
    assert names == "veil-beside"

    def fail() -> None:
        raise RuntimeError("broke beside")

    with pytest.raises(RuntimeError, match="broke beside"):
        beside(fail).result()


def test_beside_finishes_its_work_when_the_caller_raises_and_exits(tmp_path: Path) -> None:
    """A caller that raises before ``result()`` (a streamed batch refused while its hashes are
    made) exits only once the work beside it is done: a thread still in C code as the
    interpreter finalizes is ended mid-call, which in Arrow's C++ aborts the process. The
    daemon thread ``beside`` had exited here without writing the file."""
    done = tmp_path / "done"
    script = (
        "import pathlib, time\n"
        "from veil.io import beside\n"
        "def work():\n"
        "    time.sleep(1.5)\n"
        f"    pathlib.Path({str(done)!r}).write_text('written')\n"
        "beside(work)\n"
        "raise SystemExit('refused before the result was taken')\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "refused before the result was taken" in run.stderr
    assert done.read_text() == "written"


class Tallying:
    """A function that keeps what it counted on itself between two steps of one call, as a
    policy step keeps its tallies: two calls sharing it at once mix their counts."""

    def __init__(self) -> None:
        self.counted = 0
        self.peers: set[int] = set()  # the objects that ran (pickled: each thread's own)

    def __call__(self, item: int) -> tuple[int, int, str]:
        self.counted = item
        time.sleep(0.002 * (item % 3))  # another call, if it shared this object, writes now
        return item, self.counted, threading.current_thread().name


def test_in_order_runs_items_at_once_each_thread_with_its_own_copy() -> None:
    fn = Tallying()
    got = list(in_order(fn, range(60), 2))
    assert [item for item, _, _ in got] == list(range(60))  # in order
    assert all(counted == item for item, counted, _ in got)  # each call's tally its own
    threads = {name for _, _, name in got}
    assert len(threads) == 2
    assert all(t.startswith("veil-batch") for t in threads)
    assert fn.counted == 0  # the caller's object was copied, never called


def test_in_order_without_copies_would_mix_the_tallies() -> None:
    """What the copies prevent, shown on the same function shared by two threads."""
    from concurrent.futures import ThreadPoolExecutor

    fn = Tallying()
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(fn, range(60)))
    assert any(counted != item for item, counted, _ in got)


def test_in_order_raises_at_the_failing_item_and_stops() -> None:
    source = Made(1000)
    got: list[int] = []

    def take_all() -> None:
        for value in in_order(Inverse(), iter(source), 2):
            got.append(value)
            source.taken += 1

    with pytest.raises(ZeroDivisionError):
        take_all()
    assert got == [1000 // (i - 5) for i in range(5)]  # every result before the failing one
    assert source.closed
    assert source.made < 20  # stopped near the failing item


class Inverse:
    """1000 // (item - 5): fails on item 5."""

    def __call__(self, item: int) -> int:
        return 1000 // (item - 5)


def test_in_order_of_a_function_that_does_not_pickle_runs_on_the_caller() -> None:
    seen: list[str] = []

    def local(item: int) -> int:  # a closure: no copy can be made of it
        seen.append(threading.current_thread().name)
        return item * 2

    assert list(in_order(local, range(5), 2)) == [0, 2, 4, 6, 8]
    assert set(seen) == {threading.current_thread().name}
    assert list(in_order(Tallying(), [], 2)) == []
