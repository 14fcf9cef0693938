# cgu-lab: `make up` starts the platform on this machine, `make test` runs every test.

# A Python every account can execute: per-user notebooks run the venv's interpreter.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
PORT ?= 8000
HOST ?= 127.0.0.1
# As root, notebooks run as per-user accounts that must be able to reach their homes.
DATA ?= $(shell [ "$$(id -u)" = 0 ] && echo /var/lib/cgu-lab || echo $(CURDIR)/data)
STAMP := $(VENV)/.installed
SHELL := /bin/bash
export PATH := $(BIN):$(PATH)

TEST_STAMP := $(VENV)/.installed-test
STEP = @printf '\n==> %s\n' 

.PHONY: up deps deps-test install install-test constraints lint test test-python test-python-local test-kube kube-prepare test-js test-ui bench openapi clean images

up: install
	@$(BIN)/cgu-lab up --data-dir $(DATA) --host $(HOST) --port $(PORT)

deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh --test

$(BIN)/python:
	$(STEP)"[1/5] a Python environment in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# What running needs, each step showing its progress (a first install takes about 5 minutes:
# the VS Code build, step 5, is 2 to 3 of them). Steps 1 to 5 are numbered as they run.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt package.json yarn.lock
	@# A development link left by `labextension develop` would make pip write into the source tree.
	@rm -rf $(VENV)/share/jupyter/labextensions/cgu-lab cgu_lab/labextension/install.json
	$(STEP)"[2/5] Python packages"
	@$(BIN)/python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print(*p['dependencies'], *p['optional-dependencies']['controller'], sep='\n')" > $(VENV)/requirements-run.txt
	@$(BIN)/pip install --progress-bar off -c constraints.txt -r $(VENV)/requirements-run.txt 2>&1 | \
	  grep --line-buffered -v '^Requirement already satisfied'; test $${PIPESTATUS[0]} -eq 0
	$(STEP)"[3/5] the lab extension: JavaScript packages and build"
	@# Yarn's step lines show progress, with a line every 15 s through its quiet fetch;
	@# its per-package lines only on failure.
	@scripts/heartbeat.sh "JavaScript packages" $(BIN)/jlpm install 2>&1 | tee $(VENV)/jlpm-install.log | \
	  grep --line-buffered -E 'YN0000: (┌|└) |^    … '; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || { tail -40 $(VENV)/jlpm-install.log; exit 1; }
	@$(BIN)/jlpm build
	$(STEP)"[4/5] cgu-lab itself, linked into JupyterLab"
	@$(BIN)/pip install -q -c constraints.txt -e ".[controller]"
	$(BIN)/jupyter-builder develop --overwrite . >/dev/null
	@# Voilà runs as a demo's app on a port (core/publishing.voila_command), never as a server
	@# extension: that one renders and runs any notebook of the home on a GET, kernels at the
	@# server's own api/kernels. Off with its JupyterLab button, which opens it.
	@$(BIN)/jupyter server extension disable --sys-prefix voila.server_extension >/dev/null 2>&1
	@$(BIN)/jupyter labextension disable --level=sys_prefix @voila-dashboards/jupyterlab-preview >/dev/null 2>&1
	@# JupyterLab writes this file on a server's first start; created by a notebook server
	@# (umask 077, running as root in run-as-self mode) it would be unreadable to the others.
	@mkdir -p $(VENV)/etc/jupyter/labconfig
	@test -e $(VENV)/etc/jupyter/labconfig/page_config.json || \
	  printf '{\n  "lockedExtensions": {}\n}\n' > $(VENV)/etc/jupyter/labconfig/page_config.json
	@chmod a+r $(VENV)/etc/jupyter/labconfig/page_config.json
	@touch $(STAMP)

# What only the tests and benchmarks need, on top.
$(TEST_STAMP): $(STAMP)
	$(STEP)"test tools (pytest, Playwright's runner, linters)"
	@# Only the extra's packages: reinstalling cgu_lab itself would write its shared data
	@# through the lab extension's development link into the source tree.
	@$(BIN)/python -c "import tomllib; x = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']; \
	  print(*x['kubernetes'], *(r for r in x['test'] if not r.startswith('cgu_lab')), sep='\n')" > $(VENV)/requirements-test.txt
	$(BIN)/pip install -q -c constraints.txt -r $(VENV)/requirements-test.txt
	@touch $(TEST_STAMP)

# VS Code for the notebooks' Apps launcher: built once per version into ~/.cache/cgu-lab.
CODE_SERVER_STAMP := $(VENV)/lib/cgu-lab/code-server/.version
$(CODE_SERVER_STAMP): scripts/code-server.sh | $(BIN)/python
	$(STEP)"[5/5] VS Code for the notebooks (code-server from npm, built once per version: 2 to 3 minutes)"
	@scripts/code-server.sh $(VENV)

