package demoenv

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/XSAM/otelsql"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelpfs/otelpfs/examples/notes"
	"github.com/otelpfs/otelpfs/exporter"
)

// The OpenTelemetry variant (Options.Otel) is the plain service as a Go
// team would instrument it without otelpfs, with what OpenTelemetry's
// documentation shows for production:
//
//   - otelhttp's handler around the service's ServeMux (a server span and
//     the http.server metrics per request), extracting the caller's W3C
//     trace context (propagation.TraceContext) from the traceparent header
//     every request of the load carries;
//   - XSAM/otelsql around database/sql (otelsql.Open over the same
//     modernc.org/sqlite driver, its default span options: a span per
//     driver call, the query text as an attribute; its
//     db.client.operation.duration histogram; RegisterDBStatsMetrics for
//     the pool's statistics);
//   - the SDK's TracerProvider, sampler parentbased_always_on (the load's
//     traceparents are sampled, so every span is), with the batch span
//     processor at its defaults but for its delay, ExportInterval as the
//     otelpfs pipeline's span interval, and a queue big enough that it
//     drops no span at the benchmark's request rate (see otelQueueSize);
//   - the SDK's MeterProvider with a PeriodicReader every ExportInterval,
//     as the otelpfs pipeline collects;
//   - both exporting with the SDK's OTLP/gRPC exporters (otlptracegrpc,
//     otlpmetricgrpc) to Options.Endpoint, the same Sink in the same other
//     process that otelpfs's pipeline sends to: each variant pays for
//     building its OTLP data, marshalling it to protobuf and sending it
//     over gRPC, and neither for what a Collector does with it. An
//     exporter that dropped the SDK's batches in-process would skip the
//     marshalling and the transport that otelpfs's exporter pays for, and
//     favour the SDK.
//
// Without an Endpoint (the callgrind measurement, which runs no pipeline)
// the spans go through the same batch processor to an exporter that drops
// them, and the metrics are recorded but never collected: the
// instrumentation's cost at the request, without the export.

// otelQueueSize is the batch span processor's queue. Its default, 2048,
// holds a tenth of a second of spans at the rate the benchmarks serve
// requests (50,000 spans a second on the 2-core VM with two workers): the
// processor exports a batch every 512 spans, and a queue that fills while
// an export is in flight drops spans, silently. Measured there: with the
// default queue, one run of 30,000 requests in four dropped 8% of its
// spans; cmd/overhead runs lost a batch or more in most three-way runs,
// and with -cpu 0 (the service and the processor on one CPU) half of
// them. A dropping pipeline is a cheaper and broken setup that would
// flatter the SDK's CPU per request (and blacken its CPU per exported
// span); 2 s of spans fit in this queue, and no run dropped one.
const otelQueueSize = 1 << 16

// otelService is the OpenTelemetry SDK of the Otel variant.
type otelService struct {
	tp     *sdktrace.TracerProvider // nil with NoSpans
	mp     *sdkmetric.MeterProvider
	ended  spanCounter
	dbReg  metric.Registration
	closed atomic.Bool
}

// spanCounter is a span processor that counts the spans that end, so that
// the spans the batch processor dropped show (ended, not exported).
type spanCounter struct{ n atomic.Int64 }

func (c *spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *spanCounter) OnEnd(sdktrace.ReadOnlySpan)                     { c.n.Add(1) }
func (c *spanCounter) Shutdown(context.Context) error                  { return nil }
func (c *spanCounter) ForceFlush(context.Context) error                { return nil }

// discardSpans is the span exporter without an endpoint.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// startOtel builds the Otel variant's SDK and service into e.
func (e *Service) startOtel(o Options) error {
	ctx := context.Background()
	res := resource.NewSchemaless(semconv.ServiceName("otel-demo-bench"))
	oe := &otelService{}
	e.otel = oe
	var reader sdkmetric.Reader
	if o.Endpoint != "" {
		exp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(o.Endpoint), otlpmetricgrpc.WithInsecure())
		if err != nil {
			return err
		}
		reader = sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(ExportInterval))
	} else {
		reader = sdkmetric.NewManualReader()
	}
	oe.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
	var tp trace.TracerProvider = tracenoop.NewTracerProvider()
	if !o.NoSpans {
		var exp sdktrace.SpanExporter = discardSpans{}
		if o.Endpoint != "" {
			var err error
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(o.Endpoint), otlptracegrpc.WithInsecure())
			if err != nil {
				return err
			}
		}
		oe.tp = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
			sdktrace.WithSpanProcessor(&oe.ended),
			sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(ExportInterval), sdktrace.WithMaxQueueSize(otelQueueSize)),
		)
		tp = oe.tp
	}
	prop := propagation.TraceContext{}
	sqlOpts := []otelsql.Option{
		otelsql.WithTracerProvider(tp),
		otelsql.WithMeterProvider(oe.mp),
		otelsql.WithAttributes(semconv.DBSystemNameSQLite),
	}
	var db *sql.DB
	svc, err := notes.NewWithHooks(notes.Config{Dir: e.dir}, notes.Hooks{
		OpenDB: func(driver, dsn string) (*sql.DB, error) {
			d, err := otelsql.Open(driver, dsn, sqlOpts...)
			db = d
			return d, err
		},
		Wrap: func(h http.Handler) http.Handler {
			return otelhttp.NewHandler(h, "notes",
				otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(oe.mp), otelhttp.WithPropagators(prop))
		},
	})
	if err != nil {
		return err
	}
	e.svc = svc
	if oe.dbReg, err = otelsql.RegisterDBStatsMetrics(db, sqlOpts...); err != nil {
		return err
	}
	e.Handler = svc.Handler()
	return nil
}

// SpansEnded returns how many spans the Otel variant's SDK ended (0 for the
// other variants): those the exporter sent, and any the batch processor
// dropped.
func (e *Service) SpansEnded() int64 {
	if e.otel == nil {
		return 0
	}
	return e.otel.ended.n.Load()
}

// ExportLosses returns what the otelpfs variant's pipeline lost so far
// (global_status): trees the capture's queue dropped, and events past a
// tree's bound (exporter.StatusEventsLost), and spans its queue dropped
// (exporter.StatusSpansLost). Zeros for the other variants.
func (e *Service) ExportLosses() (events, spans uint64) {
	if e.Schema == nil {
		return 0, 0
	}
	for _, v := range e.Schema.Status() {
		switch v.Name {
		case exporter.StatusEventsLost:
			events = v.Value
		case exporter.StatusSpansLost:
			spans = v.Value
		}
	}
	return events, spans
}

// shutdown flushes and stops the SDK (a last export of the spans and
// metrics).
func (oe *otelService) shutdown(ctx context.Context) error {
	if !oe.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if oe.dbReg != nil {
		errs = append(errs, oe.dbReg.Unregister())
	}
	if oe.tp != nil {
		errs = append(errs, oe.tp.Shutdown(ctx))
	}
	if oe.mp != nil {
		errs = append(errs, oe.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
