package exporter

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// receiver is an OTLP/gRPC trace receiver on 127.0.0.1 that keeps what it
// gets. With stall set, each Export blocks until its context ends.
type receiver struct {
	ptraceotlp.UnimplementedGRPCServer
	stall bool

	mu      sync.Mutex
	traces  []ptrace.Traces
	headers []metadata.MD
	calls   atomic.Int64
	addr    string
	srv     *grpc.Server
}

func (r *receiver) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	r.calls.Add(1)
	if r.stall {
		<-ctx.Done()
		return ptraceotlp.NewExportResponse(), ctx.Err()
	}
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td) // the request's memory is not ours after we return
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	r.traces = append(r.traces, td)
	r.headers = append(r.headers, md)
	r.mu.Unlock()
	return ptraceotlp.NewExportResponse(), nil
}

// startReceiver serves a receiver on addr ("127.0.0.1:0" for any port).
func startReceiver(t *testing.T, addr string, stall bool) *receiver {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{stall: stall, addr: lis.Addr().String(), srv: grpc.NewServer()}
	ptraceotlp.RegisterGRPCServer(r.srv, r)
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(r.srv.Stop)
	return r
}

// freeAddr returns a loopback address nothing listens on (now).
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}

// gotSpan is a received span with what the tests check.
type gotSpan struct {
	span  ptrace.Span
	res   pcommon.Map
	scope string
}

func (r *receiver) spans() []gotSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []gotSpan
	for _, td := range r.traces {
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j)
				for k := range ss.Spans().Len() {
					out = append(out, gotSpan{ss.Spans().At(k), rs.Resource().Attributes(), ss.Scope().Name()})
				}
			}
		}
	}
	return out
}

// world is a schema with the history consumers and every instrument on.
type world struct {
	s        *pfscore.Schema
	in       instrument.SharedOption
	requests *instrument.StatementClass
	stage    *instrument.StageClass
	mu       *instrument.Mutex
}

func newWorld(t testing.TB) *world {
	t.Helper()
	opts := []pfscore.Option{pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON")}
	for _, c := range []pfscore.Consumer{
		pfscore.ConsumerEventsWaitsCurrent, pfscore.ConsumerEventsWaitsHistoryLong,
		pfscore.ConsumerEventsStagesCurrent, pfscore.ConsumerEventsStagesHistoryLong,
		pfscore.ConsumerEventsStatementsCurrent, pfscore.ConsumerEventsStatementsHistoryLong,
		pfscore.ConsumerEventsTransactionsCurrent, pfscore.ConsumerEventsTransactionsHistoryLong,
	} {
		opts = append(opts, pfscore.WithConsumer(c, true))
	}
	s, err := pfscore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	in := instrument.WithSchema(s)
	return &world{s: s, in: in,
		requests: instrument.NewStatementClass("statement/http/request", in),
		stage:    instrument.NewStageClass("stage/app/querying", in),
		mu:       instrument.NewMutex("wait/synch/mutex/app/cache", in)}
}

// request runs a request statement (tracing it under info's trace, if
// set, which its caller sampled) with a stage holding a SQL statement and
// a mutex wait: three spans, one wait event.
func (w *world) request(th *instrument.Thread, info pfscore.StatementInfo) {
	if info.Text == "" {
		info.Text, info.Normalized = "GET /items/{id}", true
	}
	if info.TraceID != [16]byte{} {
		info.Sampled = true
	}
	req := w.requests.StartOn(th, info)
	w.stage.StartOn(th)
	w.mu.For(th).Lock()
	w.mu.Unlock()
	q := w.s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT title FROM items WHERE id = 9", Schema: "shop",
		TraceID: info.TraceID, SpanID: info.SpanID})
	q.End(pfscore.StatementResult{RowsSent: 1})
	th.EndStage()
	req.End(pfscore.StatementResult{})
}

func statusOf(t testing.TB, s *pfscore.Schema, name string) uint64 {
	t.Helper()
	for _, v := range s.Status() {
		if v.Name == name {
			return v.Value
		}
	}
	t.Fatalf("global_status has no %s", name)
	return 0
}

