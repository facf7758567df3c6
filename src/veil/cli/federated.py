"""``veil fl``: federated learning on Flower, updates protected (Paillier, CKKS or none)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli._common import (
    GROUP,
    Format,
    Ledger,
    Sep,
    _check_format,
    _ledger,
    _progress,
    epsilon_option,
    err,
    out,
    output_option,
    seed_option,
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
    epsilon_option(
        "Client-level DP: the whole run's epsilon, charged to "
        "each party's privacy budget (each clips its update, adds Gaussian noise)."
    ),
]
DpDelta = Annotated[float, typer.Option("--delta", help="Client-level DP: the run's delta.")]
DpClip = Annotated[
    float, typer.Option("--clip", help="Client-level DP: the L2 norm updates are clipped to.")
]

DomainFile = Annotated[
    Path | None,
    typer.Option(
        "--domain",
        help="Under --epsilon: a JSON file of each column's public "
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
class DpRun:
    """Client-level differential privacy: the run's budget, the clip and the public domain."""

    dp_epsilon: DpEpsilon = None
    dp_delta: DpDelta = 1e-6
    dp_clip: DpClip = 1.0
    domain: DomainFile = None


@dataclass
class DpFlags(DpRun):
    """Client-level differential privacy, charged to a ledger (``veil fl simulate``)."""

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
    seed: Annotated[int, seed_option("Split and training seed.")] = 0,
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
        "random_state": seed,
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
@with_groups
def server_command(
    target: Annotated[str, typer.Option("--target", help="The column to predict.")],
    parties: Annotated[int, typer.Option("--parties", help="Parties to wait for.")] = 3,
    rounds: Rounds = 10,
    model: Model = "logistic",
    encrypt: Encrypt = "paillier",
    epochs: Epochs = 1,
    port: Annotated[int, typer.Option("--port", help="The SuperLink's port.")] = 9091,
    output: Annotated[Path | None, output_option("Write the trained model (JSON).")] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for any party's answer.")
    ] = 600.0,
    dp: DpRun = GROUP,
    min_parties: MinParties = None,
    certs: Annotated[Path | None, _certs_option("The server")] = None,
    insecure: Insecure = False,
) -> None:
    """Run the server: a Flower SuperLink (TLS, enrolled nodes only) and veil's ServerApp. It
    only adds protected updates; the key holder (veil fl keyholder) decrypts their sum."""
    from veil.federated.deploy import serve
    from veil.federated.nodes import server_config

    config = server_config(
        target=target,
        parties=parties,
        rounds=rounds,
        model=model,
        encrypt=encrypt,
        epochs=epochs,
        timeout=timeout,
        min_parties=min_parties,
        output=output,
        dp_epsilon=dp.dp_epsilon,
        dp_delta=dp.dp_delta,
        dp_clip=dp.dp_clip,
        domain=_domain(dp.domain),
    )
    folder = _transport(certs, insecure, ("server.pem", "server.key"))
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
    seed: Annotated[int, seed_option("The test split's seed.")] = 0,
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
    from veil.federated.deploy import NodeTls
    from veil.federated.nodes import party_settings

    folder = _transport(certs, insecure, ("node.key", "signing.key"))
    settings = party_settings(
        data,
        signing_key=signing_key or (certs / "signing.key" if certs is not None else None),
        public_key=public_key,
        ledger=_ledger(ledger),
        test_fraction=test_fraction,
        seed=seed,
    )
    tls = NodeTls.of(folder) if folder is not None else None
    started = f"party {settings['party']} connecting to {server}"
    _run_node(server, settings, tls, started)


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
    from veil.federated.deploy import NodeTls
    from veil.federated.nodes import keyholder_settings
    from veil.federated.paillier import check_key_bits

    if encrypt == "paillier":
        check_key_bits(key_bits)  # a weak key is refused before anything else
    folder = _transport(certs, insecure, ("node.key",))
    settings = keyholder_settings(
        secret,
        roster or (certs / "roster.json" if certs is not None else None),
        encrypt=encrypt,
        key_bits=key_bits,
        min_parties=min_parties,
        public_key=public_key,
        say=out.print,
    )
    tls = NodeTls.of(folder) if folder is not None else None
    _run_node(server, settings, tls, f"key holder connecting to {server}")


def _run_node(server: str, settings: dict[str, Any], tls: Any, started: str) -> None:
    """Run a SuperNode until it ends or the user stops it."""
    from veil.federated.deploy import run_node

    run_node(server, settings, tls=tls, started=lambda: out.print(f"{started} (Ctrl-C to stop)"))


def register(app: typer.Typer) -> None:
    """Add ``veil fl`` to ``app``."""
    app.add_typer(fl_app, name="fl")
