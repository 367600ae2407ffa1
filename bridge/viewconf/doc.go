// Package viewconf reads the views of an OpenTelemetry declarative
// configuration file, meter_provider.views, for package bridge: Parse
// returns them as SDK views (sdkmetric.View), which bridge.ApplyViews,
// bridge.InstrumentPolicy and bridge.WithViews take. The file is decoded
// into the types of go.opentelemetry.io/contrib/otelconf, and translated
// here rather than by otelconf, whose translation leaves attribute-key
// wildcards unmatched, reads an omitted record_min_max as false, leaves
// omitted histogram parameters at zero (an explicit histogram of one
// bucket) and rejects the gauge instrument type.
//
// The views, the way they address pfs instrument classes, and an example
// file are in package bridge's documentation (# Views). bridge.FormatViewConfig
// writes a schema's setup_instruments as such a file.
//
// It is a package of its own because otelconf brings the SDK's exporters
// (gRPC, HTTP, protobuf) with it: a program that imports bridge alone does
// not link them.
//
// All functions are safe for concurrent use, and so are the views they
// return.
package viewconf
