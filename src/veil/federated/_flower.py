"""veil's federation on Flower's Message API: a ``ClientApp`` for parties and the key holder,
a ``ServerApp`` whose strategy (:class:`SecureFedAvg`, a Flower ``FedAvg``) only ever adds
what it cannot read, and :class:`LocalGrid`, which runs the same apps in one process.

The run, as the server drives it:

1. ``query.describe`` to every node: parties answer with their table's description
   (:mod:`._data`), the key holder with the public material of its scheme;
2. the parties' descriptions are agreed into one spec (or the run stops, naming the party and
   column that do not fit);
3. ``query.moments``: each party sends ``rows / total`` times its columns' moments, protected;
   the server adds them, the key holder decrypts the sum: the common scaling;
4. each round, ``train``: each party trains from the global weights and sends ``[w, w * delta]``
   (``w = rows / total``), protected; the server adds; the key holder decrypts the sum only;
   the new global model is ``global + sum(w * delta) / sum(w)`` (so a party that drops out is
   simply not in either sum); then ``evaluate`` on each party's own test rows.

Node settings (Flower's ``node_config``): ``role`` (``party`` or ``keyholder``), ``party``
(a name), ``data`` (a table's path), ``secret`` (the key holder's key file), ``public-key``
(a party's copy of the public key, checked against what the server relays).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from logging import WARNING
from typing import Any
from uuid import uuid4

import numpy as np
import pandas as pd

from veil.exceptions import InputError, ParameterError, SecretError
from veil.federated import _data, secure
from veil.federated._dp import ClientDP, charged, privatize
from veil.federated._models import make_model

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")

from flwr.app import (
    ArrayRecord,
    ConfigRecord,
    Context,
    Message,
    MetricRecord,
    RecordDict,
)
from flwr.clientapp import ClientApp
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg
from flwr.supercore.task_identity import TaskIdentity

#: the moments of number columns are large (a mean square of incomes): their own packing
MOMENT_BOUND, MOMENT_PRECISION = 2.0**50, 40

# tables held in memory for in-process runs (``veil fl simulate``): node data "memory:<id>"
_MEMORY: dict[str, Any] = {}


# --------------------------------------------------------------------------------- schemes
def scheme_for(name: str, public: bytes, *, purpose: str = "update",
               secret: Any = None) -> secure.Scheme:  # fmt: skip
    """The scheme ``name`` from its public material (``secret``: the key holder's own)."""
    from veil.federated import paillier

    if name == "none":
        return secure.Plain()
    if name == "ckks":
        return secret if secret is not None else secure.Ckks(public)
    if name == "paillier":
        key = paillier.PublicKey.from_json(public.decode())
        if purpose == "moments":
            return secure.Paillier(key, private=secret, bound=MOMENT_BOUND,
                                   precision=MOMENT_PRECISION)  # fmt: skip
        return secure.Paillier(key, private=secret)
    raise ParameterError(f"encrypt must be one of {secure.SCHEMES}, got {name!r}")


# ------------------------------------------------------------------------------ client app
client_app = ClientApp()


def _party_table(context: Context) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    config = context.node_config
    source = str(config.get("data", ""))
    name = str(config.get("party", f"node {context.node_id}"))
    if source.startswith("memory:"):
        train, test = _MEMORY[source]
        return train, test, name
    from veil.io import read

    if not source:
        raise InputError(f"party {name!r} was started without data (node setting data=PATH)")
    frame = read(source)
    train, test = _data.split(frame, float(config.get("test-fraction", 0.2)),
                              int(config.get("seed", 0)))  # fmt: skip
    return train, test, name


def _keyholder_secret(context: Context) -> tuple[str, bytes, Any]:
    source = str(context.node_config.get("secret", ""))
    if source.startswith("memory:"):
        scheme = _MEMORY[source]
    else:
        from veil.federated.keys import read_secret

        scheme = read_secret(source)
    if isinstance(scheme, secure.Paillier):
        return "paillier", scheme.public(), scheme.private
    if isinstance(scheme, secure.Ckks):
        return "ckks", scheme.public(), scheme
    return "none", b"", None


def _reply(message: Message, **records: Any) -> Message:
    return Message(RecordDict(records), reply_to=message)


def _record(message: Message, key: str) -> Any:
    """A record of a message's content (Flower types its values as a union of everything)."""
    return message.content[key]


def _numpy(record: Any, key: str) -> np.ndarray:
    return np.asarray(record[key].numpy())


def _blob(record: Any, key: str) -> bytes:
    return bytes(_numpy(record, key).tobytes())


def _party_scheme(message: Message, context: Context, purpose: str) -> secure.Scheme:
    config = _record(message, "config")
    name = str(config["encrypt"])
    public = bytes(config["public"])
    if name == "paillier":
        own = str(context.node_config.get("public-key", ""))
        if own:
            from veil.federated import paillier

            given = paillier.read_public_key(own)
            relayed = paillier.PublicKey.from_json(public.decode())
            if given != relayed:
                raise SecretError(
                    f"the public key the server relayed (fingerprint {relayed.fingerprint}) is "
                    f"not the key this party was given ({given.fingerprint}): refusing to send "
                    "an update under it"
                )
        elif not public:
            raise SecretError("no public key arrived: the party will not send a plain update")
    return scheme_for(name, public, purpose=purpose)


@client_app.query("describe")
def _describe(message: Message, context: Context) -> Message:
    role = str(context.node_config.get("role", "party"))
    if role == "keyholder":
        name, public, _ = _keyholder_secret(context)
        return _reply(message, answer=ConfigRecord({"role": role, "encrypt": name,
                                                    "public": public}))  # fmt: skip
    train, _, party = _party_table(context)
    target = str(_record(message, "config")["target"])
    description = _data.describe(train, party=party, target=target)
    return _reply(
        message,
        answer=ConfigRecord({"role": role, "description": json.dumps(description.to_dict())}),
    )


@client_app.query("moments")
def _moments(message: Message, context: Context) -> Message:
    config = _record(message, "config")
    train, _, _ = _party_table(context)
    spec = _data.Spec.from_dict(json.loads(str(config["spec"])))
    return _reply(message, update=_weighted(message, context, "moments", len(train),
                                            _data.moments(train, spec)))  # fmt: skip


def _weighted(message: Message, context: Context, purpose: str, rows: int,
              values: np.ndarray) -> ArrayRecord:  # fmt: skip
    """``[w, w * values]`` with ``w = rows / total rows``, protected: summed over the parties
    it is the weighted average's numerator and denominator (whoever answered)."""
    weight = rows / int(_record(message, "config")["total-rows"])
    protected = _party_scheme(message, context, purpose)
    return _array(protected.encrypt(np.concatenate([[weight], weight * values])))


def _setup(message: Message, context: Context, *, test: bool = False
           ) -> tuple[pd.DataFrame, _data.Spec, np.ndarray, Any]:  # fmt: skip
    """This party's rows (training or test), the spec, the global weights and the model."""
    config = _record(message, "config")
    train, held_out, _ = _party_table(context)
    spec = _data.Spec.from_dict(json.loads(str(config["spec"])))
    model = make_model(str(config["model"]), classes=len(spec.classes), width=spec.width,
                       epochs=int(config["epochs"]))  # fmt: skip
    weights = _numpy(_record(message, "arrays"), "weights")
    return (held_out if test else train), spec, weights, model


@client_app.train()
def _train(message: Message, context: Context) -> Message:
    config = _record(message, "config")
    train, spec, weights, model = _setup(message, context)
    x, y = _data.encode(train, spec)
    # the shuffle's seed from the party's name and the round, not Flower's random node id:
    # the same parties train the same model in one process and across machines
    name = str(context.node_config.get("party", context.node_id))
    seed = zlib.crc32(f"{name}/{config['server-round']}".encode())
    update = model.fit(weights, x, y, seed=seed) - weights
    privacy = _client_dp(config)
    if privacy is not None:
        if not str(context.node_config.get("data", "")).startswith("memory:"):
            _charge(context, privacy, int(config["server-round"]))  # (simulate charges once)
        update = privatize(update, privacy, bound=secure.Paillier.DEFAULT_BOUND)
    return _reply(message, update=_weighted(message, context, "update", len(train), update),
                  metrics=MetricRecord({"num-examples": len(train)}))  # fmt: skip


def _client_dp(config: Any) -> ClientDP | None:
    if float(config.get("dp-epsilon", 0.0)) <= 0:
        return None
    return ClientDP(float(config["dp-epsilon"]), float(config["dp-delta"]),
                    int(config["rounds"]), float(config["dp-clip"]))  # fmt: skip


def _charge(context: Context, privacy: ClientDP, server_round: int) -> None:
    """A party with its own ledger (``ledger`` node setting) reserves the whole run's
    (epsilon, delta) before its first noisy update: a budget too small stops it there."""
    ledger = str(context.node_config.get("ledger", ""))
    if not ledger:
        raise InputError(
            "the run asks for client-level DP but this party has no privacy budget to charge: "
            "create one (`veil budget init DATA --epsilon E --delta D`) and pass --ledger"
        )
    if server_round != 1:
        return
    from veil.dp.budget import Accountant

    epsilon, _ = charged(privacy)
    with Accountant(ledger).spend(epsilon, privacy.delta, what=dp_what(privacy)):
        pass


def dp_what(privacy: ClientDP) -> str:
    """The ledger's line for a run."""
    return (
        f"federated learning: {privacy.rounds} rounds, client-level DP (Gaussian, clip "
        f"{privacy.clip:g}, epsilon {privacy.epsilon_per_round:.3g} per round, zCDP total)"
    )


@client_app.evaluate()
def _evaluate(message: Message, context: Context) -> Message:
    test, spec, weights, model = _setup(message, context, test=True)
    right, rows = model.correct(weights, *_data.encode(test, spec))
    return _reply(message, metrics=MetricRecord({"accuracy": right / max(rows, 1),
                                                 "num-examples": rows}))  # fmt: skip


@client_app.query("decrypt")
def _decrypt(message: Message, context: Context) -> Message:
    if str(context.node_config.get("role", "party")) != "keyholder":
        raise SecretError("only the key holder decrypts, and this node is a party")
    config = _record(message, "config")
    # a sum of one is one party's update: the key holder never opens it (the check slot
    # makes the count true: each update adds 1 there)
    least = int(context.node_config.get("min-parties", 2))
    if int(config["parties"]) < least:
        raise SecretError(f"the key holder decrypts sums of at least {least} parties, and was "
                          f"sent one of {config['parties']}")  # fmt: skip
    name, public, secret = _keyholder_secret(context)
    scheme = scheme_for(name, public, purpose=str(config["purpose"]), secret=secret)
    total = scheme.decrypt(_blob(_record(message, "arrays"), "aggregate"),
                           int(config["count"]), int(config["parties"]))  # fmt: skip
    return _reply(message, arrays=ArrayRecord({"sum": _np_record(total)}))


def _array(blob: bytes) -> ArrayRecord:
    return ArrayRecord({"update": _np_record(np.frombuffer(blob, dtype=np.uint8))})


def _np_record(values: np.ndarray) -> Any:
    from flwr.app import Array

    return Array(np.ascontiguousarray(values))


# ------------------------------------------------------------------------------- strategy
@dataclass
class RoundLog:
    """One round's figures."""

    round: int
    accuracy: float | None = None
    seconds: float = 0.0
    bytes_sent: int = 0
    parties: int = 0
    timing: dict[str, float] = field(default_factory=dict)


class SecureFedAvg(FedAvg):
    """Flower's FedAvg, where the server never reads an update: it adds the parties'
    protected updates (Paillier ciphertexts multiplied, CKKS vectors added, or plain sums for
    ``none``) and asks the key holder to decrypt the sum alone."""

    def __init__(self, scheme: secure.Scheme, *, parties: list[int], keyholder: int | None,
                 config: dict[str, Any], min_parties: int = 2, timeout: float = 600.0,
                 say: Callable[[str], None] = lambda _: None) -> None:  # fmt: skip
        super().__init__(min_train_nodes=min_parties, min_evaluate_nodes=min_parties,
                         min_available_nodes=min_parties, weighted_by_key="num-examples",
                         arrayrecord_key="arrays", configrecord_key="config")  # fmt: skip
        self.scheme = scheme
        self.parties = parties
        self.keyholder = keyholder
        self.config = config
        self.min_parties = min_parties
        self.timeout = timeout
        self.say = say
        self.rounds: list[RoundLog] = []
        self._grid: Grid | None = None
        self._started = 0.0

    def summary(self) -> None:
        """Flower logs this at the start; veil prints its own progress."""

    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                        grid: Grid) -> Iterable[Message]:  # fmt: skip
        """Every party (never the key holder) gets the global weights and the run's config."""
        self._grid = grid
        self._started = time.perf_counter()
        self.rounds.append(RoundLog(server_round))
        record = ConfigRecord({**self.config, "server-round": server_round})
        return [Message(RecordDict({"arrays": arrays, "config": record}), dst_node_id=node,
                        message_type="train") for node in self.parties]  # fmt: skip

    def aggregate_train(self, server_round: int, replies: Iterable[Message]
                        ) -> tuple[ArrayRecord | None, MetricRecord | None]:  # fmt: skip
        """Add the protected updates; the key holder decrypts the sum; FedAvg's step."""
        log = self.rounds[-1]
        good, failed = _split_replies(replies)
        _enough(len(good), len(self.parties), self.min_parties, failed, f"round {server_round}")
        blobs = [_blob(_record(m, "update"), "update") for m in good]
        log.bytes_sent = sum(map(len, blobs))
        log.parties = len(good)
        start = time.perf_counter()
        aggregate = self.scheme.aggregate(blobs)
        log.timing["aggregate"] = time.perf_counter() - start
        assert self._grid is not None
        current = self._current
        start = time.perf_counter()
        total = decrypt_sum(self._grid, self.keyholder, self.scheme, aggregate,
                            count=len(current) + 1, parties=len(good), purpose="update",
                            timeout=self.timeout)  # fmt: skip
        log.timing["decrypt"] = time.perf_counter() - start
        new = current + total[1:] / total[0]
        self._current = new
        return ArrayRecord({"weights": _np_record(new)}), None

    def configure_evaluate(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                           grid: Grid) -> Iterable[Message]:  # fmt: skip
        """Every party scores the new global model on its own test rows."""
        record = ConfigRecord({**self.config, "server-round": server_round})
        return [Message(RecordDict({"arrays": arrays, "config": record}), dst_node_id=node,
                        message_type="evaluate") for node in self.parties]  # fmt: skip

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]
                           ) -> MetricRecord | None:  # fmt: skip
        """Accuracy over all parties' test rows (weighted by their counts)."""
        good, _ = _split_replies(replies)
        rows = sum(int(_record(m, "metrics")["num-examples"]) for m in good)
        right = sum(float(_record(m, "metrics")["accuracy"])
                    * int(_record(m, "metrics")["num-examples"]) for m in good)  # fmt: skip
        log = self.rounds[-1]
        log.accuracy = right / rows if rows else None
        log.seconds = time.perf_counter() - self._started
        self.say(f"round {server_round}: accuracy {log.accuracy:.4f} ({log.parties} parties, "
                 f"{log.seconds:.1f} s, {log.bytes_sent:,} bytes sent)")  # fmt: skip
        return MetricRecord({"accuracy": log.accuracy or 0.0})

    _current: np.ndarray


