"""veil's federation on Flower's Message API: a ``ClientApp`` for parties and the key holder,
and a ``ServerApp`` whose strategy (:class:`SecureFedAvg`, a Flower ``FedAvg``) only ever adds
what it cannot read. The same apps run deployed (``veil fl server/keyholder/client``) and in
Flower's simulation engine (``veil fl simulate``).

The run, as the server drives it:

1. ``query.describe`` to every node: the key holder answers with its public material and this
   run's nonce; parties with their table's description (:mod:`._data`) or, under DP, only
   that they hold the public domain's columns;
2. the parties' descriptions are agreed into one spec (or the run stops, naming the party and
   column that do not fit); under DP the spec is the public domain's;
3. ``query.moments`` (not under DP): each party sends ``rows / total`` times its columns'
   moments, protected and signed; the server adds them, the key holder checks the pieces and
   decrypts the sum: the common scaling;
4. each round, ``train``: each party trains from the global weights and sends ``[w, w * delta]``
   (``w = rows / total``, or 1 under DP), protected and signed; the server adds them and sends
   the sum with every signed piece to the key holder, which decrypts it only if the pieces are
   this round's, of enough distinct enrolled parties, and multiply to that sum; the new global
   model is ``global + sum(w * delta) / sum(w)``; then ``evaluate`` on each party's own test
   rows (not under DP).

Node settings (Flower's ``node_config``): ``role`` (``party`` or ``keyholder``), ``party``
(a name), ``data`` (a table's path; ``test-data`` if already split), ``public-key`` (the key
holder's public key, the only one a party encrypts under), ``signing-key`` (a party's Ed25519
key), ``secret`` and ``roster`` (the key holder's key file and the parties' signing keys),
``min-parties``, ``ledger``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from logging import WARNING
from pathlib import Path
from typing import Any

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
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg

#: the fewest parties whose encrypted updates are summed: with two, each party reads the
#: other's update from the next model (its own is known), and encryption protects nothing
MIN_ENCRYPTED_PARTIES = 3


def fewest_parties(encrypt: str, given: int | None = None) -> int:
    """The run's fewest parties: as given, else 3 with encryption (2 without)."""
    if given is not None:
        return given
    return MIN_ENCRYPTED_PARTIES if encrypt != "none" else 2


#: the moments of number columns are large (a mean square of incomes): their own packing
MOMENT_BOUND, MOMENT_PRECISION = 2.0**50, 40


# --------------------------------------------------------------------------------- schemes
def scheme_for(
    name: str, public: bytes, *, purpose: str = "update", secret: Any = None
) -> secure.Scheme:
    """The scheme ``name`` from its public material (``secret``: the key holder's own)."""
    from veil.federated import paillier

    if name == "none":
        return secure.Plain()
    if name == "ckks":
        return secret if secret is not None else secure.Ckks(public)
    if name == "paillier":
        key = paillier.PublicKey.from_json(public.decode())
        if purpose == "moments":
            return secure.Paillier(
                key, private=secret, bound=MOMENT_BOUND, precision=MOMENT_PRECISION
            )
        return secure.Paillier(key, private=secret)
    raise ParameterError(f"encrypt must be one of {secure.SCHEMES}, got {name!r}")


# ------------------------------------------------------------------------------ client app
client_app = ClientApp()


def _party_table(context: Context) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    config = context.node_config
    source = str(config.get("data", ""))
    name = str(config.get("party", f"node {context.node_id}"))
    from veil.io import read

    if not source:
        raise InputError(f"party {name!r} was started without data (node setting data=PATH)")
    frame = read(source)
    if config.get("test-data"):  # already split (``veil fl simulate``)
        return frame, read(str(config["test-data"])), name
    train, test = _data.split(
        frame, float(config.get("test-fraction", 0.2)), int(config.get("seed", 0))
    )
    return train, test, name


