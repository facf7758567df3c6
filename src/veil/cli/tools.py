"""``veil demo``, ``veil keygen`` and ``veil transforms``."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from veil.cli._common import (
    Force,
    _progress,
    out,
    output_option,
)
from veil.cli.scan import print_scan


def demo(
    out_dir: Annotated[Path, output_option("Folder for the demo's outputs.")] = Path("veil-demo"),
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Replace an earlier demo's files (a ledger with entries is kept)."
        ),
    ] = False,
) -> None:
    """Run the whole flow on the bundled Kenyan insurance sample."""
    from veil.demo import KEY_FILE, TARGET, run_demo

    with _progress() as say:
        result = run_demo(out_dir, progress=say, force=force)
    cert = result.release.certificate
    out.print(
        Text("veil demo", style="bold"),
        f": Kenyan insurance sample ({cert.rows_in:,} clients)",
        sep="",
    )
    out.print("")
    print_scan(result.scan)
    out.print("")
    out.print(Text("release", style="bold"), " with the suggested policy:", sep="")
    for line in cert.summary():
        out.print(f"  {line}")
    out.print("")
    names = {
        "data": "the input: a copy of the bundled sample",
        "scan": "what the scan found, as JSON",
        "policy": "the policy the scan suggested, applied (edit it)",
        "release": "the release",
        "certificate": "what was done, as JSON",
        "budget": "the privacy-budget ledger of the DP answers",
        "report": "open this in a browser",
        "report_json": "the report's numbers, as JSON",
    }
    for key, path in result.files.items():
        out.print(f"  {path!s:<32} {names[key]}")
    if result.dp_note:
        out.print(f"  (no DP answers this time: {result.dp_note})")
    if result.generated_key:
        out.print(
            f"  {Path(out_dir) / KEY_FILE!s:<32} pseudonymization key made for the demo; "
            "set VEIL_KEY to use your own"
        )
    out.print("")
    out.print("Next: edit the policy and run it again with")
    out.print(
        f"  veil anonymize {result.files['data']} --policy {result.files['policy']} "
        f"-o {Path(out_dir) / 'release2.csv'} --report {Path(out_dir) / 'report2.html'} "
        f"--target {TARGET}"
    )


def keygen(
    output: Annotated[Path | None, output_option("Write the key to this file (mode 600).")] = None,
    force: Force = False,
) -> None:
    """Make a random pseudonymization key (for VEIL_KEY or a key_file)."""
    from veil.keys import generate_key

    key = generate_key()
    if output is None:
        out.print(key)  # the one place a key is printed: it was asked for
        return
    from veil.io import atomic_open, check_output  # (pandas comes with it: only for a file)

    check_output(output, force=force)
    with atomic_open(output, permissions=0o600, force=force) as fh:
        fh.write(key + "\n")
    out.print(f"wrote a new key to {output} (readable by you only)")


def list_transforms() -> None:
    """List the transforms and the privacy models a policy can use, with their parameters."""
    from veil.privacy.criteria import MODELS
    from veil.transforms import TRANSFORMS

    grid = Table("policy name", "what it does", "parameters", show_lines=True)
    for name, cls in TRANSFORMS.items():
        params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        grid.add_row(name, _summary(inspect.getdoc(cls) or ""), ", ".join(params))
    out.print(grid)
    models = Table(
        "privacy model (model:)",
        "what it asks",
        "parameters",
        show_lines=True,
        title="Privacy models: privacy.models in a policy, or --model on the command line",
    )
    for kind in MODELS:
        params = [p for p in kind.model_fields if p != "model"]
        models.add_row(kind.kind(), _summary(inspect.getdoc(kind) or ""), ", ".join(params))
    out.print(models)


def _summary(doc: str) -> str:
    """A docstring's first paragraph as plain text (with the list it introduces, when it ends
    in a colon), without reStructuredText's double backticks."""
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    shown = paragraphs[:1]
    if shown and shown[0].endswith(":") and len(paragraphs) > 1:
        shown.append(paragraphs[1])
    return " ".join(shown).replace("``", "")


def register(app: typer.Typer) -> None:
    """Add ``veil demo``, ``veil keygen`` and ``veil transforms`` to ``app``."""
    app.command("demo")(demo)
    app.command("keygen")(keygen)
    app.command("transforms")(list_transforms)
