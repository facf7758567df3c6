"""A party's SuperNode that cannot start says why in one line, and one whose port was taken
between choosing and binding it starts again on another (a real ``flower-supernode``)."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import pytest

from veil.exceptions import InputError
from veil.federated import deploy


def test_a_taken_port_is_tried_again_then_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        chosen: list[int] = []

        def always_taken() -> int:
            chosen.append(port)
            return port

        monkeypatch.setattr(deploy, "free_port", always_taken)
        before = set(Path(tempfile.gettempdir()).glob("veil-flower-node-*"))
        said: list[str] = []
        with pytest.raises(InputError) as error:
            deploy.run_node(
                "127.0.0.1:1", {"role": "party"}, tls=None, started=lambda: said.append("up")
            )
    assert len(chosen) == deploy.NODE_ATTEMPTS
    assert said == ["up"]  # the user hears once that the node is starting
    message = str(error.value)
    assert message.startswith("the Flower SuperNode exited with code 1: ")
    assert "address already in use" in message
    assert str(port) in message
    assert "\n" not in message
    # the node's folder (its Flower state and log) is gone
    assert set(Path(tempfile.gettempdir()).glob("veil-flower-node-*")) <= before


def test_the_reason_is_flowers_exit_message_without_colours() -> None:
    log = (
        "\x1b[92mINFO \x1b[0m:      Starting Flower SuperNode\n"
        "\x1b[91mERROR \x1b[0m:   Exit Code: 305\n"
        "Failed to initialize the connection to the SuperLink.\n"
        "[code: 16] the node is not registered\n"
        "The SuperNode could not establish a connection to the SuperLink.\n"
        "\n"
        "For more information, visit: <https://flower.ai/>\n"
        "INFO:     Finished server process [1]\n"
    )
    assert deploy._reason(log) == (
        "Exit Code: 305 Failed to initialize the connection to the SuperLink. "
        "[code: 16] the node is not registered "
        "The SuperNode could not establish a connection to the SuperLink."
    )
    assert deploy._reason("starting\nstopped by a signal\n") == "stopped by a signal"
    assert deploy._reason("") == "it wrote nothing"
