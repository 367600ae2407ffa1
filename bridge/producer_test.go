package bridge_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
)

// harness is a schema, a producer over it, and a ManualReader that
// collects through a MeterProvider, as a service wires them.
type harness struct {
	t *testing.T
	s *pfscore.Schema
	p *bridge.Producer
	r *sdkmetric.ManualReader
}

func newHarness(t *testing.T, schemaOpts []pfscore.Option, opts ...bridge.Option) *harness {
	t.Helper()
	s, err := pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment()}, schemaOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Every table the bridge can export, unless the test says otherwise:
	// the tests of the naming, the sums and the views read tables the
	// default export leaves out (TestDefaultExportIsBounded tests that).
	opts = append([]bridge.Option{bridge.WithTables(bridge.AllTables)}, opts...)
	p, err := bridge.NewProducer(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &harness{t: t, s: s, p: p, r: r}
}

// collect returns the bridge's metrics by name.
func (h *harness) collect() map[string]metricdata.Metrics {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.r.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != bridge.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				h.t.Fatalf("metric %s twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out
}

// rows returns a table's rows as maps from column name to value.
func (h *harness) rows(table string, where ...string) []map[string]pfscore.Value {
	h.t.Helper()
	res, err := h.s.Query(table, pfscore.Query{Where: where})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []map[string]pfscore.Value
	for _, r := range res.Rows {
		m := map[string]pfscore.Value{}
		for i, c := range res.Columns {
			m[c.Name] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func wait(m *pfscore.SyncInstance, t *pfscore.Thread) {
	var w pfscore.WaitState
	if m.BeginWait(&w, t, pfscore.OpLock) {
		w.EndWait(-1)
	}
}

func attrString(set attribute.Set, k attribute.Key) string {
	v, ok := set.Value(k)
	if !ok {
		return ""
	}
	return v.String()
}

// point returns the data point of metric m whose attribute k is v.
func sumPoint[N int64 | float64](t *testing.T, m metricdata.Metrics, k attribute.Key, v string) metricdata.DataPoint[N] {
	t.Helper()
	d, ok := m.Data.(metricdata.Sum[N])
	if !ok {
		t.Fatalf("%s: %T, want a Sum", m.Name, m.Data)
	}
	if d.Temporality != metricdata.CumulativeTemporality || !d.IsMonotonic {
		t.Fatalf("%s: temporality %v monotonic %v, want cumulative monotonic", m.Name, d.Temporality, d.IsMonotonic)
	}
	for _, p := range d.DataPoints {
		if attrString(p.Attributes, k) == v {
			return p
		}
	}
	t.Fatalf("%s: no point with %s=%s", m.Name, k, v)
	return metricdata.DataPoint[N]{}
}

func gaugePoint[N int64 | float64](t *testing.T, m metricdata.Metrics, k attribute.Key, v string) metricdata.DataPoint[N] {
	t.Helper()
	d, ok := m.Data.(metricdata.Gauge[N])
	if !ok {
		t.Fatalf("%s: %T, want a Gauge", m.Name, m.Data)
	}
	for _, p := range d.DataPoints {
		if attrString(p.Attributes, k) == v {
			return p
		}
	}
	t.Fatalf("%s: no point with %s=%s", m.Name, k, v)
	return metricdata.DataPoint[N]{}
}

func TestWaitsGlobal(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	cache := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	queue := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/queue"), "queue.go:1")
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "app", Host: "localhost"})
	defer th.End()
	for range 3 {
		wait(cache, th)
	}
	wait(queue, th)

	ms := h.collect()
	rows := h.rows("events_waits_summary_global_by_event_name", "EVENT_NAME LIKE 'wait/synch/mutex/app/%'")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	count, ok := ms["pfs.events_waits.count"]
	if !ok {
		t.Fatal("no pfs.events_waits.count")
	}
	if count.Unit != "{event}" {
		t.Errorf("count unit %q", count.Unit)
	}
	tm := ms["pfs.events_waits.time"]
	if tm.Unit != "s" {
		t.Errorf("time unit %q", tm.Unit)
	}
	for _, r := range rows {
		name := r["EVENT_NAME"].(string)
		c := sumPoint[int64](t, count, "pfs.event_name", name)
		if uint64(c.Value) != r["COUNT_STAR"].(uint64) {
			t.Errorf("%s: count %d, table %d", name, c.Value, r["COUNT_STAR"])
		}
		if c.Attributes.Len() != 1 {
			t.Errorf("%s: attributes %v, want pfs.event_name alone", name, c.Attributes.ToSlice())
		}
		if !c.StartTime.Before(c.Time) && !c.StartTime.Equal(c.Time) {
			t.Errorf("StartTime %v after Time %v", c.StartTime, c.Time)
		}
		tp := sumPoint[float64](t, tm, "pfs.event_name", name)
		if tp.Value != bridge.Seconds(r["SUM_TIMER_WAIT"].(uint64)) {
			t.Errorf("%s: time %v, table %v ps", name, tp.Value, r["SUM_TIMER_WAIT"])
		}
		if _, ok := ms["pfs.events_waits.time.avg"]; ok {
			t.Error("AVG_TIMER_WAIT exported: the sums give it")
		}
		for _, g := range []string{"min", "max"} {
			m := ms["pfs.events_waits.time."+g]
			gp := gaugePoint[float64](t, m, "pfs.event_name", name)
			col := strings.ToUpper(g) + "_TIMER_WAIT"
			if gp.Value != bridge.Seconds(r[col].(uint64)) {
				t.Errorf("%s %s: %v, table %v", name, g, gp.Value, r[col])
			}
			if m.Unit != "s" {
				t.Errorf("%s unit %q", m.Name, m.Unit)
			}
		}
	}
	// Rows with nothing counted are left out.
	for _, p := range count.Data.(metricdata.Sum[int64]).DataPoints {
		if p.Value == 0 {
			t.Errorf("a zero row exported: %v", p.Attributes.ToSlice())
		}
	}
}

func TestWaitsByActor(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	a := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "alice", Host: "h1"})
	b := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "bob", Host: "h2"})
	defer a.End()
	defer b.End()
	wait(m, a)
	wait(m, a)
	wait(m, b)
	ms := h.collect()

	const ev = "wait/synch/mutex/app/cache"
	byThread := ms["pfs.events_waits.by_thread.count"]
	for _, th := range []*pfscore.Thread{a, b} {
		id := fmt.Sprint(th.ID())
		rows := h.rows("events_waits_summary_by_thread_by_event_name", "THREAD_ID = "+id, "EVENT_NAME = '"+ev+"'")
		var found bool
		for _, p := range byThread.Data.(metricdata.Sum[int64]).DataPoints {
			if attrString(p.Attributes, "thread.id") == id && attrString(p.Attributes, "pfs.event_name") == ev {
				found = true
				if uint64(p.Value) != rows[0]["COUNT_STAR"].(uint64) {
					t.Errorf("thread %s: %d, table %v", id, p.Value, rows[0]["COUNT_STAR"])
				}
			}
		}
		if !found {
			t.Errorf("thread %s: no point", id)
		}
	}
	acct := ms["pfs.events_waits.by_account.count"]
	want := attribute.NewSet(attribute.String("pfs.event_name", ev), attribute.String("pfs.host", "h1"), attribute.String("pfs.user", "alice"))
	var got int64 = -1
	for _, p := range acct.Data.(metricdata.Sum[int64]).DataPoints {
		if p.Attributes.Equals(&want) {
			got = p.Value
		}
	}
	if got != 2 {
		t.Errorf("alice@h1: %d, want 2", got)
	}
	user := sumPoint[int64](t, ms["pfs.events_waits.by_user.count"], "pfs.user", "bob")
	if user.Value != 1 {
		t.Errorf("bob: %d", user.Value)
	}
	if host := sumPoint[int64](t, ms["pfs.events_waits.by_host.count"], "pfs.host", "h2"); host.Value != 1 {
		t.Errorf("h2: %d", host.Value)
	}
	inst := ms["pfs.events_waits.by_instance.count"]
	p := sumPoint[int64](t, inst, "pfs.event_name", ev)
	if _, ok := p.Attributes.Value("pfs.object_instance"); !ok || p.Value != 3 {
		t.Errorf("by_instance: %v = %d", p.Attributes.ToSlice(), p.Value)
	}
}

