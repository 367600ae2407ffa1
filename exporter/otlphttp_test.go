package exporter

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// httpReceiver is a real in-process OTLP/HTTP receiver: it decodes
// binary protobuf export requests (gzipped or not) POSTed to its metrics
// and traces paths, as a Collector's otlphttp receiver does, and keeps
// them with the request's path and headers. With respond set, respond
// answers the request instead (to inject errors) when it returns true.
type httpReceiver struct {
	srv                     *httptest.Server
	metricsPath, tracesPath string
	respond                 func(w http.ResponseWriter, call int64) bool
	calls                   atomic.Int64

	mu      sync.Mutex
	metrics []pmetric.Metrics
	traces  []ptrace.Traces
	reqs    []httpReq // every decoded request, in order
}

// httpReq is what the receiver saw of one request.
type httpReq struct {
	path   string
	header http.Header
}

func startHTTPReceiver(t *testing.T, metricsPath, tracesPath string) *httpReceiver {
	t.Helper()
	r := &httpReceiver{metricsPath: metricsPath, tracesPath: tracesPath}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *httpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	call := r.calls.Add(1)
	if r.respond != nil && r.respond(w, call) {
		return
	}
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a POST of application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp []byte
	switch req.URL.Path {
	case r.metricsPath:
		er := pmetricotlp.NewExportRequest()
		if err := er.UnmarshalProto(data); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m := pmetric.NewMetrics()
		er.Metrics().CopyTo(m)
		r.mu.Lock()
		r.metrics = append(r.metrics, m)
		r.mu.Unlock()
		resp, _ = pmetricotlp.NewExportResponse().MarshalProto()
	case r.tracesPath:
		er := ptraceotlp.NewExportRequest()
		if err := er.UnmarshalProto(data); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		td := ptrace.NewTraces()
		er.Traces().CopyTo(td)
		r.mu.Lock()
		r.traces = append(r.traces, td)
		r.mu.Unlock()
		resp, _ = ptraceotlp.NewExportResponse().MarshalProto()
	default:
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, httpReq{req.URL.Path, req.Header.Clone()})
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// spanCount is the number of spans received.
func (r *httpReceiver) spanCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, td := range r.traces {
		n += td.SpanCount()
	}
	return n
}

// requestsTo returns the decoded requests to path.
func (r *httpReceiver) requestsTo(path string) []httpReq {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []httpReq
	for _, q := range r.reqs {
		if q.path == path {
			out = append(out, q)
		}
	}
	return out
}

// TestHTTPProtobufExportsMetricsAndSpans: with OTEL_EXPORTER_OTLP_PROTOCOL=
// http/protobuf, the summaries and the history's spans reach a real
// OTLP/HTTP receiver as binary protobuf at the general endpoint's path
// with /v1/metrics and /v1/traces appended, with the configured headers,
// gzipped where OTEL_EXPORTER_OTLP_*COMPRESSION says, under one resource.
func TestHTTPProtobufExportsMetricsAndSpans(t *testing.T) {
	r := startHTTPReceiver(t, "/otlp/v1/metrics", "/otlp/v1/traces")
	w := newWorld(t)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL":           "http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT":           r.srv.URL + "/otlp",
		"OTEL_EXPORTER_OTLP_HEADERS":            "authorization=Bearer%20t0k",
		"OTEL_EXPORTER_OTLP_COMPRESSION":        "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
		"OTEL_METRIC_EXPORT_INTERVAL":           "3600000",
	}
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), []OTLPOption{WithServiceName("shop")}))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/worker", w.in)
	w.request(th, pfscore.StatementInfo{}) // after the start: spans are of what began since
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mreqs, treqs := r.requestsTo("/otlp/v1/metrics"), r.requestsTo("/otlp/v1/traces")
	if len(mreqs) != 1 || len(treqs) == 0 || r.calls.Load() != int64(len(mreqs)+len(treqs)) {
		t.Fatalf("%d metrics and %d traces requests of %d, want 1 and some, nothing elsewhere", len(mreqs), len(treqs), r.calls.Load())
	}
	for _, q := range append(mreqs, treqs...) {
		if a := q.header.Get("Authorization"); a != "Bearer t0k" {
			t.Errorf("%s: authorization %q", q.path, a)
		}
	}
	if ce := mreqs[0].header.Get("Content-Encoding"); ce != "gzip" {
		t.Errorf("metrics Content-Encoding %q, want gzip", ce)
	}
	if ce := treqs[0].header.Get("Content-Encoding"); ce != "" {
		t.Errorf("traces Content-Encoding %q, want none", ce)
	}
	if n := r.spanCount(); n != 3 {
		t.Errorf("%d spans, want the request, its stage and its SQL statement", n)
	}
	r.mu.Lock()
	m, td := r.metrics[0], r.traces[0]
	r.mu.Unlock()
	got, mres := sumOf(t, m, "pfs.events_waits.count", "wait/synch/mutex/app/cache")
	if got != 1 {
		t.Errorf("pfs.events_waits.count = %d, want 1", got)
	}
	tres := td.ResourceSpans().At(0).Resource().Attributes()
	mid, _ := mres.Get("service.instance.id")
	tid, _ := tres.Get("service.instance.id")
	if name, _ := tres.Get("service.name"); mid.Str() == "" || mid.Str() != tid.Str() || name.Str() != "shop" {
		t.Errorf("resources differ: metrics %v, spans %v", mres.AsRaw(), tres.AsRaw())
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 0 {
		t.Errorf("%s = %d", StatusSpansLost, lost)
	}
}

