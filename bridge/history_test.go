package bridge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// historyConsumers turns on what spans are made of: the current and
// history_long consumers of waits, stages, statements and transactions.
var historyConsumers = []pfscore.Option{
	pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistoryLong, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsStatementsCurrent, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, true),
	pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistoryLong, true),
}

// spanWorld is a schema with the history consumers on, every instrument
// on, and the instruments a request uses.
type spanWorld struct {
	t        testing.TB
	s        *pfscore.Schema
	in       instrument.SharedOption
	requests *instrument.StatementClass
	parsing  *instrument.StageClass
	querying *instrument.StageClass
	cache    *instrument.Mutex
	pool     *instrument.Mutex
}

func newSpanWorld(t testing.TB, opts ...pfscore.Option) *spanWorld {
	t.Helper()
	all := append([]pfscore.Option{pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON")},
		historyConsumers...)
	s, err := pfscore.New(append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return newSpanWorldOn(t, s)
}

// newSpanWorldOn is newSpanWorld on schema s as it is.
func newSpanWorldOn(t testing.TB, s *pfscore.Schema) *spanWorld {
	in := instrument.WithSchema(s)
	return &spanWorld{t: t, s: s, in: in,
		requests: instrument.NewStatementClass("statement/http/request", in),
		parsing:  instrument.NewStageClass("stage/app/parsing", in),
		querying: instrument.NewStageClass("stage/app/querying", in),
		cache:    instrument.NewMutex("wait/synch/mutex/app/cache", in),
		pool:     instrument.NewMutex("wait/synch/mutex/app/pool", in),
	}
}

// request runs GET /users/{id}: a route statement with a parsing stage
// (one cache wait), a querying stage holding one SQL statement, and a pool
// wait in the statement outside any stage.
func (w *spanWorld) request(ctx context.Context) {
	req := w.requests.Start(ctx, "GET /users/{id}")
	w.parsing.Start(ctx)
	w.cache.LockCtx(ctx)
	w.cache.Unlock()
	w.querying.Start(ctx)
	q := instrument.StartSQL(ctx, w.s, "shop", "SELECT email FROM users WHERE id = 42")
	q.End(instrument.StatementResult{RowsSent: 1, RowsExamined: 3})
	instrument.EndStage(ctx)
	w.pool.LockCtx(ctx)
	w.pool.Unlock()
	req.End(instrument.StatementResult{})
}

func (w *spanWorld) history(opts ...bridge.HistoryOption) *bridge.History {
	w.t.Helper()
	h, err := bridge.NewHistory(w.s, opts...)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

func read(t testing.TB, h *bridge.History) []bridge.Span {
	t.Helper()
	spans, err := h.Read()
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range kvs {
		if _, dup := m[string(kv.Key)]; dup {
			panic("duplicate attribute " + kv.Key)
		}
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func byName(t testing.TB, spans []bridge.Span) map[string]bridge.Span {
	t.Helper()
	m := map[string]bridge.Span{}
	for _, sp := range spans {
		if _, dup := m[sp.Name]; dup {
			t.Fatalf("two spans named %q", sp.Name)
		}
		m[sp.Name] = sp
	}
	return m
}

func TestHistoryRequestTree(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history()
	before := time.Now()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	w.request(ctx)
	th.End()
	after := time.Now()

	spans := read(t, h)
	if len(spans) != 4 {
		t.Fatalf("got %d spans, want 4 (request, 2 stages, SQL): %+v", len(spans), spans)
	}
	m := byName(t, spans)
	req, parsing, querying := m["GET /users/{id}"], m["stage/app/parsing"], m["stage/app/querying"]
	sql := m["SELECT users"]
	if req.SpanID == (trace.SpanID{}) || parsing.SpanID == (trace.SpanID{}) || sql.SpanID == (trace.SpanID{}) {
		t.Fatalf("missing spans: %v", m)
	}
	// The tree: the request is a root of a trace of its own; the stages
	// are its children; the SQL statement nests in the request statement.
	if req.Parent.IsValid() || !req.TraceID.IsValid() || req.RemoteParent {
		t.Errorf("request: parent %v trace %v remote %v, want a root", req.Parent, req.TraceID, req.RemoteParent)
	}
	for _, c := range []bridge.Span{parsing, querying, sql} {
		if c.Parent != req.SpanID || c.TraceID != req.TraceID {
			t.Errorf("%s: parent %v trace %v, want %v %v", c.Name, c.Parent, c.TraceID, req.SpanID, req.TraceID)
		}
	}
	ids := map[trace.SpanID]bool{}
	for _, sp := range spans {
		if ids[sp.SpanID] {
			t.Errorf("span id %v twice", sp.SpanID)
		}
		ids[sp.SpanID] = true
	}
	// Times: inside the test's window, children inside their parent.
	for _, sp := range spans {
		if sp.Start.Before(before.Add(-time.Millisecond)) || sp.End.After(after.Add(time.Millisecond)) || sp.End.Before(sp.Start) {
			t.Errorf("%s: [%v, %v] outside [%v, %v]", sp.Name, sp.Start, sp.End, before, after)
		}
	}
	for _, c := range []bridge.Span{parsing, querying, sql} {
		if c.Start.Before(req.Start) || c.End.After(req.End) {
			t.Errorf("%s [%v, %v] outside the request [%v, %v]", c.Name, c.Start, c.End, req.Start, req.End)
		}
	}
	// Waits are events of the span they nest in.
	if len(parsing.Events) != 1 || parsing.Events[0].Name != "wait/synch/mutex/app/cache" {
		t.Errorf("parsing events: %+v", parsing.Events)
	}
	if len(req.Events) != 1 || req.Events[0].Name != "wait/synch/mutex/app/pool" {
		t.Errorf("request events: %+v", req.Events)
	}
	if len(querying.Events) != 0 || len(sql.Events) != 0 {
		t.Errorf("querying events %+v, sql events %+v; want none", querying.Events, sql.Events)
	}
	if ev := parsing.Events[0]; ev.Time.Before(parsing.Start) || ev.Time.After(parsing.End) {
		t.Errorf("wait at %v outside its stage [%v, %v]", ev.Time, parsing.Start, parsing.End)
	} else {
		a := attrs(ev.Attributes)
		if a["pfs.operation"].AsString() != "lock" || a["pfs.duration"].AsFloat64() <= 0 ||
			a["pfs.duration"].AsFloat64() > after.Sub(before).Seconds() || a["pfs.event_id"].AsInt64() <= 0 {
			t.Errorf("wait attributes: %v", a)
		}
	}

	// Attributes.
	a := attrs(sql.Attributes)
	want := map[string]attribute.Value{
		"db.system.name":            attribute.StringValue(bridge.DefaultDBSystem),
		"db.namespace":              attribute.StringValue("shop"),
		"db.query.summary":          attribute.StringValue("SELECT users"),
		"db.operation.name":         attribute.StringValue("SELECT"),
		"db.collection.name":        attribute.StringValue("users"),
		"db.response.returned_rows": attribute.Int64Value(1),
		"pfs.digest_text":           attribute.StringValue("SELECT `email` FROM `users` WHERE `id` = ?"),
		"pfs.rows_examined":         attribute.Int64Value(3),
		"pfs.rows_affected":         attribute.Int64Value(0),
		"pfs.event_name":            attribute.StringValue("statement/sql/select"),
		"pfs.thread_id":             attribute.Int64Value(int64(th.ID())),
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("sql %s = %v, want %v", k, a[k].String(), v.String())
		}
	}
	if _, ok := a["db.query.text"]; ok {
		t.Error("db.query.text exported without WithSQLText")
	}
	if len(a["pfs.digest"].AsString()) != 64 {
		t.Errorf("pfs.digest = %q", a["pfs.digest"].AsString())
	}
	if sql.Kind != trace.SpanKindClient || req.Kind != trace.SpanKindServer {
		t.Errorf("kinds: sql %v, request %v", sql.Kind, req.Kind)
	}
	// The request is HTTP, not database, in OpenTelemetry's terms.
	if ra := attrs(req.Attributes); ra["db.system.name"].Type() != attribute.EMPTY ||
		ra["db.query.summary"].Type() != attribute.EMPTY || ra["pfs.event_name"].AsString() != "statement/http/request" ||
		ra["http.request.method"].AsString() != "GET" || ra["http.route"].AsString() != "/users/{id}" {
		t.Errorf("request attributes: %v", ra)
	}
	if sql.SpanID != bridge.SpanIDOf(th.ID(), uint64(a["pfs.event_id"].AsInt64())) {
		t.Error("span id is not SpanIDOf(thread, event)")
	}

	// Nothing twice.
	if again := read(t, h); len(again) != 0 {
		t.Fatalf("second read: %d spans, want 0", len(again))
	}
	st := h.Stats()
	if st.Spans != 4 || st.Lost != 0 || st.Orphans != 0 || st.Pending != 0 || st.Reads != 2 {
		t.Errorf("stats %v", st)
	}
}

// TestHistoryCursor reads between requests: each Read returns exactly the
// requests that ended since the previous one.
func TestHistoryCursor(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	defer th.End()
	seen := map[trace.SpanID]bool{}
	for round := range 5 {
		for range round {
			w.request(ctx)
		}
		spans := read(t, h)
		if len(spans) != 4*round {
			t.Fatalf("round %d: %d spans, want %d", round, len(spans), 4*round)
		}
		for _, sp := range spans {
			if seen[sp.SpanID] {
				t.Fatalf("round %d: %s sent again", round, sp.Name)
			}
			seen[sp.SpanID] = true
		}
	}
	if st := h.Stats(); st.Lost != 0 || st.Orphans != 0 {
		t.Errorf("stats %v", st)
	}
}

// TestHistoryInProgress: a statement in progress is not sent, nor what
// nests in it, until it ends; then all of it comes, once.
func TestHistoryInProgress(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	defer th.End()
	req := w.requests.Start(ctx, "POST /orders")
	w.parsing.Start(ctx)
	w.cache.LockCtx(ctx)
	w.cache.Unlock()
	w.querying.Start(ctx) // ends parsing
	q := instrument.StartSQL(ctx, w.s, "shop", "INSERT INTO orders VALUES (1)")
	q.End(instrument.StatementResult{RowsAffected: 1})
	for i := range 3 {
		if spans := read(t, h); len(spans) != 0 {
			t.Fatalf("read %d while the request runs: %d spans", i, len(spans))
		}
	}
	if p := h.Stats().Pending; p != 3 { // parsing, its wait, the INSERT
		t.Errorf("pending %d, want 3", p)
	}
	w.pool.LockCtx(ctx)
	w.pool.Unlock()
	req.End(instrument.StatementResult{})
	m := byName(t, read(t, h))
	if len(m) != 4 {
		t.Fatalf("after the end: %v", m)
	}
	r := m["POST /orders"]
	if ins := m["INSERT orders"]; ins.Parent != r.SpanID ||
		attrs(ins.Attributes)["pfs.rows_affected"].AsInt64() != 1 || attrs(ins.Attributes)["db.operation.name"].AsString() != "INSERT" {
		t.Errorf("insert: %+v", ins)
	}
	if p := m["stage/app/parsing"]; p.Parent != r.SpanID || len(p.Events) != 1 {
		t.Errorf("parsing: %+v", p)
	}
	if st := h.Stats(); st.Pending != 0 || st.Lost != 0 || st.Orphans != 0 {
		t.Errorf("stats %v", st)
	}
}

// TestHistoryTraceContext: a statement that recorded a trace and span is
// a child of that span, in that trace; a statement nested in it that
// recorded the same span is the enclosing statement's child; one that
// recorded another span is that span's child.
func TestHistoryTraceContext(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history()
	th := instrument.NewThread("thread/app/request", w.in)
	defer th.End()
	tr := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	app := trace.SpanID{0xa, 1, 2, 3, 4, 5, 6, 7}
	inner := trace.SpanID{0xb, 1, 2, 3, 4, 5, 6, 7}
	sqlc := instrument.NewStatementClass("statement/sql/select", w.in)
	req := w.requests.StartOn(th, pfscore.StatementInfo{Text: "GET /a", Normalized: true, TraceID: tr, SpanID: app})
	same := sqlc.StartOn(th, pfscore.StatementInfo{Text: "SELECT 1", TraceID: tr, SpanID: app})
	same.End(pfscore.StatementResult{})
	other := sqlc.StartOn(th, pfscore.StatementInfo{Text: "SELECT 2 FROM t", TraceID: tr, SpanID: inner})
	other.End(pfscore.StatementResult{})
	req.End(pfscore.StatementResult{})
	untraced := w.requests.StartOn(th, pfscore.StatementInfo{Text: "GET /b", Normalized: true})
	untraced.End(pfscore.StatementResult{})

	m := byName(t, read(t, h))
	r := m["GET /a"]
	if r.TraceID != tr || r.Parent != app || !r.RemoteParent {
		t.Errorf("request: trace %v parent %v remote %v; want %v %v true", r.TraceID, r.Parent, r.RemoteParent, tr, app)
	}
	if s := m["SELECT"]; s.TraceID != tr || s.Parent != r.SpanID || s.RemoteParent {
		t.Errorf("same-span SQL: trace %v parent %v; want %v %v", s.TraceID, s.Parent, tr, r.SpanID)
	}
	if s := m["SELECT t"]; s.TraceID != tr || s.Parent != inner || !s.RemoteParent {
		t.Errorf("other-span SQL: trace %v parent %v; want %v %v", s.TraceID, s.Parent, tr, inner)
	}
	if u := m["GET /b"]; u.TraceID == tr || !u.TraceID.IsValid() || u.Parent.IsValid() {
		t.Errorf("untraced: trace %v parent %v", u.TraceID, u.Parent)
	}
}

func TestTraceContext(t *testing.T) {
	if _, _, _, ok := bridge.TraceContext(context.Background()); ok {
		t.Error("ok for a context without a span")
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled})
	tr, sp, sampled, ok := bridge.TraceContext(trace.ContextWithSpanContext(context.Background(), sc))
	if !ok || !sampled || tr != [16]byte{1} || sp != [8]byte{2} {
		t.Errorf("got %v %v %v %v", tr, sp, sampled, ok)
	}
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}})
	if _, _, sampled, ok := bridge.TraceContext(trace.ContextWithSpanContext(context.Background(), unsampled)); !ok || sampled {
		t.Errorf("an unsampled span: sampled %v ok %v", sampled, ok)
	}
	// Through instrument's hook, a statement records the context's span.
	w := newSpanWorld(t)
	h := w.history()
	instrument.SetTraceHook(bridge.TraceContext)
	defer instrument.SetTraceHook(nil)
	ctx, th := instrument.StartThread(trace.ContextWithSpanContext(context.Background(), sc), "thread/app/request", w.in)
	w.request(ctx)
	th.End()
	m := byName(t, read(t, h))
	if r := m["GET /users/{id}"]; r.TraceID != sc.TraceID() || r.Parent != sc.SpanID() {
		t.Errorf("request: trace %v parent %v", r.TraceID, r.Parent)
	}
	if s := m["SELECT users"]; s.Parent != m["GET /users/{id}"].SpanID {
		t.Errorf("SQL parent %v", s.Parent)
	}
}

