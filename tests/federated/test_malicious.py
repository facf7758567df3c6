"""A malicious server and a malicious party, on Flower's simulation engine with veil's real
apps: each attack is a message the key holder is sent, and each is refused with one line,
nothing decrypted. The honest run beside the attacks trains the model it would have trained.

The server here is the real ServerApp with its Grid wrapped: before it sends the honest
decryption request of a round, it sends the key holder forged ones, as an attacker holding
the public key, every ciphertext and every signature it ever relayed would.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from flwr.app import ArrayRecord, ConfigRecord, Message, RecordDict

from veil.exceptions import InputError
from veil.federated import paillier
from veil.federated._flower import Settings, _np_record
from veil.federated.keyfiles import read_public
from veil.federated.secure import Paillier
from veil.federated.simulation import partition, run_simulated

from ._sim import Watched, nodes

ADULT = Path(__file__).resolve().parents[1] / "data" / "arx_adult" / "adult.csv.gz"


def _blob(record: Any, key: str) -> bytes:
    return bytes(np.asarray(record[key].numpy()).tobytes())


class Attacker(Watched):
    """A server that, holding what it relays, tries to have the key holder decrypt what it
    should not: each attempt's reply is kept in ``attempts`` by name."""

    public: paillier.PublicKey
    scheme: Paillier
    keyholder: int
    attempts: dict[str, Message]
    honest: dict[int, Message]

    def outgoing(self, messages: list[Message], timeout: float | None) -> list[Message]:
        for m in messages:
            if m.metadata.message_type == "query.decrypt":
                config = m.content["config"]
                if str(config["purpose"]) == "update":
                    self.keyholder = m.metadata.dst_node_id
                    self._attack(m, int(config["round"]), timeout)
                    self.honest[int(config["round"])] = m
        return messages

    def _ask(
        self,
        name: str,
        pieces: list[bytes],
        aggregate: bytes,
        config: dict[str, Any],
        timeout: float | None,
        *,
        to: int | None = None,
    ) -> None:
        arrays = {"aggregate": _np_record(np.frombuffer(aggregate, np.uint8))}
        arrays.update(
            {f"piece-{i}": _np_record(np.frombuffer(p, np.uint8)) for i, p in enumerate(pieces)}
        )
        content = RecordDict({"arrays": ArrayRecord(arrays), "config": ConfigRecord(config)})
        forged = Message(content, dst_node_id=to or self.keyholder, message_type="query.decrypt")
        replies = list(self.real.send_and_receive([forged], timeout=timeout))
        self.attempts[name] = replies[0]

    def _attack(self, honest: Message, round: int, timeout: float | None) -> None:
        config = dict(honest.content["config"])
        arrays = honest.content["arrays"]
        pieces = [_blob(arrays, f"piece-{i}") for i in range(len(config["signers"]))]
        aggregate = _blob(arrays, "aggregate")
        count = int(config["count"])
        if round == 1:
            # the audit's attack: the server's own ciphertexts (a zero update, check slot 1)
            # stand in for two parties', so the "sum" is one party's update
            own = self.scheme.encrypt(np.zeros(count))
            forged = [pieces[0], own, own]
            self.injected = (pieces[0], self.scheme.aggregate(forged))
            self._ask("inject", forged, self.injected[1], config, timeout)
            # all parties but one dropped
            self._ask(
                "drop",
                pieces[:1],
                pieces[0],
                {
                    **config,
                    "signers": config["signers"][:1],
                    "signatures": config["signatures"][:1],
                    "parties": 1,
                },
                timeout,
            )
            # one party's piece counted three times (and its signature with it)
            thrice = [pieces[0]] * 3
            self._ask(
                "twice",
                thrice,
                self.scheme.aggregate(thrice),
                {
                    **config,
                    "signers": [config["signers"][0]] * 3,
                    "signatures": [config["signatures"][0]] * 3,
                },
                timeout,
            )
            # the aggregate multiplied by an encryption of 5.0 shifted into slot 2
            slot = self.scheme.packing.slot_bits
            shift = paillier.encryptor(self.public).encrypt((5 << 24) << (2 * slot))
            first = paillier.from_bytes(self.public, aggregate[: self.public.ciphertext_bytes])
            moved = paillier.to_bytes(self.public, [self.public.add(first[0], shift)])
            shifted = moved + aggregate[self.public.ciphertext_bytes :]
            self._ask("shift", pieces, shifted, config, timeout)
            # the sum sent to a party instead of the key holder
            party = next(n for n in self.get_node_ids() if n != self.keyholder)
            self._ask("party", pieces, aggregate, config, timeout, to=party)
        if round == 2:
            first = self.honest[1]
            old = dict(first.content["config"])
            old_pieces = [
                _blob(first.content["arrays"], f"piece-{i}") for i in range(len(old["signers"]))
            ]
            # round 1's signed ciphertexts replayed as round 2's
            self._ask(
                "replay",
                old_pieces,
                _blob(first.content["arrays"], "aggregate"),
                {**old, "round": 2},
                timeout,
            )
            # round 1 asked for again, its pieces dropped then reinjected
            self._ask(
                "reinject", old_pieces, _blob(first.content["arrays"], "aggregate"), old, timeout
            )


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    adult = pd.read_csv(ADULT, sep=";").sample(4_500, random_state=7).reset_index(drop=True)
    tables = partition(adult, parties=3, split_by="random")
    folder = tmp_path_factory.mktemp("attacked")
    enrolled = nodes(folder, tables)
    public = paillier.PublicKey.from_json(read_public(enrolled[0]["public-key"]).decode())
    made: list[Attacker] = []

    def attacker(real: Any) -> Attacker:
        grid = Attacker(real)
        grid.public, grid.scheme = public, Paillier(public)
        grid.attempts, grid.honest = {}, {}
        made.append(grid)
        return grid

    settings = Settings(target="salary-class", rounds=2, timeout=60)
    outcome = run_simulated(enrolled, settings, grid=attacker)
    plain = run_simulated(
        nodes(tmp_path_factory.mktemp("plain"), tables, encrypt="none"),
        Settings(target="salary-class", rounds=2, encrypt="none"),
    )
    return {"grid": made[0], "outcome": outcome, "plain": plain, "secret": enrolled[-1]["secret"]}