func testConfig(endpoint string) traceConfig {
	return traceConfig{endpoint: endpoint, insecure: true, timeout: time.Second,
		interval: 10 * time.Millisecond, queueSize: 1000, sampler: pfscore.TraceSampler{ParentBased: true, Ratio: 1},
		retryInitial: 10 * time.Millisecond, retryMax: 50 * time.Millisecond, retryElapsed: 10 * time.Second,
		resource: resource.NewSchemaless(attribute.String("service.name", "shop"))}
}

// stopped fails the test unless both goroutines of p have ended.
func stopped(t *testing.T, p *tracePipeline) {
	t.Helper()
	for _, c := range []chan struct{}{p.readDone, p.sendDone} {
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Fatal("a pipeline goroutine still runs after shutdown")
		}
	}
}

func TestTracesExport(t *testing.T) {
	rcv := startReceiver(t, "127.0.0.1:0", false)
	w := newWorld(t)
	cfg := testConfig(rcv.addr)
	cfg.headers = map[string]string{"x-team": "checkout"}
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	appTrace := [16]byte{0xde, 0xad, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	appSpan := [8]byte{0xbe, 0xef, 1, 2, 3, 4, 5, 6}
	before := time.Now()
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{TraceID: appTrace, SpanID: appSpan})
	th.End()
	after := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.forceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]gotSpan{}
	for _, g := range rcv.spans() {
		got[g.span.Name()] = g
	}
	if len(got) != 3 {
		t.Fatalf("received %d spans: %v", len(got), got)
	}
	for _, name := range []string{"GET /items/{id}", "stage/app/querying", "SELECT items"} {
		if _, ok := got[name]; !ok {
			t.Fatalf("no span %q among %d", name, len(got))
		}
	}
	req, stage, sql := got["GET /items/{id}"], got["stage/app/querying"], got["SELECT items"]
	if v, _ := req.res.Get("service.name"); v.Str() != "shop" || req.scope != "github.com/otelpfs/otelpfs/bridge" {
		t.Errorf("resource %v, scope %q", req.res.AsRaw(), req.scope)
	}
	if req.span.TraceID() != pcommon.TraceID(appTrace) || req.span.ParentSpanID() != pcommon.SpanID(appSpan) ||
		req.span.Flags()&flagParentIsRemote == 0 {
		t.Errorf("request: trace %v parent %v flags %#x", req.span.TraceID(), req.span.ParentSpanID(), req.span.Flags())
	}
	// The stage is the request's child, the SQL statement the stage's: it
	// ran in it.
	for _, c := range []struct{ child, parent gotSpan }{{stage, req}, {sql, stage}} {
		if c.child.span.TraceID() != pcommon.TraceID(appTrace) || c.child.span.ParentSpanID() != c.parent.span.SpanID() ||
			c.child.span.Flags()&flagParentIsRemote != 0 {
			t.Errorf("%s: trace %v parent %v, want %v", c.child.span.Name(), c.child.span.TraceID(), c.child.span.ParentSpanID(), c.parent.span.SpanID())
		}
	}
	if sql.span.Kind() != ptrace.SpanKindClient || req.span.Kind() != ptrace.SpanKindServer {
		t.Errorf("kinds %v %v", sql.span.Kind(), req.span.Kind())
	}
	want := map[string]any{"db.system.name": "other_sql", "db.namespace": "shop", "db.operation.name": "SELECT",
		"db.response.returned_rows": int64(1), "pfs.event_name": "statement/sql/select",
		"db.query.summary": "SELECT items", "db.collection.name": "items",
		"pfs.digest_text": "SELECT `title` FROM `items` WHERE `id` = ?"}
	raw := sql.span.Attributes().AsRaw()
	for k, v := range want {
		if raw[k] != v {
			t.Errorf("%s = %v, want %v", k, raw[k], v)
		}
	}
	if _, ok := raw["db.query.text"]; ok {
		t.Error("db.query.text sent without sqlText")
	}
	for _, g := range got {
		s, e := g.span.StartTimestamp().AsTime(), g.span.EndTimestamp().AsTime()
		if s.Before(before.Add(-time.Millisecond)) || e.After(after.Add(time.Millisecond)) || e.Before(s) {
			t.Errorf("%s: [%v, %v] outside [%v, %v]", g.span.Name(), s, e, before, after)
		}
	}
	if evs := stage.span.Events(); evs.Len() != 1 || evs.At(0).Name() != "wait/synch/mutex/app/cache" {
		t.Errorf("stage events: %d", evs.Len())
	} else {
		ev := evs.At(0)
		if ts := ev.Timestamp().AsTime(); ts.Before(stage.span.StartTimestamp().AsTime()) || ts.After(stage.span.EndTimestamp().AsTime()) {
			t.Errorf("wait at %v outside its stage", ts)
		}
		if op, _ := ev.Attributes().Get("pfs.operation"); op.Str() != "lock" {
			t.Errorf("wait attributes %v", ev.Attributes().AsRaw())
		}
		if d, _ := ev.Attributes().Get("pfs.duration"); d.Double() <= 0 {
			t.Errorf("wait duration %v", d.Double())
		}
	}
	rcv.mu.Lock()
	if md := rcv.headers[0]; len(md.Get("x-team")) != 1 || md.Get("x-team")[0] != "checkout" {
		t.Errorf("headers %v", md)
	}
	rcv.mu.Unlock()
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stopped(t, p)
	if err := p.shutdown(ctx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
	if err := p.forceFlush(ctx); err == nil {
		t.Error("forceFlush after shutdown: no error")
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 0 {
		t.Errorf("%s = %d", StatusSpansLost, lost)
	}
}

// TestTracesEndpointDown: with nothing listening, the provider runs as
// usual, the span queue fills, what does not fit waits in the capture's
// queue or is dropped and counted in global_status (nothing vanishes), and
// flush and shutdown end with their contexts, counting every span they
// could not send.
func TestTracesEndpointDown(t *testing.T) {
	w := newWorld(t)
	cfg := testConfig(freeAddr(t))
	cfg.queueSize = 9
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	var slowest time.Duration
	for range 20 { // 60 spans
		t0 := time.Now()
		w.request(th, pfscore.StatementInfo{})
		slowest = max(slowest, time.Since(t0))
		time.Sleep(time.Millisecond)
	}
	th.End()
	if slowest > 100*time.Millisecond {
		t.Errorf("a request took %v with the endpoint down", slowest)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.room() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// 60 spans made: 9 held in the span queue, the rest dropped (counted)
	// or in trees of 3 the capture's queue keeps.
	p.readMu.Lock() // no read in between
	lost, queued := statusOf(t, w.s, StatusSpansLost), w.s.TraceStats().Queued
	p.readMu.Unlock()
	if p.room() != 0 || lost+3*uint64(queued)+9 != 60 {
		t.Errorf("the endpoint down: room %d, %d spans lost, %d trees queued; want the queue full and 60 spans in all", p.room(), lost, queued)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := p.forceFlush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("forceFlush: %v, want the deadline", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if err := p.shutdown(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown: %v, want the deadline", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("flush and shutdown took %v", d)
	}
	stopped(t, p)
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 60 { // the 9 held are dropped at shutdown
		t.Errorf("%s = %d after shutdown, want 60", StatusSpansLost, lost)
	}
}

// TestTracesStalledEndpoint: a receiver that accepts and never answers
// costs each export its timeout; after the retry window the batch is
// dropped and counted; shutdown does not wait for it.
func TestTracesStalledEndpoint(t *testing.T) {
	rcv := startReceiver(t, "127.0.0.1:0", true)
	w := newWorld(t)
	cfg := testConfig(rcv.addr)
	cfg.timeout = 50 * time.Millisecond
	cfg.retryElapsed = 300 * time.Millisecond
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	deadline := time.Now().Add(10 * time.Second)
	for statusOf(t, w.s, StatusSpansLost) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 3 {
		t.Errorf("%s = %d, want 3", StatusSpansLost, lost)
	}
	if c := rcv.calls.Load(); c < 2 || c > 10 {
		t.Errorf("%d export attempts in the retry window, want a few", c)
	}
	// A second batch is in flight (stalled) when shutdown comes.
	th = instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	calls := rcv.calls.Load()
	for rcv.calls.Load() == calls && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := p.shutdown(ctx); err == nil {
		t.Error("shutdown with a stalled batch: no error")
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("shutdown took %v", d)
	}
	stopped(t, p)
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 6 {
		t.Errorf("%s = %d after shutdown, want 6", StatusSpansLost, lost)
	}
}

// TestTracesLateEndpoint: spans made while the receiver is not up yet
// wait in the queue and arrive once it starts.
func TestTracesLateEndpoint(t *testing.T) {
	addr := freeAddr(t)
	w := newWorld(t)
	p, err := startTraces(w.s, testConfig(addr))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	for range 5 {
		w.request(th, pfscore.StatementInfo{})
	}
	th.End()
	time.Sleep(150 * time.Millisecond) // several failed attempts
	rcv := startReceiver(t, addr, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.forceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.spans()); n != 15 {
		t.Errorf("received %d spans, want 15", n)
	}
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 0 {
		t.Errorf("%s = %d", StatusSpansLost, lost)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stopped(t, p)
}

// TestTracesConcurrentSafe: many goroutines make requests while the
// pipeline reads and sends. The invariant: every span made arrives once,
// none is lost, whatever the interleaving of reads, sends and flushes.
func TestTracesConcurrentSafe(t *testing.T) {
	workers, requests := 8, 100
	if testing.Short() {
		requests = 20
	}
	rcv := startReceiver(t, "127.0.0.1:0", false)
	w := newWorld(t)
	cfg := testConfig(rcv.addr)
	cfg.interval = time.Millisecond
	cfg.queueSize = 3 * workers * requests
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := instrument.NewThread("thread/app/request", w.in)
			defer th.End()
			<-start
			for range requests {
				w.request(th, pfscore.StatementInfo{})
			}
		}()
	}
	wg.Add(1)
	go func() { // flushes race the reader and the sender
		defer wg.Done()
		<-start
		for range 5 {
			if err := p.forceFlush(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}()
	close(start)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stopped(t, p)
	seen := map[pcommon.SpanID]bool{}
	events := 0
	for _, g := range rcv.spans() {
		if seen[g.span.SpanID()] {
			t.Fatalf("span %s received twice", g.span.Name())
		}
		seen[g.span.SpanID()] = true
		events += g.span.Events().Len()
	}
	if n := workers * requests; len(seen) != 3*n || events != n {
		t.Errorf("received %d spans, %d events; want %d, %d", len(seen), events, 3*n, n)
	}
	if lost := statusOf(t, w.s, StatusSpansLost) + statusOf(t, w.s, StatusEventsLost); lost != 0 {
		t.Errorf("lost %d", lost)
	}
}

func TestStartTracesErrors(t *testing.T) {
	w := newWorld(t)
	if _, err := startTraces(nil, testConfig("127.0.0.1:1")); err == nil {
		t.Error("nil schema: no error")
	}
	if _, err := startTraces(w.s, traceConfig{}); err == nil {
		t.Error("no endpoint: no error")
	}
	// One span pipeline a schema at a time: two would split its trees. A
	// second is refused; after the first's shutdown one starts again, on
	// the same status rows, and the trace hook the first installed is gone
	// with it.
	a, err := startTraces(w.s, testConfig(freeAddr(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startTraces(w.s, testConfig(freeAddr(t))); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("a second span pipeline on one schema: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = a.shutdown(ctx)
	if pfscore.TraceHookSet() {
		t.Error("the trace hook the pipeline installed outlives it")
	}
	b, err := startTraces(w.s, testConfig(freeAddr(t)))
	if err != nil {
		t.Fatalf("a span pipeline after the first's shutdown: %v", err)
	}
	_ = b.shutdown(ctx)
}

// TestWithSpanExporterSendsThroughTheApplicationsExporter: with
// WithSpanExporter, a request's spans reach the application's own
// SpanExporter, whole (the request, its stage, its SQL statement, in one
// trace, parent to child), with StartOTLP's resource; no OTLP client is
// needed.
func TestWithSpanExporterSendsThroughTheApplicationsExporter(t *testing.T) {
	w := newWorld(t)
	mem := tracetest.NewInMemoryExporter()
	o, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(nil), []OTLPOption{
		WithMetrics(false), WithSpanExporter(mem), WithServiceName("shop")}))
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	w.request(th, pfscore.StatementInfo{})
	th.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]tracetest.SpanStub{}
	for _, sp := range mem.GetSpans() {
		got[sp.Name] = sp
	}
	req, stage, sql := got["GET /items/{id}"], got["stage/app/querying"], got["SELECT items"]
	if len(got) != 3 || !req.SpanContext.IsValid() || !stage.SpanContext.IsValid() || !sql.SpanContext.IsValid() {
		t.Fatalf("spans %v", got)
	}
	if stage.Parent.SpanID() != req.SpanContext.SpanID() || sql.Parent.SpanID() != stage.SpanContext.SpanID() ||
		sql.SpanContext.TraceID() != req.SpanContext.TraceID() || !req.SpanContext.IsSampled() {
		t.Errorf("tree: stage's parent %v, SQL's %v, want %v and %v", stage.Parent.SpanID(), sql.Parent.SpanID(),
			req.SpanContext.SpanID(), stage.SpanContext.SpanID())
	}
	if req.SpanKind != trace.SpanKindServer || sql.SpanKind != trace.SpanKindClient {
		t.Errorf("kinds %v %v", req.SpanKind, sql.SpanKind)
	}
	if v, ok := req.Resource.Set().Value("service.name"); !ok || v.AsString() != "shop" {
		t.Errorf("resource %v", req.Resource)
	}
}

// TestReadLeavesWhatTheQueueCannotTake: with the span queue full (the
// endpoint down), the pipeline leaves the trees it cannot queue in the
// capture's queue rather than make spans to drop them; what is left at
// shutdown is counted lost, every span once.
func TestReadLeavesWhatTheQueueCannotTake(t *testing.T) {
	w := newWorld(t)
	cfg := testConfig(freeAddr(t))
	cfg.queueSize = 9 // three requests' spans
	p, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	const requests = 20
	for range requests {
		w.request(th, pfscore.StatementInfo{})
	}
	th.End()
	p.readHistory()
	if st := w.s.TraceStats(); st.Queued == 0 || st.Trees != requests {
		t.Errorf("capture after a read with the queue full: %+v; want trees left queued", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.shutdown(ctx)
	if lost := statusOf(t, w.s, StatusSpansLost); lost != 3*requests {
		t.Errorf("Performance_schema_export_spans_lost = %d, want every span of the %d requests, %d", lost, requests, 3*requests)
	}
}

// TestShutdownKeepsTheSchemaUntilDone: a pipeline shutting down still
// reads the schema's trees, so a second one cannot start beside it until
// its shutdown has returned; the tree of a request that ends after that
// shutdown (it ran across it) is counted lost when the next pipeline
// starts, never sent stale or left uncounted.
func TestShutdownKeepsTheSchemaUntilDone(t *testing.T) {
	w := newWorld(t)
	cfg := testConfig(freeAddr(t)) // nothing listens: shutdown waits out its context
	a, err := startTraces(w.s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	th := instrument.NewThread("thread/app/request", w.in)
	defer th.End()
	w.request(th, pfscore.StatementInfo{}) // queued in a, never sent
	running := w.requests.StartOn(th, pfscore.StatementInfo{Text: "GET /slow", Normalized: true})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_ = a.shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond) // a's shutdown in progress
	select {
	case <-done:
		t.Fatal("shutdown returned at once with the endpoint down; the test needs it in progress")
	default:
	}
	if _, err := startTraces(w.s, testConfig(freeAddr(t))); err == nil {
		t.Error("a second pipeline started while the first was shutting down")
	}
	<-done
	running.End(pfscore.StatementResult{}) // its tree: one span, after a's last read
	lostBefore := statusOf(t, w.s, StatusSpansLost)
	b, err := startTraces(w.s, testConfig(freeAddr(t)))
	if err != nil {
		t.Fatalf("after the first's shutdown: %v", err)
	}
	if got := statusOf(t, w.s, StatusSpansLost) - lostBefore; got != 1 {
		t.Errorf("the stale tree's span: %d counted lost as the next pipeline started, want 1", got)
	}
	if st := w.s.TraceStats(); st.Queued != 0 {
		t.Errorf("capture %+v: the stale tree is still queued", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = b.shutdown(ctx)
}
