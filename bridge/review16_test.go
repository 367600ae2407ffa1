package bridge

// Review 16: adversarial reproducers for the Producer. Each test says
// FAILS (a bug on the current code, with its root cause) or PASSES (a claim
// attacked without finding a bug, kept for coverage).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// ---- harness ----

type r16 struct {
	t  *testing.T
	s  *pfscore.Schema
	p  *Producer
	r  *sdkmetric.ManualReader
	tb pfscore.Tables
}

type r16clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *r16clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newR16(t *testing.T, schemaOpts []pfscore.Option, wrap func(pfscore.Tables) pfscore.Tables, opts ...Option) *r16 {
	t.Helper()
	s, err := pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment()}, schemaOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var tb pfscore.Tables = s
	if wrap != nil {
		tb = wrap(s)
	}
	c := &r16clock{t: time.Unix(1_700_000_000, 0)}
	p, err := NewProducer(tb, append([]Option{withClock(c.now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &r16{t: t, s: s, p: p, r: r, tb: tb}
}

// collect returns the bridge's metrics by name and the collection's error.
func (h *r16) collectErr() (map[string]metricdata.Metrics, error) {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	err := h.r.Collect(context.Background(), &rm)
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				h.t.Fatalf("metric %s twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out, err
}

func (h *r16) collect() map[string]metricdata.Metrics {
	h.t.Helper()
	ms, err := h.collectErr()
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}

// point is one exported data point, generic over int64/float64.
type r16point struct {
	attrs       attribute.Set
	start, time time.Time
	value       float64
	sum         bool
}

func r16points(m metricdata.Metrics) []r16point {
	var out []r16point
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, r16point{p.Attributes, p.StartTime, p.Time, float64(p.Value), true})
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, r16point{p.Attributes, p.StartTime, p.Time, p.Value, true})
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, r16point{p.Attributes, p.StartTime, p.Time, float64(p.Value), false})
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, r16point{p.Attributes, p.StartTime, p.Time, p.Value, false})
		}
	}
	return out
}

func r16key(name string, a attribute.Set) string {
	return name + "|" + a.Encoded(attribute.DefaultEncoder())
}

// monotone checks, across collections, that no cumulative series exports a
// value lower than an earlier one under the same StartTime, that a
// StartTime never goes back, and that no metric has two points with one
// attribute set.
type r16monotone struct {
	t    *testing.T
	last map[string]r16point
}

func (mc *r16monotone) check(ms map[string]metricdata.Metrics, when string) {
	mc.t.Helper()
	if mc.last == nil {
		mc.last = map[string]r16point{}
	}
	for name, m := range ms {
		seen := map[string]bool{}
		for _, p := range r16points(m) {
			k := r16key(name, p.attrs)
			if seen[k] {
				mc.t.Errorf("%s: %s: two points with attributes %v", when, name, p.attrs.ToSlice())
			}
			seen[k] = true
			if !p.sum {
				continue
			}
			if p.start.After(p.time) {
				mc.t.Errorf("%s: %s %v: StartTime %v after Time %v", when, name, p.attrs.ToSlice(), p.start, p.time)
			}
			if prev, ok := mc.last[k]; ok {
				if p.start.Equal(prev.start) && p.value < prev.value {
					mc.t.Errorf("%s: %s %v: %v after %v under the same StartTime %v", when, name, p.attrs.ToSlice(), p.value, prev.value, p.start)
				}
				if p.start.Before(prev.start) {
					mc.t.Errorf("%s: %s %v: StartTime went back %v -> %v", when, name, p.attrs.ToSlice(), prev.start, p.start)
				}
			}
			mc.last[k] = p
		}
	}
}

func r16wait(m *pfscore.SyncInstance, t *pfscore.Thread) {
	var w pfscore.WaitState
	if m.BeginWait(&w, t, pfscore.OpLock) {
		w.EndWait(-1)
	}
}

// stmt runs one statement of text lasting about d.
func r16stmt(s *pfscore.Schema, th *pfscore.Thread, schema, text string, d uint64) {
	st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Schema: schema})
	st.EndAt(st.Start()+d, pfscore.StatementResult{RowsSent: 1})
}