// idsHolder is a context that holds a span's ids itself, as pfshttp's
// request context does (bridge's spanHolder).
type idsHolder struct {
	context.Context
	tr    [16]byte
	sp    [8]byte
	holds bool
}

func (h idsHolder) OtelpfsSpanIDs() ([16]byte, [8]byte, bool, bool) {
	return h.tr, h.sp, h.tr[0] == 1, h.holds // sampled: those of trace 1...
}

// TestTraceContextHolder checks TraceContext on a context that holds its
// span's ids: they are the answer when it holds a span, no span when the
// ids are not valid (OpenTelemetry's rule: neither may be zero), and the
// parent's span when it holds none.
func TestTraceContextHolder(t *testing.T) {
	parent := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}}))
	for _, c := range []struct {
		h      idsHolder
		tr     [16]byte
		sp     [8]byte
		wantOK bool
	}{
		{idsHolder{parent, [16]byte{1}, [8]byte{2}, true}, [16]byte{1}, [8]byte{2}, true},
		{idsHolder{parent, [16]byte{}, [8]byte{2}, true}, [16]byte{}, [8]byte{}, false},
		{idsHolder{parent, [16]byte{1}, [8]byte{}, true}, [16]byte{}, [8]byte{}, false},
		{idsHolder{parent, [16]byte{1}, [8]byte{2}, false}, [16]byte{7}, [8]byte{8}, true},
		{idsHolder{context.Background(), [16]byte{}, [8]byte{}, false}, [16]byte{}, [8]byte{}, false},
	} {
		tr, sp, sampled, ok := bridge.TraceContext(c.h)
		if sampled != (ok && tr == [16]byte{1}) {
			t.Errorf("holder %x/%x: sampled %v", c.h.tr, c.h.sp, sampled)
		}
		if tr != c.tr || sp != c.sp || ok != c.wantOK {
			t.Errorf("holder %x/%x holds %v: got %x/%x %v, want %x/%x %v", c.h.tr, c.h.sp, c.h.holds, tr, sp, ok, c.tr, c.sp, c.wantOK)
		}
	}
}

