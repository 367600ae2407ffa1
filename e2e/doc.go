// Package e2e holds otelpfs's end-to-end tests: they build and run the real
// programs and check what comes out the other end.
//
//   - pfs and the demo service (examples/demo), built as a user builds them.
//   - A real OpenTelemetry Collector (v0.155.0, built from otelcol/manifest.yaml
//     by otelcol/build.sh, cached by the manifest's hash; make otelcol) on
//     127.0.0.1 free ports, receiving what exporter.StartOTLP sends from
//     service instances running package workload in-process: what its file
//     exporter writes (OTLP JSON lines) is checked against the tables the
//     values were read from (the default export: sums, gauges, digest
//     histograms and their exemplars, the conventions' histograms and
//     attributes) and the spans against the requests (in the caller's
//     trace, a SERVER span per request, its stage under it, SQL CLIENT
//     spans under the stage, waits as events); what Debian's Prometheus
//     scrapes from its prometheus exporter against the same values, per
//     instance and summed across two. TestCollectorRestart stops and
//     restarts the Collector under load.
//   - The demo's service and load at the demo's rate, in-process
//     (TestDemoOTLP): every sampled request's tree complete at the
//     Collector and nothing lost, the HTTP and database conventions on
//     spans and metrics, histogram_quantile's p95 in Prometheus within 15%
//     of the engine's QUANTILE_95 per busy digest, the default export's
//     size (logged). TestNonUTF8ReachesCollector: names that are not UTF-8
//     arrive with U+FFFD, and everything else with them.
//     TestShutdownEndpointDown: Shutdown within its deadline with the
//     endpoint down or stalled.
//   - Every configuration in ../otelcol-config, validated by that Collector
//     and run (agent to gateway, and the README's single Collector with
//     cmd/otlpload).
//   - The demo's /debug/pfs pages in a real browser (Debian's chromium,
//     headless, driven by chromedp): the table list, a header click that
//     orders the rows, the inline error of a bad where with the form kept,
//     the placeholders; screenshots in the test's temporary directory.
//   - The Grafana dashboard of ../otelcol-config/grafana, through what
//     Grafana would ask (TestDashboard): every panel's PromQL, run against
//     Prometheus after the demo ran with a real Collector, returns the
//     demo's data, with exemplars that link to the demo's traces, whose
//     spans reach the Collector.
//   - TestJaeger, run by make e2e-jaeger only: otelpfs's spans inside a
//     caller's trace, through the Collector into a real Jaeger v2
//     (jaeger/build.sh), read back from its query API.
//
// The tests that need the Collector, Prometheus or Chromium fail when the
// binary is missing, saying how to get it (make otelcol; apt-get install
// prometheus; apt-get install chromium), unless OTELPFS_E2E=skip.
// OTELPFS_OTELCOL, OTELPFS_PROMETHEUS and OTELPFS_CHROMIUM name the
// binaries; make test and make e2e set the first.
//
// It is a module of its own so that test-only dependencies (the OTLP trace
// exporter, pdata's JSON readers) never enter the library's go.mod.
package e2e
