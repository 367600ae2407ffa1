package bench

import (
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/bench/internal/demoenv"
)

// The whole-service budget (DESIGN.md, issue 14): the demo's notes service
// (examples/notes: ServeMux, SQLite through database/sql, a cache
// behind a mutex, settings behind an rwlock, a buffer pool, a journal
// file) fully instrumented (every instrument and consumer on, the OTLP
// pipeline collecting and exporting every 2 s to a sink) costs at most 3%
// more CPU per request than the same handlers built on Go's own types. Both
// benchmarks serve the same request mix (each parallel goroutine its own
// seeded notes.Load) in-process through httptest.NewRecorder, so a
// profile of BenchmarkDemoInstrumented shows the service's work and the
// instrumentation's, no HTTP client. The sink is in the benchmark's
// process: its decoding of the exports counts against the instrumented
// variant.
//
// BenchmarkDemoOtel is the same service as a Go team would instrument it
// with the OpenTelemetry SDK alone, the peer of issue 27's budget (per
// exported span, otelpfs at most a quarter of the SDK's cost); each
// instrumented benchmark reports the spans its sink received per request
// (spans/op).
//
// ns/op on this 2-core machine moves by more than the budget from one run
// to the next; the figure to trust is cmd/overhead's (CPU time per request
// over interleaved rounds, with a confidence interval, and the profile
// share), which README's budget table quotes.

func BenchmarkDemoRaw(b *testing.B) { benchmarkDemo(b, demoenv.Options{}) }

func BenchmarkDemoInstrumented(b *testing.B) {
	benchmarkDemo(b, demoenv.Options{Instrumented: true})
}

// BenchmarkDemoInstrumentedMetrics exports metrics only, no spans.
func BenchmarkDemoInstrumentedMetrics(b *testing.B) {
	benchmarkDemo(b, demoenv.Options{Instrumented: true, NoSpans: true})
}

// BenchmarkDemoOtel is the peer: the same handlers and mix instrumented
// as a Go team would without otelpfs (otelhttp, XSAM/otelsql, the SDK's
// TracerProvider with the batch span processor, parentbased_always_on, and
// MeterProvider with a PeriodicReader, both exporting OTLP/gRPC to the
// same sink every 2 s: demoenv's otel.go). spans/op is the spans the sink
// received per request; the SDK's cost per span is its ns/op over
// BenchmarkDemoRaw's divided by spans/op (issue 27's budget: otelpfs's is
// at most a quarter of it). cmd/overhead -variant all measures the same
// in CPU time, interleaved.
func BenchmarkDemoOtel(b *testing.B) { benchmarkDemo(b, demoenv.Options{Otel: true}) }

// BenchmarkDemoOtelMetrics is BenchmarkDemoOtel without tracing (a no-op
// TracerProvider): otelhttp's and otelsql's metrics only.
func BenchmarkDemoOtelMetrics(b *testing.B) {
	benchmarkDemo(b, demoenv.Options{Otel: true, NoSpans: true})
}

func benchmarkDemo(b *testing.B, o demoenv.Options) {
	var sink *demoenv.Sink
	if o.Instrumented || o.Otel {
		var err error
		if sink, err = demoenv.StartSink(); err != nil {
			b.Fatal(err)
		}
		defer sink.Stop()
		o.Endpoint = sink.Addr
	}
	svc, err := demoenv.Start(o)
	if err != nil {
		b.Fatal(err)
	}
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := demoenv.NewClient(seed.Add(1))
		for pb.Next() {
			if err := c.Do(svc.Handler); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	ended := svc.SpansEnded()
	if err := svc.Close(); err != nil { // the last export
		b.Fatal(err)
	}
	if sink == nil {
		return
	}
	if sink.Metrics.Load() == 0 || (sink.Traces.Load() == 0) != o.NoSpans {
		b.Fatalf("the pipeline sent %d metrics and %d traces exports (spans %v)", sink.Metrics.Load(), sink.Traces.Load(), !o.NoSpans)
	}
	if !o.NoSpans {
		spans := sink.Spans.Load()
		if o.Otel && spans < ended {
			b.Logf("the batch span processor dropped %d of %d spans", ended-spans, ended)
		}
		b.ReportMetric(float64(spans)/float64(b.N), "spans/op")
	}
}