func TestHistorySQLTextAndErrors(t *testing.T) {
	for _, on := range []bool{false, true} {
		w := newSpanWorld(t)
		h := w.history(bridge.WithSQLText(on), bridge.WithDBSystem("sqlite"))
		ctx, th := instrument.StartThread(context.Background(), "thread/app/worker", w.in)
		q := instrument.StartSQL(ctx, w.s, "", "UPDATE users SET name = 'bob' WHERE id = 7")
		q.End(instrument.StatementResult{Errors: 1, Message: "database is locked", RowsAffected: 0})
		th.End()
		spans := read(t, h)
		if len(spans) != 1 {
			t.Fatalf("%d spans", len(spans))
		}
		sp := spans[0]
		a := attrs(sp.Attributes)
		if got, ok := a["db.query.text"]; ok != on || on && got.AsString() != "UPDATE users SET name = 'bob' WHERE id = 7" {
			t.Errorf("WithSQLText(%v): db.query.text %v %q", on, ok, got.AsString())
		}
		if sp.Status != codes.Error || sp.StatusMessage != "database is locked" || a["error.type"].AsString() != "_OTHER" {
			t.Errorf("status %v %q, error.type %v", sp.Status, sp.StatusMessage, a["error.type"].String())
		}
		if a["db.system.name"].AsString() != "sqlite" || a["db.operation.name"].AsString() != "UPDATE" {
			t.Errorf("attributes %v", a)
		}
		if _, ok := a["db.namespace"]; ok {
			t.Error("db.namespace for an empty CURRENT_SCHEMA")
		}
		for _, kv := range sp.Attributes {
			if kv.Key != "db.query.text" && strings.Contains(kv.Value.String(), "bob") {
				t.Errorf("%s leaks a literal: %s", kv.Key, kv.Value.String())
			}
		}
	}
}

