# interconnect-catalog. Set-up is two commands: `make app` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DB     ?= data/catalog.duckdb
SHARED ?= ../shared
PYTEST_ARGS ?=

.PHONY: runtime install compat app seed release test test-fast coverage e2e e2e-deps screenshots refresh reparse lint format snapshot bench bench-app attacks fuzz clean

# .venv with what the app, seed and refresh need: pyproject's runtime dependencies, pinned by
# constraints.txt (again whenever either changes); `make app` installs only this. The project itself
# runs from the checkout (`python -m ...` here), so nothing is built for it until `make test`.
$(VENV)/.runtime: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], \
	  sep='\n')" > $(VENV)/runtime-requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -r $(VENV)/runtime-requirements.txt
	touch $@

# The project (editable) and the test and lint tools on top (the [dev] extra): `make test`, `make lint`
# and the benchmarks.
$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $@

runtime: $(VENV)/.runtime
install: $(VENV)/.installed

# Older DuckDB engines in .venv-compat, for the test that they open the catalog file and a release
# (tests/test_storage_compat.py): duckdb 1.1.3, the oldest we promise (the file is written in storage
# version v1.1.0), and the duckdb shell 1.5.6, the newest 1.x CLI. CI runs it (.ci/run); about 10 s.
COMPAT_VENV := .venv-compat
COMPAT_PINS := duckdb==1.1.3 duckdb-cli==1.5.6
$(COMPAT_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install --quiet $(COMPAT_PINS)
	touch $@

compat: $(COMPAT_VENV)/.installed

# Build the catalog from the snapshot that ships in the repo (no network), only if none exists.
$(DB): | $(VENV)/.runtime
	$(PY) -m catalog seed --db $(DB)

# Rebuild the catalog from the shipped snapshot, replacing the current one.
seed: runtime
	$(PY) -m catalog seed --db $(DB) --force

# Install the runtime dependencies, build the catalog if missing, and serve the Streamlit app on
# http://localhost:$(PORT) (`make app PORT=8600` for another port; a busy one is named in one line).
# It is `streamlit run app.py` with the app's modules loaded before the first visitor: ui/serve.py.
PORT ?= 8501
app: runtime $(DB)
	@$(PY) -m devtools.port $(PORT)
	INTERCONNECT_CATALOG_DB=$(DB) $(PY) -m ui.serve --server.port $(PORT)

# Python may cache compiled modules in __pycache__ (ignored by git) in every recipe: the suite starts
# a few hundred interpreters (the CLI, app servers, refreshes in processes of their own), and with
# PYTHONDONTWRITEBYTECODE set in the environment, as many container images set it, each compiled the
# project's modules again (make test 5 min 19-24 s with it, 4 min 29 s without, on this 2-core machine).
unexport PYTHONDONTWRITEBYTECODE

# Run the test suite on every core (pytest-xdist: JOBS workers, one test file per worker at a time, so a
# file's module fixtures are built once; JOBS=0 runs in this process). One worker more than cores: the
# suite waits on browsers, app servers and loopback sites, and with a worker per core it kept the cores
# busy 1.3 of 2 (make test 5 min 26 s with 2 workers, 5 min 2 s with 3, on this 2-core machine, quiet).
# pytest exits 5, and so fails, if no test was collected.
ifndef JOBS
JOBS := $(shell n=$$(nproc 2>/dev/null) && echo $$((n + 1)) || echo auto)
endif
XDIST = $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile)
test: install
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# The suite with line coverage of the project's packages ([tool.coverage] in pyproject.toml).
coverage: install
	$(PY) -m pytest $(XDIST) --cov --cov-report=term $(PYTEST_ARGS)

# What the end-to-end tests need: Debian's chromium (installed with apt-get when absent and root;
# otherwise they skip with the reason) and Playwright in .venv (Playwright's own browser download
# needs the internet; the tests drive /usr/bin/chromium instead).
e2e-deps: install
	@test -x /usr/bin/chromium || { if [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }; \
	  else echo "make e2e: /usr/bin/chromium is missing and this is not root: the e2e tests will skip"; fi; }
	$(PY) -m pip install --quiet -c constraints.txt playwright

