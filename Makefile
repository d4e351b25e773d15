# `make demo` runs the main job (the demo server and page), `make test` the whole test suite.
# `make docs` serves the documentation site at http://127.0.0.1:8001, `make docs-build` builds it
# into site/ with --strict (a broken link or reference fails). `make dist` builds the sdist and the
# wheel into dist/ and checks them with `twine check --strict` (what PyPI would refuse).
# All build .venv on first use; `make demo` rebuilds the page only when frontend-demo/ changed.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo demo-page test lint docs docs-build dist bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo needs the package alone, not the dev toolchain: `make demo` on a fresh clone installs
# just that (a venv that has the dev install already has it).
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	test -f $(STAMP) -a $(STAMP) -nt pyproject.toml || { test -x $(PY) || python3 -m venv $(VENV); \
		$(PY) -m pip install --quiet -e .; }
	touch $(DEMO_STAMP)

# The committed page in pyox_agents/server/static carries a hash of frontend-demo's sources
# (build-stamp.json): rebuild only when it no longer matches (without Node, the committed page).
demo-page:
	@! command -v node >/dev/null || node frontend-demo/scripts/stamp.mjs --check \
		|| (cd frontend-demo && npm ci --no-audit --no-fund && npm run build)

demo: $(DEMO_STAMP) demo-page
	$(VENV)/bin/pyox-agents demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy --strict pyox_agents

# Two pytest workers (pytest-xdist), each file on one worker (its module fixtures made once):
# most of the suite waits on servers, browsers and Node, so it takes half the time on 2 cores.
# `make test WORKERS=0` runs it in one process.
WORKERS ?= 2

test: lint docs-build
	$(VENV)/bin/pytest -q $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile)

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve -a 127.0.0.1:8001

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(VENV)/bin/twine check --strict dist/*

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/run_all.py

# Build outputs and tool caches; .venv and node_modules stay (`rm -rf .venv` to start afresh).
clean:
	rm -rf dist build site .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -not -path './.venv/*' -not -path '*/node_modules/*' -prune -exec rm -rf {} +
