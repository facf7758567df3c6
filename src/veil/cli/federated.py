"""``veil fl``: federated learning on Flower, updates protected (Paillier, CKKS or none)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import (
    GROUP,
    Format,
    Ledger,
    Sep,
    _check_format,
    _ledger,
    _progress,
    err,
    out,
    with_groups,
)
from veil.exceptions import InputError, ParameterError

Rounds = Annotated[int, typer.Option("--rounds", help="Federated rounds.")]
Model = Annotated[
    str, typer.Option("--model", help="logistic, linear (SVM), or mlp (a torch network; veil[ml]).")
]
Encrypt = Annotated[
    str, typer.Option("--encrypt", help="paillier (exact), ckks (approximate) or none.")
]
Epochs = Annotated[int, typer.Option("--epochs", help="Local passes per round.")]
KeyBits = Annotated[
    int, typer.Option("--key-bits", help="Paillier key: 2048 or 3072 bits (nothing smaller).")
]

DpEpsilon = Annotated[
    float | None,
    typer.Option(
        "--dp-epsilon",
        help="Client-level DP: the whole run's epsilon, charged to "
        "each party's privacy budget (each clips its update, adds Gaussian noise).",
    ),
]
DpDelta = Annotated[float, typer.Option("--dp-delta", help="The run's delta.")]
DpClip = Annotated[
    float, typer.Option("--dp-clip", help="L2 norm each party's update is clipped to.")
]

DomainFile = Annotated[
    Path | None,
    typer.Option(
        "--domain",
        help="Under --dp-epsilon: a JSON file of each column's public "
        "bounds [low, high] or categories (the target's classes among them); the features are "
        "made from it, so nothing about a party's table leaves outside the guarantee.",
    ),
]
MinParties = Annotated[
    int | None,
    typer.Option(
        "--min-parties",
        help="The fewest parties whose updates are summed (at least 3 with encryption: with "
        "two, each reads the other's update from the next model).",
    ),
]
Insecure = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="No TLS and no node authentication (Flower's insecure mode): on one machine only. "
        "Prints a warning.",
    ),
]


def _domain(path: Path | None) -> str:
    if path is None:
        return ""
    from veil.federated import Domain

    try:
        text = path.read_text()
    except OSError as err:
        raise InputError(f"cannot read --domain {str(path)!r}: {err.strerror}") from err
    Domain.from_json(text)  # checked now, in one line
    return text


def _transport(certs: Path | None, insecure: bool, needs: tuple[str, ...]) -> Path | None:
    """The node's enrolment folder, or None when the user opted out of TLS (warned)."""
    if insecure:
        err.print(
            "warning: --insecure: no TLS and no node authentication; anyone who can reach the "
            "port can read the traffic and join as a node"
        )
        return None
    if certs is None:
        raise ParameterError(
            "give --certs FOLDER (this node's folder from `veil fl certs`) for TLS and node "
            "authentication, or --insecure to run without them on one machine"
        )
    from veil.federated.certs import check_folder

    return check_folder(certs, *needs)


def _certs_option(who: str) -> object:
    return typer.Option(
        "--certs", help=f"{who}'s folder from `veil fl certs` (TLS and node authentication)."
    )


fl_app = typer.Typer(
    help="Federated learning: parties train one model without sharing rows; the server only "
    "adds encrypted updates, a key holder decrypts only their sum.",
    no_args_is_help=True,
)


@dataclass
class DpFlags:
    """Client-level differential privacy."""

    dp_epsilon: DpEpsilon = None
    dp_delta: DpDelta = 1e-6
    dp_clip: DpClip = 1.0
    domain: DomainFile = None
    ledger: Ledger = None

    def options(self) -> dict[str, object]:
        """``veil.federated.simulate``'s DP keywords, the ledger charged among them."""
        accountant = None
        if self.dp_epsilon is not None:
            from veil.dp import Accountant

            accountant = Accountant(_ledger(self.ledger))
        return {
            "dp_epsilon": self.dp_epsilon or 0.0,
            "dp_delta": self.dp_delta,
            "dp_clip": self.dp_clip,
            "domain": _domain(self.domain),
            "accountant": accountant,
        }


