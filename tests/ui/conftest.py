"""The workbench's fixtures: the bundled sample in a folder of its own, the rights demo's
insurer (SQLite, a data map with its key file), and a logged-in client of the app."""

from __future__ import annotations

import copy
import re
import shutil
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from veil.keys import ensure_key_file
from veil.rights.demo import MAP, build_database
from veil.ui import Served, create_app

PORT = 8765


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An allowed folder holding the bundled sample (what `veil demo` reads)."""
    root = tmp_path / "allowed"
    root.mkdir()
    with resources.as_file(resources.files("veil.data") / "kenya_insurance.csv") as sample:
        shutil.copy(sample, root / "kenya_insurance.csv")
    return root


@pytest.fixture
def insurer(folder: Path) -> tuple[Path, Any]:
    """The rights demo's insurer in ``folder``: its data map and its clients."""
    database = folder / "insurer.db"
    clients = build_database(database)
    spec = copy.deepcopy(MAP)
    spec["stores"]["insurer"]["url"] = f"sqlite:///{database}"
    spec["key_file"] = str(folder / "insurer.key")
    ensure_key_file(folder / "insurer.key")
    map_path = folder / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return map_path, clients


class Client:
    """A logged-in client: the session cookie, and the CSRF token of the pages."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.http = TestClient(served.app, base_url=f"http://127.0.0.1:{PORT}")
        answer = self.http.get(served.url.split(f":{PORT}", 1)[1], follow_redirects=False)
        assert answer.status_code == 303
        assert "token" not in answer.headers["location"]
        page = self.http.get("/data").text
        found = re.search(r'<meta name="csrf" content="([0-9a-f]+)">', page)
        assert found is not None
        self.csrf = found.group(1)

    def post(self, route: str, /, **form: str) -> Any:
        """Post ``form`` with the CSRF token; a job's redirect is followed to its end."""
        answer = self.http.post(route, data={"csrf": self.csrf, **form}, follow_redirects=False)
        location = answer.headers.get("location", "")
        if location.startswith("/jobs/"):
            ident = location.split("/")[2]
            deadline = time.monotonic() + 300
            while not (job := self.http.get(f"/jobs/{ident}").json())["done"]:
                assert time.monotonic() < deadline, job
                time.sleep(0.05)
            assert job["error"] is None, job["error"]
        return answer


@pytest.fixture
def client(folder: Path) -> Callable[..., Client]:
    """A client of a workbench serving ``folder`` (options as ``create_app`` takes them)."""

    def make(**options: Any) -> Client:
        return Client(create_app([folder], port=PORT, **options))

    return make
