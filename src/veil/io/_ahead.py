"""Two cores in a pipeline: the next batch read while this one is worked on (``ahead``), a
finished batch written while the next one is made (``Behind``), two parts of one batch's
work side by side (``beside``), and two batches worked on at once, their results in order
(``in_order``).

Reading Parquet or CSV, writing Parquet, and hashing large buffers run in C with the GIL
released, so a second thread doing them overlaps the main thread's work. Each helper uses one
thread, in order: the batches, the writes, and whatever state a batch's work keeps (a step's
random draws, a running hash) happen in the same order as without it, so the output is the
same byte for byte. Memory: ``depth`` batches more than one at a time.

``in_order`` runs a function on several batches at once: each of its threads has a copy of
the function of its own (made as a cluster's worker makes one, by pickling it), so that what
a call keeps on its objects (a step's tallies) is never shared, and the results come back in
the batches' order.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["Behind", "ahead", "beside", "in_order", "workers_for_batches"]

T = TypeVar("T")
R = TypeVar("R")
#: The most batches ``workers_for_batches`` works on at once (each is held in memory).
MAX_BATCH_WORKERS = 4
_END = object()


def ahead(items: Iterator[T], depth: int = 1) -> Iterator[T]:
    """``items`` in order, the next ``depth`` made on a thread of their own while the caller
    works on this one. An exception making an item is raised where that item is taken; when
    the caller stops early, ``items`` is closed once the item being made is done."""
    source = iter(items)
    with ThreadPoolExecutor(1, thread_name_prefix="veil-ahead") as pool:
        pending: deque[Future[Any]] = deque(pool.submit(next, source, _END) for _ in range(depth))
        try:
            while True:
                item = pending.popleft().result()
                if item is _END:
                    return
                pending.append(pool.submit(next, source, _END))
                yield item
        finally:
            for future in pending:  # the items being made are dropped (the thread is idle after)
                future.cancel()
            pool.shutdown(wait=True)
            close = getattr(source, "close", None)
            if close is not None:
                close()


class Behind:
    """A function run on a thread of its own, on each item in the order given, while the caller
    makes the next: ``submit`` waits only when ``depth`` items are already waiting, and raises
    the first exception the function raised. Use it as a context manager: leaving it waits for
    every item (and raises what the function raised); leaving on an exception drops the items
    still waiting."""

    def __init__(self, fn: Callable[[Any], None], depth: int = 1) -> None:
        self.fn, self.depth = fn, depth
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="veil-behind")
        self._pending: deque[Future[None]] = deque()

    def submit(self, item: Any) -> None:
        """Run the function on ``item`` after the items before it (waiting while ``depth``
        wait already; raising what the function raised on an earlier one)."""
        while len(self._pending) >= self.depth:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self.fn, item))

    def finish(self) -> None:
        """Wait for every item submitted (raising what the function raised)."""
        while self._pending:
            self._pending.popleft().result()

    def __enter__(self) -> Behind:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            if kind is None:
                self.finish()
        finally:
            for future in self._pending:
                future.cancel()
            self._pool.shutdown(wait=True)


def beside(fn: Callable[..., T], *args: Any) -> Future[T]:
    """``fn(*args)`` started on a thread of its own while the caller does something else;
    ``result()`` waits for it and returns (or raises) what it did. The arguments must not be
    changed meanwhile.

    The thread is not a daemon: a caller that raises before ``result()`` (a batch refused
    while its hashes are made) leaves the interpreter waiting for it at exit. A daemon thread
    would still be in Arrow's or hashlib's C code as the interpreter finalizes, and a thread
    taking the GIL back then is ended mid-call (in C++ code, an abort)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as err:  # handed to whoever waits for the result
            future.set_exception(err)

    threading.Thread(target=run, name="veil-beside", daemon=False).start()
    return future


def workers_for_batches() -> int:
    """How many batches a pass works on at once: one per core, at most ``MAX_BATCH_WORKERS``
    (each batch worked on is in memory)."""
    return max(1, min(MAX_BATCH_WORKERS, os.cpu_count() or 1))


def in_order(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """``fn(item)`` of each of ``items``, in their order, ``workers`` at a time on threads of
    their own while the caller takes the results. Each thread runs a copy of ``fn`` of its own
    (pickled and loaded, as a cluster's worker gets it); a function that does not pickle runs
    on the caller's thread, one item at a time. An exception is raised where its item's result
    is taken; the items after it are dropped. Memory: ``workers`` items and their results."""
    try:
        blob = pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL) if workers > 1 else None
    except (pickle.PicklingError, TypeError, AttributeError):
        blob = None
    if blob is None:
        yield from map(fn, items)
        return
    local = threading.local()

    def run(item: T) -> R:
        own = getattr(local, "fn", None)
        if own is None:
            own = local.fn = pickle.loads(blob)  # veil's own bytes, made just above
        result: R = own(item)
        return result

    source = iter(items)
    with ThreadPoolExecutor(workers, thread_name_prefix="veil-batch") as pool:
        pending: deque[Future[R]] = deque()
        try:
            for item in source:
                pending.append(pool.submit(run, item))
                if len(pending) == workers:
                    break
            while pending:
                result = pending.popleft().result()
                following = next(source, _END)  # the next item in before the caller takes this
                if following is not _END:
                    pending.append(pool.submit(run, following))  # type: ignore[arg-type]
                yield result
        finally:
            for future in pending:  # the items not started are dropped; the running ones end
                future.cancel()
            close = getattr(source, "close", None)
            if close is not None:
                close()
