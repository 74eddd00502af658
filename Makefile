# The two commands (see README): `make demo` and `make test`. Both set everything up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_DATA ?= data/sample

.PHONY: install demo test clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/saksi ingest corpus/sample --data-dir $(DEMO_DATA)
	@echo; echo "=== 1. Indonesian question ==="
	$(BIN)/saksi ask "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?" --data-dir $(DEMO_DATA)
	@echo; echo "=== 2. English question over the Indonesian text ==="
	$(BIN)/saksi ask "What is the penalty for filing the SPT Masa late?" --data-dir $(DEMO_DATA)
	@echo; echo "=== 3. A question the corpus cannot answer (refusal) ==="
	$(BIN)/saksi ask "Berapa tarif bea masuk untuk impor mobil listrik?" --data-dir $(DEMO_DATA)

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data .pytest_cache