# The notebooks' database web client (DbGate from npm), once per version into ~/.cache/cgu-lab.
DBGATE_STAMP := $(VENV)/lib/cgu-lab/dbgate/.version
$(DBGATE_STAMP): scripts/dbgate.sh | $(BIN)/python
	$(STEP)"the database's web client (DbGate from npm: about a minute, once)"
	@scripts/dbgate.sh $(VENV)

install: deps $(STAMP) $(CODE_SERVER_STAMP) $(DBGATE_STAMP)

install-test: deps-test install $(TEST_STAMP)

lint: install-test
	$(BIN)/ruff check cgu_lab tests benchmarks
	$(BIN)/ruff format --check cgu_lab tests benchmarks
	jlpm lint:check

test-js: install-test
	jlpm test

KUBE_TESTS := tests/test_kubernetes_backend.py tests/test_kube_controller.py tests/test_kube_cluster.py \
  tests/test_kube_apps.py tests/test_kube_training.py tests/test_kube_queues.py \
  tests/test_kube_fleet_cluster.py tests/test_kube_node_down.py tests/test_kube_kubeflow_cluster.py
PYTEST := $(BIN)/pytest -q -p no:cacheprovider

test-python: test-python-local test-kube

# Every Python test but the Kubernetes backend's, on SQLite and on a throwaway PostgreSQL.
# Test files run side by side in TEST_WORKERS processes (pytest-xdist; a file's tests stay
# together, so its module fixtures start once): most of a test's time is a real server
# starting or answering, which leaves a core free for the other files: three workers on a
# 2-core machine ran the local suite in 6m35 against 7m40 with two (load 2.6 at the median).
# The schema-driven API test runs after them, its cases spread over the workers one by one
# (--dist load): its cases share one node id, which grouping by file (a dict keyed by node
# id) folds into the first case alone.
TEST_WORKERS ?= 3
# Its cases are CPU-bound (the generator and the app in one process): one per core.
SCHEMA_WORKERS ?= 2
SCHEMA_TESTS := tests/security/test_schemathesis.py
test-python-local: install-test
	@url=$$(scripts/postgres.sh start) && trap 'scripts/postgres.sh stop' EXIT && \
	  export CGU_TEST_POSTGRES_URL=$$url && \
	  $(PYTEST) -n $(TEST_WORKERS) --dist loadfile --junitxml=$(CURDIR)/artifacts/junit-$@.xml \
	    $(addprefix --ignore=,$(KUBE_TESTS) $(SCHEMA_TESTS)) tests; rc=$$?; \
	  [ $$rc -eq 5 ] && rc=0; \
	  $(PYTEST) -n $(SCHEMA_WORKERS) --dist load \
	    --junitxml=$(CURDIR)/artifacts/junit-test-python-schema.xml $(SCHEMA_TESTS) || rc=1; \
	  exit $$rc

# The Kubernetes backend: a real API server for the fast layer (built from source once, cached
# in .build/kube), and the real one-node cluster with the images (scripts/kube-test.sh).
test-kube: install-test
	scripts/kube-apiserver.sh build
	@url=$$(scripts/postgres.sh start) && trap 'scripts/postgres.sh stop' EXIT && \
	  CGU_TEST_POSTGRES_URL=$$url scripts/kube-test.sh with-cluster $(PYTEST) --junitxml=$(CURDIR)/artifacts/junit-$@.xml $(KUBE_TESTS); rc=$$?; \
	  [ $$rc -eq 5 ] && rc=0; exit $$rc

# Starts the Kubernetes builds in the background, so that a cold one overlaps the other tests.
kube-prepare: install
	@scripts/kube-test.sh prepare

test-ui: install-test
	cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --silent
	cd ui-tests && npx playwright test

# Every suite runs even after one fails; a summary of results and failures ends the output.
test: install-test kube-prepare
	@scripts/test-suites.sh lint test-js test-python-local test-ui test-kube

# The notebook and controller images, without a registry (scripts/kube-images.sh): archives in
# .build/kube-images, imported into the test cluster when it runs (scripts/kube-cluster.sh).
images: install
	scripts/kube-images.sh

bench: install-test
	$(BIN)/python benchmarks/run.py

openapi: install-test
	$(BIN)/python -c "import json; from cgu_lab.controller.app import create_app; \
	print(json.dumps(create_app().api.openapi(), indent=2))" > docs/openapi.json
	@# The TypeScript declarations generated from it (the pages' and the lab extension's).
	jlpm openapi:types

# After upgrading packages and a green `make test`: pin what was tested.
constraints: install-test
	@{ sed -n '1,2p' constraints.txt; $(BIN)/pip freeze --exclude-editable | grep -v '@ file'; } > constraints.new
	@mv constraints.new constraints.txt

clean:
	rm -rf $(VENV) node_modules lib cgu_lab/labextension ui-tests/node_modules artifacts
