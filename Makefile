# Two entry points for a newcomer: `make run` and `make test`. Both create .venv on first use and
# reinstall only when pyproject.toml changes (the stamp file), so a second call starts at once.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n 2

.PHONY: run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/xocdia-hil simulate --rounds 2000 --seed 7 --profile standard

lint: $(STAMP)
	$(BIN)/ruff check simulator harness gameserver tests benchmarks
	$(BIN)/ruff format --check simulator harness gameserver tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_simulator.py
	$(BIN)/python benchmarks/bench_server.py
	$(BIN)/python benchmarks/bench_settlement.py
	$(BIN)/python benchmarks/bench_monitor.py
	$(BIN)/python benchmarks/bench_serial.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
