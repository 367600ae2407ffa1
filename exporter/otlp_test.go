package exporter

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestOTLPConfigEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		opts    []OTLPOption
		check   func(t *testing.T, c otlpConfig)
		wantErr string // a substring of the error, "" for none
	}{
		{name: "defaults", check: func(t *testing.T, c otlpConfig) {
			for _, s := range []signalConfig{c.metrics, c.traces} {
				if !s.enabled || s.endpoint != "localhost:4317" || !s.insecure || s.timeout != 10*time.Second {
					t.Errorf("signal %+v, want enabled localhost:4317 without TLS, 10s", s)
				}
			}
			if c.interval != time.Minute || c.exportTimeout != 30*time.Second || c.disabled {
				t.Errorf("interval %v timeout %v disabled %v", c.interval, c.exportTimeout, c.disabled)
			}
		}},
		{name: "sampler by default", check: func(t *testing.T, c otlpConfig) {
			if c.sampler != (pfscore.TraceSampler{ParentBased: true, Ratio: 1}) {
				t.Errorf("sampler %+v, want parentbased_always_on", c.sampler)
			}
		}},
		{name: "sampler traceidratio", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
			check: func(t *testing.T, c otlpConfig) {
				if c.sampler != (pfscore.TraceSampler{ParentBased: true, Ratio: 0.25}) {
					t.Errorf("sampler %+v", c.sampler)
				}
			}},
		{name: "sampler always_off", env: map[string]string{"OTEL_TRACES_SAMPLER": "always_off"},
			check: func(t *testing.T, c otlpConfig) {
				if c.sampler != (pfscore.TraceSampler{}) {
					t.Errorf("sampler %+v", c.sampler)
				}
			}},
		{name: "sampler option beats the environment", env: map[string]string{"OTEL_TRACES_SAMPLER": "always_off"},
			opts: []OTLPOption{WithSampler(pfscore.TraceSampler{Ratio: 0.5})},
			check: func(t *testing.T, c otlpConfig) {
				if c.sampler != (pfscore.TraceSampler{Ratio: 0.5}) {
					t.Errorf("sampler %+v", c.sampler)
				}
			}},
		{name: "sampler unknown", env: map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, wantErr: "OTEL_TRACES_SAMPLER"},
		{name: "sampler ratio out of range", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"},
			wantErr: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "https URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4443"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.endpoint != "collector.example:4443" || c.metrics.insecure {
					t.Errorf("metrics %+v, want collector.example:4443 over TLS", c.metrics)
				}
			}},
		{name: "http URL without port", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector"},
			check: func(t *testing.T, c otlpConfig) {
				if c.traces.endpoint != "collector:4317" || !c.traces.insecure {
					t.Errorf("traces %+v, want collector:4317 without TLS", c.traces)
				}
			}},
		{name: "host:port means TLS unless INSECURE", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.insecure {
					t.Errorf("metrics %+v, want TLS", c.metrics)
				}
			}},
		{name: "INSECURE with host:port", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
			check: func(t *testing.T, c otlpConfig) {
				if !c.metrics.insecure {
					t.Errorf("metrics %+v, want no TLS", c.metrics)
				}
			}},
		{name: "per-signal beats general", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://general:4317",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://traces:4317",
			"OTEL_EXPORTER_OTLP_HEADERS":          "Api-Key=a%20b,tenant=7",
			"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT":  "2500",
			"OTEL_EXPORTER_OTLP_METRICS_HEADERS":  "x=1",
			"OTEL_METRIC_EXPORT_INTERVAL":         "1500",
			"OTEL_METRIC_EXPORT_TIMEOUT":          "700",
			"OTEL_TRACES_EXPORTER":                "none",
			"OTEL_EXPORTER_OTLP_METRICS_INSECURE": "false",
		}, check: func(t *testing.T, c otlpConfig) {
			if c.metrics.endpoint != "general:4317" || c.traces.endpoint != "traces:4317" {
				t.Errorf("endpoints %s %s", c.metrics.endpoint, c.traces.endpoint)
			}
			if c.metrics.timeout != 2500*time.Millisecond || c.traces.timeout != 10*time.Second {
				t.Errorf("timeouts %v %v", c.metrics.timeout, c.traces.timeout)
			}
			if c.metrics.headers["x"] != "1" || len(c.metrics.headers) != 1 || c.traces.headers["api-key"] != "a b" || c.traces.headers["tenant"] != "7" {
				t.Errorf("headers %v %v", c.metrics.headers, c.traces.headers)
			}
			if c.interval != 1500*time.Millisecond || c.exportTimeout != 700*time.Millisecond {
				t.Errorf("interval %v timeout %v", c.interval, c.exportTimeout)
			}
			if !c.metrics.enabled || c.traces.enabled {
				t.Errorf("enabled %v %v, want metrics only", c.metrics.enabled, c.traces.enabled)
			}
			if !c.metrics.insecure { // the scheme decides, not INSECURE
				t.Errorf("metrics over TLS: the http:// scheme must win")
			}
		}},
		{name: "options beat the environment", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://env:1"},
			opts: []OTLPOption{WithEndpoint("http://opt:2"), WithExportInterval(time.Second), WithHeaders(map[string]string{"k": "v"})},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.endpoint != "opt:2" || !c.metrics.insecure || c.interval != time.Second || c.traces.headers["k"] != "v" {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true"},
			check: func(t *testing.T, c otlpConfig) {
				if !c.disabled {
					t.Error("not disabled")
				}
			}},
		{name: "http/protobuf defaults", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.url != "http://localhost:4318/v1/metrics" || c.traces.url != "http://localhost:4318/v1/traces" ||
					c.metrics.protocol != ProtocolHTTPProtobuf || c.traces.protocol != ProtocolHTTPProtobuf || !c.traces.insecure {
					t.Errorf("metrics %+v traces %+v, want http://localhost:4318/v1/<signal>", c.metrics, c.traces)
				}
			}},
		{name: "http/protobuf general endpoint gets the signal's path", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example/base/"},
			check: func(t *testing.T, c otlpConfig) {
				// No port: the URL's own (443), not 4318; a hosted backend is https://host.
				if c.metrics.url != "https://otlp.example/base/v1/metrics" || c.traces.url != "https://otlp.example/base/v1/traces" || c.traces.insecure {
					t.Errorf("urls %s %s", c.metrics.url, c.traces.url)
				}
			}},
		{name: "http/protobuf per-signal endpoint is used as is", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL":         "http/protobuf",
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://general:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://traces:9999/custom/spans",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:4318"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.url != "http://metrics:4318/" || c.traces.url != "http://traces:9999/custom/spans" {
					t.Errorf("urls %s %s", c.metrics.url, c.traces.url)
				}
			}},
		{name: "http/protobuf host:port means TLS unless INSECURE", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318",
			"OTEL_EXPORTER_OTLP_TRACES_INSECURE": "true"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.url != "https://c:4318/v1/metrics" || c.traces.url != "http://c:4318/v1/traces" {
					t.Errorf("urls %s %s", c.metrics.url, c.traces.url)
				}
			}},
		{name: "per-signal protocol beats general", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL":         "http/protobuf",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://c"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.protocol != ProtocolGRPC || c.metrics.endpoint != "c:4317" || c.metrics.url != "" {
					t.Errorf("metrics %+v, want grpc to c:4317", c.metrics)
				}
				if c.traces.protocol != ProtocolHTTPProtobuf || c.traces.url != "http://c/v1/traces" {
					t.Errorf("traces %+v, want http/protobuf to http://c/v1/traces", c.traces)
				}
			}},
		{name: "per-signal traces protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.protocol != ProtocolGRPC || c.metrics.endpoint != "localhost:4317" ||
					c.traces.protocol != ProtocolHTTPProtobuf || c.traces.url != "http://localhost:4318/v1/traces" {
					t.Errorf("metrics %+v traces %+v", c.metrics, c.traces)
				}
			}},
		{name: "WithProtocol and WithEndpoint beat the environment", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:4317"},
			opts: []OTLPOption{WithEndpoint("http://opt:4318/otlp"), WithProtocol(ProtocolHTTPProtobuf)},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.url != "http://opt:4318/otlp/v1/metrics" || c.traces.url != "http://opt:4318/otlp/v1/traces" {
					t.Errorf("urls %s %s", c.metrics.url, c.traces.url)
				}
			}},
		{name: "WithTLSConfig makes an http URL https", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			opts: []OTLPOption{WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS13})},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.url != "https://c:4318/v1/metrics" || c.metrics.insecure {
					t.Errorf("metrics %+v", c.metrics)
				}
			}},
		{name: "compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"},
			check: func(t *testing.T, c otlpConfig) {
				if c.metrics.compression != "gzip" || c.traces.compression != "" {
					t.Errorf("compression %q %q", c.metrics.compression, c.traces.compression)
				}
			}},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: otelpfs sends OTLP as protobuf only"},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "udp"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=udp"},
		{name: "bad protocol option", opts: []OTLPOption{WithProtocol("http/json")}, wantErr: "WithProtocol"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, wantErr: "OTEL_EXPORTER_OTLP_COMPRESSION=zstd"},
		{name: "gRPC per-signal path", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317/v1/traces"}, wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{name: "bad endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "collector"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
		{name: "bad scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c:1"}, wantErr: "scheme"},
		{name: "path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/v1/metrics"}, wantErr: "no path"},
		{name: "bad port", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:99999"}, wantErr: "bad port"},
		{name: "bad interval", env: map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "5s"}, wantErr: "OTEL_METRIC_EXPORT_INTERVAL=5s"},
		{name: "bad bool", env: map[string]string{"OTEL_SDK_DISABLED": "maybe"}, wantErr: "OTEL_SDK_DISABLED"},
		{name: "bad headers", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "bad certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent.pem"}, wantErr: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{name: "bad exporter", env: map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, wantErr: "OTEL_METRICS_EXPORTER=prometheus"},
		{name: "bad resource", env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "a=1,b"}, wantErr: "OTEL_RESOURCE_ATTRIBUTES"},
		{name: "bad option", opts: []OTLPOption{WithEndpoint("nope")}, wantErr: "WithEndpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newOTLPConfig(envOf(tc.env), tc.opts)
			s, err := pfscore.New(pfscore.WithoutEnvironment())
			if err != nil {
				t.Fatal(err)
			}
			o, startErr := startOTLP(context.Background(), s, c)
			if o != nil {
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // send nothing: nothing listens
				_ = o.Shutdown(ctx)
			}
			if tc.wantErr != "" {
				if startErr == nil || !strings.Contains(startErr.Error(), tc.wantErr) {
					t.Fatalf("StartOTLP error %v, want one mentioning %q", startErr, tc.wantErr)
				}
				return
			}
			if len(c.errs) != 0 {
				t.Fatalf("errors %v", c.errs)
			}
			tc.check(t, c)
		})
	}
}

