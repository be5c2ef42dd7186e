# One toolchain for people and CI. Every target bootstraps .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PEERS := tests/peers/node_modules/.package-lock.json
BENCH_PEERS := bench/.work/peers-venv/.installed
PHOENIX := tests/.work/phoenix-venv/.installed

.PHONY: demo test test-fast check docs bench soak fuzz clean

$(INSTALLED): pyproject.toml tests/frameworks.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]' -c tests/frameworks.txt
	# Real tool definitions for tests and benchmarks (data files only; its own deps not needed).
	$(BIN)/python -m pip install --quiet --no-deps bfcl-eval==2026.3.23
	touch $@

# Real peers the tests run against (npm registry only): the SARIF Multitool that validates our
# SARIF logs, and the MCP reference servers.
$(PEERS): tests/peers/package.json tests/peers/package-lock.json
	cd tests/peers && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The peer converters `make bench` compares with, kept out of .venv so their dependencies
# cannot change what schemawire runs on.
$(BENCH_PEERS): bench/peers-requirements.txt
	$(PYTHON) -m venv bench/.work/peers-venv
	bench/.work/peers-venv/bin/python -m pip install --quiet -r bench/peers-requirements.txt
	touch $@

# Arize Phoenix, the trace viewer the slow OTLP test exports to (tests/otel/test_phoenix.py),
# in its own environment for the same reason.
$(PHOENIX): tests/phoenix-requirements.txt
	$(PYTHON) -m venv tests/.work/phoenix-venv
	tests/.work/phoenix-venv/bin/python -m pip install --quiet --upgrade pip
	tests/.work/phoenix-venv/bin/python -m pip install --quiet -r tests/phoenix-requirements.txt
	touch $@

demo: $(INSTALLED)
	$(BIN)/schemawire check examples/support-desk
	@echo
	@echo "The same kind of repository with the usual mistakes; this check must fail (exit 1):"
	@echo
	$(BIN)/schemawire check examples/broken-refunds; test $$? -eq 1
	@echo
	$(BIN)/schemawire demo

check: $(INSTALLED)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	# The layers of docs/architecture.md: no upward import, no cycle (contracts in pyproject.toml).
	$(BIN)/lint-imports --no-cache --no-logo

# Everything, as CI runs it: real peers (npm servers, Inspector, the conformance suite),
# processes, crash tests, PostgreSQL and Arize Phoenix included. One worker per core
# (pytest-xdist; each has its own PostgreSQL, browser and temporary folders), a whole file per
# worker: the tests of one file share its costly setup (the wheel's venvs, pre-commit's hook
# environment, Phoenix), built once. (--dist loadgroup did not group here: with pytest 9.2 and
# xdist 3.8 its marker left the node ids unchanged.) The slowest are listed at the end.
PYTEST_PARALLEL := -n auto --dist loadfile
test: check docs $(PEERS) $(PHOENIX)
	$(BIN)/pytest $(PYTEST_PARALLEL) --durations=25

# The docs site (mkdocs.yml over docs/, with the API reference from the docstrings) into site/,
# warnings as errors: a broken link, a missing page or a docstring mkdocstrings cannot read
# fails the build.
docs: $(INSTALLED)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The tests a contributor runs while working, in under a minute: all but those marked slow
# (real processes and peers, PostgreSQL, large inputs). `make test` still runs them all.
test-fast: $(INSTALLED)
	$(BIN)/pytest -q -m "not slow" $(PYTEST_PARALLEL)

bench: $(INSTALLED) $(BENCH_PEERS)
	$(BIN)/python -m bench.run

# Mixed traffic against `serve --http` and the proxy, memory sampled every 10 s; not part of
# `make bench` (it runs MINUTES minutes): `make soak MINUTES=30`.
MINUTES ?= 30
soak: $(INSTALLED)
	$(BIN)/python -m bench.run --only soak --minutes $(MINUTES)

# A long run of random input against both gates, outside CI, one worker per CPU: INPUTS
# inputs (10^6 by default) or SECONDS seconds, whichever comes first; exit 1 on any exception,
# accepted-but-invalid value or escaped secret. `make fuzz SECONDS=600` for a time budget.
INPUTS ?= 1000000
SECONDS ?= 3600
fuzz: $(INSTALLED)
	$(BIN)/python -m tests.gates.fuzz --inputs $(INPUTS) --seconds $(SECONDS)

clean:
	rm -rf $(VENV) tests/peers/node_modules tests/.work bench/.work site
