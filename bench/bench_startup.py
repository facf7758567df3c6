"""Start-up: how long `veil --help`, `veil --version` and `import veil` take in a new process
(targets: 0.3 s and 0.5 s), beside the bare interpreter and `import pandas` measured in the
same run, and what `import veil` loads; then every command's whole process on a table of six
rows (target 0.5 s: on such a table a command's time is its start-up), with the heavy
libraries each one loaded.

    python bench/bench_startup.py [--repeat 7]

Each figure is the median of ``--repeat`` fresh processes, wall and CPU seconds (user and system).

veil's modules are byte-compiled first (``compile_veil``), as pip compiles a package it installs
from a wheel: where ``PYTHONDONTWRITEBYTECODE`` is set (it is on these machines) an editable
install would otherwise compile its source again in every process (70 modules for
``veil anonymize``: 0.08 s of its 0.58 s, measured).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def compile_veil() -> None:
    """Byte-compile veil's modules where Python finds them (``compileall``), as an install from
    a wheel leaves them; a stale file is compiled again, so the figures are today's source."""
    import veil

    package = Path(veil.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def timed(command: list[str], repeat: int, cwd: Path | None = None) -> tuple[float, float]:
    """The median wall and CPU seconds (user and system, the process's own) of ``repeat``
    runs of ``command``, each in a new process."""
    times, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd
        )
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


#: Libraries whose import alone takes a noticeable part of a second.
HEAVY = (
    "sklearn",
    "scipy",
    "matplotlib",
    "torch",
    "opendp",
    "dask",
    "flwr",
    "sqlalchemy",
    "pandas",
)

TINY = """name,age,county,diagnosis
Jane Wanjiku,34,Nairobi,flu
John Otieno,45,Kisumu,malaria
Amina Hassan,34,Nairobi,flu
Brian Kiprop,45,Kisumu,asthma
Esther Achieng,34,Nairobi,flu
Peter Mwangi,45,Kisumu,flu
"""


def commands(folder: Path) -> list[tuple[str, list[str]]]:
    """Each command on the six-row table (run in this order: later ones read what earlier
    ones wrote)."""
    tiny, plain = folder / "tiny.csv", folder / "plain.csv"
    tiny.write_text(TINY)
    plain.write_text("\n".join(",".join(line.split(",")[1:]) for line in TINY.splitlines()))
    out, cert = folder / "release.csv", folder / "certificate.json"
    rights = folder / "rights"
    return [
        ("veil scan", ["scan", str(tiny)]),
        ("veil check", ["check", str(plain), "-q", "age,county", "-k", "2"]),
        (
            "veil anonymize (no step)",
            [
                "anonymize",
                str(plain),
                "-k",
                "2",
                "-o",
                str(out),
                "--certificate",
                str(cert),
                "--force",
            ],
        ),
        ("veil verify", ["verify", str(out), "--certificate", str(cert)]),
        (
            "veil report (of the release)",
            [
                "report",
                str(out),
                "--certificate",
                str(cert),
                "-o",
                str(folder / "r.html"),
                "--force",
            ],
        ),
        ("veil budget show", ["budget", "show"]),
        ("veil dp (a count)", ["dp", str(plain), "count()", "--epsilon", "0.01"]),
        (
            "veil anonymize (pseudonymize a name)",
            ["anonymize", str(tiny), "-k", "2", "-o", str(out), "--force"],
        ),
        ("veil hierarchy", ["hierarchy", str(plain), "age"]),
        ("veil transforms", ["transforms"]),
        ("veil keygen", ["keygen"]),
        ("veil rights demo", ["rights", "demo", "-o", str(rights)]),
        (
            "veil rights retrieve (SQL map)",
            [
                "rights",
                "retrieve",
                "--map",
                str(rights / "insurer.yaml"),
                "--subject",
                "national_id=10043141",
            ],
        ),
    ]


def loaded(python: str, argv: list[str], folder: Path) -> str:
    """The heavy libraries a command imported (run once more, in its own process)."""
    probe = (
        "import sys, runpy; sys.argv = ['veil', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('veil', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [python, "-c", probe, *argv], capture_output=True, text=True, cwd=folder, check=False
    )
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


#: what a report's figure needs at least: pandas imported, one bar chart drawn to PNG bytes
_ONE_CHART = (
    "import io, pandas; from matplotlib.figure import Figure; f = Figure(figsize=(4, 3)); "
    "f.subplots().bar(['a', 'b'], [1, 2]); f.savefig(io.BytesIO(), format='png')"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    compile_veil()
    cases = [
        ("python -c pass (the interpreter)", [python, "-c", "pass"], None),
        ("import pandas (for scale)", [python, "-c", "import pandas"], None),
        # the floor of `veil report`: pandas, and one bar chart drawn by matplotlib to PNG
        ("pandas + a matplotlib bar chart", [python, "-c", _ONE_CHART], None),
        ("import veil", [python, "-c", "import veil"], 0.5),
        ("veil --version", [python, "-m", "veil", "--version"], 0.3),
        ("veil --help", [python, "-m", "veil", "--help"], 0.3),
        ("veil scan --help", [python, "-m", "veil", "scan", "--help"], 0.3),
        ("veil ui --help", [python, "-m", "veil", "ui", "--help"], 0.3),
    ]
    print(f"{'':<36}{'median':>9}{'CPU':>9}{'target':>9}")
    for name, command, target in cases:
        seconds, cpu = timed(command, args.repeat)
        goal = f"{target:.1f} s" if target else ""
        mark = "" if target is None else ("  ok" if seconds <= target else "  OVER")
        print(f"{name:<36}{seconds:>7.3f} s{cpu:>7.3f} s{goal:>9}{mark}")
    heavy = ("pandas", "numpy", "sklearn", "scipy", "matplotlib", "pyarrow", "opendp")
    probe = f"import sys, veil; print(' '.join(m for m in {heavy!r} if m in sys.modules) or 'none')"
    found = subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True)
    print(f"heavy modules loaded by import veil: {found.stdout.strip()}")
    print()
    print(f"{'each command on six rows':<40}{'median':>9}{'CPU':>9}{'target':>9}  loads")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.setdefault("VEIL_KEY", "bench-startup-" + "k" * 32)
        os.environ["VEIL_LEDGER"] = str(folder / "budget.db")  # not the user's own ledger
        budget = ["budget", "init", str(folder / "plain.csv"), "--epsilon", "1000"]
        commands(folder)  # writes the tables: the budget is made for one of them, once
        subprocess.run([python, "-m", "veil", *budget], check=True, capture_output=True)
        for name, argv in commands(folder):
            seconds, cpu = timed([python, "-m", "veil", *argv], args.repeat, cwd=folder)
            mark = "  ok" if seconds <= 0.5 else "  OVER"
            heavy_loaded = loaded(python, argv, folder)
            print(f"{name:<40}{seconds:>7.3f} s{cpu:>7.3f} s{0.5:>7.1f} s{mark}  {heavy_loaded}")


if __name__ == "__main__":
    main()
