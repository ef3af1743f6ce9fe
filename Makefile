# syncguard-go. `make test` is what CI runs (with SYNCGUARD_REQUIRE_REDIS=1).
GO       ?= go
FUZZTIME ?= 3s

.PHONY: all test fmt-check vet unit fuzz demo bench

all: test

## test: gofmt check, go vet, every test with -race on real Redis, then a short run of each fuzz target
test: fmt-check vet unit fuzz

fmt-check:
	@out="$$(gofmt -l $$(find . -name '*.go' -not -path './bench/*'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 8m ./...

## fuzz: run every Fuzz target for FUZZTIME (default 3s; e.g. make fuzz FUZZTIME=2m)
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$f ($$pkg, $(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

## demo: the showcase on embedded Redis (set REDIS_URL to use a real server)
demo:
	$(GO) run ./examples/quickstart
	@echo
	$(GO) run ./examples/asynq
	@echo
	$(GO) run ./examples/nethttp
	@echo
	$(GO) run ./examples/echo
	@echo
	$(GO) run ./examples/otel -tree

## bench: syncguard-go vs bsm/redislock, redsync and raw SET NX PX + DEL on one redis-server
## (the bench/ module, < 5 min); writes bench/RESULTS.md and bench/chart-*.png
bench:
	cd bench && $(GO) run . -out RESULTS.md

## chaos: fault-injection run of lock.Do on a real redis-server (restarts, stops, SIGSTOP,
## toxiproxy cuts/resets/latency, holders paused past their TTL); fails on any violation.
## The report goes to CHAOS_REPORT (default chaos-report.txt at the repo root).
CHAOS_DURATION ?= 60s
CHAOS_REPORT   ?= chaos-report.txt
.PHONY: chaos
chaos:
	$(GO) test -race -count=1 -timeout 10m -run '^TestChaos$$' -v ./internal/chaos/ \
	  -chaos.duration=$(CHAOS_DURATION) -chaos.report=$(abspath $(CHAOS_REPORT))
