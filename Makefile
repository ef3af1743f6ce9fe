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

## bench: Acquire+Release against a raw SET NX PX + DEL baseline on the same redis-server
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./redisbackend/
