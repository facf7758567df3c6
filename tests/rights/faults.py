"""kill -9 at a chosen point of a rights request: every durable step veil takes (a journal
write, a database commit, a file or object written or removed) is counted, and a forked
child sends itself SIGKILL just before the k-th. Steps are atomic on their own (a rename, a
transaction, a PUT), so the points between them are every state a real kill can leave."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from veil.rights._files import FileUnit, ObjectUnit
from veil.rights._journal import Journal

_STEPS = [
    (FileUnit, "write"),
    (FileUnit, "delete"),
    (ObjectUnit, "write"),
    (ObjectUnit, "delete"),
    (Journal, "save"),
    (Journal, "close"),
]


@contextmanager
def counted(before: Callable[[], None]) -> Iterator[None]:
    """Call ``before()`` ahead of every durable step while the block runs."""
    originals = [(cls, name, getattr(cls, name)) for cls, name in _STEPS]

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            before()
            return method(*args, **kwargs)

        return step

    def on_commit(connection: Any) -> None:
        before()

    for cls, name, method in originals:
        setattr(cls, name, wrap(method))
    sa.event.listen(sa.engine.Engine, "commit", on_commit)
    try:
        yield
    finally:
        sa.event.remove(sa.engine.Engine, "commit", on_commit)
        for cls, name, method in originals:
            setattr(cls, name, method)


def steps_of(request: Callable[[], Any]) -> int:
    """Run ``request`` to the end; how many durable steps it took."""
    count = 0

    def tick() -> None:
        nonlocal count
        count += 1

    with counted(tick):
        request()
    return count


def killed_at(request: Callable[[], Any], step: int) -> bool:
    """Run ``request`` in a forked child killed by SIGKILL just before its ``step``-th durable
    step (1-based); True when it was killed, False when it finished first."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the test runner
        count = 0

        def tick() -> None:
            nonlocal count
            count += 1
            if count == step:
                os.kill(os.getpid(), signal.SIGKILL)

        try:
            with counted(tick):
                request()
        except BaseException:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the request failed in the child before the kill"
    return False