// clock is a fake clock: each reading is one second after the previous.
type clock struct{ t time.Time }

func (c *clock) now() time.Time {
	c.t = c.t.Add(time.Second)
	return c.t
}

func TestMetricdata(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	start := c.t.Add(time.Second) // NewProducer's reading
	h := newHarness(t, nil, bridge.WithClock(c.now))
	s := h.s
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	for range 4 {
		wait(m, nil)
	}
	ms := h.collect()
	want := metricdata.Metrics{
		Name:        "pfs.events_waits.count",
		Description: "COUNT_STAR of performance_schema.events_waits_summary_global_by_event_name",
		Unit:        "{event}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{
				Attributes: attribute.NewSet(attribute.String("pfs.event_name", "wait/synch/mutex/app/cache")),
				StartTime:  start,
				Time:       start.Add(time.Second),
				Value:      4,
			}},
		},
	}
	metricdatatest.AssertEqual(t, want, ms["pfs.events_waits.count"])
}

func TestMonotoneAcrossCollections(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	const ev = "wait/synch/mutex/app/cache"
	var lastCount int64
	var lastTime float64
	var start time.Time
	for i := range 5 {
		for range i + 1 {
			wait(m, th)
		}
		ms := h.collect()
		c := sumPoint[int64](t, ms["pfs.events_waits.count"], "pfs.event_name", ev)
		tm := sumPoint[float64](t, ms["pfs.events_waits.time"], "pfs.event_name", ev)
		if c.Value < lastCount || tm.Value < lastTime {
			t.Fatalf("collection %d: count %d time %v after %d %v", i, c.Value, tm.Value, lastCount, lastTime)
		}
		if i > 0 && !c.StartTime.Equal(start) {
			t.Fatalf("collection %d: StartTime moved %v -> %v", i, start, c.StartTime)
		}
		row := h.rows("events_waits_summary_global_by_event_name", "EVENT_NAME = '"+ev+"'")[0]
		if uint64(c.Value) != row["COUNT_STAR"].(uint64) || tm.Value != bridge.Seconds(row["SUM_TIMER_WAIT"].(uint64)) {
			t.Fatalf("collection %d: %d %v, table %v %v", i, c.Value, tm.Value, row["COUNT_STAR"], row["SUM_TIMER_WAIT"])
		}
		lastCount, lastTime, start = c.Value, tm.Value, c.StartTime
	}
	if lastCount != 15 {
		t.Errorf("count %d, want 15", lastCount)
	}
}

