# interconnect-catalog. Set-up is two commands: `make app` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DB     ?= data/catalog.duckdb
SHARED ?= ../shared
PYTEST_ARGS ?=

.PHONY: install app seed test test-fast refresh reparse lint format snapshot bench fuzz clean

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

# Install, build the catalog if missing, and serve the Streamlit app on http://localhost:8501.
app: install $(DB)
	INTERCONNECT_CATALOG_DB=$(DB) $(VENV)/bin/streamlit run app.py

# Run the test suite (pytest exits 5, and so fails, if no test was collected).
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

# The fast tier: parsers, records, queries and units (no refresh over HTTP, no app, no properties).
test-fast: install
	$(PY) -m pytest -m "not slow and not property and not e2e" $(PYTEST_ARGS)

# Live refresh from the providers' sites; `make refresh MIRROR=../shared/mirror` runs it offline.
# Exit codes: 0 all providers refreshed; 1 some provider failed and kept its last good rows
# (stale); 2 usage error; 3 another refresh is running. Meant for cron (see README).
refresh: install
	$(PY) -m catalog refresh --db $(DB) $(if $(MIRROR),--mirror $(MIRROR)) $(if $(QUIET),--quiet)

# Parse the stored documents of the last refresh again (after a parser fix; no network).
reparse: install
	$(PY) -m catalog reparse --db $(DB)

# Lint: ruff check and ruff format check (CI runs this after the tests).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Format and apply ruff's safe fixes.
format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Regenerate the shipped snapshot from the real documents in $(SHARED)/mirror (provider sources only:
# the snapshot does not ship measurements, nor what is derived from them).
snapshot: install
	rm -f .snapshot.duckdb
	$(PY) -m catalog refresh --quiet --db .snapshot.duckdb --mirror $(SHARED)/mirror \
	  $$($(PY) -c "from scrapers import PROVIDERS; print(' '.join('--provider ' + c.name for c in PROVIDERS))")
	$(PY) -c "from pathlib import Path; from catalog import snapshot; \
	  print('snapshot', 'rewritten' if snapshot.update(Path('.snapshot.duckdb'), snapshot.DEFAULT_DIR) else 'unchanged')"
	rm -f .snapshot.duckdb .snapshot.duckdb.lock

# Measure speed on this machine; prints the figures and writes them into README "Benchmarks".
bench: install
	$(PY) -m devtools bench

# Property tests at 10,000 examples each (the hypothesis "bench" profile; about 33 minutes).
fuzz: install
	HYPOTHESIS_PROFILE=bench $(PY) -m pytest -q -m property tests/

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .snapshot.duckdb*
