package exporter

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc/credentials"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

// OTLP is a running export pipeline (StartOTLP): the schema's summaries as
// OTLP metrics, collected and sent by a periodic reader; and the event
// trees of its sampled requests as spans (trace capture, bridge.Traces),
// read every interval and sent through a bounded queue.
//
// Nothing in it is on the provider's path: collection reads the tables as
// any reader does, and sending happens on the reader's goroutine, with a
// timeout. A Collector that is down, slow or restarting delays only the
// next collection; sums are cumulative, so the one after it carries what
// the failed one would have.
type OTLP struct {
	mp       *sdkmetric.MeterProvider // nil: metrics off
	traces   *tracePipeline           // nil: spans off
	resource *resource.Resource
	// shutdownTimeout bounds Shutdown when its context has no deadline.
	shutdownTimeout time.Duration
	once            sync.Once
	err             error
}

// StartOTLP starts exporting s through OTLP (over gRPC, or HTTP with
// binary protobuf), configured by the standard environment and then opts:
//
//	OTEL_SDK_DISABLED=true                 export nothing (StartOTLP returns an idle OTLP)
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES   the resource
//	OTEL_EXPORTER_OTLP_PROTOCOL            grpc (otelpfs's default) or http/protobuf
//	OTEL_EXPORTER_OTLP_ENDPOINT            http://host:port (no TLS), https://host:port, host:port;
//	                                       by default http://localhost:4317 (grpc), http://localhost:4318 (http/protobuf)
//	OTEL_EXPORTER_OTLP_INSECURE            for host:port: true sends without TLS
//	OTEL_EXPORTER_OTLP_HEADERS             key=value,... (percent-encoded values)
//	OTEL_EXPORTER_OTLP_CERTIFICATE         a PEM file of the server's CA
//	OTEL_EXPORTER_OTLP_COMPRESSION         gzip or none (the default)
//	OTEL_EXPORTER_OTLP_TIMEOUT             one export, in milliseconds (10000); also Shutdown's bound
//	OTEL_EXPORTER_OTLP_METRICS_*           the same, for metrics only
//	OTEL_METRIC_EXPORT_INTERVAL            milliseconds between collections (60000)
//	OTEL_METRIC_EXPORT_TIMEOUT             one collection and export, in milliseconds (30000)
//	OTEL_METRICS_EXPORTER=none             no metrics
//	OTEL_TRACES_EXPORTER=none              no spans
//	OTEL_EXPORTER_OTLP_TRACES_*            as OTEL_EXPORTER_OTLP_*, for spans only
//	OTEL_TRACES_SAMPLER, _ARG              which requests' traces are sent: always_on, always_off,
//	                                       traceidratio, parentbased_* of them (parentbased_always_on)
//	OTELPFS_SPAN_INTERVAL                  milliseconds between reads of the captured trees (200)
//
// Over http/protobuf, as the specification says, the general endpoint is a
// base URL: /v1/metrics and /v1/traces are appended to its path
// (https://otlp.example/base sends to https://otlp.example/base/v1/traces);
// a per-signal endpoint is the URL to POST to, as it is (/ if it has no
// path). A URL without a port has its scheme's (80, 443) over HTTP and
// 4317 over gRPC, where it has no path. http/json is refused: otelpfs
// sends protobuf only. The specification's default protocol is
// http/protobuf; otelpfs's stays grpc, as before it took HTTP.
//
// Spans are one switch: with spans on (the default; OTEL_TRACES_EXPORTER=none
// or WithSpans(false) turns them off), StartOTLP turns on the schema's
// trace capture (pfscore.Schema.EnableTraceCapture) with the sampler, which
// turns on the events_statements_current, events_stages_current and
// events_waits_current consumers it needs, and installs bridge.TraceContext
// as the trace hook unless one is installed, so that statements record the
// span of their context and pfshttp reads the caller's traceparent. Every
// sampled top-level statement that begins from then on (an HTTP request,
// a connection's command) is sent as a tree of spans when it ends; the
// _history_long tables are not needed. Shutdown turns capture off.
//
// A variable that does not parse is an error that names it.
// The resource carries service.instance.id (a random id unless given), so
// several instances of one service stay distinct series; and
// pfs.timer.<class> and pfs.timer.<class>.frequency, the timer each event
// class is measured with when the pipeline starts (setup_timers) and its
// units per second (from the calibration: picoseconds per unit).
//
// StartOTLP does not wait for the endpoint: a Collector that comes up
// later receives the next collection. Call Shutdown, with a deadline, to
// send a last collection and stop.
func StartOTLP(ctx context.Context, s *pfscore.Schema, opts ...OTLPOption) (*OTLP, error) {
	if s == nil {
		return nil, errors.New("exporter: StartOTLP needs a schema")
	}
	return startOTLP(ctx, s, newOTLPConfig(os.Getenv, opts))
}