// workload runs a bit of everything, with actors that have empty users or
// hosts, two instances of one class, an ended thread, memory freed on
// another thread, and more digests than the table holds. It returns a
// function that destroys the instances and ends the threads it left alive.
func r16workload(s *pfscore.Schema, round int) (done func()) {
	cls := func(n string) *pfscore.Class { return s.MustRegister(n) }
	m1 := s.NewSyncInstance(cls("wait/synch/mutex/app/cache"), "a.go:1")
	m2 := s.NewSyncInstance(cls("wait/synch/mutex/app/cache"), "a.go:1")
	mem := s.MustRegister("memory/app/buf", pfscore.WithDefault(true, false))
	stage := cls("stage/app/working")
	ths := []*pfscore.Thread{
		s.NewThread(cls("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"}),
		s.NewThread(cls("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: ""}),
		s.NewThread(cls("thread/app/worker"), pfscore.ThreadOptions{User: "", Host: "h"}),
		s.NewThread(cls("thread/app/bg"), pfscore.ThreadOptions{}),
		nil,
	}
	var owners []pfscore.MemoryOwner
	for i, th := range ths {
		r16wait(m1, th)
		r16wait(m2, th)
		if th != nil {
			th.StartStage(stage, "x.go:1")
			th.EndStage()
		}
		tx := s.StartTransaction(th, pfscore.TransactionInfo{ReadOnly: i%2 == 0})
		r16stmt(s, th, "", "", 1000)
		r16stmt(s, th, "shop", fmt.Sprintf("SELECT %d FROM t%d", i, round), 1000)
		r16stmt(s, th, "", fmt.Sprintf("SELECT x FROM t%d", i), 1000)
		tx.End(true)
		owners = append(owners, s.MemoryAlloc(th, mem, 100))
	}
	for _, o := range owners[:2] {
		s.MemoryFree(mem, 100, o)
	}
	f := s.FileInstance(cls("wait/io/file/app/data"), "/tmp/x.dat", "f.go:1")
	var w pfscore.WaitState
	if f.BeginWait(&w, ths[0], pfscore.OpFileRead) {
		w.EndWait(10)
	}
	so := s.NewSocketInstance(cls("wait/io/socket/app/conn"), "tcp", "127.0.0.1:1", "s.go:1")
	if so.BeginWait(&w, ths[0], pfscore.OpSocketRecv) {
		w.EndWait(10)
	}
	ths[1].End()
	// done ends what the workload left alive, for a caller that runs it in
	// a loop: a full container makes the next round's New* return nil.
	return func() {
		m1.Destroy()
		m2.Destroy()
		so.Destroy()
		for _, th := range ths {
			if th != nil && th != ths[1] {
				th.End()
			}
		}
	}
}

// ---- claim 1: data types, coverage, attribute sets ----

// PASSES: after a workload with NULL dimensions (the digest NULL row,
// accounts with an empty user or host, background threads), two instances
// of one class, the memory built-in rows and global_status, no metric has
// two points with the same attribute set, every non-zero row of every table
// is exported with its exact values, counters/timers are cumulative
// monotonic sums and the rest gauges.
func TestReview16EveryRowExactlyOnce(t *testing.T) {
	h := newR16(t, []pfscore.Option{pfscore.WithDigestsSize(4)}, nil)
	for round := range 2 {
		r16workload(h.s, round)
	}
	ms := h.collect()
	var mc r16monotone
	mc.t = t
	mc.check(ms, "collection 1")
	checkRowsExported(t, h, ms)
	if err := h.s.Truncate("memory_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	ms = h.collect()
	mc.check(ms, "after TRUNCATE memory")
	checkRowsExported(t, h, ms)
}

// checkRowsExported checks every plan's rows against the export: every row
// with a non-zero counter or timer, and every gauge of such a row, is a
// point with the row's attributes and value (digests: all are in the top N
// here).
func checkRowsExported(t *testing.T, h *r16, ms map[string]metricdata.Metrics) {
	t.Helper()
	for _, tp := range h.p.plans {
		res, err := h.s.Query(tp.table, pfscore.Query{})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			var kvs []attribute.KeyValue
			for i, c := range tp.attrs {
				switch v := row[c].(type) {
				case string:
					kvs = append(kvs, tp.keys[i].String(v))
				case uint64:
					kvs = append(kvs, tp.keys[i].Int64(int64(v)))
				case int64:
					kvs = append(kvs, tp.keys[i].Int64(v))
				}
			}
			set := attribute.NewSet(kvs...)
			if r16goRuntime(row) {
				continue // live Go runtime figures: they move between the collection and this read
			}
			anyNonZero := false
			for _, m := range tp.measures {
				if v, ok := row[m.col].(uint64); ok && v != 0 {
					anyNonZero = true
				}
				if v, ok := row[m.col].(int64); ok && v != 0 {
					anyNonZero = true
				}
			}
			if !anyNonZero {
				continue
			}
			for _, m := range tp.measures {
				if row[m.col] == nil {
					continue
				}
				want := float64(asInt(row[m.col]))
				if m.kind == sumSeconds || m.kind == gaugeSeconds {
					want = Seconds(asUint(row[m.col]))
				}
				found := false
				for _, p := range r16points(ms[m.name]) {
					// The row's dimensions: a digest's series also carries
					// its conventions' attributes (semconv.go).
					dims, _ := p.attrs.Filter(func(kv attribute.KeyValue) bool { return slices.Contains(tp.keys, kv.Key) })
					if dims.Equals(&set) {
						found = true
						if p.value != want {
							t.Errorf("%s %v: %v, table %v", m.name, set.ToSlice(), p.value, want)
						}
						isSum := m.role == pfscore.RoleCounter || m.role == pfscore.RoleTimer
						if p.sum != isSum {
							t.Errorf("%s: sum %v for role %v", m.name, p.sum, m.role)
						}
					}
				}
				if !found {
					t.Errorf("%s (%s) %v: row with a non-zero measure not exported (%s = %v)", tp.table, m.name, set.ToSlice(), tp.columns[m.col].Name, row[m.col])
				}
			}
		}
	}
}

// ---- claim 2: TRUNCATE, cascades, rows that go and come back ----

// PASSES: TRUNCATE of every truncatable exported table in turn (cascades
// included), with work before and after, never exports a value below an
// earlier one under the same StartTime.
func TestReview16TruncateEverything(t *testing.T) {
	h := newR16(t, []pfscore.Option{pfscore.WithDigestsSize(4)}, nil, WithTopDigests(2))
	var mc r16monotone
	mc.t = t
	r16workload(h.s, 0)
	r16workload(h.s, 1)
	mc.check(h.collect(), "start")
	for i, table := range h.p.Tables() {
		if !h.s.Truncatable(table) {
			continue
		}
		r16workload(h.s, i%3)
		mc.check(h.collect(), "before "+table)
		if err := h.s.Truncate(table); err != nil {
			t.Fatal(err)
		}
		r16workload(h.s, 0) // less than before in the rows it touches
		mc.check(h.collect(), "after "+table)
	}
}

// failing wraps a Tables and fails one table's Query while fail is set.
type r16failing struct {
	pfscore.Tables
	table string
	fail  atomic.Bool
}

func (f *r16failing) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	if table == f.table && f.fail.Load() {
		return nil, errors.New("r16: injected read error")
	}
	return f.Tables.Query(table, q)
}

// FAILS (fixed since: a table not read keeps its series). One failed read
// of a table (claim 4, "partial data plus an error") made every series of that table restart at the next
// collection: its StartTime moves to the failed collection's time while
// its value still carries every event counted since the producer's start,
// so a backend sees a counter reset that never happened and, if it trusts
// StartTime (cumulativetodelta's initial_value auto, Prometheus created
// timestamps), counts the whole history again as made after the failure.
//
// Root cause: producer.go:149-170, the forget loop after the tables are
// read drops every series whose gen is not this collection's, including
// those of a table whose Query failed (producer.go:138-142 (and the ctx break at 134-137) `continue`s
// without marking them), and the next sight makes a new series with
// start: p.freshStart() (producer.go:326-327).
func TestReview16FailedReadRestartsSeries(t *testing.T) {
	const table = "events_waits_summary_global_by_event_name"
	var f *r16failing
	h := newR16(t, nil, func(t pfscore.Tables) pfscore.Tables {
		f = &r16failing{Tables: t, table: table}
		return f
	})
	m := h.s.NewSyncInstance(h.s.MustRegister("wait/synch/mutex/app/cache"), "a.go:1")
	for range 5 {
		r16wait(m, nil)
	}
	const ev = "wait/synch/mutex/app/cache"
	find := func(ms map[string]metricdata.Metrics) (r16point, bool) {
		for _, p := range r16points(ms["pfs.events_waits.count"]) {
			if v, _ := p.attrs.Value("pfs.event_name"); v.AsString() == ev {
				return p, true
			}
		}
		return r16point{}, false
	}
	first, ok := find(h.collect())
	if !ok || first.value != 5 {
		t.Fatalf("first: %+v", first)
	}
	f.fail.Store(true)
	ms, err := h.collectErr()
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("no error from the failed table: %v", err)
	}
	if len(ms) == 0 {
		t.Fatalf("no partial data")
	}
	if _, ok := ms["pfs.events_waits.count"]; ok {
		t.Fatalf("the failed table exported")
	}
	f.fail.Store(false)
	third, ok := find(h.collect())
	if !ok {
		t.Fatal("not exported after the failure")
	}
	if third.value != 5 {
		t.Fatalf("value %v", third.value)
	}
	if !third.start.Equal(first.start) {
		t.Errorf("a read error restarted the series: StartTime %v -> %v with the same value %v (nothing was reset)", first.start, third.start, third.value)
	}
}

