# Two entry points, both from nothing: `make demo` and `make test`.
# Works as root or as a user with sudo. The software Vulkan driver (Mesa's
# lavapipe) is installed only when no Vulkan driver is present.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export XDG_RUNTIME_DIR ?= /tmp/gpuviz-runtime-$(shell id -u)

.PHONY: demo test setup vulkan browser clean labextension

demo: setup
	@echo "Starting JupyterLab on 127.0.0.1 (the URL with its token follows; Notebook 7 is at /tree on the same server)"
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=8888 \
		--ServerApp.root_dir=notebooks $$( [ "$$(id -u)" = 0 ] && echo --ServerApp.allow_root=True )

# Two workers, a test file each at a time (loadfile keeps a notebook's cells in order on one
# worker): the suite is shader compilation on one core, so two use both cores of a 2-core CI.
test: setup browser
	$(BIN)/python -m pytest tests notebooks --nbval-lax -q -n 2 --dist loadfile

setup: vulkan $(VENV)/.installed
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)

vulkan:
	@if ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null | grep -q . \
		&& /sbin/ldconfig -p | grep -q libvulkan.so.1; then \
		echo "Vulkan driver present"; \
	else \
		echo "No Vulkan driver: installing Debian's mesa-vulkan-drivers"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null; \
	fi

# Browser tests drive Debian's Chromium through the playwright package (never
# a downloaded browser).
browser:
	@if [ -x /usr/bin/chromium ]; then \
		echo "Chromium present"; \
	else \
		echo "Installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,demo]'
	$(LINK_LABEXTENSION)
	touch $@

# A wheel installs the extension as data files; an editable install skips them,
# so the dev venv links the built folder where Jupyter looks for extensions.
LINK_LABEXTENSION = rm -rf $(VENV)/share/jupyter/labextensions/gpuviz && mkdir -p $(VENV)/share/jupyter/labextensions \
	&& ln -s $(CURDIR)/gpuviz/labextension $(VENV)/share/jupyter/labextensions/gpuviz

# Rebuild the prebuilt JupyterLab / Notebook 7 extension shipped in the package
# (gpuviz/labextension, installed as share/jupyter/labextensions/gpuviz) from its
# sources in labextension/, record their hash (tests/test_labextension_build.py
# checks it) and link it into the venv. Needs node and npm; users of the package never do.
LAB_STAGING = $$($(CURDIR)/$(BIN)/python -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')
labextension: $(VENV)/.installed
	cd labextension && npm ci --no-audit --no-fund --loglevel=error && npx tsc
	rm -rf gpuviz/labextension
	cd labextension && node node_modules/@jupyterlab/builder/lib/build-labextension.js --core-path $(LAB_STAGING) .
	$(BIN)/python labextension/source_hash.py --write
	$(LINK_LABEXTENSION)
	$(BIN)/jupyter labextension list 2>&1 | grep -F 'gpuviz v'

clean:
	rm -rf $(VENV)
