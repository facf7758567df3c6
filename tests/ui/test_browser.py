"""The workbench in a real browser: Debian's Chromium, headless, driven by Playwright, against
the app served by uvicorn on a free port. It walks the whole flow on the bundled sample and
checks the written policy and release against what the CLI makes from the same choices; then
erases a person of the rights demo's insurer. Screenshots land in build/test-artifacts/.

`make test` installs Chromium; without it these tests fail, they never skip."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import uvicorn
import yaml

from tests.conftest import ARTIFACTS
from veil.cli import main
from veil.rights import access, open_audit
from veil.ui import create_app


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def serve() -> Iterator[Any]:
    """Serve ``create_app(...)`` on a free port in this process; its URL with the token."""
    servers: list[uvicorn.Server] = []

    def start(**options: Any) -> Any:
        port = _free_port()
        served = create_app(port=port, **options)
        server = uvicorn.Server(
            uvicorn.Config(served.app, port=port, log_level="warning", ws="none")
        )
        threading.Thread(target=server.run, daemon=True).start()
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        servers.append(server)
        return served

    yield start
    for server in servers:
        server.should_exit = True


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"workbench-{name}.png"), full_page=True)


def _submit(page: Any, button: Any, after: str) -> None:
    """Click ``button`` and wait for the page ``after`` (a job's page moves on by itself)."""
    button.click()
    page.wait_for_url(f"**{after}", timeout=120_000)
    page.wait_for_load_state("load")


def test_the_whole_flow_in_a_browser(browser, serve, folder: Path, tmp_path: Path) -> None:
    served = serve(folders=[folder])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(served.url)
    assert "token" not in page.url  # exchanged for the session cookie
    page.fill("#path", "kenya_insurance.csv")
    _submit(page, page.get_by_role("button", name="Open"), "/data")
    assert "1001 rows" in page.inner_text("h2")
    _shot(page, "1-data")
    _submit(page, page.locator("#scan"), "/scan")
    for column in ("Date_of_entry", "No_of_dependents"):  # one click each: saved on change
        row = page.locator("form.role", has=page.locator(f"input[value='{column}']"))
        with page.expect_navigation():
            row.locator("select[name=role]").select_option("insensitive")
        assert "is now insensitive" in page.inner_text(".flash")
    page.locator("#policy").press_sequentially("x: [")  # typed: validated by the script
    page.locator("#policy-status.bad").wait_for()  # (a wait_for_function would need eval)
    _shot(page, "2-scan")
    page.goto(served.url.split("/data")[0] + "/hierarchies")
    age = page.locator("form.wizard", has=page.locator("input[value='Age']"))
    age.locator("select[name=kind]").select_option("intervals")
    age.locator("textarea[name=parameter]").fill("10, 20, 40")
    _submit(page, age.get_by_role("button", name="Rebuild and save"), "/hierarchies")
    assert "[30, 40)" in page.content()
    marital = page.locator("form.wizard", has=page.locator("input[value='Marital_status']"))
    pool, buckets = marital.locator(".pool .chip"), marital.locator(".buckets .bucket")
    for _ in range(pool.count() // 2):  # half the statuses into one group, the rest another
        pool.first.drag_to(buckets.nth(0))
    marital.locator(".add-group").click()
    while pool.count():
        pool.first.drag_to(buckets.nth(1))
    rule = marital.locator("textarea[name=parameter]").input_value()
    assert [line.split(":")[0] for line in rule.splitlines()] == ["group 1", "group 2"]
    _submit(page, marital.get_by_role("button", name="Rebuild and save"), "/hierarchies")
    assert "6 → 2 → 1 distinct" in page.inner_text("section:has(input[value='Marital_status'])")
    _shot(page, "3-hierarchies")
    page.goto(served.url.split("/data")[0] + "/search")
    page.fill("#k", "5")
    page.fill("#max_suppression", "0.05")
    _submit(page, page.get_by_role("button", name="Save the goals"), "/search")
    _submit(page, page.locator("#run-search"), "/search")
    assert page.locator("img.figure").evaluate("img => img.complete && img.naturalWidth > 300")
    picks = page.locator("button.pick")
    assert picks.count() >= 2
    levels = picks.last.locator("xpath=..").locator("input[name=levels]").get_attribute("value")
    _submit(page, picks.last, "/search")
    assert page.locator("tr.picked").count() == 1
    _shot(page, "4-search")
    page.goto(served.url.split("/data")[0] + "/export")
    _submit(page, page.locator("#export"), "/export")
    assert page.locator("#exported li").count() == 4
    page.goto(served.url.split("/data")[0] + "/compare")
    page.frame_locator("iframe.report").locator("h1").wait_for()
    _shot(page, "5-compare")
    assert not errors, errors  # no script error, no CSP violation

    exported = served.workbench.workspace.exported
    policy = yaml.safe_load(Path(exported["policy"]).read_text())
    assert [str(v) for v in policy["privacy"]["max_levels"].values()] == levels.split(",")
    cli = tmp_path / "cli.csv"
    data = str(folder / "kenya_insurance.csv")
    assert main(["anonymize", data, "--policy", exported["policy"], "-o", str(cli)]) == 0
    ours = pd.read_csv(exported["release"], dtype=str, keep_default_na=False)
    theirs = pd.read_csv(cli, dtype=str, keep_default_na=False)
    columns = list(ours.columns)
    assert (
        ours.sort_values(columns)
        .reset_index(drop=True)
        .equals(theirs.sort_values(columns).reset_index(drop=True))
    )


def test_erasure_in_a_browser(browser, serve, folder: Path, insurer) -> None:
    map_path, clients = insurer
    served = serve(folders=[folder], rights_map=map_path)
    national_id = clients["national_id"][5]
    subject = f"national_id={national_id}"
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(served.url.split("/data")[0] + "/requests?token=" + served.url.split("token=")[1])
    page.fill("#subject-value", national_id)
    _submit(page, page.locator("#dry-run"), "/requests")
    assert page.locator("#planned tr").count() >= 2
    page.fill("#confirm", "erase")  # not the person: nothing happens
    _submit(page, page.locator("#erase"), "/requests")
    assert "exactly as above" in page.inner_text(".flash")
    assert access(map_path, subject).total > 0
    page.fill("#subject-value", national_id)
    _submit(page, page.locator("#dry-run"), "/requests")
    page.fill("#confirm", subject)
    _shot(page, "6-erasure-confirm")
    _submit(page, page.locator("#erase"), "/requests")
    assert "verified, nothing left" in page.inner_text("#erased")
    _shot(page, "7-erased")
    assert access(map_path, subject).total == 0
    log, _ = open_audit(map_path)
    assert log.verify() >= 4