def _keyholder_secret(context: Context) -> tuple[str, bytes, Any]:
    from veil.federated.keyfiles import read_secret

    scheme = read_secret(str(context.node_config.get("secret", "")))
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
    """The scheme this party encrypts under: the public material it was given at enrolment
    (node setting ``public-key``), never only what the server relays (a server could relay a
    key of its own and read the update)."""
    config = _record(message, "config")
    name = str(config["encrypt"])
    if name == "none":
        if str(context.node_config.get("encrypt", "")) not in ("", "none"):
            raise SecretError(
                "the server asks for plain updates, but this party was enrolled for encrypted "
                "ones: refusing to send its update in clear"
            )
        return secure.Plain()
    own = str(context.node_config.get("public-key", ""))
    if not own:
        raise SecretError(
            "this party was not given the key holder's public key (--public-key): it will not "
            "encrypt under a key only the server vouches for"
        )
    given = _given_public(own)
    mine = _scheme(name, given, purpose)
    if mine.fingerprint() != _scheme(name, bytes(config["public"]), "update").fingerprint():
        raise SecretError(
            "the public key the server relayed is not the key this party was given: refusing "
            "to send an update under it"
        )
    return mine


def _given_public(path: str) -> bytes:
    """The public key a party was given, read and checked once per version of its file (a
    CKKS context is ~2 MB: loading it for every message of a run would be wasted)."""
    stat = Path(path).stat() if Path(path).exists() else None
    return _read_public(path, stat.st_mtime_ns if stat else 0, stat.st_size if stat else 0)


@functools.lru_cache(maxsize=4)
def _read_public(path: str, mtime: int, size: int) -> bytes:
    from veil.federated.keyfiles import read_public

    return read_public(path)


@functools.lru_cache(maxsize=8)
def _scheme(name: str, public: bytes, purpose: str) -> secure.Scheme:
    """:func:`scheme_for` from public material, once per key and purpose in this process."""
    return scheme_for(name, public, purpose=purpose)


@client_app.query("describe")
def _describe(message: Message, context: Context) -> Message:
    role = str(context.node_config.get("role", "party"))
    if role == "keyholder":
        name, public, _ = _keyholder_secret(context)
        nonce = _keyholder_state(context)[0]
        return _reply(
            message,
            answer=ConfigRecord({"role": role, "encrypt": name, "public": public, "nonce": nonce}),
        )
    train, _, party = _party_table(context)
    config = _record(message, "config")
    target = str(config["target"])
    if "domain" in config:  # under DP: the public domain, nothing about the table is sent
        domain = _data.Domain.from_json(str(config["domain"]))
        domain.check(train, party=party, target=target)
        return _reply(message, answer=ConfigRecord({"role": role, "party": party}))
    description = _data.describe(train, party=party, target=target)
    return _reply(
        message,
        answer=ConfigRecord({"role": role, "description": json.dumps(description.to_dict())}),
    )


@client_app.query("moments")
def _moments(message: Message, context: Context) -> Message:
    config = _record(message, "config")
    if "dp-epsilon" in config:
        raise SecretError(
            "under DP a party sends no moments of its columns (they would leave "
            "outside the guarantee): the server asked for them"
        )
    train, _, _ = _party_table(context)
    spec = _data.Spec.from_dict(json.loads(str(config["spec"])))
    return _reply(
        message, **_weighted(message, context, "moments", 0, len(train), _data.moments(train, spec))
    )


def _weighted(
    message: Message, context: Context, purpose: str, round: int, rows: int, values: np.ndarray
) -> dict[str, Any]:
    """``[w, w * values]``, protected and signed: summed over the parties it is the weighted
    average's numerator and denominator (whoever answered). ``w = rows / total rows``, or 1
    under DP (a row count is not sent, even inside a sum)."""
    config = _record(message, "config")
    weight = 1.0 if "dp-epsilon" in config else rows / int(config["total-rows"])
    protected = _party_scheme(message, context, purpose)
    blob = protected.encrypt(np.concatenate([[weight], weight * values]))
    records: dict[str, Any] = {"update": _array(blob)}
    if protected.name != "none":
        signer = _signer(context)
        signature = signer.sign(nonce=str(config["nonce"]), purpose=purpose, round=round, blob=blob)
        records["signed"] = ConfigRecord({"party": signer.party, "signature": signature})
    return records


def _signer(context: Context) -> Any:
    from veil.federated.signing import read_signer

    path = str(context.node_config.get("signing-key", ""))
    if not path:
        raise SecretError(
            "this party has no signing key (--signing-key, made by `veil fl "
            "certs`): the key holder decrypts only signed contributions"
        )
    signer = read_signer(path)
    name = str(context.node_config.get("party", signer.party))
    if name != signer.party:
        raise SecretError(
            f"the signing key was made for {signer.party!r}, and this party is {name!r}"
        )
    return signer


