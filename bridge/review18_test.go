package bridge

// Review 18: adversarial reproducers for the review17 fixes (commit
// 12adc37). Every test here FAILS on that code; each says what it shows
// and how it fails.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// r18flaky is a Schema whose Query of one table fails while fail is set.
type r18flaky struct {
	*pfscore.Schema
	table string
	fail  atomic.Bool
}

func (f *r18flaky) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	if table == f.table && f.fail.Load() {
		return nil, errors.New("r18: read failed")
	}
	return f.Schema.Query(table, q)
}

// TestReview18MergedSumDownAfterFailedRead: keepMonotonic (views.go)
// forgets a merged series' state (last value, StartTime) at the first
// collection that does not export it (export's deferred loop: st.gen !=
// vs.gen). A table whose read fails for one collection exports nothing,
// but the producer keeps its members' series as they were ("they did not
// reset"), with their old StartTimes. If a member leaves meanwhile (a
// thread ends), the next collection's merged sum is smaller, and with no
// state keepMonotonic takes it as new: the merged series goes 3 -> 1
// under the same StartTime, the very defect review17 fixed.
// Fails: "merged count 3 -> 1 under the same StartTime ...".
func TestReview18MergedSumDownAfterFailedRead(t *testing.T) {
	c := &r17clock{t: time.Unix(1_700_000_000, 0)}
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	const table = "events_waits_summary_by_thread_by_event_name"
	f := &r18flaky{Schema: s, table: table}
	p, err := NewProducer(f, withClock(c.now), WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_waits.by_thread.count"},
		sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("thread.id")})))
	if err != nil {
		t.Fatal(err)
	}
	h := &r17{t: t, s: s, p: p}
	cls := s.MustRegister("wait/synch/mutex/app/m", pfscore.WithDefault(true, true))
	m := s.NewSyncInstance(cls, "r18.go:1")
	tc := s.MustRegister("thread/app/worker")
	a := s.NewThread(tc, pfscore.ThreadOptions{})
	defer a.End()
	b := s.NewThread(tc, pfscore.ThreadOptions{})
	r17wait(m, a)
	r17wait(m, b)
	r17wait(m, b)
	const name = "pfs.events_waits.by_thread.count"
	v1, st1, ok := r17sum(t, h.collect(), name, "pfs.event_name", "wait/synch/mutex/app/m")
	if !ok || v1 != 3 {
		t.Fatalf("first collection: %v %v, want 3", v1, ok)
	}
	f.fail.Store(true)
	if _, err := p.Produce(context.Background()); err == nil {
		t.Fatal("the failing read returned no error")
	}
	f.fail.Store(false)
	b.End()
	v2, st2, ok := r17sum(t, h.collect(), name, "pfs.event_name", "wait/synch/mutex/app/m")
	if !ok {
		t.Fatal("merged series gone")
	}
	if st2.Equal(st1) && v2 < v1 {
		t.Errorf("merged count %v -> %v under the same StartTime %v (one collection failed to read the table between)", v1, v2, st1)
	}
}

// r18big is a Schema whose table rows of one thread read 2^60 more in
// COUNT_STAR: a counter past float64's 53 bits of mantissa.
type r18big struct {
	*pfscore.Schema
	table  string
	thread atomic.Uint64
}

func (f *r18big) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	res, err := f.Schema.Query(table, q)
	if err != nil || table != f.table {
		return res, err
	}
	tid, cnt := -1, -1
	for i, c := range res.Columns {
		switch c.Name {
		case "THREAD_ID":
			tid = i
		case "COUNT_STAR":
			cnt = i
		}
	}
	for _, r := range res.Rows {
		if id, _ := r[tid].(uint64); id == f.thread.Load() {
			r[cnt] = r[cnt].(uint64) + 1<<60
		}
	}
	return res, nil
}

