// Package bridge maps otelpfs onto OpenTelemetry: setup tables to and from
// OpenTelemetry views, a metric.Producer over the summary tables, and the
// history sampler that turns history rows into spans and span events.
//
// # Imports
//
// bridge is the lowest package that may import OpenTelemetry (API and SDK).
// It imports pfscore, never instrument.
package bridge
