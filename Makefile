# Lodge — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-serve
HOST   ?= 127.0.0.1
PORT   ?= 8000
export HOST PORT

.PHONY: install run lint test test-fast openapi bench bench-arena bench-memory bench-cluster redis-server clean

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

## redis-server, redis-sentinel and haproxy from Debian's packages (the tests
## start and stop their own instances: a Redis, a cluster, a sentinel group, a balancer).
DEBIAN_PACKAGES := redis-server redis-sentinel haproxy
redis-server:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES); do \
	  command -v $$p >/dev/null 2>&1 || [ -x /usr/sbin/$$p ] || missing="$$missing $$p"; done; \
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

## The whole suite, against the embedded store and a real redis-server.
test: $(STAMP) redis-server
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider

## Regenerate the committed contract from the code.
openapi: $(STAMP)
	$(BIN)/python -m service.openapi > openapi/openapi.json

## Engine and HTTP benchmarks (not part of the tests).
bench: $(STAMP) redis-server
	$(BIN)/python -m bench

## Arena throughput (random bots) and each heuristic bot's margin over random.
bench-arena: $(STAMP) redis-server
	$(BIN)/python -m bench.arena

## Bytes in Redis per new, active and finished match of every game.
bench-memory: $(STAMP) redis-server
	$(BIN)/python -m bench.memory

## Apply-move throughput on one Redis vs a 3-master cluster, 1 and 2 instances, cache hit rate by routing.
bench-cluster: $(STAMP) redis-server
	$(BIN)/python -m bench.cluster

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