@fl_app.command("simulate")
@with_groups
def simulate_command(
    data: Annotated[str, typer.Argument(help="The table to share among the parties.")],
    target: Annotated[str, typer.Option("--target", help="The column to predict.")],
    parties: Annotated[int, typer.Option("--parties", help="How many parties.")] = 3,
    split_by: Annotated[
        str,
        typer.Option(
            "--split-by",
            help="'random', or a column whose values each go to one "
            "party (the column is then left out of the features).",
        ),
    ] = "random",
    rounds: Rounds = 10,
    model: Model = "logistic",
    encrypt: Encrypt = "paillier",
    epochs: Epochs = 1,
    key_bits: KeyBits = 2048,
    seed: Annotated[int, typer.Option("--seed", help="Split and training seed.")] = 0,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Draw accuracy per round to this PNG.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write an HTML (or .json) report of the run.")
    ] = None,
    dp: DpFlags = GROUP,
    min_parties: MinParties = None,
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """All parties and the key holder as virtual SuperNodes of Flower's simulation engine:
    accuracy per round beside the same model trained on all rows in one place."""
    from veil.api import simulate

    _check_format(fmt)
    options = {
        "parties": parties,
        "split_by": split_by,
        "rounds": rounds,
        "model": model,
        "encrypt": encrypt,
        "epochs": epochs,
        "key_bits": key_bits,
        "seed": seed,
        "min_parties": min_parties,
        **dp.options(),
    }
    with _progress() as say:
        result = simulate(
            data, target=target, plot=plot, report=report, progress=say, options=options, sep=sep
        )
    if fmt == "json":
        out.print_json(result.to_json())
        return
    charged = getattr(options["accountant"], "path", "the ledger")
    for line in result.lines(str(charged)):
        out.print(line)


@fl_app.command("certs")
def certs_command(
    folder: Annotated[Path, typer.Argument(help="A new folder for the federation's files.")],
    parties: Annotated[str, typer.Option("--parties", help="The parties' names, comma-separated.")],
    host: Annotated[
        list[str] | None,
        typer.Option("--host", help="A name or address the server is reached at (repeatable)."),
    ] = None,
) -> None:
    """Enrol a federation: a CA, the server's TLS certificate, each node's authentication key
    and each party's signing key, in one folder per node."""
    from veil.federated.certs import make

    names = [p.strip() for p in parties.split(",") if p.strip()]
    enrolment = make(folder, names, hosts=list(host or []))
    out.print(
        f"made the federation in {folder}: give {enrolment.server} to the server, "
        f"{enrolment.keyholder} to the key holder, and each of "
        f"{', '.join(str(enrolment.party(n)) for n in names)} to its party; "
        f"{folder / 'ca.key'} stays with you (it can enrol nodes)"
    )


@fl_app.command("server")
def server_command(
    target: Annotated[str, typer.Option("--target", help="The column to predict.")],
    parties: Annotated[int, typer.Option("--parties", help="Parties to wait for.")] = 3,
    rounds: Rounds = 10,
    model: Model = "logistic",
    encrypt: Encrypt = "paillier",
    epochs: Epochs = 1,
    port: Annotated[int, typer.Option("--port", help="The SuperLink's port.")] = 9091,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the trained model (JSON).")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for any party's answer.")
    ] = 600.0,
    dp_epsilon: DpEpsilon = None,
    dp_delta: DpDelta = 1e-6,
    dp_clip: DpClip = 1.0,
    domain: DomainFile = None,
    min_parties: MinParties = None,
    certs: Annotated[Path | None, _certs_option("The server")] = None,
    insecure: Insecure = False,
) -> None:
    """Run the server: a Flower SuperLink (TLS, enrolled nodes only) and veil's ServerApp. It
    only adds protected updates; the key holder (veil fl keyholder) decrypts their sum."""
    from veil.federated import Settings, fewest_parties
    from veil.federated.deploy import serve

    least = fewest_parties(encrypt, min_parties)
    settings = Settings(
        target=target,
        rounds=rounds,
        model=model,
        encrypt=encrypt,
        epochs=epochs,
        parties=parties,
        min_parties=least,
        dp_epsilon=dp_epsilon or 0.0,
        dp_delta=dp_delta,
        dp_clip=dp_clip,
        domain=_domain(domain),
    )
    settings.check()  # every parameter now, not in round 1
    config: dict[str, object] = {
        "target": target,
        "parties": parties,
        "rounds": rounds,
        "model": model,
        "encrypt": encrypt,
        "epochs": epochs,
        "timeout": timeout,
        "min-parties": least,
    }
    if dp_epsilon is not None:
        config.update(
            {
                "dp-epsilon": dp_epsilon,
                "dp-delta": dp_delta,
                "dp-clip": dp_clip,
                "domain": settings.domain,
            }
        )
    folder = _transport(certs, insecure, ("server.pem", "server.key"))
    if output is not None:
        from veil.io import check_output

        check_output(output, inputs=[], force=False)
        config["output"] = str(output.resolve())
    serve(config, port=port, certs=folder, say=out.print)
    if output is not None:
        out.print(f"wrote the model to {output}")