def _refused(attacked: dict[str, Any], name: str) -> str:
    reply = attacked["grid"].attempts[name]
    assert reply.has_error(), f"the key holder answered the {name!r} attack"
    assert "sum" not in (reply.content if reply.has_content() else {})  # nothing decrypted
    reason = str(reply.error.reason)
    return reason


def test_malicious_server_injecting_its_own_ciphertext_is_refused(attacked: dict) -> None:
    assert "does not carry its signature" in _refused(attacked, "inject")
    # the attack is real: decrypted, its "sum of three" is party 1's update alone
    from veil.federated.keyfiles import read_secret

    scheme = read_secret(attacked["secret"])
    piece, forged = attacked["grid"].injected
    count = len(attacked["outcome"].weights) + 1
    alone = scheme.decrypt(scheme.aggregate([piece]), count, 1)
    assert np.abs(scheme.decrypt(forged, count, 3) - alone).max() < 1e-6


def test_malicious_server_replaying_an_earlier_round_is_refused(attacked: dict) -> None:
    assert "does not carry its signature for update round 2" in _refused(attacked, "replay")
    assert "round 1 of this run was decrypted already" in _refused(attacked, "reinject")


def test_malicious_server_dropping_all_but_one_party_is_refused(attacked: dict) -> None:
    assert "at least 3 parties' signed contributions, and was sent 1" in _refused(attacked, "drop")
    assert "counts one party's contribution twice" in _refused(attacked, "twice")


def test_malicious_server_shifting_a_slot_of_the_sum_is_refused(attacked: dict) -> None:
    assert "is not the product of the signed contributions" in _refused(attacked, "shift")
    assert "only the key holder decrypts" in _refused(attacked, "party")


def test_malicious_server_beside_an_honest_run_leaves_its_model_unchanged(
    attacked: dict,
) -> None:
    outcome, plain = attacked["outcome"], attacked["plain"]
    assert [r.parties for r in outcome.rounds] == [3, 3]
    # each round's sum off by at most 3 parties * 2^-25 per weight (the packing's rounding)
    assert np.abs(outcome.weights - plain.weights).max() < 2 * 3 * 2.0**-25 * 2
    assert all(reply.has_error() for reply in attacked["grid"].attempts.values())


# ---------------------------------------------------------------------- a malicious party
def _oversized_party() -> Any:
    """A ClientApp whose first party, once it has made its honest update, encrypts one with
    a slot 20 times larger than any value within the bound, and signs it with its own key."""
    from flwr.clientapp import ClientApp

    from veil.federated._flower import client_app
    from veil.federated.signing import read_signer

    app = ClientApp()

    def handle(message: Any, context: Any) -> Any:
        reply = client_app(message, context)
        if (
            message.metadata.message_type != "train"
            or reply.has_error()
            or context.node_config.get("party") != "party 1"
        ):
            return reply
        config = message.content["config"]
        scheme = Paillier(paillier.PublicKey.from_json(bytes(config["public"]).decode()))
        count = len(np.asarray(message.content["arrays"]["weights"].numpy())) + 1
        packing = scheme.packing
        plaintexts = packing.encode(np.zeros(count))
        plaintexts[0] += (40 * packing.offset - packing.offset) << packing.slot_bits
        encrypt = paillier.encryptor(scheme.key).encrypt
        blob = paillier.to_bytes(scheme.key, [encrypt(p) for p in plaintexts])
        signer = read_signer(str(context.node_config["signing-key"]))
        signature = signer.sign(
            nonce=str(config["nonce"]),
            purpose="update",
            round=int(config["server-round"]),
            blob=blob,
        )
        reply.content["update"] = ArrayRecord({"update": _np_record(np.frombuffer(blob, np.uint8))})
        reply.content["signed"] = ConfigRecord({"party": signer.party, "signature": signature})
        return reply

    app.train()(handle)
    app.evaluate()(handle)
    for kind in ("describe", "moments", "decrypt"):
        app.query(kind)(handle)
    return app


def test_malicious_party_sending_an_oversized_slot_is_refused(tmp_path: Path) -> None:
    from veil.federated._ray import imported

    imported()  # Ray as veil's sessions need it: with its token authentication on
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    adult = pd.read_csv(ADULT, sep=";").sample(3_000, random_state=8).reset_index(drop=True)
    tables = partition(adult, parties=3, split_by="random")
    watched: list[Watched] = []

    def watch(real: Any) -> Watched:
        watched.append(Watched(real))
        return watched[0]

    with pytest.raises(
        InputError,
        match="key holder refused to decrypt: the aggregate does not decode .* an oversized slot",
    ):
        run_simulated(
            nodes(tmp_path, tables),
            Settings(target="salary-class", rounds=1),
            client=_oversized_party(),
            grid=watch,
        )
    # the key holder sent no sum back: nothing was decrypted for anyone
    decrypts = [r for r in watched[0].replies if r.metadata.message_type == "query.decrypt"]
    assert [r.has_error() for r in decrypts] == [False, True]  # the moments, then refused
