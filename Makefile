# otelpfs — see README.md. Every target works from a fresh clone.
GO        ?= go
STATICCHECK_VERSION := v0.8.2
BENCHSTAT_VERSION   := v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
BENCHSTAT   := $(GO) run golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

# Packages with lock-free or shared state: always tested under -race.
RACE_PKGS := ./internal/owned/... ./internal/store/... ./hwclock/... ./rings/... ./memsum/... ./pfscore/... ./instrument/... ./exporter/...
MODULES   := . bench e2e mysqlpfs examples/demo

BENCH      ?= .
BENCHCOUNT ?= 10
BENCHTIME  ?= 1s

.PHONY: all demo test unit race portable arm64 nested benchsmoke bench e2e e2e-jaeger otelcol e2e-otelcol lint fmt mutation

all: test

## demo: this machine's timers, then the demo service for 20 s (tables at 127.0.0.1:6060/debug/pfs/, MySQL protocol at 127.0.0.1:6033)
DEMO_FLAGS ?= -duration 20s
demo:
	$(GO) run ./cmd/pfs timers
	$(GO) run ./examples/demo $(DEMO_FLAGS)

## test: everything a contributor keeps green (what CI runs)
test: lint unit race portable arm64 nested benchsmoke

unit:
	$(GO) test -count=1 ./...

race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# The fallbacks used where no cycle counter or times(2) exists, tested here;
# and the arm64 build (its assembly) checked by cross-compiling.
portable:
	$(GO) test -count=1 -tags hwclock_portable ./hwclock/...
	GOARCH=arm64 $(GO) vet ./...

# The packages with architecture-specific code, built for arm64 and run
# under qemu-user where it is installed (CI installs it): the assembly, and
# the atomic paths that amd64 replaces with plain stores. Emulation checks
# behaviour, not arm64's memory ordering.
ARM64_PKGS := ./internal/owned/... ./internal/store/... ./hwclock/... ./rings/... ./pfscore/...
arm64:
	@if command -v qemu-aarch64 >/dev/null; then \
		GOARCH=arm64 $(GO) test -count=1 -short -exec qemu-aarch64 $(ARM64_PKGS); \
	else echo "arm64: qemu-aarch64 not installed (apt-get install qemu-user); skipped"; fi

# The end-to-end tests run a real OpenTelemetry Collector (built by the
# otelcol target, then cached) and Debian's prometheus; without either they
# fail and say how to get it, unless OTELPFS_E2E=skip.
E2E_TIMEOUT ?= 15m
E2E_ENV      = OTELPFS_OTELCOL=$$(bash otelcol/build.sh --path)
nested: e2e-otelcol
	cd bench && $(GO) test -count=1 ./...
	cd mysqlpfs && $(GO) test -count=1 ./... && $(GO) test -count=1 -race -run 'ConcurrentSafe' .
	cd examples/demo && $(GO) test -count=1 ./...
	cd e2e && $(E2E_ENV) $(GO) test -count=1 -timeout $(E2E_TIMEOUT) ./...

## otelcol: build the OpenTelemetry Collector of e2e/otelcol/manifest.yaml (about 5 min the first time; cached by the manifest's hash)
otelcol:
	@bash e2e/otelcol/build.sh

# The Collector for nested and e2e: built unless OTELPFS_E2E=skip.
e2e-otelcol:
	@if [ "$(OTELPFS_E2E)" = skip ]; then echo "OTELPFS_E2E=skip: the Collector is not built; the tests that need it skip"; \
	else bash e2e/otelcol/build.sh >/dev/null; fi

# Every benchmark once, so none of them rots.
benchsmoke:
	$(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x ./...
	cd bench && $(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x ./...
	cd mysqlpfs && $(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x ./...

## bench: the side-by-side benchmarks, summarized with benchstat
bench:
	cd bench && $(GO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) . | tee bench.txt
	cd bench && $(BENCHSTAT) bench.txt

## e2e: end-to-end tests (verbose): pfs, the demo, a real Collector and Prometheus
e2e: e2e-otelcol
	cd e2e && $(E2E_ENV) $(GO) test -count=1 -v -timeout $(E2E_TIMEOUT) ./...

## e2e-jaeger: Jaeger v2 (built once, about 6 min and 2 GB of memory; cached) behind the Collector; not part of test
e2e-jaeger: otelcol
	bash e2e/jaeger/build.sh
	cd e2e && $(E2E_ENV) OTELPFS_JAEGER=$$(bash jaeger/build.sh --path) $(GO) test -count=1 -v -timeout $(E2E_TIMEOUT) -run 'Jaeger' ./...

## lint: gofmt, go vet and staticcheck on every module
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	for m in $(MODULES); do (cd $$m && $(GO) vet ./... && $(STATICCHECK) ./...) || exit 1; done

fmt:
	gofmt -w $$(git ls-files '*.go')

## mutation: plant known bugs in the engine one at a time and check the tests catch each (minutes; not part of test)
mutation:
	$(GO) run ./internal/mutate $(MUTATION_FLAGS)
