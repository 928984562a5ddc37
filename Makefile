# leakbench — make targets. `make loadtest` is the only command a new machine
# needs: it installs PostgreSQL 15 and PgBouncer where it can (Debian/Ubuntu,
# as root) and otherwise says what to install.

GO       ?= go
BIN      := bin/leakbench
OUT      ?= out/signoff
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)
PKGS     := ./...

# The packages whose code runs concurrently: make test-race runs their
# tests under the race detector.
RACE_PKGS := ./scenarios/engine/... ./scenarios/mcp/... ./scenarios/internal/h1/... ./scenarios/internal/nbio/... ./probes/... \
	./internal/app/runner/... ./internal/app/merge/... ./internal/app/faultplay/... ./scenarios/faults/... ./fixtures/faultproxy/... ./scenarios/engine/live/... \
	./internal/app/dashboard/...

.PHONY: all build deps test test-short test-race test-install e2e e2e-long loadtest bench lint lint-vet lint-golangci fuzz clean examples

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/leakbench

# deps installs what the local stack runs: PostgreSQL 15 and PgBouncer.
deps:
	@./scripts/deps.sh

# test runs the unit tests and the integration tests on real PostgreSQL,
# PgBouncer and Docker (a few minutes). The full sign-offs of the built-in
# profiles are make e2e's. Four packages at a time on two cores, and four
# parallel tests in each: most of the integration tests wait (on servers,
# on the clock, on the image build's lock), and the whole suite keeps the
# two cores about half busy (user+sys 290 s in 220 s). A test that
# asserts on the clock stays serial and says so. go test starts packages in the order they are named, so the
# longest (SLOW_PKGS, from `go test -json`) go first: named in alphabetical
# order, the engine and the probes started after 290 s and ran alone at the
# end. The static binary is built once here and handed to every package
# (LEAKBENCH_BINARY): the tests that run the CLI or put it in the gateway
# image would otherwise each link their own.
SLOW_PKGS := ./internal/app/runner ./internal/app/soak ./cmd/leakbench ./gateway-under-test ./probes ./scenarios/engine \
	./internal/app/capacity ./examples/github-action ./fixtures ./internal/app/otelexport ./internal/app/dashboard ./examples/pyservice
test: deps build
	LEAKBENCH_BINARY=$(CURDIR)/$(BIN) $(GO) test -count=1 -p 4 -parallel 4 -timeout 15m $(SLOW_PKGS) $(PKGS)

# test-short runs only what needs no server (seconds).
test-short:
	$(GO) test -short -count=1 $(PKGS)

# test-race runs the tests of the concurrent packages under the race
# detector. RACE_SKIP: runner's tests that play, on other targets, the
# same concurrent code as the ones kept (a sign-off's sides and probes:
# TestSignoffWholeLoop, TestOwnServiceSeenTruthfully; shards merged:
# TestRunWithWorkers). What they add is sequential — resolving two builds'
# targets, starting shard containers (whose leakbench is not built with
# the race detector), a wrong database's error — and make test runs them.
# Alone under the race detector runner took 227 s, 134 of them in
# TestSignoffTwoBuilds; in CI it was the step's last package by minutes.
RACE_SKIP := ^(TestSignoffTwoBuilds|TestDockerShards|TestDockerShardsSendSecretHeaders|TestOwnServiceWrongDatabase|TestOwnServiceTokenJoinUnderPressure)$$
test-race: deps
	$(GO) test -race -count=1 -timeout 20m -skip '$(RACE_SKIP)' $(RACE_PKGS)

# test-install builds leakbench as `go install …/cmd/leakbench@latest`
# does on a user's machine: a copy of the tree, an empty module cache,
# every module through GOPROXY, CGO_ENABLED=0 (slow: it downloads them all).
test-install:
	$(GO) test -tags install -count=1 -timeout 30m -v ./internal/testing/install/

# e2e signs off every built-in profile once, for real, on local stacks:
# ci, waiting, polling, upstream, outside, faults, ci again in the 2025
# era, and the capacity search's accuracy against Little's law; and the
# CLI's whole-stack subprocess tests (git bisect run over real runs, a
# sign-off with --capacity). One
# package at a time: the Little's law figures must not share the two cores
# with another package's stacks. Inside runner and cmd/leakbench the
# sign-offs run two at a time (go test's -parallel, GOMAXPROCS): they play
# tens of users and wait on the clock. e2e-long plays the long ones: incident
# (about 8 minutes), soak (about 10) and capacity before and after (about
# 2). e2e also runs `leakbench up` as a subprocess (fixtures' TestUp…: the
# CLI's signals, exit codes and table over whole stacks), the compose
# overlay beside a user's project (fixtures' TestCompose…: docker-compose run
# of examples/compose as the own-service guide says) and the CLI's
# whole-stack tests (cmd/leakbench's TestE2E…: bisect, sign-off with capacity).
e2e: deps build
	LEAKBENCH_BINARY=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -p 1 -timeout 30m -run '^TestE2E' -skip '^TestE2ELong' -v ./internal/app/runner/ ./internal/app/capacity/ ./cmd/leakbench/
	LEAKBENCH_BINARY=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -timeout 30m -run '^(TestUp|TestCompose)' -v ./fixtures/

e2e-long: deps
	$(GO) test -tags e2e -count=1 -p 1 -timeout 40m -run '^TestE2ELong' -v ./internal/app/runner/ ./internal/app/soak/ ./internal/app/capacity/

# loadtest is the CI gate: a before/after sign-off; exit 0 pass, 99 fail.
loadtest: deps build
	./$(BIN) signoff --profile ci --out $(OUT) --force

# bench runs every benchmark once; internal/app/workers' BenchmarkMoonshot
# (100,000 users as worker processes, then 10,000 listening) takes about
# 4 of its minutes (LEAKBENCH_BENCH_USERS and the like try it small).
bench: deps
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get install -y -qq wrk >/dev/null; } || echo "wrk not installed: the engine-vs-wrk benchmark is skipped (apt-get install wrk)"
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 20m $(PKGS)

# fuzz runs every fuzz target for FUZZTIME (default 30s) each; what a
# target finds is kept in its testdata/fuzz/ corpus, which go test replays.
FUZZTIME ?= 30s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
		for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# examples regenerates reports/examples/ from real sign-offs and the README's
# tables from them (EXAMPLES="ci" for the short one only).
examples: deps build
	./scripts/examples.sh

# lint: gofmt, go vet, staticcheck, then golangci-lint's errorlint, funlen
# and dupl (.golangci.yml). CI runs the two halves apart: golangci-lint
# compiles from source for minutes on a fresh machine, so its install
# overlaps make test there.
lint: lint-vet lint-golangci

lint-vet:
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet $(PKGS)
	$(GO) vet -tags e2e ./internal/app/runner/ ./internal/app/capacity/ ./internal/app/soak/ ./cmd/leakbench/ ./fixtures/
	cd tools/otelcol && $(GO) vet . && $(GO) mod tidy -diff
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck $(PKGS); else echo "staticcheck not installed; skipped (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)"; fi

lint-golangci:
	@# .golangci.yml: errorlint, funlen, dupl (and why not contextcheck).
	@if command -v golangci-lint >/dev/null 2>&1; then golangci-lint run $(PKGS); else echo "golangci-lint not installed; skipped (go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0)"; fi

clean:
	rm -rf bin out
