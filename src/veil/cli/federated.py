"""``veil fl``: federated learning on Flower, updates protected (Paillier, CKKS or none)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from veil.cli._common import Format, Sep, _check_format, _progress, _read_options, out

fl_app = typer.Typer(
    help="Federated learning: parties train one model without sharing rows; the server only "
    "adds encrypted updates, a key holder decrypts only their sum.",
    no_args_is_help=True,
)


@fl_app.command("simulate")
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
    rounds: Annotated[int, typer.Option("--rounds", help="Federated rounds.")] = 10,
    model: Annotated[str, typer.Option("--model", help="logistic")] = "logistic",
    encrypt: Annotated[
        str, typer.Option("--encrypt", help="paillier (exact), ckks (approximate) or none.")
    ] = "paillier",
    epochs: Annotated[int, typer.Option("--epochs", help="Local passes per round.")] = 1,
    key_bits: Annotated[int, typer.Option("--key-bits", help="Paillier key: 2048 or 3072.")] = 2048,
    seed: Annotated[int, typer.Option("--seed", help="Split and training seed.")] = 0,
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """All parties and the key holder in one process, on Flower's apps: accuracy per round
    beside the same model trained on all rows in one place."""
    from veil.federated.simulate import simulate
    from veil.io import read

    _check_format(fmt)
    frame = read(data, **_read_options(None, sep=sep))
    with _progress() as say:
        result = simulate(frame, target=target, parties=parties, split_by=split_by,
                          rounds=rounds, model=model, encrypt=encrypt, epochs=epochs,
                          key_bits=key_bits, seed=seed, say=say)  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
        return
    out.print(f"{len(result.parties)} parties ({', '.join(result.parties)}); updates "
              f"protected by {result.encrypt}")  # fmt: skip
    if result.left_out:
        shown = ", ".join(f"{c} ({why})" for c, why in result.left_out.items())
        out.print(f"left out of the features at every party: {shown}")
    for r in result.rounds:
        accuracy = "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        out.print(f"  round {r['round']:>3}: accuracy {accuracy}  {r['seconds']:.2f} s  "
                  f"{r['bytes_sent']:,} bytes sent")  # fmt: skip
    out.print(f"centralized (all rows in one place): accuracy {result.centralized_accuracy:.4f}")


def register(app: typer.Typer) -> None:
    """Add ``veil fl`` to ``app``."""
    app.add_typer(fl_app, name="fl")
