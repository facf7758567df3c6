"""The workbench's server side, through Starlette's test client: the whole flow writes what the
CLI makes from the same policy, and each defence of a local server is an attack that fails
(no token, a foreign Host, a forged form, a path or link out of the folders, markup in a
column name or a cell, a peek at the key)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from veil.cli import main
from veil.hierarchy import load_hierarchy
from veil.rights import access, open_audit
from veil.ui import _pages
from veil.ui._guard import CSP


def _flow(c, pick_from: int = -1) -> dict:
    """Open, scan, two roles, the goals, Age's hierarchy, the search, another node, export."""
    c.post("/data/open", path="kenya_insurance.csv")
    c.post("/scan/run")
    for column in ("Date_of_entry", "No_of_dependents"):
        c.post("/scan/role", column=column, role="insensitive")
    c.post("/goals", k="5", l="2", max_suppression="0.05", method="optimal")
    c.post("/hierarchies", column="Age", kind="intervals", parameter="10, 20, 40")
    c.post("/hierarchies", column="Age", kind="levels", parameter="1, 3")  # 20 years: gone
    c.post("/search/run")
    page = c.http.get("/search").text
    candidates = re.findall(r'name="levels" value="([0-9,]+)"', page)
    assert len(candidates) >= 3, page[:2000]
    picked = candidates[pick_from]
    c.post("/search/pick", levels=picked)
    c.post("/export/run", name="release")
    return {"picked": [int(v) for v in picked.split(",")]}


def test_the_flow_writes_what_the_cli_makes(folder: Path, client, tmp_path: Path) -> None:
    """The flow's policy and release are the CLI's from that policy; the key never shows."""
    c = client()
    chosen = _flow(c)
    exported = c.served.workbench.workspace.exported
    policy = yaml.safe_load(Path(exported["policy"]).read_text())
    quasi = list(policy["privacy"]["max_levels"])
    assert quasi == ["County", "Gender", "Marital_status", "Age"]
    assert list(policy["privacy"]["max_levels"].values()) == chosen["picked"]
    certificate = pd.read_json(exported["certificate"], typ="series")
    assert [certificate["search"]["levels"][q] for q in quasi] == chosen["picked"]
    # Age's hierarchy, rebuilt by the wizard, saved in ARX's form and read by the search
    age = load_hierarchy(Path(exported["policy"]).parent / policy["privacy"]["hierarchies"]["Age"])
    assert age.height == 4  # the ages, widths 10 and 40 (20 left out), and '*'
    assert age.table[0] == ["30", "[30, 40)", "[0, 40)", "*"]
    cli = tmp_path / "cli.csv"
    data = folder / "kenya_insurance.csv"
    assert main(["anonymize", str(data), "--policy", exported["policy"], "-o", str(cli)]) == 0
    ours = pd.read_csv(exported["release"], dtype=str, keep_default_na=False)
    theirs = pd.read_csv(cli, dtype=str, keep_default_na=False)
    columns = list(ours.columns)
    assert list(theirs.columns) == columns
    assert (
        ours.sort_values(columns)
        .reset_index(drop=True)
        .equals(theirs.sort_values(columns).reset_index(drop=True))
    )
    assert Path(exported["report"]).read_text().startswith("<!doctype html>")
    compared = c.http.get("/compare", params={"column": "Age"}).text
    assert 'id="distribution" src="data:image/png;base64,' in compared
    _key_never_shown(c)


def _key_never_shown(c) -> None:
    """The pseudonymization key made for the policy appears in no page and no download."""
    workspace = c.served.workbench.workspace
    key = (workspace.folder / "policy.key").read_bytes().strip()
    forms = {key, key.hex().encode(), base64.b64encode(key)}
    pages = [c.http.get(p).content for p in ("/data", "/scan", "/search", "/compare", "/export")]
    pages += [
        c.http.get("/download", params={"path": p}).content for p in workspace.exported.values()
    ]
    assert all(form not in page for form in forms for page in pages)
    answer = c.http.get("/download", params={"path": str(workspace.folder / "policy.key")})
    assert answer.status_code == 404


