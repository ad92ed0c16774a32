# Every target sets up .venv itself, so a fresh clone needs nothing but Python 3.11+.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: run test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev,ui]"
	touch $@ $(STAMP_RUN)

run: $(STAMP_RUN)
	$(PY) -m game.demo

lint: $(STAMP_DEV)
	$(PY) -m ruff check .
	$(PY) -m mypy .

test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bench: $(STAMP_DEV)
	@set -e; for script in bench/*.py; do \
		echo "== $$script"; $(PY) $$script; \
	done

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