// metricsReceiver is a real OTLP/gRPC metrics endpoint on 127.0.0.1.
type metricsReceiver struct {
	pmetricotlp.UnimplementedGRPCServer
	mu      sync.Mutex
	got     []pmetric.Metrics
	headers []metadata.MD
	srv     *grpc.Server
	addr    string
}

func (r *metricsReceiver) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	m := pmetric.NewMetrics()
	req.Metrics().CopyTo(m)
	r.mu.Lock()
	r.got = append(r.got, m)
	r.headers = append(r.headers, md)
	r.mu.Unlock()
	return pmetricotlp.NewExportResponse(), nil
}

// startReceiver listens on addr ("127.0.0.1:0" for any port).
func startMetricsReceiver(t *testing.T, addr string) *metricsReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &metricsReceiver{srv: grpc.NewServer(), addr: ln.Addr().String()}
	pmetricotlp.RegisterGRPCServer(r.srv, r)
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(r.srv.Stop)
	return r
}

// last returns the last export received, and how many there were.
func (r *metricsReceiver) last() (pmetric.Metrics, metadata.MD, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return pmetric.Metrics{}, nil, 0
	}
	return r.got[len(r.got)-1], r.headers[len(r.headers)-1], len(r.got)
}

// sumOf returns the value of the int sum point of metric name whose
// pfs.event_name is event, and the resource's attributes.
func sumOf(t *testing.T, m pmetric.Metrics, name, event string) (int64, pcommon.Map) {
	t.Helper()
	for _, rm := range m.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, mt := range sm.Metrics().All() {
				if mt.Name() != name {
					continue
				}
				if mt.Type() != pmetric.MetricTypeSum || !mt.Sum().IsMonotonic() ||
					mt.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
					t.Fatalf("%s: %v, want a cumulative monotonic sum", name, mt.Type())
				}
				for _, p := range mt.Sum().DataPoints().All() {
					if v, ok := p.Attributes().Get("pfs.event_name"); ok && v.Str() == event {
						return p.IntValue(), rm.Resource().Attributes()
					}
				}
			}
		}
	}
	t.Fatalf("no %s point for %s", name, event)
	return 0, pcommon.Map{}
}

