# Two entry points: `make run` and `make test`. Each creates .venv and installs on first use.
# `make check` is the inner loop: format, lint, types, import contracts and the tests that
# need no browser and are not marked slow, on every core.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SESSION ?= research_agent  # a bundled session in sample_sessions/
PORT   ?= 8501

.PHONY: run test check lint types imports unit browser chromium clean

# Where PYTHONDONTWRITEBYTECODE is set, every pytest process rewrites the asserts of every
# test module again and every child process compiles the package again: about 7 s of CPU
# per pytest process and a third of a child's start-up, measured. __pycache__ is ignored.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed"; exit 1; }
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
		echo "installing Debian's python3-venv"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,fleet]'
	$(BIN)/python -m assembler doctor
	@touch $(STAMP)

run: $(STAMP)
	@echo "Context Assembly Inspector: open http://127.0.0.1:$(PORT)/?session=$(SESSION)"
	$(BIN)/python -m streamlit run app.py --server.port=$(PORT) --server.address=127.0.0.1 \
		--server.headless=true --browser.gatherUsageStats=false

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

types: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# Tests run on every core, a module's tests on one worker (its module-scoped fixtures are
# built once). tests/browser is left out of the collection, not only deselected: its modules
# import Playwright and the SDKs in every worker. The browser tests have their own run
# (below), where each process shares one app server and one chromium among its modules.
PYTEST_UNIT := $(BIN)/pytest --ignore=tests/browser -n auto --dist loadscope

unit: $(STAMP)
	$(UNIT_NICE) $(PYTEST_UNIT) -m "not browser"

# The browser tests mostly wait (on uploads, budgets, a closed tab's memory), so those that
# time nothing run on two workers, each with its own app server and chromium, and overlap their
# waits. The ones that time the server's answers to the second run after, in one process: beside
# another browser worker, a 10 s answer came at 12.5 s in CI.
BROWSER_TIMED := tests/browser/test_hostile_browser.py tests/browser/test_browser_budget.py

browser: $(STAMP) chromium
	$(BIN)/pytest tests/browser -m browser -n 2 $(addprefix --ignore=,$(BROWSER_TIMED))
	$(BIN)/pytest $(BROWSER_TIMED) -m browser

check: lint types imports
	$(PYTEST_UNIT) -m "not browser and not slow"

# The unit run keeps both cores busy; the browser run waits on its server for much of its
# time, though chromium keeps about one core busy (its renderers, measured per process:
# docs/benchmarks.md). Side by side they took 6 min 17 s, one after the other 7 min 6 s
# (176 s + 250 s, each alone). Each run's output is printed whole when it ends. The unit
# run yields the CPU (nice 10): the browser tests time a real server's answers to the
# second; the unit tests' limits are on CPU time, or wide.
test: $(STAMP) chromium lint types imports
	@$(MAKE) --no-print-directory -j2 --output-sync=target unit browser UNIT_NICE="nice -n 10"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