def test_no_page_without_the_token(client) -> None:
    c = client()
    fresh = c.http.__class__(c.served.app, base_url=c.http.base_url)
    for path in ("/data", "/scan", "/search", "/requests", "/static/veil.js", "/download"):
        answer = fresh.get(path, follow_redirects=False)
        assert answer.status_code == 403, path
        assert answer.headers["Content-Security-Policy"] == CSP
    assert fresh.get("/data?token=wrong", follow_redirects=False).status_code == 403
    fresh.cookies.set("veil_session", "made-up")
    forged = fresh.get("/data", follow_redirects=False)
    assert forged.status_code == 403


def test_a_foreign_host_is_refused(client) -> None:
    """DNS rebinding: a page of another site resolving its name to 127.0.0.1."""
    c = client()
    answer = c.http.get("/data", headers={"host": f"attacker.example:{8765}"})
    assert answer.status_code == 400


def test_every_change_needs_the_csrf_token(client, folder: Path) -> None:
    c = client(data=str(folder / "kenya_insurance.csv"))
    changing = [path for method, path, _ in _pages.ROUTES if method == "POST"]
    assert len(changing) >= 10
    for path in changing:
        for form in ({}, {"csrf": "0" * 64}, {"csrf": "é" * 64}):
            answer = c.http.post(path, data={**form, "path": "kenya_insurance.csv"})
            assert answer.status_code == 403, (path, form)
    answer = c.http.post("/policy/validate", content=b"version: 1")
    assert answer.status_code == 403
    assert not c.served.workbench.workspace.policy_path.exists()  # nothing was scanned
    cross = c.http.post(
        "/scan/run", data={"csrf": c.csrf}, headers={"origin": "http://attacker.example"}
    )
    assert cross.status_code == 403
    assert not c.served.workbench.workspace.policy_path.exists()


