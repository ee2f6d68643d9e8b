# interconnect-catalog. Set-up is two commands: `make app` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DB     ?= data/catalog.duckdb
SHARED ?= ../shared
PYTEST_ARGS ?=

.PHONY: install app seed test test-fast e2e e2e-deps screenshots refresh reparse lint format snapshot bench bench-app attacks fuzz clean

# Create .venv and install the pinned dependencies (again whenever pyproject/constraints change).
$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# Build the catalog from the snapshot that ships in the repo (no network), only if none exists.
$(DB): | $(VENV)/.installed
	$(PY) -m catalog seed --db $(DB)

# Rebuild the catalog from the shipped snapshot, replacing the current one.
seed: install
	$(PY) -m catalog seed --db $(DB) --force

# Install, build the catalog if missing, and serve the Streamlit app on http://localhost:8501
# (streamlit run app.py, with the app's modules loaded before the first visitor: ui/serve.py).
app: install $(DB)
	INTERCONNECT_CATALOG_DB=$(DB) $(PY) -m ui.serve

# Run the test suite (pytest exits 5, and so fails, if no test was collected).
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

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

# Retake the README's screenshots (docs/screenshots/*.png: the questions, the measurements view, the dark
# theme) with the end-to-end tests.
screenshots: e2e-deps
	INTERCONNECT_SCREENSHOTS=docs/screenshots $(PY) -m pytest -m e2e -k "question or dark or measurements" $(PYTEST_ARGS)

# The fast tier: tests/unit and tests/providers (parsers on real documents, records, units, the planner;
# no refresh, no app, no properties). docs/contributing.md lists the tiers.
test-fast: install
	$(PY) -m pytest tests/unit tests/providers $(PYTEST_ARGS)

# Live refresh from the providers' sites; `make refresh MIRROR=../shared/mirror` runs it offline
# (add COPIES=../shared to read the local copies providers declare, as `make snapshot` does).
# Exit codes: 0 all providers refreshed; 1 some provider failed and kept its last good rows
# (stale); 2 usage error; 3 another refresh is running. Meant for cron (see README).
refresh: install
	$(PY) -m catalog refresh --db $(DB) $(if $(MIRROR),--mirror $(MIRROR)) $(if $(COPIES),--copies $(COPIES)) \
	  $(if $(QUIET),--quiet)

# Parse the stored documents of the last refresh again (after a parser fix; no network).
reparse: install
	$(PY) -m catalog reparse --db $(DB)

# Lint: ruff check, ruff format check and the mypy type check (CI runs this after the tests).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Format and apply ruff's safe fixes.
format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Regenerate the shipped snapshot from the real documents in $(SHARED)/mirror and the local copies in $(SHARED).
snapshot: install
	rm -f .snapshot.duckdb
	$(PY) -m catalog refresh --quiet --db .snapshot.duckdb --mirror $(SHARED)/mirror --copies $(SHARED)
	$(PY) -c "from pathlib import Path; from catalog import snapshot; \
	  print('snapshot', 'rewritten' if snapshot.update(Path('.snapshot.duckdb'), snapshot.DEFAULT_DIR) else 'unchanged')"
	rm -f .snapshot.duckdb .snapshot.duckdb.lock

# Measure speed on this machine; prints the figures and writes them into README "Benchmarks".
bench: install
	$(PY) -m devtools bench

# Hostile responses (gzip bomb, endless and huge bodies, a huge mirror file, a slow drip) against a
# refresh with the default budget: wall time and peak memory per case (about 3 minutes).
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
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .snapshot.duckdb*