// FAILS (fixed since: the overflow series counts its members' increases, a
// returning digest restarts with an offset): a digest that leaves the top N and returns is exported again
// with StartTime = the previous collection, yet its value counts every
// statement since the digest appeared. The doc's promise ("a row first
// seen later starts at the previous collection, which did not see it or
// saw it at zero, so everything it counts came after") does not hold for
// it: the previous collection saw it, non-zero, in the overflow series.
// The same holds for the overflow series itself: a change of membership
// gives it StartTime = the previous collection and a value that is the
// digests' whole history.
//
// Root cause: producer.go:149-170 forgets a digest's series when topN
// (producer.go:365-375) moves it to rest; row() then makes a new one with
// start: p.freshStart() (producer.go:326-327). overflow() restarts with
// p.freshStart() on a mark change (producer.go:441-442).
func TestReview16DigestReturnStartTime(t *testing.T) {
	h := newR16(t, nil, nil, WithTopDigests(1))
	th := h.s.NewThread(h.s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	const a, b = "SELECT a FROM t", "SELECT b FROM t"
	digestOf := func(ms map[string]metricdata.Metrics, text string) (r16point, bool) {
		for _, p := range r16points(ms["pfs.events_statements.by_digest.count"]) {
			v, _ := p.attrs.Value("pfs.digest_text")
			if r16norm(v.AsString()) == r16norm(text) {
				return p, true
			}
		}
		return r16point{}, false
	}
	for range 10 {
		r16stmt(h.s, th, "shop", a, 1e9)
	}
	r16stmt(h.s, th, "shop", b, 1e9)
	ms := h.collect() // t1: a top, b overflow
	a1, ok := digestOf(ms, a)
	if !ok || a1.value != 10 {
		t.Fatalf("a at t1: %+v %v", a1, ok)
	}
	for range 30 {
		r16stmt(h.s, th, "shop", b, 1e9)
	}
	ms = h.collect() // t2: b top, a overflow
	if _, ok := digestOf(ms, a); ok {
		t.Fatal("a still in the top 1")
	}
	// Fixed since: the overflow series counts what its members add while
	// they are outside the top N, from its own StartTime on: a added
	// nothing since t1 (its 10 were exported under its own series), so the
	// overflow still holds b's one statement, under the StartTime it had.
	var t2 time.Time
	for _, p := range r16points(ms["pfs.events_statements.by_digest.count"]) {
		if v, _ := p.attrs.Value("otel.metric.overflow"); v.AsBool() {
			t2 = p.time
			if p.value != 1 || p.start.After(a1.start) {
				t.Errorf("overflow series at t2: value %v from %v; want b's 1 statement from %v", p.value, p.start, a1.start)
			}
		}
	}
	for range 40 {
		r16stmt(h.s, th, "shop", a, 1e9)
	}
	ms = h.collect() // t3: a top again: 50 statements, 10 of them exported before t1
	a3, ok := digestOf(ms, a)
	// Back in the top N, a restarts from the previous collection with what
	// it counted since: 40 from t2 (what it added while outside was the
	// overflow series', so nothing counts twice).
	if !ok || a3.value != 40 || !a3.start.Equal(t2) {
		t.Errorf("digest back in the top N: %+v; want 40 from %v", a3, t2)
	}
}

// ---- claim 3: digests top N and the overflow series ----

// PASSES (its expectation restated with the fix of the digests' StartTime):
// over collections in which digests move in and out of the top N, the
// exported series' increases since the previous collection (a restarted
// series: its whole value) add up to the table's, and no series (overflow
// included) decreases under one StartTime.
func TestReview16OverflowAddsUp(t *testing.T) {
	const top = 3
	h := newR16(t, nil, nil, WithTopDigests(top))
	th := h.s.NewThread(h.s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	var mc r16monotone
	mc.t = t
	type key struct {
		name  string
		attrs attribute.Distinct
	}
	prev := map[key]r16point{}
	var prevCount, prevTime uint64
	for round := range 12 {
		for i := range 8 {
			n := (i*7 + round*3) % 5
			for range n {
				r16stmt(h.s, th, "shop", fmt.Sprintf("SELECT c%d FROM t", i), uint64(1e6*(1+(i+round)%4)))
			}
		}
		if round == 6 {
			if err := h.s.Truncate("events_statements_summary_by_digest"); err != nil {
				t.Fatal(err)
			}
			r16stmt(h.s, th, "shop", "SELECT c1 FROM t", 1e6)
		}
		ms := h.collect()
		mc.check(ms, fmt.Sprint("round ", round))
		res, _ := h.s.Query("events_statements_summary_by_digest", pfscore.Query{})
		var count, tm uint64
		ci, ti := -1, -1
		for i, c := range res.Columns {
			switch c.Name {
			case "COUNT_STAR":
				ci = i
			case "SUM_TIMER_WAIT":
				ti = i
			}
		}
		for _, r := range res.Rows {
			count += r[ci].(uint64)
			tm += r[ti].(uint64)
		}
		var gotCount, gotTime float64
		nover := 0
		increase := func(name string, p r16point) float64 {
			k := key{name, p.attrs.Equivalent()}
			q, ok := prev[k]
			prev[k] = p
			if ok && q.start.Equal(p.start) {
				return p.value - q.value
			}
			return p.value
		}
		for _, p := range r16points(ms["pfs.events_statements.by_digest.count"]) {
			gotCount += increase("count", p)
			if v, _ := p.attrs.Value("otel.metric.overflow"); v.AsBool() {
				nover++
			}
		}
		for _, p := range r16points(ms["pfs.events_statements.by_digest.time"]) {
			gotTime += increase("time", p)
		}
		if round != 6 { // the TRUNCATE's round: the table went down
			wantCount, wantTime := float64(count-prevCount), Seconds(tm-prevTime)
			if gotCount != wantCount || math.Abs(gotTime-wantTime) > 1e-9*wantTime+1e-12 {
				t.Errorf("round %d: exported increases %v/%v, table's %v/%v", round, gotCount, gotTime, wantCount, wantTime)
			}
		}
		prevCount, prevTime = count, tm
		if len(res.Rows) > top && nover != 1 {
			t.Errorf("round %d: %d overflow series for %d rows", round, nover, len(res.Rows))
		}
	}
}

// ---- claim 4: concurrency ----

// PASSES (under -race): collections from several goroutines, through the
// reader and Produce directly, while a workload runs and TRUNCATEs happen.
func TestReview16Concurrent(t *testing.T) {
	h := newR16(t, []pfscore.Option{pfscore.WithDigestsSize(4)}, nil, WithTopDigests(2))
	deadline := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(deadline); i++ {
			r16workload(h.s, i%5)() // bounded: a fast machine runs many rounds
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tables := h.p.Tables()
		for i := 0; time.Now().Before(deadline); i++ {
			if tb := tables[i%len(tables)]; h.s.Truncatable(tb) {
				_ = h.s.Truncate(tb)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				var rm metricdata.ResourceMetrics
				if err := h.r.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
					return
				}
				if _, err := h.p.Produce(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// PASSES: a cancelled context returns an error (and no panic).
func TestReview16CancelledContext(t *testing.T) {
	h := newR16(t, nil, nil)
	r16workload(h.s, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.p.Produce(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

// ---- claim 5: names ----

// PASSES: every metric name is a valid OTel instrument name, and no two
// metrics collide after the Prometheus exporter's translation (dots to
// underscores, unit suffix, _total for monotonic sums), nor with a
// metric's _count/_sum/_bucket/_created series.
func TestReview16PrometheusNames(t *testing.T) {
	h := newR16(t, nil, nil)
	valid := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_./-]{0,254}$`)
	prom := map[string]string{}
	var all []string
	for _, tp := range h.p.plans {
		for _, m := range tp.measures {
			if !valid.MatchString(m.name) {
				t.Errorf("invalid instrument name %q", m.name)
			}
			n := strings.ReplaceAll(m.name, ".", "_")
			switch m.unit {
			case "s":
				n += "_seconds"
			case "By":
				n += "_bytes"
			}
			if m.kind == sumInt || m.kind == sumSeconds {
				n += "_total"
			}
			if prev, dup := prom[n]; dup {
				t.Errorf("Prometheus name %s from %s and %s", n, prev, m.name)
			}
			prom[n] = m.name
			all = append(all, n)
		}
	}
	sort.Strings(all)
	for _, n := range all {
		for _, suf := range []string{"_created"} {
			if other, ok := prom[strings.TrimSuffix(n, "_total")+suf]; ok {
				t.Errorf("%s collides with %s's %s series", other, n, suf)
			}
		}
	}
}

// r16norm compares a DIGEST_TEXT with the statement text it came from.
func r16norm(s string) string {
	return strings.ToLower(strings.NewReplacer("`", "", " ", "").Replace(s))
}

func r16goRuntime(row pfscore.Row) bool {
	for _, v := range row {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "memory/go/") {
			return true
		}
	}
	return false
}
