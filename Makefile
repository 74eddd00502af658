# The two commands (see README): `make demo` and `make test`. Both set everything up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_DATA ?= data/sample

.PHONY: install demo test chromium clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,models,train]'
	touch $@

install: $(VENV)/.installed

# the demo runs as the terminal's foreground process group (scripts/foreground.py): Ctrl-C stops it, not make,
# and it exits 0 with a goodbye
demo: install
	DEMO_DATA=$(DEMO_DATA) $(BIN)/python scripts/foreground.py ./scripts/demo.sh

test: install chromium
	$(BIN)/python -m pytest

# The browser tests (tests/browser/) drive Debian's chromium through Playwright; Playwright's own
# browser download cannot work here. Installed with apt when missing (sudo when not root);
# SAKSI_SKIP_BROWSER=1 skips the install and the browser tests.
SUDO := $(shell [ "$$(id -u)" = 0 ] || ! command -v sudo >/dev/null 2>&1 || echo sudo)
APT  := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

chromium:
	@if [ "$$SAKSI_SKIP_BROWSER" = 1 ] || command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	command -v apt-get >/dev/null 2>&1 || { echo "make: chromium is missing and there is no apt-get:" \
	  "install Debian's chromium for tests/browser/ (or set SAKSI_SKIP_BROWSER=1)" >&2; exit 1; }; \
	echo "installing Debian's chromium for the browser tests"; \
	$(APT) install -y chromium || { $(APT) update && $(APT) install -y chromium; }

clean:
	rm -rf $(VENV) data .pytest_cache