func TestTruncateRestartsSums(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	h := newHarness(t, nil, bridge.WithClock(c.now))
	s := h.s
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	const ev = "wait/synch/mutex/app/cache"
	for range 5 {
		wait(m, th)
	}
	ms := h.collect()
	first := sumPoint[int64](t, ms["pfs.events_waits.count"], "pfs.event_name", ev)

	// Nothing since the TRUNCATE (which cascades to by_thread, by_account,
	// by_user and by_host, as MySQL's): the row is zero and left out.
	if err := s.Truncate("events_waits_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	ms = h.collect()
	if d, ok := ms["pfs.events_waits.count"]; ok {
		for _, p := range d.Data.(metricdata.Sum[int64]).DataPoints {
			if attrString(p.Attributes, "pfs.event_name") == ev {
				t.Fatalf("a truncated, zero row exported: %d", p.Value)
			}
		}
	}
	secondTime := first.Time.Add(time.Second) // the clock reads once per collection

	// Two waits after it: a new series, counting from the collection that
	// last saw the row at zero.
	wait(m, th)
	wait(m, th)
	ms = h.collect()
	third := sumPoint[int64](t, ms["pfs.events_waits.count"], "pfs.event_name", ev)
	if third.Value != 2 || !third.StartTime.Equal(secondTime) || !third.StartTime.After(first.StartTime) {
		t.Fatalf("after TRUNCATE: %d from %v, want 2 from %v", third.Value, third.StartTime, secondTime)
	}

	// A TRUNCATE between two collections that both see the row: the
	// decrease restarts the sums from the earlier collection.
	for range 3 {
		wait(m, th)
	}
	if err := s.Truncate("events_waits_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	wait(m, th)
	ms = h.collect()
	fourth := sumPoint[int64](t, ms["pfs.events_waits.count"], "pfs.event_name", ev)
	if fourth.Value != 1 || !fourth.StartTime.Equal(third.Time) {
		t.Fatalf("decrease: %d from %v, want 1 from %v", fourth.Value, fourth.StartTime, third.Time)
	}
	ms = h.collect()
	fifth := sumPoint[int64](t, ms["pfs.events_waits.count"], "pfs.event_name", ev)
	if !fifth.StartTime.Equal(fourth.StartTime) {
		t.Fatalf("StartTime moved without a reset: %v -> %v", fourth.StartTime, fifth.StartTime)
	}
}

func TestDigestsTopN(t *testing.T) {
	const top = 3
	h := newHarness(t, nil, bridge.WithTopDigests(top))
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	for i := range 10 {
		text := fmt.Sprintf("SELECT c%d FROM t WHERE id = %d", i, i)
		for range i + 1 {
			st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Schema: "shop"})
			st.End(pfscore.StatementResult{RowsSent: 1})
		}
	}
	ms := h.collect()
	rows := h.rows("events_statements_summary_by_digest")
	if len(rows) != 10 {
		t.Fatalf("%d digest rows", len(rows))
	}
	var tableCount, tableTime uint64
	for _, r := range rows {
		tableCount += r["COUNT_STAR"].(uint64)
		tableTime += r["SUM_TIMER_WAIT"].(uint64)
	}
	count := ms["pfs.events_statements.by_digest.count"].Data.(metricdata.Sum[int64])
	tm := ms["pfs.events_statements.by_digest.time"].Data.(metricdata.Sum[float64])
	if len(count.DataPoints) != top+1 || len(tm.DataPoints) != top+1 {
		t.Fatalf("%d and %d series, want %d and the overflow", len(count.DataPoints), len(tm.DataPoints), top)
	}
	var sumCount int64
	var sumTime float64
	others := 0
	for _, p := range count.DataPoints {
		sumCount += p.Value
		if attrString(p.Attributes, "pfs.digest_text") == bridge.Overflow {
			others++
			if v, _ := p.Attributes.Value("otel.metric.overflow"); !v.AsBool() {
				t.Errorf("overflow series without otel.metric.overflow: %v", p.Attributes.ToSlice())
			}
			continue
		}
		// A top digest: its attributes, and its values exactly the row's.
		for _, k := range []attribute.Key{"db.namespace", "pfs.digest", "pfs.digest_text"} {
			if _, ok := p.Attributes.Value(k); !ok {
				t.Errorf("digest series without %s: %v", k, p.Attributes.ToSlice())
			}
		}
		if ns := attrString(p.Attributes, "db.namespace"); ns != "shop" {
			t.Errorf("db.namespace %q", ns)
		}
		d := attrString(p.Attributes, "pfs.digest")
		r := h.rows("events_statements_summary_by_digest", "DIGEST = '"+d+"'")[0]
		if uint64(p.Value) != r["COUNT_STAR"].(uint64) {
			t.Errorf("digest %s: %d, table %v", d, p.Value, r["COUNT_STAR"])
		}
		tp := sumPoint[float64](t, ms["pfs.events_statements.by_digest.time"], "pfs.digest", d)
		if tp.Value != bridge.Seconds(r["SUM_TIMER_WAIT"].(uint64)) {
			t.Errorf("digest %s: time %v, table %v", d, tp.Value, r["SUM_TIMER_WAIT"])
		}
		if attrString(p.Attributes, "pfs.digest_text") != r["DIGEST_TEXT"].(string) {
			t.Errorf("pfs.digest_text %q, DIGEST_TEXT %q", attrString(p.Attributes, "pfs.digest_text"), r["DIGEST_TEXT"])
		}
	}
	for _, p := range tm.DataPoints {
		sumTime += p.Value
	}
	if others != 1 {
		t.Errorf("%d overflow series", others)
	}
	if uint64(sumCount) != tableCount {
		t.Errorf("exported counts add up to %d, table %d", sumCount, tableCount)
	}
	if want := bridge.Seconds(tableTime); math.Abs(sumTime-want) > 1e-9*want {
		t.Errorf("exported times add up to %v, table %v", sumTime, want)
	}
	// The top series are the N greatest SUM_TIMER_WAIT.
	topRows := h.rows("events_statements_summary_by_digest")
	var threshold uint64
	for _, p := range count.DataPoints {
		if attrString(p.Attributes, "pfs.digest_text") == bridge.Overflow {
			continue
		}
		r := h.rows("events_statements_summary_by_digest", "DIGEST = '"+attrString(p.Attributes, "pfs.digest")+"'")[0]
		if v := r["SUM_TIMER_WAIT"].(uint64); threshold == 0 || v < threshold {
			threshold = v
		}
	}
	below := 0
	for _, r := range topRows {
		if r["SUM_TIMER_WAIT"].(uint64) < threshold {
			below++
		}
	}
	if below < len(topRows)-top {
		t.Errorf("top-N is not by SUM_TIMER_WAIT: %d rows below the least exported", below)
	}
	// The overflow series has MIN and MAX. No series has a quantile gauge:
	// the histogram carries the quantiles.
	gaugePoint[float64](t, ms["pfs.events_statements.by_digest.time.max"], "pfs.digest_text", bridge.Overflow)
	for _, q := range []string{"p95", "p99", "p999"} {
		if _, ok := ms["pfs.events_statements.by_digest.time."+q]; ok {
			t.Errorf("a quantile gauge %s beside the histogram", q)
		}
	}
	if _, ok := ms["pfs.events_statements.by_digest.duration"]; !ok {
		t.Error("no digest histogram")
	}
	if _, ok := ms["pfs.events_statements.by_digest.rows_sent"]; !ok {
		t.Error("no rows_sent")
	}
}