// TestHistoryRootStageAndWaits: a stage outside any statement is a root
// span with its waits; a wait outside any stage or statement is no span.
func TestHistoryRootStageAndWaits(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/worker", w.in)
	w.cache.LockCtx(ctx) // in nothing
	w.cache.Unlock()
	w.parsing.Start(ctx)
	w.pool.LockCtx(ctx)
	w.pool.Unlock()
	instrument.EndStage(ctx)
	th.End()
	spans := read(t, h)
	if len(spans) != 1 || spans[0].Name != "stage/app/parsing" || spans[0].Parent.IsValid() {
		t.Fatalf("spans: %+v", spans)
	}
	if ev := spans[0].Events; len(ev) != 1 || ev[0].Name != "wait/synch/mutex/app/pool" {
		t.Errorf("events %+v", ev)
	}
	if st := h.Stats(); st.Orphans != 0 || st.Pending != 0 || st.Lost != 0 {
		t.Errorf("stats %v", st)
	}
}

// TestHistoryLost: when the waits ring overwrites rows between two Reads,
// the gaps in the thread's EVENT_IDs count as lost (at the Read after the
// one that saw the later ids), and the statement is sent with the waits
// that remain.
func TestHistoryLost(t *testing.T) {
	w := newSpanWorld(t, pfscore.WithWaitsHistoryLongSize(4))
	h := w.history()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/worker", w.in)
	defer th.End()
	run := func(waits int) {
		req := w.requests.Start(ctx, "JOB")
		for range waits {
			w.cache.LockCtx(ctx)
			w.cache.Unlock()
		}
		req.End(instrument.StatementResult{})
	}
	run(2)
	if spans := read(t, h); len(spans) != 1 || len(spans[0].Events) != 2 {
		t.Fatalf("first: %+v", spans)
	}
	run(10) // 6 of its waits are overwritten
	spans := read(t, h)
	if len(spans) != 1 || len(spans[0].Events) != 4 {
		t.Fatalf("second: %+v", spans)
	}
	read(t, h)
	if st := h.Stats(); st.Lost != 6 || st.Orphans != 0 {
		t.Errorf("stats %v, want 6 lost", st)
	}
	// Accounting is off when an event can get an id and no history_long
	// row: the waits' history_long consumer off, its current one on.
	if _, err := w.s.UpdateConsumers("events_waits_history_long", false); err != nil {
		t.Fatal(err)
	}
	run(5)
	read(t, h)
	read(t, h)
	if st := h.Stats(); st.Lost != 6 {
		t.Errorf("lost %d with waits_history_long off, want still 6", st.Lost)
	}
}

