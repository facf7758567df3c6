"""What the federated tests share: parties enrolled in a private folder, and the server's Grid
as a test sees it (every message out and reply in recorded), which attacks subclass."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from flwr.app import Message
from flwr.serverapp import Grid

from veil.federated import _data
from veil.federated.simulation import enrol


def nodes(
    folder: Path,
    tables: list[tuple[str, pd.DataFrame]],
    *,
    encrypt: str = "paillier",
    secret: Any = None,
) -> list[dict[str, Any]]:
    """Node settings for parties holding ``tables`` (each split 80/20) and a key holder."""
    split = [(name, *_data.split(table, 0.2, i)) for i, (name, table) in enumerate(tables)]
    return enrol(folder, split, encrypt=encrypt, secret=secret)


class Watched(Grid):
    """The server's real Grid, with every message it sends and every reply it gets recorded;
    ``outgoing`` and ``incoming`` are where a malicious server acts."""

    def __init__(self, real: Grid) -> None:
        self.real = real
        self.sent: list[Message] = []
        self.replies: list[Message] = []

    def set_run(self, run: Any) -> None:
        self.real.set_run(run)

    @property
    def run(self) -> Any:
        return self.real.run

    def create_message(self, *args: Any, **kwargs: Any) -> Message:
        return self.real.create_message(*args, **kwargs)

    def get_node_ids(self) -> Iterable[int]:
        return self.real.get_node_ids()

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        return self.real.push_messages(messages)

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        return self.real.pull_messages(message_ids)

    def send_and_receive(
        self, messages: Iterable[Message], *, timeout: float | None = None
    ) -> Iterable[Message]:
        out = self.outgoing(list(messages), timeout)
        replies = list(self.real.send_and_receive(out, timeout=timeout))
        self.sent.extend(out)
        self.replies.extend(replies)
        return self.incoming(out, replies)

    def outgoing(self, messages: list[Message], timeout: float | None) -> list[Message]:
        return messages

    def incoming(self, messages: list[Message], replies: list[Message]) -> list[Message]:
        return replies
