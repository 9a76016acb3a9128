# Two commands: `make synth` and `make test`. Everything they need is installed here.
SHELL := /bin/bash
.DEFAULT_GOAL := synth

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 1
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export CDK_DISABLE_CLI_TELEMETRY := true

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CHECKOV_VENV := .venv-checkov
CDK := node_modules/.bin/cdk
PYTEST_ARGS ?=
STACKS ?= all

.PHONY: install synth test lint typecheck bench clean

install: $(VENV)/.installed $(CHECKOV_VENV)/.installed $(CDK)

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

$(CHECKOV_VENV)/.installed: requirements-checkov.txt constraints-checkov.txt
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt -c constraints-checkov.txt
	touch $@

$(CDK): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

synth: $(VENV)/.installed $(CDK)
	rm -rf cdk.out
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CDK) synth --no-notices --quiet --output cdk.out \
		-c constructs-llm:stacks=$(STACKS)
	@ls cdk.out/*.template.json

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check constructs_llm stacks tests bench app.py
	$(VENV)/bin/ruff format --check constructs_llm stacks tests bench app.py

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

test: install lint typecheck
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CHECKOV="$(CURDIR)/$(CHECKOV_VENV)/bin/checkov" \
		$(PY) -m pytest -n auto $(PYTEST_ARGS)

bench: $(VENV)/.installed
	$(PY) -m bench

clean:
	rm -rf cdk.out $(VENV) $(CHECKOV_VENV) node_modules build dist *.egg-info
