package bridge

// Review 17: adversarial reproducers for the Producer, its views and
// its digest histograms. Every test here FAILS on the code it was written
// against (commit 40cfb08); each says what it shows and how it fails.

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

type r17 struct {
	t *testing.T
	s *pfscore.Schema
	p *Producer
}

type r17clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *r17clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newR17(t *testing.T, opts ...Option) *r17 {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProducer(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &r17{t: t, s: s, p: p}
}

func (h *r17) collect() map[string]metricdata.Metrics {
	h.t.Helper()
	sms, err := h.p.Produce(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range sms {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sumPoint returns the point of a Sum[int64] or Sum[float64] metric whose
// attribute key has value want ("" key: the only point).
func r17sum(t *testing.T, ms map[string]metricdata.Metrics, name string, key attribute.Key, want string) (v float64, start time.Time, ok bool) {
	t.Helper()
	m, found := ms[name]
	if !found {
		return 0, time.Time{}, false
	}
	match := func(a attribute.Set) bool {
		if key == "" {
			return true
		}
		x, has := a.Value(key)
		return has && x.String() == want
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				return float64(p.Value), p.StartTime, true
			}
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				return p.Value, p.StartTime, true
			}
		}
	default:
		t.Fatalf("%s: %T, not a Sum", name, m.Data)
	}
	return 0, time.Time{}, false
}

func r17wait(m *pfscore.SyncInstance, th *pfscore.Thread) {
	var w pfscore.WaitState
	if m.BeginWait(&w, th, pfscore.OpLock) {
		w.EndWait(-1)
	}
}

// TestReview17ViewMergeGoesDownWhenAThreadEnds: a view that filters
// thread.id out of pfs.events_waits.by_thread.count merges the threads'
// series into one per class (views.go viewPoints/mergePoint: values add,
// StartTime is the least of the members'). When one thread ends its rows
// leave the table, and the merged cumulative sum goes DOWN under the same
// StartTime: a monotonic cumulative Sum that decreases without a reset.
// views.go keeps no state per merged series (it re-adds whatever members
// are present), so any member leaving (an ended thread, a digest moving to
// the overflow, a series forgotten for being zero) does this.
// Fails: "merged count 3 -> 1 under the same StartTime".
func TestReview17ViewMergeGoesDownWhenAThreadEnds(t *testing.T) {
	c := &r17clock{t: time.Unix(1_700_000_000, 0)}
	h := newR17(t, withClock(c.now), WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_waits.by_thread.count"},
		sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("thread.id")})))
	s := h.s
	cls := s.MustRegister("wait/synch/mutex/app/m", pfscore.WithDefault(true, true))
	m := s.NewSyncInstance(cls, "r17.go:1")
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
	b.End()
	v2, st2, ok := r17sum(t, h.collect(), name, "pfs.event_name", "wait/synch/mutex/app/m")
	if !ok {
		t.Fatal("merged series gone")
	}
	if st2.Equal(st1) && v2 < v1 {
		t.Errorf("merged count %v -> %v under the same StartTime %v", v1, v2, st1)
	}
}

// TestReview17HistogramBackInTopNDisagreesWithSums: with WithTopDigests(1),
// digest a is exported, b takes the top spot (a goes to the overflow),
// then a 3 s statement of a brings it back. The sums restart with the
// previous collection as StartTime and the values of that collection
// taken off (producer.go table: offset = s.last), so
// pfs.events_statements.by_digest.count says 1 and .time 3 s: the
// statement that brought a back. The histogram restarts at *this*
// collection with this collection's values taken off (histograms.go add,
// case restart: offCounts = h.counts now), so its point says Count 0,
// Sum 0: that statement is in no histogram point at all (the overflow
// series has none), and the same digest's histogram and sums disagree
// from then on (the histogram's Count stays 1 below .count for ever).
// Fails: "histogram count 0 sum 0, the sums of the same series say 1 and 3s".
func TestReview17HistogramBackInTopNDisagreesWithSums(t *testing.T) {
	h := newR17(t, WithTopDigests(1))
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	run := func(text string, d time.Duration) {
		st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Schema: "shop"})
		st.EndAt(st.Start()+uint64(d.Nanoseconds())*1000, pfscore.StatementResult{RowsSent: 1})
	}
	run("SELECT a FROM t", 2*time.Millisecond)
	h.collect()
	run("SELECT b FROM t", time.Second)
	h.collect()
	run("SELECT a FROM t", 3*time.Second)
	ms := h.collect()
	const summary = "SELECT `a` FROM `t`"
	cnt, cstart, ok := r17sum(t, ms, "pfs.events_statements.by_digest.count", "pfs.digest_text", summary)
	if !ok {
		t.Fatal("no count point for a")
	}
	tm, _, _ := r17sum(t, ms, "pfs.events_statements.by_digest.time", "pfs.digest_text", summary)
	hp, found := r17hist(ms, summary)
	if !found {
		t.Fatal("no histogram point for a")
	}
	if float64(hp.Count) != cnt || math.Abs(hp.Sum-tm) > 1e-6 || !hp.StartTime.Equal(cstart) {
		t.Errorf("histogram count %d sum %v start %v, the sums of the same series say %v and %vs since %v",
			hp.Count, hp.Sum, hp.StartTime, cnt, tm, cstart)
	}
}

func r17hist(ms map[string]metricdata.Metrics, summary string) (metricdata.HistogramDataPoint[float64], bool) {
	m, ok := ms[digestHistogramMetric]
	if !ok {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, ok := p.Attributes.Value("pfs.digest_text"); ok && v.AsString() == summary {
			return p, true
		}
	}
	return metricdata.HistogramDataPoint[float64]{}, false
}