func TestMemory(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	c := s.MustRegister("memory/app/buffer", pfscore.WithDefault(true, false))
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	o1 := s.MemoryAlloc(th, c, 1000)
	o2 := s.MemoryAlloc(th, c, 500)
	s.MemoryFree(c, 1000, o1)
	_ = o2
	ms := h.collect()
	const ev = "memory/app/buffer"
	r := h.rows("memory_summary_global_by_event_name", "EVENT_NAME = '"+ev+"'")[0]
	checkSum := func(name, col string) {
		t.Helper()
		p := sumPoint[int64](t, ms[name], "pfs.event_name", ev)
		if uint64(p.Value) != r[col].(uint64) {
			t.Errorf("%s: %d, table %v", name, p.Value, r[col])
		}
	}
	checkGauge := func(name, col string, want int64) {
		t.Helper()
		p := gaugePoint[int64](t, ms[name], "pfs.event_name", ev)
		if p.Value != r[col].(int64) || p.Value != want {
			t.Errorf("%s: %d, table %v, want %d", name, p.Value, r[col], want)
		}
	}
	checkSum("pfs.memory.alloc.count", "COUNT_ALLOC")
	checkSum("pfs.memory.alloc.bytes", "SUM_NUMBER_OF_BYTES_ALLOC")
	checkSum("pfs.memory.free.bytes", "SUM_NUMBER_OF_BYTES_FREE")
	checkGauge("pfs.memory.used.bytes", "CURRENT_NUMBER_OF_BYTES_USED", 500)
	checkGauge("pfs.memory.used.bytes.high", "HIGH_NUMBER_OF_BYTES_USED", 1500)
	checkGauge("pfs.memory.used.count", "CURRENT_COUNT_USED", 1)
	if u := ms["pfs.memory.alloc.bytes"].Unit; u != "By" {
		t.Errorf("bytes unit %q", u)
	}
	p := gaugePoint[int64](t, ms["pfs.memory.by_thread.used.bytes"], "pfs.event_name", ev)
	if attrString(p.Attributes, "thread.id") != fmt.Sprint(th.ID()) || p.Value != 500 {
		t.Errorf("by_thread: %v = %d", p.Attributes.ToSlice(), p.Value)
	}
}