def _split_replies(replies: Iterable[Message]) -> tuple[list[Message], list[str]]:
    good, failed = [], []
    for m in replies:
        if m.has_error():
            failed.append(f"node {m.metadata.src_node_id}: {m.error.reason}")
        else:
            good.append(m)
    return good, failed


def _enough(answered: int, asked: int, needed: int, failed: list[str], what: str) -> None:
    if answered < needed:
        reasons = ("; " + "; ".join(failed[:3])) if failed else " (no answer before the timeout)"
        raise InputError(
            f"{what}: only {answered} of {asked} parties answered, {needed} needed{reasons}"
        )


def decrypt_sum(grid: Grid, keyholder: int | None, scheme: secure.Scheme, aggregate: bytes, *,
                count: int, parties: int, purpose: str, timeout: float) -> np.ndarray:  # fmt: skip
    """The plain sum, from the key holder (or, for ``none``, read directly)."""
    if keyholder is None:
        return scheme.decrypt(aggregate, count, parties)
    message = Message(RecordDict({
        "arrays": ArrayRecord({"aggregate": _np_record(np.frombuffer(aggregate, np.uint8))}),
        "config": ConfigRecord({"count": count, "parties": parties, "purpose": purpose}),
    }), dst_node_id=keyholder, message_type="query.decrypt")  # fmt: skip
    replies = list(grid.send_and_receive([message], timeout=timeout))
    if not replies:
        raise InputError(f"the key holder did not answer within {timeout:.0f} s")
    if replies[0].has_error():
        raise InputError(f"the key holder could not decrypt: {replies[0].error.reason}")
    return _numpy(_record(replies[0], "arrays"), "sum")