// TestReview17HistogramTruncateKeepsOldSum: TRUNCATE of
// events_statements_histogram_by_digest alone (as MySQL allows) resets the
// buckets but not the summary's SUM_TIMER_WAIT. histograms.go add takes
// the point's Sum from the summary row (row[h.sum]) and its counts from
// the histogram: after the reset the point's Count is the 1 statement
// made since, its Sum the 10 s of every statement ever made, so
// Sum/Count (the mean a dashboard shows) is 10 s for a statement of 1 ms.
// Fails: "after the histogram TRUNCATE: count 1 sum 10.001s".
func TestReview17HistogramTruncateKeepsOldSum(t *testing.T) {
	h := newR17(t)
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	run := func(d time.Duration) {
		st := s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT a FROM t", Schema: "shop"})
		st.EndAt(st.Start()+uint64(d.Nanoseconds())*1000, pfscore.StatementResult{RowsSent: 1})
	}
	run(10 * time.Second)
	h.collect()
	if err := s.Truncate("events_statements_histogram_by_digest"); err != nil {
		t.Fatal(err)
	}
	run(time.Millisecond)
	hp, ok := r17hist(h.collect(), "SELECT `a` FROM `t`")
	if !ok {
		t.Fatal("no histogram point")
	}
	if hp.Count == 1 && hp.Sum > 1 {
		t.Errorf("after the histogram TRUNCATE: count %d sum %vs", hp.Count, hp.Sum)
	}
}

// TestReview17UnsortedViewBoundaries: a view (a hand-written
// sdkmetric.View function) on
// pfs.events_statements.by_digest.duration with explicit boundaries that
// are not increasing ([1, 0.001, NaN]) is taken as it is
// (newDigestHist: only len(e.Boundaries) > 0 is checked; views.go classify
// checks nothing): NewProducer returns no error, the histogram points are
// exported with those Bounds (invalid OTLP: the SDK itself refuses such an
// aggregation, AggregationExplicitBucketHistogram.err "non-monotonic
// boundaries"), and slices.BinarySearch over unsorted bounds puts the
// engine's buckets in arbitrary slots. viewconf.Parse checks its own
// boundaries; WithViews does not.
// Fails: "NewProducer took boundaries [1 0.001 NaN] and exported Bounds [1 0.001 NaN]".
func TestReview17UnsortedViewBoundaries(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	bounds := []float64{1, 0.001, math.NaN()}
	// A View is any function (sdkmetric.NewView would drop this
	// aggregation; a hand-written view does not).
	v := func(i sdkmetric.Instrument) (sdkmetric.Stream, bool) {
		if i.Name != digestHistogramMetric {
			return sdkmetric.Stream{}, false
		}
		return sdkmetric.Stream{Name: i.Name, Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: bounds}}, true
	}
	p, err := NewProducer(s, WithViews(v))
	if err != nil {
		return // rejected with an error: fine
	}
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	st := s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT a FROM t", Schema: "shop"})
	st.EndAt(st.Start()+5e9, pfscore.StatementResult{RowsSent: 1})
	h := &r17{t: t, s: s, p: p}
	hp, ok := r17hist(h.collect(), "SELECT `a` FROM `t`")
	if !ok {
		t.Fatal("no histogram point")
	}
	for i := 1; i < len(hp.Bounds); i++ {
		if !(hp.Bounds[i] > hp.Bounds[i-1]) {
			t.Fatalf("NewProducer took boundaries %v and exported Bounds %v", bounds, hp.Bounds)
		}
	}
}

// TestReview17SeriesKeysPinReads: a table read boxes its cells in chunks
// of 512 (pfscore/box.go); a Value keeps its whole chunk alive. The
// producer keeps each series' key as the read's Values (row: key:
// slices.Clone(vals) copies the interfaces, not what they point to), so
// every series pins the string chunk of the read that made it, with the
// other rows' strings in it: for a digest table, their DIGEST hex,
// timestamps and QUERY_SAMPLE_TEXT, which the table renders fresh at each
// read when it is cut (pfscore showText: text[:i] + "..."). One new digest
// per collection pins one more read's chunk each time, for as long as its
// series lives. Here 200 digests with 4 KB samples (cut), then 40
// collections that each add one digest: the heap grows by hundreds of KB
// per collection instead of the few hundred bytes of one series.
// Fails: "heap grew 19.9 MB over 40 collections (496 KB each) ..." (here;
// with the keys copied out of the read, the test passes).
func TestReview17SeriesKeysPinReads(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxSQLTextLength(4000))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProducer(s, WithTables(func(n string) bool { return n == "events_statements_summary_by_digest" }),
		WithTopDigests(1000))
	if err != nil {
		t.Fatal(err)
	}
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	lit := strings.Repeat("x", 4100)
	run := func(i int) {
		st := s.StartSQL(th, pfscore.StatementInfo{Text: fmt.Sprintf("SELECT c%d FROM t WHERE v = '%s'", i, lit), Schema: "shop"})
		st.EndAt(st.Start()+1e9, pfscore.StatementResult{RowsSent: 1})
	}
	for i := range 200 {
		run(i)
	}
	produce := func() {
		if _, err := p.Produce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	produce()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const n = 40
	for i := range n {
		run(1000 + i) // one new digest: one new series
		produce()
	}
	after := heap()
	runtime.KeepAlive(p)
	if grew := int64(after) - int64(before); grew > n*50_000 {
		t.Errorf("heap grew %.1f MB over %d collections (%d KB each) that each made one series: the series' keys pin their reads' cells",
			float64(grew)/1e6, n, grew/n/1000)
	}
}
