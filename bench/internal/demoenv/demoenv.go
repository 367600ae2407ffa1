// Package demoenv builds the demo's notes service (examples/notes)
// for the overhead measurements: plain, fully instrumented with otelpfs and
// its OpenTelemetry pipeline exporting, or instrumented with the
// OpenTelemetry SDK alone (otelhttp, otelsql: what a Go team would
// otherwise deploy), and drives it in-process with the
// demo's request mix (httptest.NewRecorder: no HTTP client, no socket, so
// a profile shows only the service's work and the instrumentation's).
package demoenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/examples/notes"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// ExportInterval is the instrumented variant's metrics and spans interval:
// shorter than the defaults (60 s, 5 s), so that a measurement of a minute
// or two pays for many collections.
const ExportInterval = 2 * time.Second

// A Service is the notes service of one variant.
type Service struct {
	Handler http.Handler
	Schema  *pfscore.Schema // nil for the plain variant
	svc     *notes.Service
	otlp    *exporter.OTLP
	otel    *otelService // the Otel variant's SDK
	dir     string
}

// Options say how to build a Service.
type Options struct {
	// Instrumented builds the instrumented variant, with every instrument
	// and consumer on; else the plain one.
	Instrumented bool
	// Otel builds the plain service instrumented with the OpenTelemetry
	// SDK alone, as otel.go describes, instead (not with Instrumented).
	Otel bool
	// Endpoint, if not empty, is an OTLP/gRPC host:port the instrumented
	// variant's pipeline (exporter.StartOTLP), or the Otel variant's SDK
	// exporters, send to every ExportInterval.
	Endpoint string
	// NoSpans leaves spans out of the pipeline: metrics only (the Otel
	// variant: no tracing, its TracerProvider a no-op one).
	NoSpans bool
	// SpanInterval, if not 0, is how often the instrumented variant's
	// pipeline reads its captured trees for spans (by default
	// ExportInterval); SpanQueueSize, if not 0, how many spans its queue
	// holds (by default exporter.DefaultSpanQueueSize). The capture's queue
	// (4096 trees) must hold what is made between two reads, and the span
	// queue a read's spans, or the pipeline loses spans (its
	// global_status counts them: ExportLosses).
	SpanInterval  time.Duration
	SpanQueueSize int
	// Defaults builds the instrumented variant with the schema's default
	// instruments and consumers, MySQL's (no history_long, no waits or
	// stages consumers, memory classes off), instead of every one on.
	Defaults bool
}

// Start builds the service.
func Start(o Options) (*Service, error) {
	instrumented, endpoint := o.Instrumented, o.Endpoint
	if instrumented && o.Otel {
		return nil, errors.New("demoenv: Instrumented and Otel are two variants")
	}
	dir, err := os.MkdirTemp("", "otelpfs-demoenv")
	if err != nil {
		return nil, err
	}
	e := &Service{dir: dir}
	if o.Otel {
		if err := e.startOtel(o); err != nil {
			e.Close()
			return nil, err
		}
		return e, nil
	}
	if instrumented {
		opts := []pfscore.Option{pfscore.WithoutEnvironment()}
		if !o.Defaults {
			opts = append(opts, pfscore.WithInstrument("%=ON"))
		}
		s, err := pfscore.New(opts...)
		if err != nil {
			return nil, err
		}
		if !o.Defaults {
			if _, err := s.UpdateConsumers("%", true); err != nil {
				return nil, err
			}
		}
		e.Schema = s
		// Statements record their request's trace, as in the demo.
		instrument.SetTraceHook(bridge.TraceContext)
	}
	e.svc, err = notes.New(notes.Config{Dir: dir, Schema: e.Schema})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e.Handler = e.svc.Handler()
	if instrumented && endpoint != "" {
		spanInterval := ExportInterval
		if o.SpanInterval > 0 {
			spanInterval = o.SpanInterval
		}
		opts := []exporter.OTLPOption{
			exporter.WithEndpoint(endpoint), exporter.WithInsecure(true),
			exporter.WithExportInterval(ExportInterval), exporter.WithSpanInterval(spanInterval),
			exporter.WithServiceName("otelpfs-demo-bench"), exporter.WithSpans(!o.NoSpans),
		}
		if o.SpanQueueSize > 0 {
			opts = append(opts, exporter.WithSpanQueueSize(o.SpanQueueSize))
		}
		e.otlp, err = exporter.StartOTLP(context.Background(), e.Schema, opts...)
		if err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Close stops the pipeline (with a last export), closes the service and
// removes its files.
func (e *Service) Close() error {
	var err error
	if e.otlp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = e.otlp.Shutdown(ctx)
		cancel()
	}
	if e.otel != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = e.otel.shutdown(ctx)
		cancel()
	}
	if e.svc != nil {
		if cerr := e.svc.Close(); err == nil {
			err = cerr
		}
	}
	os.RemoveAll(e.dir)
	return err
}

// A Client sends the demo's request mix to a handler in-process. Each
// goroutine needs its own.
type Client struct {
	load *notes.Load
	ctx  context.Context
	// Statuses counts the answers by status class: [2] 2xx, [4] 4xx, [5] 5xx.
	Statuses [6]int
}

// NewClient returns a client whose requests are the load of seed.
func NewClient(seed uint64) *Client {
	return &Client{load: notes.NewLoad(seed), ctx: context.Background()}
}

// Do serves the client's next request with h.
func (c *Client) Do(h http.Handler) error {
	req, err := c.load.Next().NewHTTP(c.ctx, "")
	if err != nil {
		return err
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	c.Statuses[min(w.Code/100, 5)]++
	if w.Code > 500 { // a 500 is the mix's too long title; anything else is a bug
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL, w.Code, w.Body)
	}
	return nil
}

// A Sink is an OTLP/gRPC server that takes every metrics and traces export
// and drops it: the Collector's place, without a Collector's work. It
// counts the exports, and the spans in them.
type Sink struct {
	Addr            string
	Metrics, Traces atomic.Int64 // exports received
	Spans           atomic.Int64 // spans received, in the Traces exports
	srv             *grpc.Server
}

// StartSink serves a Sink on a loopback port.
func StartSink() (*Sink, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{Addr: lis.Addr().String(), srv: grpc.NewServer()}
	pmetricotlp.RegisterGRPCServer(s.srv, &sinkMetrics{s: s})
	ptraceotlp.RegisterGRPCServer(s.srv, &sinkTraces{s: s})
	go s.srv.Serve(lis)
	return s, nil
}

// Stop stops the server.
func (s *Sink) Stop() { s.srv.Stop() }

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *Sink
}

func (m *sinkMetrics) Export(context.Context, pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.s.Metrics.Add(1)
	return pmetricotlp.NewExportResponse(), nil
}

type sinkTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *Sink
}

func (t *sinkTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	t.s.Spans.Add(int64(req.Traces().SpanCount()))
	t.s.Traces.Add(1)
	return ptraceotlp.NewExportResponse(), nil
}