func TestGlobalStatus(t *testing.T) {
	h := newHarness(t, []pfscore.Option{pfscore.WithDigestsSize(2)})
	s := h.s
	for i := range 5 {
		st := s.StartSQL(nil, pfscore.StatementInfo{Text: fmt.Sprintf("SELECT c%d FROM t", i)})
		st.End(pfscore.StatementResult{})
	}
	ms := h.collect()
	r := h.rows("global_status", "VARIABLE_NAME = 'Performance_schema_digest_lost'")[0]
	if r["VARIABLE_VALUE"].(uint64) == 0 {
		t.Fatal("no digest lost")
	}
	p := sumPoint[int64](t, ms["pfs.global_status.value"], "pfs.variable_name", "Performance_schema_digest_lost")
	if uint64(p.Value) != r["VARIABLE_VALUE"].(uint64) {
		t.Errorf("digest_lost %d, table %v", p.Value, r["VARIABLE_VALUE"])
	}
	// The NULL digest row has neither DIGEST nor SCHEMA_NAME.
	var null bool
	for _, p := range ms["pfs.events_statements.by_digest.count"].Data.(metricdata.Sum[int64]).DataPoints {
		if _, ok := p.Attributes.Value("pfs.digest"); !ok {
			null = true
		}
	}
	if !null {
		t.Error("no series for the NULL digest row")
	}
}

