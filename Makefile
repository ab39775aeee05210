# Two entry points for a fresh clone (see README.md):
#   make run   - install what is needed, build, reproduce the parallel-TCP paper (HTML report)
#   make test  - install what is needed, build, run every check and the tests but the slow ones
# and, for CI (.ci/run) and before a merge:
#   make test-full - the same with every test: the Python tests marked `slow` too
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
PYDEPS := "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" \
          "rich>=13" "dask[distributed]>=2024.1" "dask-jobqueue>=0.8" \
          "pytest>=7" "pytest-xdist>=3" "hypothesis>=6" "ruff>=0.5" \
          "playwright>=1.40" "duckdb>=1.0" "polars>=1.0"
export VIRTUAL_ENV := $(abspath $(VENV))
# maturin installs the package's dependencies with pip: no "Requirement already satisfied" noise.
export PIP_QUIET := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test test-full build lint lint-rust lint-py rust-checks py-checks rust-test py-test bench golden docs clean

$(STAMP): pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PYDEPS)
	touch $(STAMP)

build: $(STAMP)
	$(VENV)/bin/maturin develop --release -q
# The testbed's link emulator and endpoints (plait testbed, docs/testbed.md).
	$(CARGO) build --release -q -p plait-testbed

run: build
	$(VENV)/bin/plait reproduce parallel-tcp --quick

lint: lint-rust lint-py

# Cargo would otherwise share make's job slots (-j2 below) and compile on one core.
CARGO := env -u MAKEFLAGS -u MFLAGS cargo

lint-rust:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

lint-py: $(STAMP)
	$(VENV)/bin/ruff check python tests experiments
	$(VENV)/bin/ruff format --check python tests experiments

# Property tests draw from a fixed seed so that CI is reproducible; run `cargo test` without
# PROPTEST_RNG_SEED to explore fresh cases.
rust-test:
	PROPTEST_RNG_SEED=1 $(CARGO) test --release -p plait-core -p plait-testbed
# The core's tests again with every debug_assert! and overflow check on (profile `checked`,
# the release build with its checks: Cargo.toml).
	PROPTEST_RNG_SEED=1 $(CARGO) test --profile checked -q -p plait-core

# Two workers: the interrupt tests mostly wait, so they overlap with the rest.
PYTEST := $(VENV)/bin/pytest -q -n 2
# `make test` leaves out the Python tests marked `slow` (pyproject.toml: the kernel testbed's
# runs of seconds of real time, each experiment through the command line with its default
# seeds); `make test-full` clears this and runs them too. Every Rust test and check runs in both.
PYTEST_SELECT := -m "not slow"

py-test: build
	$(PYTEST) $(PYTEST_SELECT)

# The Rust checks (compiling, two cores) and the Python checks (mostly waiting on subprocesses
# and interrupts) run side by side; each one's output is printed whole when it ends (make -O).
SYNC := $(if $(filter 3.%,$(MAKE_VERSION)),,-O)

test: build
	$(MAKE) --no-print-directory -j2 $(SYNC) rust-checks py-checks

test-full: build
	$(MAKE) --no-print-directory -j2 $(SYNC) rust-checks py-checks PYTEST_SELECT=

rust-checks:
	$(MAKE) --no-print-directory lint-rust
	$(MAKE) --no-print-directory rust-test

# Run by `test` and `test-full` after `build`.
py-checks: lint-py
	$(PYTEST) $(PYTEST_SELECT)

# Regenerates tests/golden/*.json from tests/golden/*.toml. Only for a change that alters
# simulation results on purpose; its note says which fields changed and why.
golden:
	PLAIT_BLESS=1 $(CARGO) test --release -p plait-core --test golden

# Regenerates the parameter tables of docs/scenario.md (between <!-- registry:... --> markers)
# and the table of verdicts of docs/reproductions.md (from experiments/*/results/claims.json)
# from the registry of controllers, queues, loss models and sources.
docs:
	PLAIT_BLESS=1 $(CARGO) test --release -p plait-core --lib generated_reference_tables
	PLAIT_BLESS=1 $(VENV)/bin/pytest -q tests/python/test_claims_overview.py

bench: build
	$(VENV)/bin/plait bench dumbbell --flows 10 --duration 20
	$(VENV)/bin/plait bench dumbbell --flows 100 --duration 20
	$(VENV)/bin/plait bench dumbbell --flows 1000 --duration 20

clean:
	rm -rf $(VENV) target