@fl_app.command("client")
def client_command(
    data: Annotated[Path, typer.Argument(help="This party's table (it never leaves).")],
    server: Annotated[str, typer.Option("--server", help="The SuperLink, HOST:PORT.")],
    public_key: Annotated[
        Path | None,
        typer.Option(
            "--public-key",
            help="The key holder's public key: the only key this party encrypts under "
            "(required unless the run is --encrypt none).",
        ),
    ] = None,
    certs: Annotated[Path | None, _certs_option("This party")] = None,
    insecure: Insecure = False,
    signing_key: Annotated[
        Path | None,
        typer.Option("--signing-key", help="This party's signing key (default: in --certs)."),
    ] = None,
    test_fraction: Annotated[
        float, typer.Option("--test-fraction", help="Rows kept for this party's evaluation.")
    ] = 0.2,
    seed: Annotated[int, typer.Option("--seed", help="The test split's seed.")] = 0,
    ledger: Annotated[
        Path | None,
        typer.Option(
            "--ledger",
            help="This party's privacy budget: a run with client-level DP "
            "is charged to it before the first noisy update (default: veil's).",
        ),
    ] = None,
) -> None:
    """Run one party: a Flower SuperNode with veil's ClientApp, until stopped."""
    from veil.federated.deploy import NodeTls, supernode
    from veil.federated.keys import read_public
    from veil.federated.signing import read_signer
    from veil.io import read

    read(str(data)).head(1)  # unreadable data fails here, in one line, not in a round
    folder = _transport(certs, insecure, ("node.key", "signing.key"))
    key = signing_key or (certs / "signing.key" if certs is not None else None)
    settings: dict[str, object] = {
        "role": "party",
        "data": str(data.resolve()),
        "test-fraction": test_fraction,
        "seed": seed,
    }
    if key is not None:
        settings["party"] = read_signer(key).party
        settings["signing-key"] = str(key.resolve())
    else:
        settings["party"] = data.stem
    if public_key is not None:
        read_public(public_key)
        settings["public-key"] = str(public_key.resolve())
        settings["encrypt"] = "encrypted"
    budget = _ledger(ledger)
    if budget.exists():
        settings["ledger"] = str(budget.resolve())
    tls = NodeTls.of(folder) if folder is not None else None
    _run_node(
        supernode(server, settings, tls=tls), f"party {settings['party']} connected to {server}"
    )


@fl_app.command("keyholder")
def keyholder_command(
    server: Annotated[str, typer.Option("--server", help="The SuperLink, HOST:PORT.")],
    secret: Annotated[
        Path,
        typer.Option(
            "--secret",
            help="The key holder's secret file (made if missing, "
            "owner-only; never give it to the server).",
        ),
    ],
    public_key: Annotated[
        Path | None, typer.Option("--public-key", help="Also write the public key here.")
    ] = None,
    encrypt: Annotated[str, typer.Option("--encrypt", help="paillier or ckks.")] = "paillier",
    key_bits: KeyBits = 2048,
    certs: Annotated[Path | None, _certs_option("The key holder")] = None,
    insecure: Insecure = False,
    roster: Annotated[
        Path | None,
        typer.Option("--roster", help="The parties' signing keys (default: in --certs)."),
    ] = None,
    min_parties: MinParties = None,
) -> None:
    """Run the key holder: it makes (or reads) the key pair and decrypts only sums of at least
    --min-parties enrolled parties' signed contributions of the round, as a Flower SuperNode."""
    from veil.federated import MIN_ENCRYPTED_PARTIES, keys
    from veil.federated.deploy import NodeTls, supernode
    from veil.federated.paillier import check_key_bits
    from veil.federated.signing import read_roster

    least = MIN_ENCRYPTED_PARTIES if min_parties is None else min_parties
    if least < MIN_ENCRYPTED_PARTIES:
        raise ParameterError(
            f"--min-parties must be at least {MIN_ENCRYPTED_PARTIES}: with two, "
            "each party reads the other's update from the next model"
        )
    if encrypt == "paillier":
        check_key_bits(key_bits)  # a weak key is refused before anything else
    folder = _transport(certs, insecure, ("node.key",))
    roster_file = roster or (certs / "roster.json" if certs is not None else None)
    if roster_file is None:
        raise ParameterError(
            "the key holder needs the parties' signing keys: --certs FOLDER "
            "(its roster.json) or --roster FILE"
        )
    read_roster(roster_file)
    scheme, made = keys.key_pair(secret, encrypt, key_bits)
    out.print(
        f"made a new {scheme.name} key; its secret is in {secret} (owner-only)"
        if made
        else f"using the key in {secret}"
    )
    if public_key is not None:
        from veil.io import check_output

        check_output(public_key, inputs=[str(secret)], force=True)
        keys.write_public(scheme, public_key)
        out.print(f"wrote the public key to {public_key}: give it to the parties")
    tls = NodeTls.of(folder) if folder is not None else None
    _run_node(
        supernode(
            server,
            {
                "role": "keyholder",
                "party": "key holder",
                "secret": str(secret.resolve()),
                "roster": str(roster_file.resolve()),
                "min-parties": least,
            },
            tls=tls,
        ),
        f"key holder connected to {server}",
    )


def _run_node(process: subprocess.Popen[bytes], started: str) -> None:
    """Wait for a SuperNode until it ends or the user stops it."""
    out.print(f"{started} (Ctrl-C to stop)")
    try:
        code = process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
    if code not in (0, -15):
        raise InputError(f"the Flower SuperNode exited with code {code}")


def register(app: typer.Typer) -> None:
    """Add ``veil fl`` to ``app``."""
    app.add_typer(fl_app, name="fl")