# Only the end-to-end tests: the app in Chromium (load, the three questions, URL, download, themes).
e2e: e2e-deps
	$(PY) -m pytest -m e2e $(PYTEST_ARGS)

# Retake the README's screenshots (docs/screenshots/*.png: the questions, the nine tasks, the
# measurements view, the dark theme) with the end-to-end tests.
screenshots: e2e-deps
	INTERCONNECT_SCREENSHOTS=docs/screenshots $(PY) -m pytest -m e2e -k "question or dark or measurements or task" $(PYTEST_ARGS)

# The fast tier: tests/unit and tests/providers (parsers on real documents, records, units, the planner;
# no refresh, no app, no properties). docs/contributing.md lists the tiers.
test-fast: install
	$(PY) -m pytest $(XDIST) tests/unit tests/providers $(PYTEST_ARGS)

# Live refresh from the providers' sites; `make refresh MIRROR=../shared/mirror` runs it offline
# (add COPIES=../shared to read the local copies providers declare, as `make snapshot` does).
# Meant for cron (docs/operations.md). The command's exit codes: 0 all providers refreshed; 1 some
# provider failed and kept its last good rows (stale); 2 usage; 3 another refresh is running; 4 the
# environment; 5 a bug. Make itself exits 2 whenever the command fails: run the command directly
# (as .github/workflows/refresh.yml does) where the code matters.
refresh: runtime
	$(PY) -m catalog refresh --db $(DB) $(if $(MIRROR),--mirror $(MIRROR)) $(if $(COPIES),--copies $(COPIES)) \
	  $(if $(QUIET),--quiet)

# Write a release of the catalog into OUT (a new or empty directory): catalog.duckdb, one Parquet file
# per table, instances.json, schema.md, manifest.json, SHA256SUMS (docs/operations.md, Releases).
OUT ?= release
release: runtime $(DB)
	$(PY) -m catalog release --db $(DB) --out $(OUT)

# Parse the stored documents of the last refresh again (after a parser fix; no network).
reparse: runtime
	$(PY) -m catalog reparse --db $(DB)

# Lint: ruff check, ruff format check, the mypy type check, and actionlint on the GitHub workflows
# (CI runs this after the tests).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/actionlint .github/workflows/*.yml

# Format and apply ruff's safe fixes.
format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Regenerate the shipped snapshot from the real documents in $(SHARED)/mirror and the local copies in $(SHARED).
snapshot: runtime
	rm -f .snapshot.duckdb
	$(PY) -m catalog refresh --quiet --db .snapshot.duckdb --mirror $(SHARED)/mirror --copies $(SHARED)
	$(PY) -c "from pathlib import Path; from catalog import snapshot; \
	  print('snapshot', 'rewritten' if snapshot.update(Path('.snapshot.duckdb'), snapshot.DEFAULT_DIR) else 'unchanged')"
	rm -f .snapshot.duckdb .snapshot.duckdb.lock

# Measure speed on this machine; prints the figures and writes them into README "Benchmarks".
bench: install
	$(PY) -m devtools bench

# Hostile inputs (gzip bomb, endless and huge bodies, huge files and copies, hostile imports, query
# limits, a flooding probe tool) with the default caps: wall time and peak memory per case (about 5 min).
attacks: install
	$(PY) -m devtools attacks

# The app in Chromium, timed: cold start, each interaction, bytes per render, on the shipped catalog
# and on a 100x one built from it (devtools/bench_app.py).
bench-app: e2e-deps $(DB)
	$(PY) -m devtools bench-app --db $(DB)

# Property tests at 10,000 examples each (the hypothesis "bench" profile; about 33 minutes).
fuzz: install
	HYPOTHESIS_PROFILE=bench $(PY) -m pytest -q -m property tests/

clean:
	rm -rf $(VENV) $(COMPAT_VENV) .pytest_cache .ruff_cache .mypy_cache .snapshot.duckdb*