# ------------------------------------------------------------------------------ the run
@dataclass
class Settings:
    """What a run needs (Flower's ``run_config``, or ``veil fl simulate``'s options)."""

    target: str
    rounds: int = 10
    model: str = "logistic"
    encrypt: str = "paillier"
    epochs: int = 1
    parties: int = 3
    min_parties: int = 2
    timeout: float = 600.0
    dp_epsilon: float = 0.0  # > 0: client-level DP over the whole run
    dp_delta: float = 1e-6
    dp_clip: float = 1.0

    def privacy(self) -> ClientDP | None:
        """The run's client-level DP, if asked for."""
        if self.dp_epsilon <= 0:
            return None
        return ClientDP(self.dp_epsilon, self.dp_delta, self.rounds, self.dp_clip)


@dataclass
class Outcome:
    """A finished run: per-round figures, the final weights and the spec to use them."""

    rounds: list[RoundLog]
    weights: np.ndarray
    spec: _data.Spec
    encrypt: str
    model: str
    privacy: dict[str, float] | None = None


def run(grid: Grid, settings: Settings, say: Callable[[str], None] = lambda _: None) -> Outcome:
    """The server's side of a run (see the module's doc)."""
    nodes = _wait_for_nodes(grid, settings.parties + (settings.encrypt != "none"),
                            settings.timeout)  # fmt: skip
    ask = ConfigRecord({"target": settings.target})
    answers = _ask(grid, nodes, "query.describe", RecordDict({"config": ask}), settings.timeout)
    keyholders = [n for n, a in answers.items() if a["answer"]["role"] == "keyholder"]
    parties = [n for n in answers if n not in keyholders]
    if settings.encrypt != "none" and len(keyholders) != 1:
        raise InputError(f"--encrypt {settings.encrypt} needs exactly one key holder node, "
                         f"found {len(keyholders)}")  # fmt: skip
    keyholder = keyholders[0] if keyholders else None
    public = b""
    if keyholder is not None:
        answer = answers[keyholder]["answer"]
        if str(answer["encrypt"]) != settings.encrypt:
            raise InputError(f"the key holder holds a {answer['encrypt']!s} key, but the run asks "
                             f"for --encrypt {settings.encrypt}")  # fmt: skip
        public = bytes(answer["public"])
    descriptions = [_data.Description.from_dict(json.loads(str(answers[n]["answer"]
                    ["description"]))) for n in parties]  # fmt: skip
    spec = _data.agree(descriptions, target=settings.target)
    total = sum(d.rows for d in descriptions)
    say(f"{len(parties)} parties, {total:,} training rows, {spec.width} features; "
        f"updates protected by {settings.encrypt}")  # fmt: skip
    base: dict[str, Any] = {"encrypt": settings.encrypt, "public": public,
                            "total-rows": total, "model": settings.model,
                            "epochs": settings.epochs, "rounds": settings.rounds}  # fmt: skip
    privacy = settings.privacy()
    if privacy is not None:
        base.update({"dp-epsilon": privacy.epsilon, "dp-delta": privacy.delta,
                     "dp-clip": privacy.clip})  # fmt: skip

    # the common scaling, summed under encryption
    record = ConfigRecord({**base, "spec": json.dumps(spec.to_dict())})
    replies = _ask(grid, parties, "query.moments", RecordDict({"config": record}),
                   settings.timeout, needed=settings.min_parties)  # fmt: skip
    moments_scheme = scheme_for(settings.encrypt, public, purpose="moments")
    aggregate = moments_scheme.aggregate([_blob(r["update"], "update") for r in replies.values()])
    summed = decrypt_sum(grid, keyholder, moments_scheme, aggregate,
                         count=2 * len(spec.numbers) + 1, parties=len(replies),
                         purpose="moments", timeout=settings.timeout)  # fmt: skip
    spec = _data.with_scaling(spec, summed[1:] / summed[0])

    model = make_model(settings.model, classes=len(spec.classes), width=spec.width)
    strategy = SecureFedAvg(scheme_for(settings.encrypt, public), parties=parties,
                            keyholder=keyholder,
                            config={**base, "spec": json.dumps(spec.to_dict())},
                            min_parties=settings.min_parties, timeout=settings.timeout,
                            say=say)  # fmt: skip
    strategy._current = model.initial()
    with _quiet_flower():
        result = strategy.start(grid, ArrayRecord({"weights": _np_record(model.initial())}),
                                num_rounds=settings.rounds, timeout=settings.timeout)  # fmt: skip
    weights = _numpy(result.arrays, "weights") if result.arrays else model.initial()
    spent = None
    if privacy is not None:
        epsilon, rho = charged(privacy)  # by OpenDP's own privacy map
        spent = {"epsilon": epsilon, "delta": privacy.delta, "rho": rho, "sigma": privacy.sigma,
                 "clip": privacy.clip, "rounds": privacy.rounds,
                 "epsilon_per_round": privacy.epsilon_per_round}  # fmt: skip
    return Outcome(strategy.rounds, weights, spec, settings.encrypt, settings.model,
                   privacy=spent)  # fmt: skip