func startOTLP(ctx context.Context, s *pfscore.Schema, c otlpConfig) (*OTLP, error) {
	o := &OTLP{}
	if c.disabled {
		// What else the environment says does not matter then; the
		// program's own options are still checked, so that a bad one does
		// not wait for the day the SDK is enabled.
		if err := errors.Join(c.errs[c.envErrs:]...); err != nil {
			return nil, fmt.Errorf("exporter: %w", err)
		}
		return o, nil
	}
	if err := errors.Join(c.errs...); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	res, err := pipelineResource(ctx, s, c)
	if err != nil {
		return nil, err
	}
	o.resource = res
	if c.metrics.enabled {
		p, err := bridge.NewProducer(s, c.producerOpts...)
		if err != nil {
			return nil, fmt.Errorf("exporter: %w", err)
		}
		exp, err := newMetricsExporter(ctx, c.metrics)
		if err != nil {
			return nil, fmt.Errorf("exporter: OTLP metrics: %w", err)
		}
		reader := sdkmetric.NewPeriodicReader(exp,
			sdkmetric.WithInterval(c.interval),
			sdkmetric.WithTimeout(c.exportTimeout),
			sdkmetric.WithProducer(p))
		o.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	}
	if c.traces.enabled {
		tp, err := startTraces(s, traceConfig{
			protocol:    c.traces.protocol,
			endpoint:    c.traces.endpoint,
			url:         c.traces.url,
			insecure:    c.traces.insecure,
			tlsConfig:   c.traces.tls,
			headers:     c.traces.headers,
			compression: c.traces.compression,
			timeout:     c.traces.timeout,
			interval:    c.spanInterval,
			queueSize:   c.spanQueueSize,
			sampler:     c.sampler,
			sdk:         c.spanExporter,
			sqlText:     c.sqlText,
			resource:    res,
		})
		if err != nil {
			if o.mp != nil {
				ctx, cancel := context.WithCancel(ctx)
				cancel() // stop without sending
				_ = o.mp.Shutdown(ctx)
			}
			return nil, fmt.Errorf("exporter: OTLP spans: %w", err)
		}
		o.traces = tp
	}
	o.shutdownTimeout = c.shutdownTimeout()
	return o, nil
}

// shutdownTimeout is how long Shutdown takes at most when its context has
// no deadline: the longest export timeout of the signals enabled
// (OTEL_EXPORTER_OTLP_TIMEOUT and the per-signal variables; 10s by
// default), for the last flush of both signals together.
func (c *otlpConfig) shutdownTimeout() time.Duration {
	var d time.Duration
	for _, s := range []signalConfig{c.metrics, c.traces} {
		if s.enabled {
			d = max(d, s.timeout)
		}
	}
	if d <= 0 {
		d = DefaultOTLPTimeout
	}
	return d
}

// newMetricsExporter makes the metric exporter of sc's protocol.
func newMetricsExporter(ctx context.Context, sc signalConfig) (sdkmetric.Exporter, error) {
	if sc.protocol == ProtocolHTTPProtobuf {
		return otlpmetrichttp.New(ctx, metricsHTTPExporterOptions(sc)...)
	}
	return otlpmetricgrpc.New(ctx, metricsExporterOptions(sc)...)
}

// metricsHTTPExporterOptions turns a signal's configuration into
// otlpmetrichttp's options, which override what otlpmetrichttp would read
// from the environment itself.
func metricsHTTPExporterOptions(sc signalConfig) []otlpmetrichttp.Option {
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpointURL(sc.url), // its scheme says whether TLS
		otlpmetrichttp.WithTimeout(sc.timeout),
	}
	if sc.compression == "gzip" {
		opts = append(opts, otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
	} else {
		opts = append(opts, otlpmetrichttp.WithCompression(otlpmetrichttp.NoCompression))
	}
	if !sc.insecure {
		tlsConfig := sc.tls
		if tlsConfig == nil {
			tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		opts = append(opts, otlpmetrichttp.WithTLSClientConfig(tlsConfig))
	}
	if sc.headers != nil {
		opts = append(opts, otlpmetrichttp.WithHeaders(sc.headers))
	}
	return opts
}

// metricsExporterOptions turns a signal's configuration into
// otlpmetricgrpc's options; they override what otlpmetricgrpc would read
// from the environment itself, so both signals follow one reading of it.
func metricsExporterOptions(sc signalConfig) []otlpmetricgrpc.Option {
	opts := []otlpmetricgrpc.Option{
		otlpmetricgrpc.WithEndpoint(sc.endpoint),
		otlpmetricgrpc.WithTimeout(sc.timeout),
	}
	switch {
	case sc.insecure:
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	case sc.tls != nil:
		opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(sc.tls)))
	default:
		opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(nil)))
	}
	if sc.headers != nil {
		opts = append(opts, otlpmetricgrpc.WithHeaders(sc.headers))
	}
	if sc.compression == "gzip" { // none is otlpmetricgrpc's default
		opts = append(opts, otlpmetricgrpc.WithCompressor("gzip"))
	}
	return opts
}

