# Two commands on a fresh machine: `make run` (try it) and `make test` (test it).
# Each creates the virtualenv and installs on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

# Held to mypy in `make lint`: every app and the load harnesses (benchmarks, soak,
# platform fakes).
TYPECHECK_PATHS ?= apps loadtest

.PHONY: install run test test-fast lint typecheck format db-stop clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# DEBUG: local work, keys generated into var/secrets.json (production must set its own).
# `make run PORT=8001` when 8000 is taken.
PORT ?= 8000
run: $(STAMP)
	DEBUG=true $(PY) manage.py serve --demo --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# Unit tests only: no browser, no child process, no live server (those carry the `slow`
# marker or live in the files below), and not the HTTP-level suites of the API and the web
# app (tests/api, tests/web: `make test` runs them). Under a minute on 2 cores.
FAST_IGNORE := tests/api tests/web tests/cli tests/mcp tests/loadtest tests/test_settings.py \
	tests/jobs/test_bench.py tests/jobs/test_worker_processes.py \
	tests/ops/test_bench_api.py tests/ops/test_deploy.py tests/ops/test_logging.py \
	tests/ops/test_pgbouncer.py tests/ops/test_scale_out.py tests/ops/test_soak.py \
	tests/ops/test_soak_chaos.py tests/ops/test_soak_platforms.py \
	tests/providers/test_httpcall_bounds.py tests/providers/test_sandbox.py \
	tests/renditions/test_pipeline.py tests/renditions/test_pipeline_processes.py \
	tests/renditions/test_waiting.py tests/webhooks/test_emit.py
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" -n 2 -q $(addprefix --ignore=,$(FAST_IGNORE)) $(PYTEST_ARGS)

# Style, import contracts (.importlinter), types, and migrations that match the models.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports .importlinter
	$(MAKE) --no-print-directory typecheck
	DJANGO_SETTINGS_MODULE=tests.config.settings $(PY) manage.py makemigrations --check --dry-run

typecheck: $(STAMP)
	$(VENV)/bin/mypy $(TYPECHECK_PATHS)

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Stops the embedded PostgreSQL unless a live process still uses it (FORCE=1: even then).
db-stop:
	$(PY) -m config.embedded_db stop $(if $(FORCE),--force)

clean:
	rm -rf $(VENV) var