// TestEveryTableNamed checks the scheme over the whole catalog: every
// summary, memory table and global_status is exported, every metric name
// is unique and under pfs., and no metric is empty.
func TestEveryTableNamed(t *testing.T) {
	h := newHarness(t, nil)
	got := map[string]bool{}
	for _, n := range h.p.Tables() {
		got[n] = true
	}
	for _, n := range h.s.TableNames() {
		want := strings.Contains(n, "_summary_") || n == "global_status"
		if want && !got[n] {
			t.Errorf("%s not exported", n)
		}
		if strings.Contains(n, "history") || strings.Contains(n, "current") || strings.HasPrefix(n, "setup_") {
			if got[n] {
				t.Errorf("%s exported", n)
			}
		}
	}
	for name, m := range h.collect() {
		if !strings.HasPrefix(name, "pfs.") {
			t.Errorf("metric %s", name)
		}
		if m.Unit == "" {
			t.Errorf("%s has no unit", name)
		}
	}
}

// eachAttribute calls f with every attribute of every point of ms.
func eachAttribute(ms map[string]metricdata.Metrics, f func(metric string, kv attribute.KeyValue)) {
	for name, m := range ms {
		var sets []attribute.Set
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Sum[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Gauge[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Gauge[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		}
		for _, set := range sets {
			for _, kv := range set.ToSlice() {
				f(name, kv)
			}
		}
	}
}

// busySchema records waits of a file and a mutex on two threads of two
// users, and SQL statements, so that every family of tables has rows.
func busySchema(t *testing.T, s *pfscore.Schema, file, user string) {
	t.Helper()
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:1")
	f := s.FileInstance(s.MustRegister("wait/io/file/app/log"), file, "log.go:10")
	worker := s.MustRegister("thread/app/worker")
	for _, u := range []string{user, "bob"} {
		th := s.NewThread(worker, pfscore.ThreadOptions{User: u, Host: "h1"})
		wait(m, th)
		var w pfscore.WaitState
		if f.BeginWait(&w, th, pfscore.OpFileWrite) {
			w.EndWait(100)
		}
		st := s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT a FROM t WHERE id = 1", Schema: "shop"})
		st.End(pfscore.StatementResult{RowsSent: 1})
		t.Cleanup(th.End)
	}
}

// TestDefaultExportNamesNoThreadUserOrObject: by default the producer
// exports the global summaries, the digests and global_status, and no
// series carries an attribute that grows with a service's threads, users,
// hosts, clients or objects; a view on a table's metrics opts that table
// in.
func TestDefaultExportNamesNoThreadUserOrObject(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	busySchema(t, s, "/srv/app.log", "alice")
	p, err := bridge.NewProducer(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range p.Tables() {
		if !bridge.DefaultTables(table) {
			t.Errorf("table %s exported by default", table)
		}
	}
	ms := produceAll(t, p)
	for _, want := range []string{"pfs.events_waits.count", "pfs.events_statements.by_digest.duration", "pfs.file.write.bytes"} {
		if _, ok := ms[want]; !ok {
			t.Errorf("no %s by default", want)
		}
	}
	eachAttribute(ms, func(metric string, kv attribute.KeyValue) {
		switch kv.Key {
		case "thread.id", "pfs.user", "pfs.host", "pfs.object_instance", "file.path", "pfs.port", "pfs.ip":
			t.Errorf("%s: attribute %s by default", metric, kv.Key)
		}
	})

	// A view on the by_user waits' metrics opts that table in, and only it.
	p, err = bridge.NewProducer(s, bridge.WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_waits.by_user.*"}, sdkmetric.Stream{})))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tables(); !slices.Contains(got, "events_waits_summary_by_user_by_event_name") ||
		slices.Contains(got, "events_waits_summary_by_thread_by_event_name") {
		t.Errorf("with a view on pfs.events_waits.by_user.*: %v", got)
	}
	ms = produceAll(t, p)
	sumPoint[int64](t, ms["pfs.events_waits.by_user.count"], "pfs.user", "alice")
}

// TestInvalidUTF8LeavesAsReplacement: a name that is not UTF-8 (a file
// named in Latin-1, a user from a request header) is exported with U+FFFD
// in place of its invalid bytes, and every other series is exported too:
// OTLP's strings must be UTF-8, and one bad value must not fail an export.
func TestInvalidUTF8LeavesAsReplacement(t *testing.T) {
	h := newHarness(t, nil)
	busySchema(t, h.s, "/srv/caf\xe9.log", "\xffroot")
	ms := h.collect()
	eachAttribute(ms, func(metric string, kv attribute.KeyValue) {
		if kv.Value.Type() == attribute.STRING && !utf8.ValidString(kv.Value.AsString()) {
			t.Errorf("%s: %s=%q is not UTF-8", metric, kv.Key, kv.Value.AsString())
		}
	})
	sumPoint[int64](t, ms["pfs.file.by_instance.write.count"], "file.path", "/srv/caf\uFFFD.log")
	sumPoint[int64](t, ms["pfs.events_waits.by_user.count"], "pfs.user", "\uFFFDroot")
	sumPoint[int64](t, ms["pfs.events_waits.by_user.count"], "pfs.user", "bob")
}

// produceAll returns one collection of p's metrics by name.
func produceAll(t *testing.T, p *bridge.Producer) map[string]metricdata.Metrics {
	t.Helper()
	sms, err := p.Produce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range sms {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}