def _setup(
    message: Message, context: Context, *, test: bool = False
) -> tuple[pd.DataFrame, _data.Spec, np.ndarray, Any]:
    """This party's rows (training or test), the spec, the global weights and the model."""
    config = _record(message, "config")
    train, held_out, _ = _party_table(context)
    spec = _data.Spec.from_dict(json.loads(str(config["spec"])))
    model = make_model(
        str(config["model"]),
        classes=len(spec.classes),
        width=spec.width,
        epochs=int(config["epochs"]),
    )
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
    server_round = int(config["server-round"])
    seed = zlib.crc32(f"{name}/{server_round}".encode())
    update = model.fit(weights, x, y, seed=seed) - weights
    privacy = _client_dp(config)
    if privacy is None:
        return _reply(
            message,
            **_weighted(message, context, "update", server_round, len(train), update),
            metrics=MetricRecord({"num-examples": len(train)}),
        )
    if str(context.node_config.get("dp-charged", "")) != "owner":
        _charge(context, privacy, server_round)  # (simulate: the table's owner charged it)
    update = privatize(update, privacy, bound=secure.Paillier.DEFAULT_BOUND)
    # no row count, even as a metric: under DP only the noisy update leaves
    return _reply(
        message, **_weighted(message, context, "update", server_round, len(train), update)
    )


def _client_dp(config: Any) -> ClientDP | None:
    if float(config.get("dp-epsilon", 0.0)) <= 0:
        return None
    return ClientDP(
        float(config["dp-epsilon"]),
        float(config["dp-delta"]),
        int(config["rounds"]),
        float(config["dp-clip"]),
    )


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
    """The ledger's line for a run: each charged release, and what else left (nothing)."""
    return (
        f"federated learning: {privacy.rounds} noisy model updates (Gaussian, clip "
        f"{privacy.clip:g}, epsilon {privacy.epsilon_per_round:.3g} per round, zCDP total); "
        "nothing else left the party (features from the public domain, equal weights, no "
        "counts, moments or accuracies)"
    )


@client_app.evaluate()
def _evaluate(message: Message, context: Context) -> Message:
    if "dp-epsilon" in _record(message, "config"):
        raise SecretError(
            "under DP a party reports no accuracy on its rows (it would leave "
            "outside the guarantee): the server asked for one"
        )
    test, spec, weights, model = _setup(message, context, test=True)
    right, rows = model.correct(weights, *_data.encode(test, spec))
    return _reply(
        message, metrics=MetricRecord({"accuracy": right / max(rows, 1), "num-examples": rows})
    )


def _keyholder_state(context: Context) -> tuple[str, set[str]]:
    """This run's nonce (drawn by the key holder, so nothing signed for another run verifies)
    and the (purpose, round)s it has decrypted, kept in the node's state for the run."""
    record = context.state.config_records.get("veil-keyholder")
    if record is None:
        record = ConfigRecord({"nonce": secrets.token_hex(16), "done": ""})
        context.state["veil-keyholder"] = record
    done = str(record["done"])
    return str(record["nonce"]), set(done.split("\n")) - {""}


def _mark_done(context: Context, what: str) -> None:
    record = context.state.config_records["veil-keyholder"]
    record["done"] = "\n".join(sorted({*str(record["done"]).split("\n"), what} - {""}))


