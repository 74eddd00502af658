# The two commands (see README): `make demo` and `make test`. Both set everything up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_DATA ?= data/sample

.PHONY: install demo test clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,models,train]'
	touch $@

install: $(VENV)/.installed

demo: install
	DEMO_DATA=$(DEMO_DATA) ./scripts/demo.sh

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data .pytest_cache