def test_paths_outside_the_folders_are_refused(client, folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("name,salary\nWanjiru,100\n")
    (folder / "link.csv").symlink_to(secret)
    c = client()
    for given in ("../secret.csv", str(secret), "link.csv", "/etc/passwd"):
        c.post("/data/open", path=given)
        assert c.served.workbench.workspace.source is None, given
        assert "outside the folders" in c.http.get("/data").text
    for given in (str(secret), str(folder / "kenya_insurance.csv")):
        answer = c.http.get("/download", params={"path": given})
        assert answer.status_code == 404  # only what the workbench wrote
    c.post("/data/open", path="sqlite:///" + str(tmp_path / "x.db"), table="t")
    assert c.served.workbench.workspace.source is None


def test_markup_in_a_column_name_or_a_cell_is_shown_as_text(client, folder: Path) -> None:
    hostile = pd.DataFrame(
        {
            "<script>alert('name')</script>": ["<img src=x onerror=alert(1)>"] * 30,
            "age": list(range(20, 50)),
        }
    )
    hostile["note"] = ["x" * 10_000_000] + ["short"] * 29  # a 10 MB cell
    hostile.to_csv(folder / "hostile.csv", index=False)
    c = client()
    c.post("/data/open", path="hostile.csv")
    c.post("/scan/run")
    for path in ("/data", "/scan", "/hierarchies"):
        page = c.http.get(path)
        assert page.headers["Content-Security-Policy"] == CSP
        assert "<script>alert" not in page.text, path
        assert "<img src=x" not in page.text, path
    data = c.http.get("/data").text
    assert len(data) < 100_000  # the 10 MB cell is cut in the preview
    assert "&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;" in data
    assert "&lt;img src=x onerror=alert(1)&gt;" in data


def test_erasure_waits_for_the_dry_run_and_the_typed_confirmation(client, insurer) -> None:
    map_path, clients = insurer
    c = client(rights_map=map_path)
    national_id = clients["national_id"][3]
    subject = f"national_id={national_id}"
    assert access(map_path, subject).total > 0
    c.post("/requests", action="erase", key="national_id", value=national_id, confirm=subject)
    assert "dry run for this person first" in c.http.get("/requests").text
    c.post("/requests", action="dry-run", key="national_id", value=national_id)
    assert "Type <strong>" in c.http.get("/requests").text
    c.post("/requests", action="erase", key="national_id", value=national_id, confirm="yes")
    assert access(map_path, subject).total > 0  # a wrong confirmation erases nothing
    c.post("/requests", action="erase", key="national_id", value=national_id, confirm=subject)
    page = c.http.get("/requests").text
    assert "verified, nothing left" in page
    assert access(map_path, subject).total == 0
    log, _ = open_audit(map_path)
    assert log.verify() >= 4
    assert national_id not in log.path.read_text()  # the log keeps a keyed hash


@pytest.mark.parametrize("bad", ["../../x", "a/b", ""])
def test_an_export_name_cannot_leave_the_workspace(client, folder: Path, bad: str) -> None:
    c = client(data=str(folder / "kenya_insurance.csv"))
    answer = c.http.post("/export/run", data={"csrf": c.csrf, "name": bad}, follow_redirects=False)
    assert answer.headers["location"] == "/export"  # refused before any job ran
    assert "name the export" in c.http.get("/export").text


def test_veil_ui_help_documents_every_option(capsys) -> None:
    import click
    import typer

    from veil.cli import app

    command = typer.main.get_command(app)
    assert isinstance(command, click.Group)
    ui = command.commands["ui"]
    options = [p for p in ui.params if isinstance(p, click.Option)]
    assert {o.opts[0] for o in options} >= {"--folder", "--map", "--port", "--no-browser"}
    assert all(o.help for o in options), [o.opts for o in options if not o.help]
    assert main(["ui", "--help"]) == 0
    shown = capsys.readouterr().out
    assert all(o.opts[0] in shown for o in options)


def test_veil_ui_refuses_a_folder_that_does_not_exist(tmp_path: Path, capsys) -> None:
    code = main(["ui", "--folder", str(tmp_path / "nowhere"), "--no-browser"])
    assert code != 0
    assert "no such folder" in capsys.readouterr().err


def test_the_attacks_are_measured_against_holdout_rows(client, folder: Path) -> None:
    """Compare's attacks: ``veil evaluate`` of the release against rows it was not made from,
    its report (singling out, linkability, inference with intervals) shown in the page."""
    table = pd.read_csv(folder / "kenya_insurance.csv", dtype=str)
    table.head(200).to_csv(folder / "train.csv", index=False)
    table.iloc[200:300].to_csv(folder / "holdout.csv", index=False)
    c = client(data=str(folder / "train.csv"))
    c.post("/scan/run")
    c.post("/goals", k="3", max_suppression="0.1", method="optimal")
    c.post("/search/run")
    c.post("/compare/attack", holdout="train.csv")  # the release's own rows: refused
    assert "other rows than the table" in c.http.get("/compare").text
    c.post("/compare/attack", holdout="holdout.csv")
    page = c.http.get("/compare").text
    assert 'id="evaluation"' in page
    report = Path(c.served.workbench.workspace.evaluated or "").read_text()
    for attack in ("Singling out", "Linkability", "Inference"):
        assert attack.lower() in report.lower(), attack
    answer = c.http.get("/report", params={"path": c.served.workbench.workspace.evaluated})
    assert "sandbox" in answer.headers["Content-Security-Policy"]
    assert "script-src" not in answer.headers["Content-Security-Policy"]


def test_a_sql_table_opens_from_a_database_in_the_folders(client, insurer, folder: Path) -> None:
    c = client()
    c.post("/data/open", path=f"sqlite:///{folder / 'insurer.db'}", table="clients")
    page = c.http.get("/data").text
    assert c.served.workbench.workspace.table == "clients"
    assert "national_id" in page
    assert "kra_pin" in page
