# syncguard-go. `make test` is what CI runs (.ci/run).
GO       ?= go
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" at the deadline on a loaded machine (go.dev/issue/75804,
# fixed in Go 1.27); a count has no deadline to race.
FUZZTIME ?= 5000x

.PHONY: all test test-unit redis-setup fmt-check vet unit fuzz demo bench tidy tidy-check

## MODULES: the directories of the modules that go.work joins (the root and a module per
## integration, example and heavy test rig; bench/ stays outside). In the workspace one go
## command builds, vets and tests them all, but ./... stops at a nested module's go.mod,
## so PKGS names each module's tree.
MODULES = $(shell $(GO) list -m -f '{{.Dir}}' | sed 's|^$(CURDIR)|.|')
PKGS    = $(addsuffix /...,$(MODULES))

all: test

## test: redis-server and redis-cli on PATH (.ci/redis-setup installs them with apt-get where it
## can, else stops at once saying what to install), the gofmt check, then every test with -race
## on real Redis (a line per package) with SYNCGUARD_REQUIRE_REDIS=1, so that a test that needs
## Redis fails instead of skipping (and SYNCGUARD_NO_REDIS cleared), then go vet on every module.
## vet comes after the tests, not beside them: it type-checks from the packages the test build
## compiled with -race (about 20 s then), while beside a cold build it compiled them all a second
## time (4.5 minutes of CPU, alone from a cold cache). The fuzz targets' seed corpora run as unit tests; `make fuzz`
## fuzzes.
test: redis-setup fmt-check tidy-check
	@$(call tests_and_vet,SYNCGUARD_NO_REDIS= SYNCGUARD_REQUIRE_REDIS=1)

## test-unit: only the tests that need no Redis, with no set-up: SYNCGUARD_NO_REDIS=1 skips every
## test that needs one, even with redis-server installed, and the summary counts them.
test-unit: fmt-check tidy-check
	@$(call tests_and_vet,SYNCGUARD_NO_REDIS=1 SYNCGUARD_REQUIRE_REDIS=)

redis-setup:
	@sh .ci/redis-setup "make $(or $(MAKECMDGOALS),test)"

# tests_and_vet runs `unit` in the environment $(1), then go vet (also when a test failed).
tests_and_vet = $(1) $(MAKE) --no-print-directory unit; unit=$$?; \
	if vet="$$($(GO) vet -race $(PKGS) 2>&1)"; then echo "ok    go vet ./..."; else echo "FAIL  go vet ./..."; echo "$$vet"; unit=1; fi; \
	exit $$unit

fmt-check:
	@out="$$(gofmt -l $$(find . -name '*.go' -not -path './bench/*'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

## tidy: go mod tidy in every module (bench/ too), each on its own go.mod: GOWORK=off, and the
## replace directives of the nested modules point their syncguard requirements at this checkout.
## tidy-check fails, with the diff, when a module's go.mod or go.sum is not tidy.
tidy:
	@set -e; for d in $(MODULES) ./bench ./tools; do (cd $$d && GOWORK=off $(GO) mod tidy); done

tidy-check:
	@ok=1; for d in $(MODULES) ./bench ./tools; do \
	  if ! out="$$(cd $$d && GOWORK=off $(GO) mod tidy -diff 2>&1)"; then echo "go mod tidy needed in $$d:"; echo "$$out"; ok=0; fi; \
	done; [ $$ok = 1 ]

## unit: go test -race on every module through gotestsum (pinned in tools/go.mod, a module of
## its own so that it stays out of every user's module graph; built into .bin/): a line per
## package as it finishes, the full output of every failed test, then the skipped tests with
## their reasons, the failures, the totals, and the ten slowest tests.
## TESTJSON=file keeps go test's JSON events; TESTFLAGS adds go test flags (e.g. -run, -p).
## The slowest packages come first: go test starts the test runs in command-line order, so
## theirs overlap the other packages' builds instead of running alone at the end. -p 4: the tests
## mostly wait on their redis-servers, so four packages at a time keep both cores busy.
TESTJSON  ?=
TESTFLAGS ?=
SLOWFIRST  = ./redisbackend ./jobs/asynq ./cmd/syncguard/internal/cli ./testkit/chaos ./middleware/echo \
             ./middleware/gin ./middleware/echo/v5 ./jobs/gocron \
             ./lock/election ./middleware/nethttp ./lock ./testkit/redistest ./otel
GOTESTSUM  = $(CURDIR)/.bin/gotestsum
unit: $(GOTESTSUM)
	@json="$(or $(TESTJSON),$$(mktemp))"; \
	$(GOTESTSUM) --format pkgname-and-test-fails --format-icons text --format-hide-empty-pkg \
	  --jsonfile "$$json" -- -race -count=1 -timeout 8m -p 4 $(TESTFLAGS) $(SLOWFIRST) $(PKGS); rc=$$?; \
	echo "slowest tests:"; $(GOTESTSUM) tool slowest --jsonfile "$$json" --num 10; \
	$(if $(TESTJSON),,rm -f "$$json";) exit $$rc

