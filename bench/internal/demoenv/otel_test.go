package demoenv

import (
	"testing"
)

// TestOtel: the OpenTelemetry SDK variant serves the demo's mix through
// otelhttp and otelsql, and its SDK exports every span it ended (at least
// the server span of each request) and its metrics to the sink when it
// closes.
func TestOtel(t *testing.T) {
	sink, err := StartSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	svc, err := Start(Options{Otel: true, Endpoint: sink.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Schema != nil {
		t.Error("the otel variant has an otelpfs schema")
	}
	c := NewClient(1)
	const requests = 200
	for range requests {
		if err := c.Do(svc.Handler); err != nil {
			t.Fatal(err)
		}
	}
	if c.Statuses[2] == 0 {
		t.Errorf("no 2xx answer: %v", c.Statuses)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	ended, spans := svc.SpansEnded(), sink.Spans.Load()
	// A request's server span, and otelsql's of its queries.
	if spans <= requests || spans != ended {
		t.Errorf("%d spans exported, %d ended, for %d requests", spans, ended, requests)
	}
	if sink.Metrics.Load() == 0 {
		t.Error("no metrics export")
	}
	if events, lost := svc.ExportLosses(); events != 0 || lost != 0 {
		t.Errorf("ExportLosses = %d, %d for a service without otelpfs", events, lost)
	}
}

// TestOtelNoSpans: without spans the otel variant traces nothing and
// still exports its metrics.
func TestOtelNoSpans(t *testing.T) {
	sink, err := StartSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	svc, err := Start(Options{Otel: true, Endpoint: sink.Addr, NoSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(2)
	for range 50 {
		if err := c.Do(svc.Handler); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if sink.Traces.Load() != 0 || svc.SpansEnded() != 0 || sink.Metrics.Load() == 0 {
		t.Errorf("%d traces exports, %d spans ended, %d metrics exports", sink.Traces.Load(), svc.SpansEnded(), sink.Metrics.Load())
	}
}

// TestVariantsExclusive: Instrumented and Otel are two variants.
func TestVariantsExclusive(t *testing.T) {
	if svc, err := Start(Options{Instrumented: true, Otel: true}); err == nil {
		svc.Close()
		t.Error("Start built a service both instrumented and otel")
	}
}