// TestHistoryOrphans: waits whose statement the ring lost are dropped and
// counted after two Reads; a stage whose statement is lost is sent as a
// root span marked pfs.orphan.
func TestHistoryOrphans(t *testing.T) {
	w := newSpanWorld(t, pfscore.WithStatementsHistoryLongSize(1))
	h := w.history()
	ctx, th := instrument.StartThread(context.Background(), "thread/app/worker", w.in)
	defer th.End()
	a := w.requests.Start(ctx, "A")
	w.parsing.Start(ctx)
	w.cache.LockCtx(ctx)
	w.cache.Unlock()
	instrument.EndStage(ctx)
	w.pool.LockCtx(ctx) // in A, outside the stage
	w.pool.Unlock()
	a.End(instrument.StatementResult{})
	b := w.requests.Start(ctx, "GET /b") // overwrites A in the ring of 1
	b.End(instrument.StatementResult{})

	m := byName(t, read(t, h))
	if len(m) != 1 || m["GET /b"].Name != "GET /b" {
		t.Fatalf("first read: %v", m)
	}
	m = byName(t, read(t, h))
	st := m["stage/app/parsing"]
	if len(m) != 1 || st.Parent.IsValid() || !attrs(st.Attributes)["pfs.orphan"].AsBool() ||
		len(st.Events) != 1 {
		t.Fatalf("second read: %+v", m)
	}
	s := h.Stats()
	if s.Orphans != 2 || s.Pending != 0 { // the stage, the pool wait
		t.Errorf("stats %v, want 2 orphans", s)
	}
	read(t, h)
	if s := h.Stats(); s.Lost != 1 { // A
		t.Errorf("lost %d, want 1", s.Lost)
	}
}

