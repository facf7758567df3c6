"""The Report: escaped values, no secrets, every section with figures that show something, the
numbers behind the figures obeying their laws, and the measures against external oracles."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib import image
from scipy.stats.contingency import association

from tests.conftest import TEST_KEY
from veil import anonymize
from veil.exceptions import InputError, OutputError, ParameterError
from veil.learn import compare_models
from veil.privacy.certificate import Certificate
from veil.report import Report, build_report
from veil.report.measures import association_matrix, cramers_v, entropy_bits

PAYLOADS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']

POLICY = {
    "columns": {
        "name": {"role": "identifier", "steps": ["drop"]},
        "kra_pin": {"role": "identifier", "steps": [{"pseudonymize": {"format": "preserve"}}]},
        "age": {"role": "quasi_identifier", "steps": [{"generalize": {"bins": [0, 40, 60, 200]}}]},
        "gender": {"role": "quasi_identifier"},
        "diagnosis": {"role": "sensitive"},
    },
    "privacy": {"k": 3},
}


def pixels(png: bytes) -> np.ndarray:
    return image.imread(io.BytesIO(png), format="png")


def assert_not_blank(png: bytes) -> None:
    """Some pixels are not background, and more than two colours are used."""
    picture = pixels(png)[..., :3]
    background = picture[0, 0]
    assert (np.abs(picture - background).sum(axis=-1) > 0.1).mean() > 0.01
    assert len(np.unique(picture.reshape(-1, 3).round(2), axis=0)) > 2


@pytest.fixture
def report(key_env: str, people: pd.DataFrame) -> tuple[Report, pd.DataFrame]:
    release = anonymize(people, POLICY)
    return build_report(release, original=people, aligned=True, target="diagnosis"), people


def test_values_names_and_title_are_escaped(key_env: str) -> None:
    frame = pd.DataFrame(
        {
            "note": PAYLOADS * 6,
            "<b>col</b>": ["x", "y"] * 6,
            "pin": [f"A{i:09d}Z" for i in range(12)],
        }
    )
    policy = {"columns": {"pin": {"role": "identifier", "steps": ["pseudonymize"]}}}
    release = anonymize(frame, policy)
    html = build_report(release, original=frame, aligned=True, title="<i>t</i>").to_html()
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;b&gt;col&lt;/b&gt;" in html
    assert "<i>t</i>" not in html
    assert not re.search(r"<script", html, re.IGNORECASE)  # the page runs no script at all
    assert "default-src 'none'" in html  # and the browser is told so
    assert TEST_KEY not in html


def test_every_section_has_its_figures(report: tuple[Report, pd.DataFrame]) -> None:
    built, people = report
    assert [s.id for s in built.sections] == ["scan", "policy", "privacy", "utility", "columns"]
    ids = {f.id for f in built.figures}
    assert {"uniqueness", "class-sizes", "risk", "information-kept", "associations", "model"} <= ids
    # one distribution per column that is not a direct identifier
    identifiers = ("name", "kra_pin", "phone")  # phone: not in the policy, found by the scan
    assert {f"distribution-{c}" for c in people.columns if c not in identifiers} <= ids
    assert "distribution-kra_pin" not in ids  # identifiers' values are one per person
    for figure in built.figures:
        assert figure.png.startswith(b"\x89PNG")
        assert_not_blank(figure.png)
    html = built.to_html()
    assert html.count('<img class="figure"') == len(built.figures)
    for section in built.sections:
        assert f'<h2 id="{section.id}">{section.title}</h2>' in html
    assert "k &gt;= 3: met." in html
    assert TEST_KEY not in html
    assert TEST_KEY not in built.to_json()


def test_figure_numbers_obey_their_laws(report: tuple[Report, pd.DataFrame]) -> None:
    built, people = report
    privacy = built.section("privacy")
    sizes = next(f for f in privacy.figures if f.id == "class-sizes").data
    rows_out = int(built.facts[0].value.replace(",", ""))
    assert sum(sizes["original"]) == len(people)  # every record is in one class
    assert sum(sizes["release"]) == rows_out
    assert sum(sizes["release"][:2]) == 0  # k = 3: no class of size 1 or 2 is left
    risk = next(f for f in privacy.figures if f.id == "risk").data
    data = json.loads(built.to_json())  # as a reader of the JSON has it
    measured = next(t for t in built.section("privacy").tables if t.title.startswith("Measured"))
    k_after = {r[0]: r[2] for r in measured.rows}["k (smallest class)"]
    assert risk["release"]["prosecutor_max"] == pytest.approx(1 / k_after)
    assert risk["original"]["prosecutor_max"] == 1.0  # 60 people, age and gender: some unique
    in_json = next(s for s in data["sections"] if s["id"] == "privacy")["figures"][0]
    assert in_json["data"]["release"] == sizes["release"]
    # dropped columns keep no information; untouched ones all of it
    kept = next(f for f in built.section("utility").figures if f.id == "information-kept").data
    share = dict(zip(kept["columns"], kept["kept"], strict=True))
    changed = dict(zip(kept["columns"], kept["changed"], strict=True))
    assert share["name"] == 0.0
    assert changed["name"] is None
    assert share["salary"] == pytest.approx(1.0, abs=0.02)  # only suppressed rows are missing
    assert changed["salary"] == 0.0
    assert changed["kra_pin"] == 1.0
    assert share["age"] < 0.5  # 3 bands instead of ~50 ages


def test_json_holds_numbers_not_pictures(report: tuple[Report, pd.DataFrame]) -> None:
    built, _ = report
    data = json.loads(built.to_json())
    assert "png" not in built.to_json()
    assert data["headline"] == list(built.headline)
    assert data["verdict"] == "good"
    assert data["notice"].startswith("Internal: this report shows statistics of the original")
    model = next(f for s in data["sections"] for f in s["figures"] if f["id"] == "model")
    assert set(model["data"]["scores"]) == {"original", "release", "baseline"}


def test_report_without_original_has_privacy_but_no_utility(key_env: str, people) -> None:
    release = anonymize(people, POLICY)
    built = build_report(release)
    assert [s.id for s in built.sections] == ["policy", "privacy"]
    privacy = built.section("privacy")
    assert "the risk before cannot be measured here" in " ".join(privacy.text)
    risk = next(f for f in privacy.figures if f.id == "risk").data
    assert risk["original"] is None  # unknown, not zero
    table = next(t for t in privacy.tables if t.title == "Re-identification risk")
    assert {row[1] for row in table.rows} == {None}


def test_write_is_atomic_and_refuses_bad_paths(report, tmp_path: Path) -> None:
    built, _ = report
    built.write(tmp_path / "r.html")
    built.write(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["title"] == built.title
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    with pytest.raises(ParameterError, match=r"must end in \.html or \.json"):
        built.write(tmp_path / "r.pdf")
    with pytest.raises(OutputError, match="already exists"):
        built.write(tmp_path / "r.html")
    source = tmp_path / "data.csv"
    source.write_text("a\n1\n")
    with pytest.raises(OutputError, match="is the input"):
        built.write(tmp_path / "data.csv", format="html", force=True, inputs=(source,))
    assert source.read_text() == "a\n1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "r.html", "r.json"]


def test_certificate_round_trips_through_json(key_env: str, people, tmp_path: Path) -> None:
    cert = anonymize(people, POLICY).certificate
    path = tmp_path / "cert.json"
    path.write_text(cert.to_json())
    assert Certificate.load(path) == cert
    broken = cert.to_dict()
    del broken["steps"]
    path.write_text(json.dumps(broken))
    with pytest.raises(InputError, match="must have the key 'steps'"):
        Certificate.load(path)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="must hold a JSON object"):
        Certificate.load(path)


# -- measures, against scipy and the definitions ----------------------------------------------
def test_cramers_v_agrees_with_scipy_on_large_samples() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, 20_000)
    b = (a + rng.integers(0, 3, 20_000)) % 5  # associated, not determined
    table = pd.crosstab(a, b).to_numpy()
    # the bias correction vanishes as n grows: scipy's uncorrected V is the oracle
    expected = association(table, method="cramer", correction=False)
    assert cramers_v(pd.Series(a), pd.Series(b)) == pytest.approx(expected, abs=0.005)
    assert cramers_v(pd.Series(a), pd.Series(a)) == pytest.approx(1.0)
    noise = pd.Series(rng.integers(0, 4, 20_000))
    assert cramers_v(pd.Series(a), noise) < 0.02  # independent
    matrix = association_matrix(pd.DataFrame({"a": a, "b": b, "n": noise}), ["a", "b", "n"])
    assert np.allclose(matrix, matrix.T)
    assert np.allclose(np.diag(matrix), 1.0)


def test_entropy_in_bits() -> None:
    assert entropy_bits(pd.Series(list("abcd") * 5)) == pytest.approx(2.0)
    assert entropy_bits(pd.Series(["x"] * 9)) == 0.0
    assert entropy_bits(pd.Series(["a", None])) == pytest.approx(1.0)  # missing is a value


def test_model_comparison_sees_the_information_generalization_removes() -> None:
    rng = np.random.default_rng(1)
    age = rng.integers(18, 90, 600)
    frame = pd.DataFrame({"age": age, "noise": rng.normal(size=600), "old": age >= 47})
    release = frame.assign(age=pd.cut(frame["age"], [0, 50, 200]).astype(str))
    result = compare_models(frame, release, target="old")
    assert result.task == "classification"
    assert result.scores["original"]["accuracy"] > 0.97  # the threshold is learnable from age
    assert result.scores["original"]["roc_auc"] > 0.99
    assert result.scores["release"]["accuracy"] < 0.97  # bands at 50 blur the threshold at 47
    assert result.scores["baseline"]["accuracy"] == pytest.approx(
        max(frame["old"].mean(), 1 - frame["old"].mean()), abs=0.01
    )
    assert result.loss("accuracy") > 0
    assert not result.sampled
    sampled = compare_models(frame, release, target="old", max_rows=200)
    assert sampled.sampled
    assert sampled.rows == {"original": 200, "release": 200}
    regression = compare_models(frame.assign(y=age * 2.0), release.assign(y=age * 2.0), target="y")
    assert regression.task == "regression"
    assert regression.scores["original"]["r2"] > 0.99 > regression.scores["release"]["r2"]
    with pytest.raises(ParameterError, match="target 'c' needs two classes"):
        compare_models(frame.assign(c=1), release.assign(c=1), target="c")


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"a": [np.nan] * 6, "b": [True, False] * 3, "age": range(20, 80, 10)}),
        pd.DataFrame({"age": [30], "g": ["m"]}),
        pd.DataFrame({"age": pd.Series([], dtype="int64"), "g": pd.Series([], dtype=object)}),
        pd.DataFrame({"d": pd.to_datetime(["2020-01-01", None, "2021-05-05"]), "age": [1, 2, 3]}),
    ],
    ids=["all-missing-and-bool", "one-row", "no-rows", "dates-with-gaps"],
)
def test_odd_tables_still_get_a_whole_report(key_env: str, frame: pd.DataFrame) -> None:
    release = anonymize(frame, {"columns": {"age": {"role": "quasi_identifier"}}})
    built = build_report(release, original=frame, aligned=True)
    assert [s.id for s in built.sections] == ["scan", "policy", "privacy", "utility", "columns"]
    json.loads(built.to_json())
    assert "<h2" in built.to_html()


def test_demo_without_the_dp_extra_has_no_dp_section(
    key_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veil.dp import stats
    from veil.exceptions import MissingExtraError

    def missing() -> None:
        raise MissingExtraError("DP needs OpenDP: pip install 'veil[dp]'")

    monkeypatch.setattr(stats, "opendp", missing)
    from veil.demo import run_demo

    result = run_demo(tmp_path)
    assert "dp" not in [s.id for s in result.report.sections]
    assert "budget" not in result.files
    assert not (tmp_path / "budget.db").exists()
    assert '<h2 id="utility">' in result.files["report"].read_text()


def test_renamed_columns_are_named_as_new(key_env: str, people: pd.DataFrame) -> None:
    policy = {"steps": [{"rename_columns": {"mapping": {"county": "region"}}}]}
    built = build_report(anonymize(people, policy), original=people, aligned=True)
    policy_section = built.section("policy")
    assert "Columns new in the release (renamed or derived): region." in policy_section.text
    released = {r[0]: r[-1] for r in policy_section.tables[0].rows}
    assert released["county"] == "no"
    assert released["age"] == "as is"


def test_duplicate_index_labels_do_not_break_the_comparison(key_env: str, people) -> None:
    frame = people.reset_index(drop=True)
    frame.index = [i // 2 for i in range(len(frame))]  # every label twice
    built = build_report(anonymize(frame, POLICY), original=frame, aligned=True)
    kept = next(f for f in built.section("utility").figures if f.id == "information-kept")
    assert set(kept.data["changed"]) == {None}  # rows can't be linked: not claimed


def test_utility_is_per_column_worst_first_and_a_useless_model_is_flagged(key_env: str) -> None:
    """Issue 11: "information kept 87.1%" averaged over untouched columns, and a model below
    its no-feature baseline was not flagged."""
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "gender": rng.choice(["F", "M"], n),
            "steps": rng.integers(0, 20_000, n),
            "coin": rng.choice(["heads", "tails"], n),  # independent of everything
        }
    )
    policy = {
        "columns": {
            "age": {"role": "quasi_identifier", "steps": [{"generalize": {"bins": [0, 50, 200]}}]},
            "gender": {"role": "quasi_identifier"},
        },
        "unlisted": "scan",
        "random_state": 0,
    }
    release = anonymize(frame, policy)
    built = build_report(release, original=frame, aligned=True, target="coin")
    utility = built.section("utility")
    per_column = utility.tables[0]
    kept = [row[per_column.columns.index("information kept")] for row in per_column.rows]
    assert kept == sorted(kept)
    assert per_column.rows[0][0] == "age"  # the only column that lost information
    worst, mean = utility.facts[0], utility.facts[1]
    assert worst.value.startswith("age: ")
    assert "mean over the 1 changed or withheld columns" in mean.label
    model = utility.facts[2]
    assert model.status == "bad"
    assert "at or below its no-feature baseline" in model.label
    assert any("no better than the baseline" in line for line in utility.text)
    learnable = frame.assign(coin=np.where(frame["steps"] > 10_000, "heads", "tails"))
    built = build_report(
        anonymize(learnable, policy), original=learnable, aligned=True, target="coin"
    )
    assert built.section("utility").facts[2].status == ""


def test_a_single_quasi_identifier_is_charted_once_and_no_empty_chart() -> None:
    rng = np.random.default_rng(3)
    # a score of one decimal: repeated values, no quasi-identifier (nearly unique ones are)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 300), "score": rng.normal(size=300).round(1)})
    policy = {
        "version": 1,
        "columns": {"age": {"role": "quasi_identifier"}, "score": {"role": "insensitive"}},
    }
    built = build_report(anonymize(frame, policy), original=frame, aligned=True)
    labels = [f.data["combinations"] for f in built.figures if f.id == "uniqueness"]
    assert labels  # some ages are unique: the chart is drawn
    assert [c[0] for c in labels[0]] == ["age"]  # once
    common = pd.DataFrame({"age": [30, 40] * 150, "score": rng.normal(size=300).round(1)})
    built = build_report(anonymize(common, policy), original=common, aligned=True)
    assert not [f for f in built.figures if f.id == "uniqueness"]  # nobody unique: no bars