type otlpWorkload struct {
	s  *pfscore.Schema
	m  *pfscore.SyncInstance
	th *pfscore.Thread
}

func newOTLPWorkload(t *testing.T) *otlpWorkload {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	w := &otlpWorkload{s: s}
	w.m = s.NewSyncInstance(s.MustRegister("wait/synch/mutex/otlp/m"), "otlp_test.go:1")
	w.th = s.NewThread(s.MustRegister("thread/otlp/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	t.Cleanup(w.th.End)
	return w
}

func (w *otlpWorkload) waits(n int) {
	for range n {
		var ws pfscore.WaitState
		if w.m.BeginWait(&ws, w.th, pfscore.OpLock) {
			ws.EndWait(-1)
		}
	}
}

// count is COUNT_STAR of the workload's mutex in the global summary.
func (w *otlpWorkload) count(t *testing.T) int64 {
	t.Helper()
	res, err := w.s.Query("events_waits_summary_global_by_event_name",
		pfscore.Query{Where: []string{"EVENT_NAME = 'wait/synch/mutex/otlp/m'"}})
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("global summary: %v, %v", res, err)
	}
	for i, c := range res.Columns {
		if c.Name == "COUNT_STAR" {
			return int64(res.Rows[0][i].(uint64))
		}
	}
	t.Fatal("no COUNT_STAR")
	return 0
}

// TestStartOTLPSendsSummaries: the pipeline sends the summaries to a real
// OTLP/gRPC endpoint, with the tables' values, its headers and a resource
// made of the environment, the options, a service.instance.id and the
// timers.
func TestStartOTLPSendsSummaries(t *testing.T) {
	r := startMetricsReceiver(t, "127.0.0.1:0")
	w := newOTLPWorkload(t)
	w.waits(5)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + r.addr,
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer%20t0k",
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment.name=test,service.name=from-env",
		"OTEL_METRIC_EXPORT_INTERVAL": "3600000",
	}
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), []OTLPOption{
		WithServiceName("checkout"), WithResourceAttributes(attribute.String("team", "payments"))}))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := o.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	m, md, n := r.last()
	if n != 1 {
		t.Fatalf("%d exports after one ForceFlush", n)
	}
	got, res := sumOf(t, m, "pfs.events_waits.count", "wait/synch/mutex/otlp/m")
	if want := w.count(t); got != want || want != 5 {
		t.Errorf("pfs.events_waits.count = %d, table says %d (want 5)", got, want)
	}
	for k, want := range map[string]string{"service.name": "checkout", "deployment.environment.name": "test",
		"team": "payments", "pfs.timer.wait": "CYCLE", "telemetry.sdk.language": "go"} {
		if v, ok := res.Get(k); !ok || v.AsString() != want {
			t.Errorf("resource %s: want %s (resource %v)", k, want, res.AsRaw())
		}
	}
	if v, ok := res.Get("service.instance.id"); !ok || len(v.Str()) != 36 {
		t.Errorf("service.instance.id: want a UUID (resource %v)", res.AsRaw())
	}
	if v, ok := res.Get("pfs.timer.wait.frequency"); !ok || v.Int() <= 0 {
		t.Errorf("pfs.timer.wait.frequency: want a positive number (resource %v)", res.AsRaw())
	}
	if a := md.Get("authorization"); len(a) != 1 || a[0] != "Bearer t0k" {
		t.Errorf("authorization header %v", a)
	}

	// Cumulative: a second flush carries what happened since on top.
	w.waits(3)
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	m, _, n = r.last()
	if got, _ := sumOf(t, m, "pfs.events_waits.count", "wait/synch/mutex/otlp/m"); n != 2 || got != 8 {
		t.Errorf("after Shutdown: %d exports, last count %d, want 2 and 8", n, got)
	}
	if err := o.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// TestStartOTLPCollectorLate: with nothing listening, a flush fails within