## .bin/gotestsum: built from tools/go.mod's tool directive, outside the workspace (GOWORK=off),
## so its dependencies never enter the library's modules.
$(GOTESTSUM): tools/go.mod tools/go.sum
	@GOWORK=off $(GO) -C tools build -o $(GOTESTSUM) gotest.tools/gotestsum

## fuzz: run every Fuzz target for FUZZTIME (default 5000 inputs, a smoke run; e.g. make fuzz FUZZTIME=2m), a line each;
## the targets are found with grep (go test -list would build every package's tests once more).
fuzz:
	@set -e; for hit in $$(grep -ro --include='*_test.go' --exclude-dir=bench '^func Fuzz[A-Za-z0-9_]*' . | sed 's|/[^/]*:func |:|' | sort); do \
	  dir=$${hit%%:*}; f=$${hit##*:}; \
	  if out="$$($(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) $$dir 2>&1)"; then \
	    printf 'ok    %-44s %s\n' "$${dir#./} $$f" "$$(echo "$$out" | tail -n 1 | awk '{print $$NF}')"; \
	  else \
	    printf 'FAIL  %s\n' "$${dir#./} $$f"; echo "$$out"; exit 1; \
	  fi; \
	done

## demo: the showcase on embedded Redis (set REDIS_URL to use a real server), ending with
## `syncguard ls` on an embedded Redis of its own. One go build for every program (they share
## their compiled packages), then each runs in turn.
DEMOS = quickstart readwrite transfer asynq nethttp echo echov5 gin gocron grpc otel
demo:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) build -o "$$dir/" $(addprefix ./examples/,$(DEMOS)) ./cmd/syncguard/internal/demo && \
	for d in $(DEMOS); do \
	  if [ $$d = otel ]; then "$$dir/$$d" -tree || exit 1; else "$$dir/$$d" || exit 1; fi; echo; \
	done && "$$dir/demo"

## bench: syncguard-go vs bsm/redislock, redsync and raw SET NX PX + DEL on one redis-server
## (the bench/ module, < 5 min); writes bench/RESULTS.md and bench/chart-*.png
## Also rueidislock, a hot key across 4 processes and distinct keys next to 0/4/16 idle processes.
bench:
	cd bench && $(GO) run . -out RESULTS.md

## chaos: fault-injection run of lock.Do (locks, a limit, a read-write lock through rwlock.Read
## and Write) on a real redis-server, workers on go-redis's default
## options (restarts, stops, SIGSTOP, toxiproxy cuts/resets/latency, replies lost after their
## command ran, holders paused past their TTL); fails on any violation. `make test` runs a 10 s version.
## Then as long a run of election.Lead: 3 candidates, faults on the leader (cancel, a stall past its
## TTL, resignation, partition, latency) and the server; terms must not overlap by the server clock,
## fences must increase, a stalled leader's late write must be refused (`make test`: 8 s).
## The reports go to CHAOS_REPORT (default chaos-report.txt at the repo root).
## Then TestSchedulerFleet for CHAOS_DURATION: asynqlock.Scheduler replica processes whose leader
## is killed, stopped and stalled past its TTL over and over; every tick enqueued once.
## Then TestUniqueSoak for CHAOS_DURATION: 4 producers enqueue asynqlock.UniqueUntilDone tasks over
## 6 keys, 3 worker processes run them (attempts fail, tasks archive) while workers are killed,
## tasks deleted, and Redis (AOF) stalls for 1-2 s four times and restarts twice; never two live
## tasks or runs of one key, every key frees within its backstop, every enqueue ends by its 1 s
## deadline, and the only producer errors are those of a stalled or restarting Redis (counted).
## Like `make test`, it first makes sure of redis-server and redis-cli (.ci/redis-setup), and a
## run without Redis fails instead of skipping.
CHAOS_DURATION ?= 60s
CHAOS_REPORT   ?= chaos-report.txt
.PHONY: chaos
chaos: export SYNCGUARD_REQUIRE_REDIS = 1
chaos: export SYNCGUARD_NO_REDIS =
chaos: redis-setup
	$(GO) test -race -count=1 -timeout 10m -run '^TestChaos$$' -v ./testkit/chaos/ \
	  -chaos.duration=$(CHAOS_DURATION) -chaos.election-duration=$(CHAOS_DURATION) -chaos.report=$(abspath $(CHAOS_REPORT))
	SYNCGUARD_SCHED_SOAK=$(CHAOS_DURATION) $(GO) test -race -count=1 -timeout 10m -run '^TestSchedulerFleet$$' -v ./jobs/asynq/
	SYNCGUARD_UNIQUE_SOAK=$(CHAOS_DURATION) $(GO) test -race -count=1 -timeout 10m -run '^TestUniqueSoak$$' -v ./jobs/asynq/