// TestReview18MergedSumDownBelowFloatPrecision: keepMonotonic compares an
// int64 merged sum as float64(p.Value) < st.last. Past 2^53 float64 no
// longer tells neighbouring integers apart (at 2^60 its step is 256): a
// merged int64 sum that goes down by less than that is not seen going
// down, and is exported smaller under the same StartTime. (A cumulative
// byte counter, SUM_NUMBER_OF_BYTES_ALLOC, passes 2^53 after 104 days at
// 1 GB/s.) Here thread a's COUNT_STAR reads 2^60+1, b's 2: the merged
// series goes 2^60+3 -> 2^60+1 when b ends.
// Fails: "merged count 1152921504606846979 -> 1152921504606846977 under the same StartTime ...".
func TestReview18MergedSumDownBelowFloatPrecision(t *testing.T) {
	c := &r17clock{t: time.Unix(1_700_000_000, 0)}
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	f := &r18big{Schema: s, table: "events_waits_summary_by_thread_by_event_name"}
	const name = "pfs.events_waits.by_thread.count"
	p, err := NewProducer(f, withClock(c.now), WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: name},
		sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("thread.id")})))
	if err != nil {
		t.Fatal(err)
	}
	cls := s.MustRegister("wait/synch/mutex/app/m", pfscore.WithDefault(true, true))
	m := s.NewSyncInstance(cls, "r18.go:1")
	tc := s.MustRegister("thread/app/worker")
	a := s.NewThread(tc, pfscore.ThreadOptions{})
	defer a.End()
	f.thread.Store(a.ID())
	b := s.NewThread(tc, pfscore.ThreadOptions{})
	r17wait(m, a)
	r17wait(m, b)
	r17wait(m, b)
	point := func() (int64, time.Time) {
		t.Helper()
		sms, err := p.Produce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, sm := range sms {
			for _, mm := range sm.Metrics {
				if mm.Name != name {
					continue
				}
				for _, dp := range mm.Data.(metricdata.Sum[int64]).DataPoints {
					if v, ok := dp.Attributes.Value("pfs.event_name"); ok && v.AsString() == "wait/synch/mutex/app/m" {
						return dp.Value, dp.StartTime
					}
				}
			}
		}
		t.Fatal("no merged point")
		return 0, time.Time{}
	}
	v1, st1 := point()
	if v1 != 1<<60+3 {
		t.Fatalf("first collection: %d, want 2^60+3", v1)
	}
	b.End()
	v2, st2 := point()
	if st2.Equal(st1) && v2 < v1 {
		t.Errorf("merged count %d -> %d under the same StartTime %v", v1, v2, st1)
	}
}

// TestReview18MergedHistogramGoesDown: keepMonotonic restarts the merged
// Sums of a view, but a view that merges the digest histograms
// (pfs.events_statements.by_digest.duration filtered to the schema) goes
// through viewHistogram, which adds the members' points with no state:
// when a digest leaves the top N, the merged histogram's Count and buckets
// go down under the same StartTime, the defect review17 fixed for sums.
// Here, with the top 2 digests, a (3 statements) and b (1) make the
// schema's merged histogram Count 4; then c takes b's place, and the
// merged Count is a's 3 (c, back from the overflow, counts from now).
// Fails: "merged histogram count 4 -> 3 under the same StartTime ...".
func TestReview18MergedHistogramGoesDown(t *testing.T) {
	c := &r17clock{t: time.Unix(1_700_000_000, 0)}
	h := newR17(t, withClock(c.now), WithTopDigests(2), WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: digestHistogramMetric},
		sdkmetric.Stream{AttributeFilter: attribute.NewAllowKeysFilter("db.namespace")})))
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	run := func(text string, d time.Duration) {
		st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Schema: "shop"})
		st.EndAt(st.Start()+uint64(d.Nanoseconds())*1000, pfscore.StatementResult{RowsSent: 1})
	}
	point := func(ms map[string]metricdata.Metrics) metricdata.HistogramDataPoint[float64] {
		t.Helper()
		m, ok := ms[digestHistogramMetric]
		if !ok {
			t.Fatal("no histogram")
		}
		pts := m.Data.(metricdata.Histogram[float64]).DataPoints
		if len(pts) != 1 {
			t.Fatalf("%d merged points, want 1: %v", len(pts), pts)
		}
		return pts[0]
	}
	for range 3 {
		run("SELECT a FROM t", time.Second)
	}
	run("SELECT b FROM t", 2*time.Second)
	run("SELECT c FROM t", time.Millisecond)
	p1 := point(h.collect())
	if p1.Count != 4 {
		t.Fatalf("first merged count %d, want 4", p1.Count)
	}
	run("SELECT c FROM t", 10*time.Second)
	p2 := point(h.collect())
	if p2.StartTime.Equal(p1.StartTime) && p2.Count < p1.Count {
		t.Errorf("merged histogram count %d -> %d under the same StartTime %v", p1.Count, p2.Count, p1.StartTime)
	}
}