// its timeout and the workload goes on; once a Collector listens at the
// endpoint, the next flush carries everything counted, the waits of the
// failed collection included.
func TestStartOTLPCollectorLate(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	w := newOTLPWorkload(t)
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(nil), []OTLPOption{
		WithEndpoint("http://" + addr), WithExportInterval(time.Hour)}))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown(context.Background())
	w.waits(4)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err = o.ForceFlush(ctx)
	cancel()
	if err == nil {
		t.Fatal("ForceFlush with no endpoint succeeded")
	}
	w.waits(2) // the provider is not held up by the failed export

	r := startMetricsReceiver(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := o.ForceFlush(ctx)
		cancel()
		if _, _, n := r.last(); err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no export reached the late receiver: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	m, _, _ := r.last()
	if got, _ := sumOf(t, m, "pfs.events_waits.count", "wait/synch/mutex/otlp/m"); got != 6 || w.count(t) != 6 {
		t.Errorf("count after the receiver came up: %d (table %d), want 6", got, w.count(t))
	}
}

// TestStartOTLPDisabled: OTEL_SDK_DISABLED starts nothing, and its OTLP
// still answers ForceFlush and Shutdown.
func TestStartOTLPDisabled(t *testing.T) {
	w := newOTLPWorkload(t)
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(map[string]string{"OTEL_SDK_DISABLED": "true"}), nil))
	if err != nil {
		t.Fatal(err)
	}
	if o.Resource() != nil || o.ForceFlush(context.Background()) != nil || o.Shutdown(context.Background()) != nil {
		t.Error("a disabled pipeline did something")
	}
}

