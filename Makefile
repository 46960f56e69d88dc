# Lodge — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-serve
HOST   ?= 127.0.0.1
PORT   ?= 8000
export HOST PORT
# Python may cache compiled modules (and pytest its assertion-rewritten ones):
# with caching off, every test run compiles the project and every pytest plugin again.
unexport PYTHONDONTWRITEBYTECODE

CLIENT := clients/typescript
NODE_STAMP := $(CLIENT)/node_modules/.package-lock.json

.DEFAULT_GOAL := help
.PHONY: help install run lint test test-fast openapi docs-tables ts-client ts-client-generate npm-ci bench bench-arena bench-memory bench-stream bench-cluster bench-faults bench-bots bench-bots-load bench-balance redis-server browser clean

## List the targets with what they do.
help:
	@awk '/^## /{doc=substr($$0,4);next} /^[a-zA-Z_-]+:/{if(doc){split($$0,t,":");printf "  make %-20s %s\n",t[1],doc};doc="";next} {doc=""}' $(MAKEFILE_LIST)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install whenever pyproject.toml changes.  Everything (server, arena,
# tests, lint tools); it covers what serving needs, so it also marks that done.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP) $(SERVE_STAMP)

# Only what serving needs ([project.dependencies]).
$(SERVE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(SERVE_STAMP)

## Install everything: server, arena (lodge-arena), test and lint tools.
install: $(STAMP)

## Serve the API with gunicorn on $(HOST):$(PORT); embedded store unless REDIS_URL is set.
run: $(SERVE_STAMP)
	exec $(BIN)/gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'

## redis-server, redis-sentinel, haproxy, varnish, curl and jq from Debian's packages (the tests
## start and stop their own instances: a Redis, a cluster, a sentinel group, a balancer, a caching
## proxy; curl and jq run the README's shell session).
DEBIAN_PACKAGES := redis-server redis-sentinel haproxy varnish curl jq
redis-server:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES); do \
	  command -v $$p >/dev/null 2>&1 || [ -x /usr/sbin/$$p ] || dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing:$$missing: run 'sudo apt-get install$$missing'" >&2; exit 1; \
	  fi; }

## ruff and mypy (configured in pyproject.toml; engine/ is strict).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

## chromium and chromium-driver from Debian's packages (the browser tests drive them headless).
browser:
	@{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium and chromium-driver packages"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else \
	    echo "chromium is missing: run 'sudo apt-get install chromium chromium-driver'" >&2; exit 1; \
	  fi; }

## The TypeScript client's npm packages, exactly as package-lock.json pins them (npm ci).
npm-ci:
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js 20 or newer" >&2; exit 1; }
	cd $(CLIENT) && npm ci --no-audit --no-fund

$(NODE_STAMP): $(CLIENT)/package-lock.json
	$(MAKE) npm-ci

## Build the TypeScript client's dist/ (esbuild: ES module and browser script; tsc: type declarations).
ts-client: $(NODE_STAMP)
	cd $(CLIENT) && npm run build

## Regenerate clients/typescript/src/schema.d.ts from openapi/openapi.json (openapi-typescript).
ts-client-generate: $(NODE_STAMP)
	cd $(CLIENT) && npm run generate

## The whole suite (embedded store, real redis-server, headless Chromium, the TS client in Node).
test: $(STAMP) redis-server browser npm-ci
	cd $(CLIENT) && npm run build
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider

## Everything that needs no server, browser or Redis process, one example per randomised test: engine, arena, docs, the API on the embedded store.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider --fast tests/engine tests/arena tests/docs tests/service

## Regenerate the committed contract from the code, the TS client's types from it, and the docs tables.
openapi: $(STAMP) $(NODE_STAMP) docs-tables
	$(BIN)/python -m service.http.openapi > openapi/openapi.json
	cd $(CLIENT) && npm run generate

## Regenerate the move and event tables of docs/games/*.md from the games' declarations.
docs-tables: $(STAMP)
	LODGE_EXTRA_GAMES=tests.toy_game:HighCard $(BIN)/python -m devtools.docs_tables

## Engine, HTTP (against bench/reference_app.py) and one-vs-two-requests tournament benchmarks (not part of the tests).
bench: $(STAMP) redis-server
	$(BIN)/python -m bench

## Arena throughput (random bots) and each heuristic bot's margin over random.
bench-arena: $(STAMP) redis-server
	$(BIN)/python -m bench.arena

## Open SSE streams on one instance (100, 1,000, … at once) plus a mover: delivery, /healthz, Redis, memory.
bench-stream: $(STAMP) redis-server
	$(BIN)/python -m bench.stream_bench

## Bytes in Redis per new, active and finished match of every game.
bench-memory: $(STAMP) redis-server
	$(BIN)/python -m bench.memory

## Redis CPU per move, one Redis vs a 3-primary cluster (two replicas each; WAIT, idempotency, 1 and 2 instances), cache hit rate by routing.
bench-cluster: $(STAMP) redis-server
	$(BIN)/python -m bench.cluster

## A Redis primary SIGKILLed under load on Sentinel and on a cluster: acknowledged, lost, duplicated moves, 5xx, recovery time.
bench-faults: $(STAMP) redis-server
	$(BIN)/python -m bench.faults

## Server bots' decision time per game (p50/p99/max CPU ms of the heuristic bots, engine only).
bench-bots: $(STAMP)
	$(BIN)/python -m bench.bots_bench

## /healthz and stream delivery p99 on one instance while four ISMCTS bot seats play (in the bot processes, inline) vs none.
bench-bots-load: $(STAMP) redis-server
	$(BIN)/python -m bench.bots_load

## 13 Beavers: the race winner's avenue share with a 95 % interval (D17), e.g. ARGS="--board balanced --bot ismcts".
bench-balance: $(STAMP)
	$(BIN)/python -m bench.thirteen_beavers_balance $(ARGS)

## Remove the venv, caches, the TS client's node_modules and dist, test artefacts.
clean:
	rm -rf $(VENV) .pytest_cache .hypothesis $(CLIENT)/node_modules $(CLIENT)/dist test-artifacts
