# `make demo` and `make test` work on a fresh machine with only Python >= 3.11 and pip:
# each creates .venv if it is missing and installs podium with its dev extras into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE := $(VENV)/.core

.PHONY: demo test test-slow explore bench load evaluation massive clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# podium with its dev extras (the server, the peers compared against, the test tools): what `make test` needs.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(CORE)

# podium alone (numpy, scipy, numba, matplotlib, typer, rich): what the demo needs, in a fraction of the time.
$(CORE): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(CORE)

demo: $(CORE)
	$(BIN)/podium demo

# On every core (pytest-xdist; `-n 0` in PYTEST_ADDOPTS runs it in one process): tests share nothing but
# PostgreSQL, where each takes its own schema.
test: $(STAMP)
	@echo "compiling podium's kernels in one process first, for the tests' histories (numba caches them: minutes"
	@echo "the first time, seconds after)"
	$(BIN)/podium compile
	$(BIN)/python -m pytest -q -n auto

# The Hypothesis searches of the ordering engine against mpmath (minutes; left out of `make test`).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# New random examples for every Hypothesis property (1,000 where a test sets no number; minutes): a search for bugs.
explore: $(STAMP)
	$(BIN)/python -m pytest -q --hypothesis-profile=explore

bench: $(STAMP)
	$(BIN)/python benchmarks/replay.py

# The league server under load: 4 server processes, 16 clients x 250 reports, on SQLite and PostgreSQL.
load: $(STAMP)
	$(BIN)/python benchmarks/load.py

# Regenerates docs/evaluation.md (and its figure) from ../shared/data: about ten minutes.
evaluation: $(STAMP)
	$(BIN)/python benchmarks/evaluate_real.py

# Massive contests (README): podium's models and elo-mmr-py's systems on codeforces_early and simulated fields of up
# to 10,000, the Elo-MMR paper's metrics and wall times (needs `pip install elo-mmr-py` in the venv; an hour or more).
massive: $(STAMP)
	$(BIN)/python benchmarks/massive.py --repeat 3 --markdown

clean:
	rm -rf $(VENV) build src/*.egg-info
