"""``veil demo``: the whole flow on the bundled Kenyan insurance sample — scan, suggested
policy, anonymize, certificate and report."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from veil.io import atomic_open, read, write
from veil.keys import DEFAULT_KEY_ENV, generate_key
from veil.policy import Policy
from veil.privacy import Release, anonymize
from veil.report import render_summary
from veil.scan import ScanResult, scan
from veil.suggest import suggest_policy_yaml

DEMO_DATA = "kenya_insurance.csv"
KEY_FILE = "demo.key"


@dataclass(frozen=True)
class DemoResult:
    scan: ScanResult
    release: Release
    original: pd.DataFrame
    files: dict[str, Path]
    generated_key: bool


def demo_data() -> pd.DataFrame:
    """The bundled sample: 1001 synthetic Kenyan insurance clients with IDs and KRA PINs (CC0)."""
    with resources.as_file(resources.files("veil.data") / DEMO_DATA) as path:
        return read(path)


def ensure_key_file(path: Path) -> None:
    """A random key in a file only its owner can read, made once and then reused."""
    if path.exists():
        return
    with atomic_open(path, permissions=0o600) as fh:
        fh.write(generate_key() + "\n")


def run_demo(
    out: str | os.PathLike[str], *, progress: Callable[[str], None] | None = None
) -> DemoResult:
    """Write the input, scan.json, policy.yaml, release.csv, certificate.json and report.html
    into ``out``.

    These files (and demo.key, when ``VEIL_KEY`` is not set) are the demo's own and are
    replaced on every run; nothing else in ``out`` is touched.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _msg: None)
    files = {
        "data": folder / DEMO_DATA,
        "scan": folder / "scan.json",
        "policy": folder / "policy.yaml",
        "release": folder / "release.csv",
        "certificate": folder / "certificate.json",
        "report": folder / "report.html",
    }
    say("reading the Kenyan insurance sample")
    original = demo_data()
    with atomic_open(files["data"], "wb") as fh:
        fh.write((resources.files("veil.data") / DEMO_DATA).read_bytes())

    found = scan(original, progress=say)
    with atomic_open(files["scan"]) as fh:
        fh.write(found.to_json() + "\n")

    generated_key = DEFAULT_KEY_ENV not in os.environ
    if generated_key:  # no key of the user's: make one beside the outputs
        ensure_key_file(folder / KEY_FILE)
    text = suggest_policy_yaml(
        found, original, source=DEMO_DATA, key_file=KEY_FILE if generated_key else None
    )
    with atomic_open(files["policy"]) as fh:
        fh.write(text)
    policy = Policy.load(files["policy"])

    release = anonymize(original, policy, progress=say)
    say("writing the release, certificate and report")
    html = render_summary(original, release, title="veil demo: Kenyan insurance release")
    write(release.data, files["release"], force=True)
    with atomic_open(files["certificate"]) as fh:
        fh.write(release.certificate.to_json() + "\n")
    with atomic_open(files["report"]) as fh:
        fh.write(html)
    return DemoResult(found, release, original, files, generated_key)