def _wait_for_nodes(grid: Grid, count: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(nodes := list(grid.get_node_ids())) < count:
        if time.monotonic() > deadline:
            raise InputError(f"only {len(nodes)} of {count} nodes connected within "
                             f"{timeout:.0f} s")  # fmt: skip
        time.sleep(0.5)
    return nodes


def _ask(grid: Grid, nodes: list[int], kind: str, content: RecordDict, timeout: float, *,
         needed: int | None = None) -> dict[int, Any]:  # fmt: skip
    messages = [Message(content, dst_node_id=n, message_type=kind) for n in nodes]
    good, failed = _split_replies(grid.send_and_receive(messages, timeout=timeout))
    if needed is None and failed:
        raise InputError(failed[0].split(": ", 1)[1] if ": " in failed[0] else failed[0])
    _enough(len(good), len(nodes), needed if needed is not None else len(nodes), failed, kind)
    return {m.metadata.src_node_id: m.content for m in good}


@contextlib.contextmanager
def _quiet_flower() -> Iterator[None]:
    from flwr.supercore.logger import FLOWER_LOGGER

    logger = FLOWER_LOGGER
    level = logger.level
    logger.setLevel(WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


# ------------------------------------------------------------------------------ server app
server_app = ServerApp()


@server_app.main()
def _main(grid: Grid, context: Context) -> None:
    from veil.exceptions import VeilError
    from veil.federated.deploy import DONE, FAILED

    config = dict(context.run_config)
    try:
        settings = Settings(target=str(config["target"]), rounds=int(config.get("rounds", 10)),
                            model=str(config.get("model", "logistic")),
                            encrypt=str(config.get("encrypt", "paillier")),
                            epochs=int(config.get("epochs", 1)),
                            parties=int(config.get("parties", 3)),
                            min_parties=int(config.get("min-parties", 2)),
                            timeout=float(config.get("timeout", 600)),
                            dp_epsilon=float(config.get("dp-epsilon", 0.0)),
                            dp_delta=float(config.get("dp-delta", 1e-6)),
                            dp_clip=float(config.get("dp-clip", 1.0)))  # fmt: skip
        outcome = run(grid, settings, say=print)
        out = str(config.get("output", ""))
        if out:
            from veil.federated.keys import write_model

            write_model(outcome, out)
    except VeilError as err:
        print(f"{FAILED}{err}", flush=True)
        raise
    final = outcome.rounds[-1].accuracy if outcome.rounds else None
    print(f"{DONE}: {len(outcome.rounds)} rounds, final accuracy {final}", flush=True)


# ------------------------------------------------------------------------------- local grid
class LocalGrid(Grid):
    """Flower's ``Grid`` for one process: each message is handled at once by the
    ``ClientApp`` with its node's own context. The same apps, no network (``veil fl
    simulate``); a node can be made to fail or drop out, for tests."""

    def __init__(self, app: ClientApp, node_configs: list[dict[str, Any]]) -> None:
        from flwr.supercore.run import Run

        self.app = app
        self.contexts = {i + 1: Context(run_id=1, node_id=i + 1, node_config=dict(c),
                                        state=RecordDict(), run_config={})
                         for i, c in enumerate(node_configs)}  # fmt: skip
        self.dropped: set[int] = set()
        self._replies: dict[str, Message] = {}
        self._run = Run.create_empty(1)
        TaskIdentity.run_id, TaskIdentity.task_id = 1, 1
        TaskIdentity.node_id = SUPERLINK_NODE_ID

    def set_run(self, run: Any) -> None:
        """Runs are not switched in one process."""

    @property
    def run(self) -> Any:
        """The one run."""
        return self._run

    def create_message(self, content: RecordDict, message_type: str, dst_node_id: int,
                       group_id: str, ttl: float | None = None) -> Message:  # fmt: skip
        """As Flower's grids do."""
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        """The nodes that have not dropped out."""
        return [n for n in self.contexts if n not in self.dropped]

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        """Handle each message now; keep its reply."""
        ids = []
        for message in messages:
            message.metadata.__dict__["_message_id"] = str(uuid4())
            node = message.metadata.dst_node_id
            ids.append(message.metadata.message_id)
            if node in self.dropped:
                continue
            TaskIdentity.node_id = node
            try:
                reply = self.app(message, self.contexts[node])
            except Exception as err:  # a failing party becomes an error reply, as in Flower
                from flwr.app import Error

                reply = Message(Error(code=0, reason=f"{type(err).__name__}: {err}"),
                                reply_to=message)  # fmt: skip
            finally:
                TaskIdentity.node_id = SUPERLINK_NODE_ID
            self._replies[message.metadata.message_id] = reply
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        """The replies there are."""
        return [self._replies.pop(i) for i in list(message_ids) if i in self._replies]

    def send_and_receive(self, messages: Iterable[Message], *,
                         timeout: float | None = None) -> Iterable[Message]:  # fmt: skip
        """Push, then pull: in one process every reply is there at once."""
        return self.pull_messages(self.push_messages(messages))