@client_app.query("decrypt")
def _decrypt(message: Message, context: Context) -> Message:
    """Decrypt a sum only if it is the product of this round's contributions of at least
    ``min-parties`` distinct enrolled parties, each with its signature; once per round."""
    if str(context.node_config.get("role", "party")) != "keyholder":
        raise SecretError("only the key holder decrypts, and this node is a party")
    from veil.federated.signing import Roster, read_roster

    config = _record(message, "config")
    purpose, server_round = str(config["purpose"]), int(config["round"])
    nonce, done = _keyholder_state(context)
    source = str(context.node_config.get("roster", ""))
    if not source:
        raise SecretError(
            "the key holder has no roster of the parties' signing keys "
            "(--roster): it decrypts nothing it cannot attribute"
        )
    roster = Roster.from_json(source) if source.lstrip().startswith("{") else read_roster(source)
    signers = [str(s) for s in config.get("signers", [])]
    signatures = [bytes(s) for s in config.get("signatures", [])]
    arrays = _record(message, "arrays")
    least = max(
        MIN_ENCRYPTED_PARTIES, int(context.node_config.get("min-parties", MIN_ENCRYPTED_PARTIES))
    )
    if len(signers) != len(signatures) or len(signers) != len(arrays) - 1:
        raise SecretError(
            "the decryption request does not carry one signature per contribution: refusing"
        )
    if len(set(signers)) != len(signers):
        raise SecretError("the decryption request counts one party's contribution twice: refusing")
    if len(signers) < least:
        raise SecretError(
            f"the key holder decrypts sums of at least {least} parties' signed "
            f"contributions, and was sent {len(signers)}"
        )
    if f"{purpose}/{server_round}" in done:
        raise SecretError(
            f"{purpose} round {server_round} of this run was decrypted already: a second sum of "
            "the same round would give away a difference"
        )
    pieces = [_blob(arrays, f"piece-{i}") for i in range(len(signers))]
    for party, signature, piece in zip(signers, signatures, pieces, strict=True):
        roster.verify(
            nonce=nonce,
            purpose=purpose,
            round=server_round,
            party=party,
            blob=piece,
            signature=signature,
        )
    name, public, secret = _keyholder_secret(context)
    scheme = scheme_for(name, public, purpose=purpose, secret=secret)
    aggregate = scheme.aggregate(pieces)  # the key holder's own product of the signed pieces
    if aggregate != _blob(arrays, "aggregate"):
        raise SecretError(
            "the sum the server sent is not the product of the signed "
            "contributions (it was altered): refusing to decrypt it"
        )
    total = scheme.decrypt(aggregate, int(config["count"]), len(signers))
    # recorded with the answer (Flower keeps a node's state when it replies; every refusal
    # above returns nothing, so a refused request needs no record). Flower's SuperNode handles
    # one message at a time, so two requests for one round cannot both pass this point.
    _mark_done(context, f"{purpose}/{server_round}")
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
    weights: np.ndarray | None = None  # the global model after the round


