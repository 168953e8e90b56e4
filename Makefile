# Two entry points for a newcomer: `make run` and `make test`. Both create .venv on first use and
# reinstall only when pyproject.toml or setup.py changes (the stamp file), so a second call starts at once.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n 2

.PHONY: run report test lint typecheck unit bench mutate clean

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job: a few dozen rounds with the random crowd against the reference server on the local HIL bench
# (server subprocess, pty device lines, HTTP/WS players); the summary ends with the oracle's verdict.
run: $(STAMP)
	$(BIN)/xocdia-hil run --bench fixtures/benches/local-hil.yaml --rounds 30

# One allure report for the whole suite (scenarios, unit and property tests) plus the clause matrix, built into
# offline HTML (allure-report/index.html): Allure 3 from npm when it can be had, else the built-in renderer.
REPORT ?= allure-report
report: $(STAMP)
	-$(BIN)/pytest $(PYTEST_ARGS) --alluredir $(REPORT)/allure-results --clean-alluredir
	$(BIN)/python -m harness.cert.report.build $(REPORT)/allure-results $(REPORT)

lint: $(STAMP)
	$(BIN)/ruff check simulator harness gameserver tests benchmarks mutation
	$(BIN)/ruff format --check simulator harness gameserver tests benchmarks mutation
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_simulator.py
	$(BIN)/python benchmarks/bench_simulator_floor.py
	$(BIN)/python benchmarks/bench_server.py
	$(BIN)/python benchmarks/bench_gateway.py
	$(BIN)/python benchmarks/bench_settlement.py
	$(BIN)/python benchmarks/bench_monitor.py
	$(BIN)/python benchmarks/bench_serial.py
	$(BIN)/python benchmarks/bench_campaign.py
	$(BIN)/python benchmarks/bench_rig.py
	$(BIN)/python benchmarks/bench_rig_floor.py
	$(BIN)/python benchmarks/bench_certify.py

# Mutation testing of the server's rules and settlement code with the certification suite (in-process bench) as
# the only killer, on a copy of the working tree (docs/mutation.md). A quick run: make mutate MUTATE_ARGS='--sample 50
# --seed 1'. The report: mutation-report/report.md and report.json.
MUTATE_STAMP := $(VENV)/.installed-mutate
MUTATE_ARGS ?=
$(MUTATE_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[mutate]'
	touch $(MUTATE_STAMP)

mutate: $(MUTATE_STAMP)
	$(BIN)/python -m mutation.run $(MUTATE_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