// pipelineResource is the resource of everything the pipeline sends: the
// SDK's defaults, the environment, a service.instance.id, the timers, and
// the options, later ones winning.
func pipelineResource(ctx context.Context, s *pfscore.Schema, c otlpConfig) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.instance.id", newInstanceID())}
	for _, r := range s.SetupTimers().Rows() {
		name := "pfs.timer." + strings.ToLower(r.Name.String())
		tm := r.TimerName.Effective()
		attrs = append(attrs,
			attribute.String(name, r.TimerName.String()),
			attribute.Int64(name+".frequency", int64(1e12/max(tm.Factor(), 1))))
	}
	base, err := resource.New(ctx, resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("exporter: resource: %w", err)
	}
	sdk, err := resource.New(ctx, resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("exporter: resource: %w", err)
	}
	own := c.attrs
	if c.serviceName != "" {
		own = append(own, attribute.String("service.name", c.serviceName))
	}
	res := resource.Default()
	env := resource.NewSchemaless(c.envResource...)
	for _, r := range []*resource.Resource{base, sdk, env, resource.NewSchemaless(own...)} {
		if res, err = resource.Merge(res, r); err != nil {
			return nil, fmt.Errorf("exporter: resource: %w", err)
		}
	}
	return res, nil
}

// newInstanceID returns a random UUID (version 4), as the semantic
// conventions suggest for service.instance.id.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Resource returns the resource the pipeline sends with everything, or
// nil when OTEL_SDK_DISABLED turned it off.
func (o *OTLP) Resource() *resource.Resource { return o.resource }

// ForceFlush collects the summaries now and sends them, and reads the
// captured trees and sends their spans, waiting until they are sent or
// ctx is done.
func (o *OTLP) ForceFlush(ctx context.Context) error {
	var errs []error
	if o.mp != nil {
		errs = append(errs, o.mp.ForceFlush(ctx))
	}
	if o.traces != nil {
		errs = append(errs, o.traces.forceFlush(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown sends a last collection and the last spans and stops the
// pipeline, within ctx: it returns by ctx's deadline (and a few
// milliseconds), whatever the endpoint does (down, stalled, refusing).
// Without a deadline it takes at most the longest export timeout of the
// signals (OTEL_EXPORTER_OTLP_TIMEOUT, 10s by default): the last flush of
// both signals together, not one after the other. Spans still queued when
// it ends are dropped and counted. It returns the same result however
// often it is called.
func (o *OTLP) Shutdown(ctx context.Context) error {
	o.once.Do(func() { o.err = o.shutdown(ctx) })
	return o.err
}

// shutdownGrace is how long Shutdown waits for the signals after its
// context ended: they end their exports with the context, so this is only
// for the goroutines to report.
const shutdownGrace = 100 * time.Millisecond

func (o *OTLP) shutdown(ctx context.Context) error {
	if o.mp == nil && o.traces == nil {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cmp.Or(o.shutdownTimeout, DefaultOTLPTimeout))
		defer cancel()
	}
	// Both signals at once, each within ctx: the metrics' last export
	// retrying against a down endpoint must not eat the spans' time.
	results := make(chan error, 2)
	n := 0
	if o.mp != nil {
		n++
		go func() { results <- o.mp.Shutdown(ctx) }()
	}
	if o.traces != nil {
		n++
		go func() { results <- o.traces.shutdown(ctx) }()
	}
	var errs []error
	var grace <-chan time.Time
	done := ctx.Done()
	for n > 0 {
		select {
		case err := <-results:
			errs = append(errs, err)
			n--
		case <-done:
			done = nil
			t := time.NewTimer(shutdownGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			// A signal still stopping past ctx: its goroutine ends on its
			// own (its exports have ctx); Shutdown does not wait for it.
			return errors.Join(append(errs, fmt.Errorf("exporter: shutdown: %w", context.Cause(ctx)))...)
		}
	}
	return errors.Join(errs...)
}