class SecureFedAvg(FedAvg):
    """Flower's FedAvg, where the server never reads an update: it adds the parties'
    protected updates (Paillier ciphertexts multiplied, CKKS vectors added, or plain sums for
    ``none``) and asks the key holder to decrypt the sum alone."""

    def __init__(
        self,
        scheme: secure.Scheme,
        *,
        parties: list[int],
        keyholder: int | None,
        config: dict[str, Any],
        min_parties: int = 2,
        timeout: float = 600.0,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        super().__init__(
            min_train_nodes=min_parties,
            min_evaluate_nodes=min_parties,
            min_available_nodes=min_parties,
            weighted_by_key="num-examples",
            arrayrecord_key="arrays",
            configrecord_key="config",
        )
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

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        """Every party (never the key holder) gets the global weights and the run's config."""
        self._grid = grid
        self._started = time.perf_counter()
        self.rounds.append(RoundLog(server_round))
        record = ConfigRecord({**self.config, "server-round": server_round})
        return [
            Message(
                RecordDict({"arrays": arrays, "config": record}),
                dst_node_id=node,
                message_type="train",
            )
            for node in self.parties
        ]

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
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
        total = decrypt_sum(
            self._grid,
            self.keyholder,
            self.scheme,
            aggregate,
            count=len(current) + 1,
            replies=good,
            purpose="update",
            round=server_round,
            timeout=self.timeout,
        )
        log.timing["decrypt"] = time.perf_counter() - start
        new = current + total[1:] / total[0]
        self._current = new
        log.weights = new
        return ArrayRecord({"weights": _np_record(new)}), None

    def configure_evaluate(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        """Every party scores the new global model on its own test rows (not under DP: a
        party's accuracy on its rows is not covered by the guarantee)."""
        if "dp-epsilon" in self.config:
            return []
        record = ConfigRecord({**self.config, "server-round": server_round})
        return [
            Message(
                RecordDict({"arrays": arrays, "config": record}),
                dst_node_id=node,
                message_type="evaluate",
            )
            for node in self.parties
        ]

    def aggregate_evaluate(
        self, server_round: int, replies: Iterable[Message]
    ) -> MetricRecord | None:
        """Accuracy over all parties' test rows (weighted by their counts)."""
        good, _ = _split_replies(replies)
        log = self.rounds[-1]
        log.seconds = time.perf_counter() - self._started
        if "dp-epsilon" in self.config:
            self.say(
                f"round {server_round}: ({log.parties} parties, {log.seconds:.1f} s, "
                f"{log.bytes_sent:,} bytes sent; no accuracy under DP)"
            )
            return None
        rows = sum(int(_record(m, "metrics")["num-examples"]) for m in good)
        right = sum(
            float(_record(m, "metrics")["accuracy"]) * int(_record(m, "metrics")["num-examples"])
            for m in good
        )
        log.accuracy = right / rows if rows else None
        self.say(
            f"round {server_round}: accuracy {log.accuracy:.4f} ({log.parties} parties, "
            f"{log.seconds:.1f} s, {log.bytes_sent:,} bytes sent)"
        )
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


def decrypt_sum(
    grid: Grid,
    keyholder: int | None,
    scheme: secure.Scheme,
    aggregate: bytes,
    *,
    count: int,
    replies: list[Message],
    purpose: str,
    round: int,
    timeout: float,
) -> np.ndarray:
    """The plain sum, from the key holder (or, for ``none``, read directly). The key holder is
    sent the sum and every signed piece it is made of: it checks them before it decrypts."""
    if keyholder is None:
        return scheme.decrypt(aggregate, count, len(replies))
    arrays = {"aggregate": _np_record(np.frombuffer(aggregate, np.uint8))}
    signers, signatures = [], []
    for i, reply in enumerate(replies):
        arrays[f"piece-{i}"] = _record(reply, "update")["update"]
        if "signed" not in reply.content:
            raise InputError(
                f"node {reply.metadata.src_node_id} sent an unsigned update: the "
                "key holder would refuse the sum"
            )
        signed = _record(reply, "signed")
        signers.append(str(signed["party"]))
        signatures.append(bytes(signed["signature"]))
    message = Message(
        RecordDict(
            {
                "arrays": ArrayRecord(arrays),
                "config": ConfigRecord(
                    {
                        "count": count,
                        "parties": len(replies),
                        "purpose": purpose,
                        "round": round,
                        "signers": signers,
                        "signatures": signatures,
                    }
                ),
            }
        ),
        dst_node_id=keyholder,
        message_type="query.decrypt",
    )
    answers = list(grid.send_and_receive([message], timeout=timeout))
    if not answers:
        raise InputError(f"the key holder did not answer within {timeout:.0f} s")
    if answers[0].has_error():
        raise InputError(f"the key holder refused to decrypt: {_reason(answers[0])}")
    return _numpy(_record(answers[0], "arrays"), "sum")


def _reason(message: Message) -> str:
    """A failed node's one line (Flower wraps the exception's text)."""
    reason = str(message.error.reason)
    for kind in ("SecretError", "InputError", "ParameterError"):
        if f"{kind}:" in reason:
            reason = reason.split(f"{kind}:", 1)[1]
    return reason.strip().splitlines()[0] if reason.strip() else reason


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
    min_parties: int = MIN_ENCRYPTED_PARTIES
    timeout: float = 600.0
    dp_epsilon: float = 0.0  # > 0: client-level DP over the whole run
    dp_delta: float = 1e-6
    dp_clip: float = 1.0
    domain: str = ""  # under DP: the public domain (JSON), what the features are made from

    def check(self) -> None:
        """Refuse, before anything is sent, a run whose protection would be void."""
        if self.encrypt not in secure.SCHEMES:
            raise ParameterError(f"--encrypt must be one of {secure.SCHEMES}, got {self.encrypt!r}")
        if self.encrypt != "none" and self.min_parties < MIN_ENCRYPTED_PARTIES:
            raise ParameterError(
                f"--min-parties {self.min_parties} with --encrypt {self.encrypt}: with two "
                "parties each reads the other's update from the next model, so encryption "
                f"would protect nothing; use at least {MIN_ENCRYPTED_PARTIES} parties"
            )
        if self.parties < self.min_parties:
            raise ParameterError(
                f"--parties {self.parties} is fewer than --min-parties {self.min_parties}"
            )
        if self.privacy() is not None:
            if not self.domain:
                raise ParameterError(
                    "--epsilon needs --domain FILE: the public bounds of each number column "
                    "and the categories of each category column (and the target's classes); "
                    "learnt from the parties' rows they would leave outside the guarantee"
                )
            _data.Domain.from_json(self.domain).check_target(self.target)

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
    privacy: dict[str, Any] | None = None
    disclosed: list[str] = field(default_factory=list)


#: what leaves a party in clear in a run without DP (the README's list)
DISCLOSED = [
    "each party's training row count (in its description, and with each update)",
    "each party's columns, their kinds, every category value it holds, and which of them are "
    "5% of its rows or more",
    "why a column was left out (a direct identifier, free text, near-unique values)",
    "each party's accuracy and test row count on its own test rows, every round",
]
#: what leaves a party in clear in a run under DP
DISCLOSED_DP = ["that the party holds the public domain's columns (the run stops otherwise)"]


def run(grid: Grid, settings: Settings, say: Callable[[str], None] = lambda _: None) -> Outcome:
    """The server's side of a run (see the module's doc)."""
    settings.check()
    privacy = settings.privacy()
    nodes = _wait_for_nodes(grid, settings.parties + (settings.encrypt != "none"), settings.timeout)
    ask: dict[str, Any] = {"target": settings.target}
    if privacy is not None:
        ask["domain"] = settings.domain
    answers = _ask(
        grid, nodes, "query.describe", RecordDict({"config": ConfigRecord(ask)}), settings.timeout
    )
    keyholder, public, nonce = _keyholder(answers, settings)
    parties = [n for n, a in answers.items() if a["answer"]["role"] != "keyholder"]
    base: dict[str, Any] = {
        "encrypt": settings.encrypt,
        "public": public,
        "nonce": nonce,
        "model": settings.model,
        "epochs": settings.epochs,
        "rounds": settings.rounds,
    }
    if privacy is None:
        spec = _agreed_spec(grid, answers, parties, keyholder, base, settings, say)
    else:
        spec = _data.Domain.from_json(settings.domain).spec(settings.target)
        say(
            f"{len(parties)} parties, {spec.width} features from the public domain; updates "
            f"protected by {settings.encrypt}, client-level DP"
        )
        base.update(
            {"dp-epsilon": privacy.epsilon, "dp-delta": privacy.delta, "dp-clip": privacy.clip}
        )

    model = make_model(settings.model, classes=len(spec.classes), width=spec.width)
    strategy = SecureFedAvg(
        scheme_for(settings.encrypt, public),
        parties=parties,
        keyholder=keyholder,
        config={**base, "spec": json.dumps(spec.to_dict())},
        min_parties=settings.min_parties,
        timeout=settings.timeout,
        say=say,
    )
    strategy._current = model.initial()
    with _quiet_flower():
        result = strategy.start(
            grid,
            ArrayRecord({"weights": _np_record(model.initial())}),
            num_rounds=settings.rounds,
            timeout=settings.timeout,
        )
    weights = _numpy(result.arrays, "weights") if result.arrays else model.initial()
    return Outcome(
        strategy.rounds,
        weights,
        spec,
        settings.encrypt,
        settings.model,
        privacy=_spent(privacy),
        disclosed=list(DISCLOSED if privacy is None else DISCLOSED_DP),
    )


def _keyholder(answers: dict[int, Any], settings: Settings) -> tuple[int | None, bytes, str]:
    """The key holder node (exactly one when the run encrypts), its public key and nonce."""
    keyholders = [n for n, a in answers.items() if a["answer"]["role"] == "keyholder"]
    if settings.encrypt != "none" and len(keyholders) != 1:
        raise InputError(
            f"--encrypt {settings.encrypt} needs exactly one key holder node, "
            f"found {len(keyholders)}"
        )
    if not keyholders:
        return None, b"", ""
    answer = answers[keyholders[0]]["answer"]
    if str(answer["encrypt"]) != settings.encrypt:
        raise InputError(
            f"the key holder holds a {answer['encrypt']!s} key, but the run asks "
            f"for --encrypt {settings.encrypt}"
        )
    return keyholders[0], bytes(answer["public"]), str(answer["nonce"])


def _agreed_spec(
    grid: Grid,
    answers: dict[int, Any],
    parties: list[int],
    keyholder: int | None,
    base: dict[str, Any],
    settings: Settings,
    say: Callable[[str], None],
) -> _data.Spec:
    """Without DP: the features the parties' descriptions agree on, scaled by their moments
    summed under encryption (``base`` gains the total of training rows)."""
    descriptions = sorted(
        (
            _data.Description.from_dict(json.loads(str(answers[n]["answer"]["description"])))
            for n in parties
        ),
        key=lambda d: d.party,
    )  # by name: node ids are Flower's random ones
    spec = _data.agree(descriptions, target=settings.target)
    total = sum(d.rows for d in descriptions)
    say(
        f"{len(parties)} parties, {total:,} training rows, {spec.width} features; "
        f"updates protected by {settings.encrypt}"
    )
    base["total-rows"] = total
    # the common scaling, summed under encryption
    record = ConfigRecord({**base, "spec": json.dumps(spec.to_dict())})
    replies = _ask(
        grid,
        parties,
        "query.moments",
        RecordDict({"config": record}),
        settings.timeout,
        needed=settings.min_parties,
        messages=True,
    )
    moments_scheme = scheme_for(settings.encrypt, base["public"], purpose="moments")
    aggregate = moments_scheme.aggregate([_blob(_record(r, "update"), "update") for r in replies])
    summed = decrypt_sum(
        grid,
        keyholder,
        moments_scheme,
        aggregate,
        count=2 * len(spec.numbers) + 1,
        replies=replies,
        purpose="moments",
        round=0,
        timeout=settings.timeout,
    )
    return _data.with_scaling(spec, summed[1:] / summed[0])


def _spent(privacy: Any) -> dict[str, Any] | None:
    """What a run under DP spent, by OpenDP's own privacy map."""
    if privacy is None:
        return None
    epsilon, rho = charged(privacy)
    return {
        "epsilon": epsilon,
        "delta": privacy.delta,
        "rho": rho,
        "sigma": privacy.sigma,
        "clip": privacy.clip,
        "rounds": privacy.rounds,
        "epsilon_per_round": privacy.epsilon_per_round,
        "releases": [
            f"round {r}: one noisy model update per party" for r in range(1, privacy.rounds + 1)
        ],
    }


def _wait_for_nodes(grid: Grid, count: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(nodes := list(grid.get_node_ids())) < count:
        if time.monotonic() > deadline:
            raise InputError(f"only {len(nodes)} of {count} nodes connected within {timeout:.0f} s")
        time.sleep(0.2)
    return nodes


def _ask(
    grid: Grid,
    nodes: list[int],
    kind: str,
    content: RecordDict,
    timeout: float,
    *,
    needed: int | None = None,
    messages: bool = False,
) -> Any:
    sent = [Message(content, dst_node_id=n, message_type=kind) for n in nodes]
    good, failed = _split_replies(grid.send_and_receive(sent, timeout=timeout))
    if needed is None and failed:
        raise InputError(failed[0].split(": ", 1)[1] if ": " in failed[0] else failed[0])
    _enough(len(good), len(nodes), needed if needed is not None else len(nodes), failed, kind)
    if messages:
        return good
    return {m.metadata.src_node_id: m.content for m in good}


@contextlib.contextmanager
def _quiet_flower(quiet: int = WARNING) -> Iterator[None]:
    from flwr.supercore.logger import FLOWER_LOGGER

    logger = FLOWER_LOGGER
    level = logger.level
    logger.setLevel(quiet)
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
        settings = Settings(
            target=str(config["target"]),
            rounds=int(config.get("rounds", 10)),
            model=str(config.get("model", "logistic")),
            encrypt=str(config.get("encrypt", "paillier")),
            epochs=int(config.get("epochs", 1)),
            parties=int(config.get("parties", 3)),
            min_parties=int(config.get("min-parties", MIN_ENCRYPTED_PARTIES)),
            timeout=float(config.get("timeout", 600)),
            dp_epsilon=float(config.get("dp-epsilon", 0.0)),
            dp_delta=float(config.get("dp-delta", 1e-6)),
            dp_clip=float(config.get("dp-clip", 1.0)),
            domain=str(config.get("domain", "")),
        )
        outcome = run(grid, settings, say=print)
        out = str(config.get("output", ""))
        if out:
            from veil.federated.keyfiles import write_model

            write_model(outcome, out)
    except VeilError as err:
        print(f"{FAILED}{err}", flush=True)
        raise
    final = outcome.rounds[-1].accuracy if outcome.rounds else None
    print(f"{DONE}: {len(outcome.rounds)} rounds, final accuracy {final}", flush=True)
