"""The ``veil`` command runs no pydantic plugin an installed package declares: pydantic would
hand such a plugin every value it validates. A user who sets ``PYDANTIC_DISABLE_PLUGINS``
(even empty) decides for themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: a plugin that writes down each schema pydantic asks it to watch
SPY = """
import os


class Spy:
    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):
        with open(os.environ["SPY_LOG"], "a") as log:
            log.write(f"{schema_type}\\n")
        return None, None, None


plugin = Spy()
"""


def _installed_spy(folder: Path) -> None:
    """A package declaring a pydantic plugin, as pip would install it."""
    (folder / "spy_plugin.py").write_text(SPY)
    info = folder / "spy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")


def _check(tmp_path: Path, **env: str) -> str:
    """``veil check`` of a small CSV with the spy installed; what the spy saw."""
    table = tmp_path / "t.csv"
    table.write_text("age,county\n30,Nairobi\n30,Nairobi\n41,Mombasa\n41,Mombasa\n")
    log = tmp_path / "spy.log"
    log.unlink(missing_ok=True)
    path = os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])
    environment = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    environment.update(PYTHONPATH=path, SPY_LOG=str(log), **env)
    done = subprocess.run(
        [sys.executable, "-m", "veil", "check", str(table), "-q", "age,county", "-k", "2"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "k = 2" in done.stdout
    return log.read_text() if log.exists() else ""


@pytest.fixture
def spy_site(tmp_path: Path) -> Path:
    (tmp_path / "site").mkdir()
    _installed_spy(tmp_path / "site")
    return tmp_path


def test_the_command_runs_no_installed_pydantic_plugin(spy_site: Path) -> None:
    assert _check(spy_site) == ""


def test_a_user_who_names_plugins_gets_them(spy_site: Path) -> None:
    # the same spy is seen when the user opts in: the test above could fail
    assert "KAnonymity" in _check(spy_site, PYDANTIC_DISABLE_PLUGINS="")
