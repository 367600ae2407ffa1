// Package e2e holds otelpfs's end-to-end tests: they build and run the real
// programs (pfs, the demo service) and, as the exporter lands, a real
// OpenTelemetry Collector, and check what comes out the other end. It is a
// module of its own so that test-only dependencies never enter the library's
// go.mod.
package e2e