// TestStartOTLPMetricsAndSpans: one endpoint serving both signals receives
// the summaries and the history's spans, with one resource; OTEL_TRACES_
// EXPORTER=none (or WithSpans(false)) sends metrics only.
func TestStartOTLPMetricsAndSpans(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	mr := &metricsReceiver{addr: ln.Addr().String()}
	tr := &receiver{addr: ln.Addr().String()}
	pmetricotlp.RegisterGRPCServer(srv, mr)
	ptraceotlp.RegisterGRPCServer(srv, tr)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	for _, spans := range []bool{true, false} {
		w := newWorld(t)
		before := len(tr.spans())
		o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(nil), []OTLPOption{
			WithEndpoint("http://" + mr.addr), WithServiceName("shop"), WithSpans(spans), WithExportInterval(time.Hour)}))
		if err != nil {
			t.Fatal(err)
		}
		th := instrument.NewThread("thread/app/worker", w.in)
		w.request(th, pfscore.StatementInfo{}) // after the start: spans are of what began since
		th.End()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := o.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		got := tr.spans()[before:]
		if !spans {
			if len(got) != 0 {
				t.Errorf("WithSpans(false): %d spans arrived", len(got))
			}
			continue
		}
		if len(got) != 3 {
			t.Fatalf("%d spans, want the request, its stage and its SQL statement", len(got))
		}
		m, _, _ := mr.last()
		mres := m.ResourceMetrics().At(0).Resource().Attributes()
		mid, _ := mres.Get("service.instance.id")
		for _, g := range got {
			id, ok := g.res.Get("service.instance.id")
			if name, _ := g.res.Get("service.name"); !ok || id.Str() != mid.Str() || name.Str() != "shop" {
				t.Errorf("span %s: resource %v, metrics' %v", g.span.Name(), g.res.AsRaw(), mres.AsRaw())
			}
		}
	}
}

// TestStartOTLPDisabledIgnoresTheRest: with OTEL_SDK_DISABLED=true, a
// malformed variable beside it does not fail StartOTLP: nothing is
// started, so nothing else applies.
func TestStartOTLPDisabledIgnoresTheRest(t *testing.T) {
	w := newOTLPWorkload(t)
	env := map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://nowhere", "OTEL_METRIC_EXPORT_INTERVAL": "soon"}
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), nil))
	if err != nil || o.Resource() != nil {
		t.Errorf("StartOTLP disabled: %v, %v", o, err)
	}
	env["OTEL_SDK_DISABLED"] = "maybe"
	if _, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), nil)); err == nil {
		t.Error("a malformed OTEL_SDK_DISABLED was taken")
	}
}
