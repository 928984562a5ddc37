# leakbench — make targets. `make loadtest` is the only command a new machine
# needs: it installs PostgreSQL 15 and PgBouncer where it can (Debian/Ubuntu,
# as root) and otherwise says what to install.

GO       ?= go
BIN      := bin/leakbench
OUT      ?= out/signoff
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
PKGS     := ./...

# The packages whose code runs concurrently: make test-race runs their
# tests under the race detector.
RACE_PKGS := ./scenarios/engine/... ./scenarios/mcp/... ./scenarios/internal/h1/... ./scenarios/internal/nbio/... ./probes/... \
	./internal/app/runner/... ./internal/app/merge/... ./scenarios/faults/... ./fixtures/faultproxy/... ./scenarios/engine/live/...

.PHONY: all build deps test test-short test-race e2e e2e-long loadtest bench lint fuzz clean examples

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/leakbench

# deps installs what the local stack runs: PostgreSQL 15 and PgBouncer.
deps:
	@./scripts/deps.sh

# test runs the unit tests and the integration tests on real PostgreSQL,
# PgBouncer and Docker (a few minutes). The full sign-offs of the built-in
# profiles are make e2e's. Three packages at a time on two cores: most of
# the integration tests wait (on servers, on the image build's lock), and a
# package that waits for the docker images another is building must not
# hold one of two slots.
test: deps
	$(GO) test -count=1 -p 3 -timeout 15m $(PKGS)

# test-short runs only what needs no server (seconds).
test-short:
	$(GO) test -short -count=1 $(PKGS)

# test-race runs the tests of the concurrent packages under the race
# detector.
test-race: deps
	$(GO) test -race -count=1 -timeout 20m $(RACE_PKGS)

# e2e signs off every built-in profile once, for real, on local stacks:
# ci, waiting, polling, upstream, outside, faults, ci again in the 2025
# era, and the capacity search's accuracy against Little's law. One
# package at a time: the Little's law figures must not share the two cores
# with another package's stacks. e2e-long plays the long ones: incident
# (about 8 minutes), soak (about 10) and capacity before and after (about
# 2).
e2e: deps
	$(GO) test -tags e2e -count=1 -p 1 -timeout 30m -run '^TestE2E' -skip '^TestE2ELong' -v ./internal/app/runner/ ./internal/app/capacity/

e2e-long: deps
	$(GO) test -tags e2e -count=1 -p 1 -timeout 40m -run '^TestE2ELong' -v ./internal/app/runner/ ./internal/app/soak/ ./internal/app/capacity/

# loadtest is the CI gate: a before/after sign-off; exit 0 pass, 99 fail.
loadtest: deps build
	./$(BIN) signoff --profile ci --out $(OUT) --force

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

lint:
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet $(PKGS)
	$(GO) vet -tags e2e ./internal/app/runner/ ./internal/app/capacity/ ./internal/app/soak/
	cd tools/otelcol && $(GO) vet . && $(GO) mod tidy -diff
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck $(PKGS); else echo "staticcheck not installed; skipped (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)"; fi

clean:
	rm -rf bin out