func TestHistoryMaxPending(t *testing.T) {
	w := newSpanWorld(t)
	h := w.history(bridge.WithMaxPending(2))
	ctx, th := instrument.StartThread(context.Background(), "thread/app/worker", w.in)
	defer th.End()
	req := w.requests.Start(ctx, "LONG")
	for range 5 {
		w.cache.LockCtx(ctx)
		w.cache.Unlock()
	}
	read(t, h)
	if s := h.Stats(); s.Dropped != 3 || s.Pending != 2 {
		t.Errorf("stats %v, want 3 dropped, 2 pending", s)
	}
	req.End(instrument.StatementResult{})
	spans := read(t, h)
	if len(spans) != 1 || len(spans[0].Events) != 2 {
		t.Fatalf("spans %+v", spans)
	}
}

// hidden hides the *Schema behind the Tables interface, so History reads
// it through Query.
type hidden struct{ pfscore.Tables }

// TestHistoryThroughTables: over the generic Tables, History makes the same
// spans as over the *Schema.
func TestHistoryThroughTables(t *testing.T) {
	w := newSpanWorld(t)
	direct := w.history()
	generic, err := bridge.NewHistory(hidden{w.s})
	if err != nil {
		t.Fatal(err)
	}
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	for range 3 {
		w.request(ctx)
	}
	f := instrument.NewFileClass("wait/io/file/app/data", w.in)
	req := w.requests.Start(ctx, "FILE")
	file, err := f.CreateCtx(ctx, t.TempDir()+"/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.ForCtx(ctx).Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	_ = file.ForCtx(ctx).Close()
	req.End(instrument.StatementResult{})
	th.End()
	a, b := read(t, direct), read(t, generic)
	if len(a) != 13 || len(a) != len(b) {
		t.Fatalf("direct %d spans, generic %d; want 13", len(a), len(b))
	}
	key := func(s bridge.Span) string { return s.SpanID.String() }
	slices.SortFunc(a, func(x, y bridge.Span) int { return strings.Compare(key(x), key(y)) })
	slices.SortFunc(b, func(x, y bridge.Span) int { return strings.Compare(key(x), key(y)) })
	for i := range a {
		if fmt.Sprint(a[i]) != fmt.Sprint(b[i]) {
			t.Errorf("span %d differs:\n direct  %+v\n generic %+v", i, a[i], b[i])
		}
	}
	var bytes bool
	for _, sp := range a {
		for _, ev := range sp.Events {
			if v, ok := attrs(ev.Attributes)["pfs.number_of_bytes"]; ok && v.AsInt64() == 5 &&
				attrs(ev.Attributes)["pfs.operation"].AsString() == "write" &&
				strings.HasSuffix(attrs(ev.Attributes)["pfs.object_name"].AsString(), "/x") {
				bytes = true
			}
		}
	}
	if !bytes {
		t.Error("no file write event with 5 bytes and its object name")
	}
}

func TestNewHistoryErrors(t *testing.T) {
	if _, err := bridge.NewHistory(nil); err == nil {
		t.Error("NewHistory(nil): no error")
	}
	if _, err := bridge.NewHistory(failing{}); err == nil {
		t.Error("NewHistory over failing tables: no error")
	}
}

// failing is Tables whose every query fails.
type failing struct{ pfscore.Tables }

func (failing) Query(string, pfscore.Query) (*pfscore.Result, error) {
	return nil, fmt.Errorf("down")
}

// TestHistoryUntimed: events of untimed (COUNTED) instruments take the
// time of the Read, or their parent's start, and say pfs.timed=false.
func TestHistoryUntimed(t *testing.T) {
	w := newSpanWorld(t, pfscore.WithInstrument("statement/%=COUNTED"),
		pfscore.WithInstrument("stage/%=COUNTED"), pfscore.WithInstrument("wait/%=COUNTED"))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h := w.history(bridge.WithHistoryClock(func() time.Time { return at }))
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	w.request(ctx)
	th.End()
	spans := read(t, h)
	if len(spans) != 4 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, sp := range spans {
		if !sp.Start.Equal(at) || !sp.End.Equal(at) || attrs(sp.Attributes)["pfs.timed"].AsBool() ||
			attrs(sp.Attributes)["pfs.timed"].Type() != attribute.BOOL {
			t.Errorf("%s: [%v, %v] %v", sp.Name, sp.Start, sp.End, sp.Attributes)
		}
		for _, ev := range sp.Events {
			if _, ok := attrs(ev.Attributes)["pfs.duration"]; ok || !ev.Time.Equal(at) {
				t.Errorf("%s: untimed wait at %v with %v", sp.Name, ev.Time, ev.Attributes)
			}
		}
	}
}