// TestHTTPProtobufPerSignalEndpointUsedAsIs: a per-signal endpoint is the
// URL posted to, path and all (the root for none); the general endpoint
// only fills the signals without one.
func TestHTTPProtobufPerSignalEndpointUsedAsIs(t *testing.T) {
	r := startHTTPReceiver(t, "/v1/metrics", "/custom/spans")
	w := newWorld(t)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT":        r.srv.URL,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": r.srv.URL + "/custom/spans",
		"OTEL_METRIC_EXPORT_INTERVAL":        "3600000",
	}
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), nil))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/worker", w.in)
	w.request(th, pfscore.StatementInfo{}) // after the start: spans are of what began since
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if m, tr := len(r.requestsTo("/v1/metrics")), len(r.requestsTo("/custom/spans")); m != 1 || tr == 0 || r.spanCount() != 3 {
		t.Errorf("%d metrics requests, %d traces requests with %d spans; want 1, some, 3", m, tr, r.spanCount())
	}
}

// httpTraceConfig is testConfig for an OTLP/HTTP receiver at url.
func httpTraceConfig(url string) traceConfig {
	cfg := testConfig("")
	cfg.protocol, cfg.url = ProtocolHTTPProtobuf, url
	return cfg
}

// TestHTTPTracesRetryableStatusesAreRetried: 429 and 502 (and 503, 504)
// are transient: the batch is sent again, after the Retry-After the
// receiver asked for, and arrives; nothing is lost.
func TestHTTPTracesRetryableStatusesAreRetried(t *testing.T) {
	r := startHTTPReceiver(t, "/v1/metrics", "/v1/traces")
	var firstAt, secondAt atomic.Int64
	r.respond = func(w http.ResponseWriter, call int64) bool {
		switch call {
		case 1:
			firstAt.Store(time.Now().UnixNano())
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		case 2:
			secondAt.Store(time.Now().UnixNano())
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	}
	w := newWorld(t)
	p, err := startTraces(w.s, httpTraceConfig(r.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	deadline := time.Now().Add(20 * time.Second)
	for r.spanCount() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.spanCount(); n != 3 || r.calls.Load() != 3 {
		t.Errorf("%d spans in %d calls, want 3 in 3 (429, 502, 200)", n, r.calls.Load())
	}
	// Retry-After: 1 beats the 10ms backoff (a lower bound holds on a busy machine).
	if gap := time.Duration(secondAt.Load() - firstAt.Load()); gap < 900*time.Millisecond {
		t.Errorf("retried %v after a 429 with Retry-After: 1", gap)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 0 {
		t.Errorf("%s = %d", StatusSpansLost, lost)
	}
}

// TestHTTPTracesPermanentErrorDropsAndCounts: a 400 is not retried: the
// batch is dropped and counted at once, and the receiver's google.rpc.
// Status message reaches the flush's error.
func TestHTTPTracesPermanentErrorDropsAndCounts(t *testing.T) {
	r := startHTTPReceiver(t, "/v1/metrics", "/v1/traces")
	r.respond = func(w http.ResponseWriter, call int64) bool {
		b, _ := proto.Marshal(&spb.Status{Code: 3, Message: "span name too long"})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(b)
		return true
	}
	w := newWorld(t)
	cfg := httpTraceConfig(r.srv.URL + "/v1/traces")
	cfg.interval = time.Hour // forceFlush reads
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = p.forceFlush(ctx)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "span name too long") {
		t.Errorf("forceFlush: %v, want the 400 and the receiver's message", err)
	}
	if c := r.calls.Load(); c != 1 {
		t.Errorf("%d calls, want 1: a 400 is not retried", c)
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 3 {
		t.Errorf("%s = %d, want 3", StatusSpansLost, lost)
	}
	_ = p.shutdown(ctx)
}

// TestHTTPTracesPartialSuccessCounted: a 200 whose body says some spans
// were rejected counts them lost, and sends nothing again.
func TestHTTPTracesPartialSuccessCounted(t *testing.T) {
	r := startHTTPReceiver(t, "/v1/metrics", "/v1/traces")
	r.respond = func(w http.ResponseWriter, call int64) bool {
		resp := ptraceotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedSpans(2)
		resp.PartialSuccess().SetErrorMessage("2 spans too old")
		b, _ := resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
		return true
	}
	w := newWorld(t)
	cfg := httpTraceConfig(r.srv.URL + "/v1/traces")
	cfg.interval = time.Hour
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.forceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if c := r.calls.Load(); c != 1 {
		t.Errorf("%d calls, want 1", c)
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 2 {
		t.Errorf("%s = %d, want 2", StatusSpansLost, lost)
	}
	_ = p.shutdown(ctx)
}

// TestParseRetryAfter: seconds or an HTTP date; anything else is no delay.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"Mon, 07 Dec 2026 12:00:30 GMT": 30 * time.Second,
		"Mon, 07 Dec 2026 11:00:00 GMT": 0,
		"soon":                          0,
		"-1":                            0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

// stalledAddr listens on loopback and accepts connections it never
// answers: a Collector that hangs (a full queue, a stuck proxy).
func stalledAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held, never read or written
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// startBusyPipeline starts both signals to addr over protocol, with spans
// queued (and no answer for them), as a service that ran for a while
// against a broken endpoint. Export timeouts and retries are the
// defaults but what env says.
func startBusyPipeline(t *testing.T, addr, protocol string, env map[string]string) (*OTLP, *world) {
	t.Helper()
	w := newWorld(t)
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), []OTLPOption{
		WithEndpoint("http://" + addr), WithProtocol(protocol),
		WithExportInterval(200 * time.Millisecond), WithSpanInterval(20 * time.Millisecond)}))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	for range 20 {
		w.request(th, pfscore.StatementInfo{})
		time.Sleep(10 * time.Millisecond)
	}
	th.End()
	time.Sleep(300 * time.Millisecond) // a periodic metrics export and a span batch in flight or in backoff
	return o, w
}

// shutdownBound is what the Shutdown tests allow beyond a 1s deadline:
// generous, so that a loaded 2-core machine stays green; on main
// Shutdown took 10s to minutes here.
const shutdownBound = 3 * time.Second

func testShutdownBounded(t *testing.T, addr func(*testing.T) string) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTPProtobuf} {
		t.Run(strings.ReplaceAll(protocol, "/", "_"), func(t *testing.T) {
			t.Parallel()
			o, w := startBusyPipeline(t, addr(t), protocol, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			t0 := time.Now()
			err := o.Shutdown(ctx)
			d := time.Since(t0)
			t.Logf("Shutdown with a 1s deadline took %v", d)
			if d > shutdownBound {
				t.Errorf("Shutdown with a 1s deadline took %v", d)
			}
			if err == nil {
				t.Error("Shutdown sent nothing and said nothing")
			}
			// Nothing was sent, so every span is counted lost.
			if lost := statusOf(t, w.s, StatusSpansLost); lost != 60 {
				t.Errorf("%s = %d after Shutdown, want 60", StatusSpansLost, lost)
			}
		})
	}
}

// TestShutdownHonoursDeadlineWithEndpointDown: nothing listens at the
// endpoint (a closed port); Shutdown with a 1s deadline returns by it,
// over gRPC and http/protobuf, with metrics retrying and spans in backoff.
func TestShutdownHonoursDeadlineWithEndpointDown(t *testing.T) {
	testShutdownBounded(t, freeAddr)
}

// TestShutdownHonoursDeadlineWithStalledEndpoint: the endpoint accepts
// connections and never answers; Shutdown with a 1s deadline returns by
// it, over gRPC and http/protobuf.
func TestShutdownHonoursDeadlineWithStalledEndpoint(t *testing.T) {
	testShutdownBounded(t, stalledAddr)
}

// TestShutdownWithoutDeadlineIsBounded: Shutdown(context.Background())
// against a stalled endpoint takes the export timeout
// (OTEL_EXPORTER_OTLP_TIMEOUT, here 1s) for both signals together, not
// the SDK's 30s collection timeout plus a minute of span retries per batch.
func TestShutdownWithoutDeadlineIsBounded(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTPProtobuf} {
		t.Run(strings.ReplaceAll(protocol, "/", "_"), func(t *testing.T) {
			t.Parallel()
			o, _ := startBusyPipeline(t, stalledAddr(t), protocol, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1000"})
			t0 := time.Now()
			err := o.Shutdown(context.Background())
			d := time.Since(t0)
			t.Logf("Shutdown(context.Background()) took %v", d)
			if d > shutdownBound {
				t.Errorf("Shutdown(context.Background()) with a 1s export timeout took %v", d)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown: %v, want the timeout among its errors", err)
			}
		})
	}
}

// TestShutdownTimeoutIsTheLongestExportTimeout: without a deadline,
// Shutdown's bound is the longest export timeout of the enabled signals
// (DefaultOTLPTimeout unless configured).
func TestShutdownTimeoutIsTheLongestExportTimeout(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want time.Duration
	}{
		{nil, DefaultOTLPTimeout},
		{map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "3000"}, 3 * time.Second},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1000"}, 2500 * time.Millisecond},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1000", "OTEL_METRICS_EXPORTER": "none"}, time.Second},
	} {
		c := newOTLPConfig(envOf(tc.env), nil)
		if got := c.shutdownTimeout(); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.env, got, tc.want)
		}
	}
}
