"""What each transform promises, beyond the shared contract."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from faker.providers.person.en_KE import Provider
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from tests.conftest import TEST_KEY
from veil.exceptions import CheckFailedError, ParameterError, SecretError
from veil.transforms import (
    Drop,
    Fake,
    Generalize,
    Mask,
    Microaggregate,
    Noise,
    PCAMask,
    Pseudonymize,
    RenameColumns,
    ResampleContinuous,
    SuppressRows,
    TopBottomCode,
)

DATA = Path(__file__).parent.parent / "data"


# -- suppression -------------------------------------------------------------------------------
def test_suppress_rows_where_removes_matching_rows(people: pd.DataFrame) -> None:
    out = SuppressRows("age > 60").fit_transform(people)
    assert (out["age"] <= 60).all()
    assert len(out) == int((people["age"] <= 60).sum())


def test_suppress_rows_blank_keeps_rows(people: pd.DataFrame) -> None:
    out = SuppressRows("age > 60", columns=["age", "county"], action="blank").fit_transform(people)
    assert len(out) == len(people)
    hit = people["age"] > 60
    assert out.loc[hit, "age"].isna().all()
    assert out.loc[~hit, "age"].notna().all()


def test_suppress_rows_bad_condition_names_it(people: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="where must be a condition.*agee"):
        SuppressRows("agee > 3").fit_transform(people)


def test_drop_unknown_column_lists_available(people: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="'nme'.*available columns: 'name'"):
        Drop("nme").fit(people)


# -- masking -----------------------------------------------------------------------------------
def test_mask_examples() -> None:
    frame = pd.DataFrame(
        {"phone": ["0712345678", None], "email": ["jane.doe@example.com", "x@y.z"]}
    )
    out = Mask("phone", keep_last=3).fit_transform(frame)
    assert out["phone"].iloc[0] == "*******678"
    assert pd.isna(out["phone"].iloc[1])
    shaped = Mask("email", keep_first=1, preserve="@.").fit_transform(frame)
    assert shaped["email"].tolist() == ["j***.***@*******.***", "x@*.*"]
    fixed = Mask("email", length=6).fit_transform(frame)
    assert fixed["email"].tolist() == ["******", "******"]


# -- pseudonymization --------------------------------------------------------------------------
def test_pseudonyms_survive_joins_across_tables(key_env: str) -> None:
    claims = pd.DataFrame(
        {"pin": ["A123456789Z", "B987654321Y", "A123456789Z"], "amount": [1, 2, 3]}
    )
    clients = pd.DataFrame({"kra": ["B987654321Y", "A123456789Z"], "county": ["Lamu", "Meru"]})
    c = Pseudonymize("pin").fit_transform(claims)
    k = Pseudonymize("kra").fit_transform(clients).rename(columns={"kra": "pin"})
    joined = c.merge(k, on="pin")
    assert sorted(joined["county"]) == ["Lamu", "Meru", "Meru"]
    assert not set(c["pin"]) & {"A123456789Z", "B987654321Y"}


def test_pseudonyms_depend_on_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"id": ["12345678"]})
    monkeypatch.setenv("VEIL_KEY", "a" * 32)
    first = Pseudonymize("id").fit_transform(frame)["id"].iloc[0]
    monkeypatch.setenv("VEIL_KEY", "b" * 32)
    second = Pseudonymize("id").fit_transform(frame)["id"].iloc[0]
    assert first != second


def test_pseudonym_is_the_documented_hmac(key_env: str) -> None:
    """An external check: the token is HMAC-SHA256(key, domain 0x1f value 0x1f 0) in hex."""
    import hashlib
    import hmac

    token = Pseudonymize("id", length=64).fit_transform(pd.DataFrame({"id": ["Jane"]}))["id"][0]
    expected = hmac.new(TEST_KEY.encode(), b"\x1fjane\x1f0", hashlib.sha256).hexdigest()
    assert token == expected


@pytest.mark.parametrize("length", [64, 15, 8])
def test_every_row_is_the_documented_hmac_and_missing_stays_missing(
    key_env: str, length: int
) -> None:
    """Row by row against ``hmac`` (the whole-column path builds the column in Arrow): repeated
    values, case and space variants, integers, missing cells; the column's type is the one
    pandas gives a list of strings with gaps."""
    import hashlib
    import hmac

    def token(text: str) -> str:
        return hmac.new(TEST_KEY.encode(), f"\x1f{text}\x1f0".encode(), hashlib.sha256).hexdigest()

    names = ["Jane", None, " jane ", "Ödön", "Ann", np.nan, "ann"]
    out = Pseudonymize("id", length=length).fit_transform(pd.DataFrame({"id": names}))["id"]
    expected = [None if pd.isna(n) else token(n.strip().casefold())[:length] for n in names]
    assert [None if pd.isna(t) else t for t in out] == expected
    assert out.dtype == pd.Series(["x", None]).dtype
    numbers = pd.Series([12, 7, 12], dtype="Int64")
    tokens = Pseudonymize("id").fit_transform(pd.DataFrame({"id": numbers}))["id"].tolist()
    assert tokens == [token("12")[:16], token("7")[:16], token("12")[:16]]


def test_integer_ids_stay_integers_of_the_same_width(key_env: str) -> None:
    frame = pd.DataFrame({"id": [38074758, 19503833, 5985350]})
    out = Pseudonymize("id", format="preserve").fit_transform(frame)["id"]
    assert out.dtype == np.int64
    assert [len(str(v)) for v in out] == [8, 8, 7]
    assert not set(out) & set(frame["id"])


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    with pytest.raises(SecretError, match="VEIL_KEY is not set.*veil keygen"):
        Pseudonymize("id").fit(pd.DataFrame({"id": [1]}))


def test_weak_key_is_refused_without_echoing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_KEY", "hunter2")
    with pytest.raises(SecretError) as info:
        Pseudonymize("id").fit(pd.DataFrame({"id": [1]}))
    assert "hunter2" not in str(info.value)


def test_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    key = tmp_path / "veil.key"
    key.write_text("k" * 40 + "\n")
    transform = Pseudonymize("id", key_file=key)
    out = transform.fit_transform(pd.DataFrame({"id": ["x"]}))
    assert out["id"].str.fullmatch(r"[0-9a-f]{16}").all()
    assert "k" * 40 not in repr(transform)
    with pytest.raises(SecretError, match="cannot be read"):
        Pseudonymize("id", key_file=tmp_path / "missing.key").fit(pd.DataFrame({"id": ["x"]}))


@pytest.mark.parametrize("width", [4, 8])
def test_preserved_pseudonyms_of_10000_ids_are_all_distinct(key_env: str, width: int) -> None:
    """The issue's case: 222 of IBM HR's EmployeeNumbers shared a pseudonym. 4-digit IDs use
    the keyed permutation table, 8-digit ones FF3-1; both must be one-to-one."""
    rng = np.random.default_rng(width)
    # every 4-digit code (0000-9999, as text), or 10,000 of the 8-digit integers
    ids = (
        [f"{v:04d}" for v in range(10_000)]
        if width == 4
        else rng.choice(np.arange(10**7, 10**8), 10_000, replace=False)
    )
    for frame in (pd.DataFrame({"id": ids}), pd.DataFrame({"id": [f"E{v}" for v in ids]})):
        out = Pseudonymize("id", format="preserve").fit_transform(frame)["id"]
        assert out.nunique() == 10_000
        assert out.astype(str).str.len().eq(frame["id"].astype(str).str.len()).all()
    two_digit = pd.DataFrame({"code": np.arange(10, 100)})
    out = Pseudonymize("code", format="preserve").fit_transform(two_digit)
    assert set(out["code"]) == set(two_digit["code"])  # a permutation of the 90 integers


def test_preserved_pseudonyms_are_ff3_1_ciphertexts(key_env: str) -> None:
    """External oracle: the ff3 package's own FF3-1 decryption, keyed as veil documents it,
    walks every pseudonym of a large shape back to its value."""
    import hmac

    from ff3 import FF3Cipher

    values = ["N690674664H", "F384415788F", "A000000001Z"]
    out = Pseudonymize("pin", format="preserve").fit_transform(pd.DataFrame({"pin": values}))
    key = TEST_KEY.encode()
    aes_key = hmac.digest(key, b"veil-fpe\x1f", "sha256").hex()
    shape = "a" + "d" * 9 + "a"
    tweak = hmac.digest(key, f"veil-fpe-tweak\x1f\x1f{shape}".encode(), "sha256")[:7].hex()
    cipher = FF3Cipher(aes_key, tweak, radix=2)
    size = 26 * 10**9 * 26
    bits = (size - 1).bit_length()

    def number(text: str) -> int:
        return (ord(text[0]) - 65) * 10**9 * 26 + int(text[1:10]) * 26 + ord(text[10]) - 65

    for value, token in zip(values, out["pin"], strict=True):
        assert token != value
        walked = number(token)
        while True:
            walked = int(cipher.decrypt(format(walked, f"0{bits}b")), 2)
            if walked < size:
                break
        assert walked == number(value)


def test_colliding_hex_tokens_stop_the_release(key_env: str) -> None:
    frame = pd.DataFrame({"id": np.arange(300_000)})  # 32-bit tokens: collisions are expected
    with pytest.raises(CheckFailedError, match="same pseudonym"):
        Pseudonymize("id", length=8).fit_transform(frame)


# -- fakes -------------------------------------------------------------------------------------
def test_fake_names_follow_gender(people: pd.DataFrame) -> None:
    out = Fake("name", kind="first_name", gender_column="gender", locale="en_KE", random_state=0)
    fakes = out.fit_transform(people)
    female = set(Provider.first_names_female)
    male = set(Provider.first_names_male)
    for gender, name in zip(people["gender"], fakes["name"], strict=True):
        assert name in (female if gender == "Female" else male)


def test_fake_is_consistent_and_unique() -> None:
    frame = pd.DataFrame({"name": ["Ann", "Bob", "Ann", "Cy", None]})
    out = Fake("name", unique=True, random_state=3).fit_transform(frame)["name"]
    assert out[0] == out[2]
    assert out[[0, 1, 3]].nunique() == 3
    assert pd.isna(out[4])
    assert not set(out.dropna()) & {"Ann", "Bob", "Cy"}


def test_fake_emails_are_built_from_the_fake_names() -> None:
    frame = pd.DataFrame({"name": ["Ann Mwangi", "Bob Otieno"], "email": ["a@x.io", "b@y.io"]})
    named = Fake("name", random_state=1).fit_transform(frame)
    out = Fake("email", kind="email", name_column="name", random_state=1).fit_transform(named)
    titles = {"dr", "dr.", "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "prof", "rev", "fr"}
    for name, email in zip(named["name"], out["email"], strict=True):
        words = [w for w in name.lower().split() if w not in titles]  # "Dr Ismail Rotich"
        first, last = words[0], words[-1]
        assert email.startswith(f"{first}.{last}".replace("'", "")), (name, email)
        assert "@" in email


def test_fake_dates_stay_in_range(people: pd.DataFrame) -> None:
    out = Fake("joined", kind="date", start="1990-01-01", end="1990-12-31", random_state=0)
    dates = pd.to_datetime(out.fit_transform(people)["joined"])
    assert dates.min() >= pd.Timestamp("1990-01-01")
    assert dates.max() <= pd.Timestamp("1990-12-31")


def test_fake_choices_follow_probabilities() -> None:
    frame = pd.DataFrame({"city": [str(i) for i in range(20_000)]})
    probabilities = [0.6, 0.3, 0.1]
    out = Fake(
        "city",
        kind="choice",
        choices=["Nairobi", "Mombasa", "Kisumu"],
        probabilities=probabilities,
        random_state=0,
    ).fit_transform(frame)["city"]
    observed = out.value_counts().reindex(["Nairobi", "Mombasa", "Kisumu"]).to_numpy()
    # chi-square goodness of fit: the draws must not be distinguishable from the asked shares
    assert stats.chisquare(observed, np.array(probabilities) * len(frame)).pvalue > 0.001


def test_fake_pattern_makes_kra_pin_shapes() -> None:
    out = Fake("pin", kind="pattern", pattern="?#########?", random_state=0)
    pins = out.fit_transform(pd.DataFrame({"pin": ["A000000000B"] * 5 + ["C1"]}))["pin"]
    assert pins.str.fullmatch(r"[A-Z]\d{9}[A-Z]").all()


def test_fake_bad_parameters_are_named() -> None:
    frame = pd.DataFrame({"x": ["a"]})
    with pytest.raises(ParameterError, match="kind must be one of"):
        Fake("x", kind="no_such_provider").fit(frame)
    with pytest.raises(ParameterError, match="probabilities must be 2"):
        Fake("x", kind="choice", choices=["a", "b"], probabilities=[0.5, 0.6]).fit(frame)


# -- generalization ----------------------------------------------------------------------------
def test_generalize_labels_and_out_of_range() -> None:
    frame = pd.DataFrame({"age": [18, 29, 30, 74, np.nan]})
    out = Generalize("age", bins=[18, 30, 45, np.inf]).fit_transform(frame)["age"]
    assert out.tolist()[:4] == ["[18, 30)", "[18, 30)", "[30, 45)", ">= 45"]
    assert pd.isna(out.iloc[4])
    with pytest.raises(ParameterError, match=r"outside the bins.*\[5\.0\]"):
        Generalize("age", bins=[18, 30]).fit_transform(pd.DataFrame({"age": [5, 20]}))


def test_generalize_mean_split_and_rounding() -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 10.0]})
    out = Generalize("x", bins="mean").fit_transform(frame)["x"]
    assert out.tolist() == ["< 4", "< 4", "< 4", ">= 4"]
    rounded = Generalize("x", round_to=5).fit_transform(frame)["x"]
    assert rounded.tolist() == [0.0, 0.0, 5.0, 10.0]


def test_generalize_mapping_and_dates() -> None:
    frame = pd.DataFrame(
        {
            "county": ["Lamu", "Meru", "Nairobi"],
            "d": pd.to_datetime(["2013-11-14", "2015-02-01", None]),
        }
    )
    with pytest.raises(ParameterError, match=r"does not cover: \['Nairobi'\]"):
        Generalize("county", mapping={"Lamu": "Coast", "Meru": "Eastern"}).fit_transform(frame)
    out = Generalize("county", mapping={"Lamu": "Coast"}, other="Other").fit_transform(frame)
    assert out["county"].tolist() == ["Coast", "Other", "Other"]
    expected = {
        "year": ["2013", "2015"],
        "month": ["2013-11", "2015-02"],
        "quarter": ["2013Q4", "2015Q1"],
        "decade": ["2010s", "2010s"],
    }
    for unit, want in expected.items():
        got = Generalize("d", date=unit).fit_transform(frame)["d"]
        assert got.tolist()[:2] == want
        assert pd.isna(got.iloc[2])


def test_generalize_needs_exactly_one_mode() -> None:
    with pytest.raises(ParameterError, match="exactly one of bins, mapping, date or round_to"):
        Generalize("x", bins=3, round_to=5).fit(pd.DataFrame({"x": [1]}))


def test_top_coding_from_percentiles() -> None:
    salaries = pd.DataFrame({"salary": np.arange(1, 101) * 1000})
    coder = TopBottomCode("salary", top_quantile=0.95, bottom_quantile=0.05).fit(salaries)
    low, high = coder.thresholds_["salary"]
    assert (low, high) == (6000.0, 95000.0)  # nearest observed values for integer columns
    out = coder.transform(salaries)["salary"]
    assert out.dtype == salaries["salary"].dtype
    assert out.min() == 6000
    assert out.max() == 95000
    assert (out == 95000).sum() == 6


# -- aggregation, resampling, noise, PCA -------------------------------------------------------
def test_microaggregation_k_and_information_kept() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    for method in ("mdav", "sorted"):
        out = Microaggregate(["a", "b"], k=5, method=method).fit_transform(frame)
        assert out.groupby(["a", "b"]).size().min() >= 5
        # aggregation keeps most of the signal: correlation with the originals stays high
        assert np.corrcoef(out["a"], frame["a"])[0, 1] > 0.7


def test_resample_continuous_picks_exponnorm_for_ibm_monthly_income() -> None:
    """The course found exponnorm the best fit for IBM HR MonthlyIncome; veil must agree."""
    income = pd.read_csv(DATA / "ibm_hr_monthly_income.csv")
    transform = ResampleContinuous("MonthlyIncome", random_state=0).fit(income)
    assert transform.best_["MonthlyIncome"] == "exponnorm"
    report = transform.fit_report_["MonthlyIncome"]
    assert [r["ks_statistic"] for r in report] == sorted(r["ks_statistic"] for r in report)
    out = transform.transform(income)["MonthlyIncome"]
    assert out.dtype == income["MonthlyIncome"].dtype
    assert out.between(income["MonthlyIncome"].min(), income["MonthlyIncome"].max()).all()
    # the draws follow the original distribution (two-sample KS), yet rows are not the originals
    assert stats.ks_2samp(out, income["MonthlyIncome"]).statistic < 0.08
    assert (out == income["MonthlyIncome"]).mean() < 0.05


def test_resample_continuous_recovers_a_lognormal() -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.lognormal(3, 0.8, 3000)})
    transform = ResampleContinuous("x", candidates=("norm", "lognorm", "expon"), random_state=0)
    assert transform.fit(frame).best_["x"] == "lognorm"


def test_noise_scale_is_relative_to_the_spread() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.normal(100, 20, 20_000)})
    out = Noise("x", scale=0.5, random_state=0).fit_transform(frame)["x"]
    assert np.std(out - frame["x"]) == pytest.approx(0.5 * frame["x"].std(ddof=0), rel=0.03)


def test_full_rank_pca_keeps_distances_and_accuracy() -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=400, n_features=6, n_informative=4, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    masked = PCAMask(random_state=0).fit_transform(frame)
    assert list(masked.columns) == [f"pc{i}" for i in range(6)]
    standardized = (frame - frame.mean()) / frame.std(ddof=0)
    from scipy.spatial.distance import pdist

    assert np.allclose(pdist(masked.to_numpy()), pdist(standardized.to_numpy()))
    model = LogisticRegression(max_iter=1000)
    before = cross_val_score(model, standardized, y, cv=5).mean()
    after = cross_val_score(model, masked, y, cv=5).mean()
    assert after == pytest.approx(before, abs=0.01)
    reduced = PCAMask(n_components=2).fit_transform(frame)
    assert reduced.shape == (400, 2)


def test_rename_columns_opaque_and_mapping(people: pd.DataFrame) -> None:
    opaque = RenameColumns(prefix="col").fit(people)
    assert opaque.mapping_["name"] == "col00"
    with pytest.raises(ParameterError, match="same name"):
        RenameColumns(mapping={"name": "age"}).fit(people)
