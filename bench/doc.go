// Package bench holds otelpfs's side-by-side benchmarks: each hot path of the
// library next to its raw baseline and its peers (sync.Mutex, time.Now, the
// OpenTelemetry SDK's instruments, prometheus/client_golang,
// DataDog/go-sqllexer, XSAM/otelsql over the pure-Go driver
// modernc.org/sqlite; for the whole demo service, the OpenTelemetry SDK
// alone with otelhttp and otelsql: BenchmarkDemoOtel, cmd/overhead
// -variant otel or all). It is a module of its own so that peers never enter
// the library's go.mod.
//
// Run them with make bench, which repeats each benchmark and summarizes the
// runs with benchstat. Budgets from DESIGN.md are ratios between benchmarks of
// one run, never absolute times.
package bench
