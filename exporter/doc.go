// Package exporter is the wire: OTLP metrics and spans, OTEL_* environment
// configuration and lifecycle, and the /debug/pfs HTTP handler that renders
// the tables for people and tools.
//
// # Imports
//
// exporter imports bridge, the OTLP exporters and pdata.
package exporter
