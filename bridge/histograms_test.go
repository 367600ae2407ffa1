package bridge_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

// advice is the semantic conventions' advice for
// db.client.operation.duration: buckets coarse enough to check by hand.
var (
	advice        = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	adviceBuckets = bridge.WithViews(sdkmetric.NewView(sdkmetric.Instrument{Name: "pfs.events_statements.by_digest.duration"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: advice}}))
)

// runFor runs a statement of text that waited exactly wait, in span
// (trace, span) if trace is not zero.
func runFor(s *pfscore.Schema, th *pfscore.Thread, text string, wait time.Duration, trace [16]byte, span [8]byte) {
	st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Schema: "shop", TraceID: trace, SpanID: span})
	st.EndAt(st.Start()+uint64(wait.Nanoseconds())*1000, pfscore.StatementResult{RowsSent: 1})
}

func histPoint(t *testing.T, ms map[string]metricdata.Metrics, summary string) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := ms["pfs.events_statements.by_digest.duration"]
	if !ok {
		t.Fatal("no pfs.events_statements.by_digest.duration")
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok || h.Temporality != metricdata.CumulativeTemporality || m.Unit != "s" {
		t.Fatalf("%s: %T %+v unit %q, want a cumulative Histogram[float64] in seconds", m.Name, m.Data, m.Data, m.Unit)
	}
	for _, p := range h.DataPoints {
		if attrString(p.Attributes, "pfs.digest_text") == summary {
			return p
		}
	}
	t.Fatalf("no histogram point for %q", summary)
	return metricdata.HistogramDataPoint[float64]{}
}

// TestDigestHistogram: a digest's statements arrive as one histogram point
// in the default bounds, its Sum the digest's SUM_TIMER_WAIT, its exemplar
// the slowest statement with the span it ran in; a TRUNCATE of the
// histogram table restarts the point.
func TestDigestHistogram(t *testing.T) {
	h := newHarness(t, nil, adviceBuckets)
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	trace := [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	// 1.01 ms is in the engine's bucket [1 ms, 1.047 ms): its upper bound
	// puts it above the explicit bound of 1 ms, where it belongs.
	for _, w := range []time.Duration{500 * time.Microsecond, 1010 * time.Microsecond, 3 * time.Millisecond, 20 * time.Millisecond, 21 * time.Millisecond} {
		runFor(s, th, "SELECT title FROM items WHERE id = 7", w, [16]byte{}, [8]byte{})
	}
	runFor(s, th, "SELECT title FROM items WHERE id = 8", 2*time.Second, trace, span) // the slowest: the sample

	ms := h.collect()
	p := histPoint(t, ms, "SELECT `title` FROM `items` WHERE `id` = ?")
	if !slices.Equal(p.Bounds, advice) {
		t.Errorf("bounds %v, want %v", p.Bounds, advice)
	}
	//                  <=1ms 5ms 10ms 50ms 100ms 500ms 1s 5s 10s  +Inf
	want := []uint64{1, 2, 0, 2, 0, 0, 0, 1, 0, 0}
	if !slices.Equal(p.BucketCounts, want) || p.Count != 6 {
		t.Errorf("buckets %v count %d, want %v and 6", p.BucketCounts, p.Count, want)
	}
	row := h.rows("events_statements_summary_by_digest")[0]
	if p.Sum != bridge.Seconds(row["SUM_TIMER_WAIT"].(uint64)) {
		t.Errorf("Sum %v, SUM_TIMER_WAIT %v ps", p.Sum, row["SUM_TIMER_WAIT"])
	}
	if len(p.Exemplars) != 1 {
		t.Fatalf("exemplars %+v, want the query sample", p.Exemplars)
	}
	e := p.Exemplars[0]
	if hex.EncodeToString(e.TraceID) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(e.SpanID) != "00f067aa0ba902b7" ||
		math.Abs(e.Value-2) > 1e-3 || time.Until(e.Time) > 3*time.Second || time.Since(e.Time) > time.Minute {
		t.Errorf("exemplar %+v, want the 2 s statement in span 00f067aa0ba902b7", e)
	}
	// The digest's other metrics carry the same attributes.
	count := sumPoint[int64](t, ms["pfs.events_statements.by_digest.count"], "pfs.digest_text", "SELECT `title` FROM `items` WHERE `id` = ?")
	if !count.Attributes.Equals(&p.Attributes) || count.StartTime != p.StartTime {
		t.Errorf("histogram attributes %v start %v, count's %v %v", p.Attributes, p.StartTime, count.Attributes, count.StartTime)
	}

	// Cumulative: the next collection adds.
	runFor(s, th, "SELECT title FROM items WHERE id = 9", 7*time.Millisecond, [16]byte{}, [8]byte{})
	p2 := histPoint(t, h.collect(), "SELECT `title` FROM `items` WHERE `id` = ?")
	if p2.Count != 7 || p2.BucketCounts[2] != 1 || p2.StartTime != p.StartTime {
		t.Errorf("after one more: %v count %d start %v, want 7 with the 7 ms in (5ms,10ms], same start", p2.BucketCounts, p2.Count, p2.StartTime)
	}

	// TRUNCATE of the histogram table restarts the buckets: a new
	// StartTime, and only what came after.
	if err := s.Truncate("events_statements_histogram_by_digest"); err != nil {
		t.Fatal(err)
	}
	runFor(s, th, "SELECT title FROM items WHERE id = 10", 70*time.Millisecond, [16]byte{}, [8]byte{})
	p3 := histPoint(t, h.collect(), "SELECT `title` FROM `items` WHERE `id` = ?")
	if p3.Count != 1 || p3.BucketCounts[4] != 1 || !p3.StartTime.After(p.StartTime) {
		t.Errorf("after TRUNCATE: %v count %d start %v (before %v)", p3.BucketCounts, p3.Count, p3.StartTime, p.StartTime)
	}
}

// TestDigestHistogramView: a view on the histogram's name sets its
// explicit bounds; a drop view drops it.
func TestDigestHistogramView(t *testing.T) {
	bounds := []float64{0.002, 0.1}
	h := newHarness(t, nil, bridge.WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_statements.by_digest.duration"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: bounds}})))
	th := h.s.NewThread(h.s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	for _, w := range []time.Duration{time.Millisecond, 3 * time.Millisecond, time.Second} {
		runFor(h.s, th, "SELECT 1", w, [16]byte{}, [8]byte{})
	}
	p := histPoint(t, h.collect(), "SELECT ?")
	if !slices.Equal(p.Bounds, bounds) || !slices.Equal(p.BucketCounts, []uint64{1, 1, 1}) || len(p.Exemplars) != 0 {
		t.Errorf("bounds %v buckets %v exemplars %v, want %v, [1 1 1], none (no span)", p.Bounds, p.BucketCounts, p.Exemplars, bounds)
	}

	d := newHarness(t, nil, bridge.WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_statements.by_digest.duration"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}})))
	th2 := d.s.NewThread(d.s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th2.End()
	runFor(d.s, th2, "SELECT 1", time.Millisecond, [16]byte{}, [8]byte{})
	if m, ok := d.collect()["pfs.events_statements.by_digest.duration"]; ok {
		t.Errorf("a dropped histogram exported: %+v", m.Data)
	}
}

// remoteTables is a Tables without the schema's histogram reads, as a
// remote service's is.
type remoteTables struct{ pfscore.Tables }

// TestDigestHistogramRemote: over Tables that cannot read a digest's
// buckets, the producer exports the digests' sums and no histogram.
func TestDigestHistogramRemote(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	runFor(s, th, "SELECT 1", time.Millisecond, [16]byte{}, [8]byte{})
	p, err := bridge.NewProducer(remoteTables{s})
	if err != nil {
		t.Fatal(err)
	}
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	_ = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	if !slices.Contains(names, "pfs.events_statements.by_digest.count") || slices.Contains(names, "pfs.events_statements.by_digest.duration") {
		t.Errorf("metrics %v: want the digest counts and no histogram", names)
	}
}

// TestDigestHistogramBackInTopN: a digest that left the top N and comes
// back restarts its histogram as its sums restart: at the previous
// collection, with what it counted since (the overflow series counted what
// it added meanwhile); and then goes on adding.
func TestDigestHistogramBackInTopN(t *testing.T) {
	h := newHarness(t, nil, bridge.WithTopDigests(1), adviceBuckets)
	s := h.s
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{})
	defer th.End()
	none, nospan := [16]byte{}, [8]byte{}
	runFor(s, th, "SELECT a FROM t", 2*time.Millisecond, none, nospan)
	if p := histPoint(t, h.collect(), "SELECT `a` FROM `t`"); p.Count != 1 {
		t.Fatalf("first: count %d", p.Count)
	}
	runFor(s, th, "SELECT b FROM t", time.Second, none, nospan) // b takes the top spot
	ms := h.collect()
	if m := ms["pfs.events_statements.by_digest.duration"].Data.(metricdata.Histogram[float64]); len(m.DataPoints) != 1 ||
		attrString(m.DataPoints[0].Attributes, "pfs.digest_text") != "SELECT `b` FROM `t`" {
		t.Fatalf("with b on top: %+v", m.DataPoints)
	}
	runFor(s, th, "SELECT a FROM t", 3*time.Second, none, nospan) // a back on top
	ms = h.collect()
	p := histPoint(t, ms, "SELECT `a` FROM `t`")
	count := sumPoint[int64](t, ms["pfs.events_statements.by_digest.count"], "pfs.digest_text", "SELECT `a` FROM `t`")
	if p.Count != 1 || p.BucketCounts[7] != 1 || math.Abs(p.Sum-3) > 1e-3 || p.StartTime != count.StartTime || count.Value != 1 {
		t.Errorf("back in the top N: %v count %d sum %v start %v; its count says %d since %v",
			p.BucketCounts, p.Count, p.Sum, p.StartTime, count.Value, count.StartTime)
	}
	runFor(s, th, "SELECT a FROM t", 4*time.Second, none, nospan)
	p2 := histPoint(t, h.collect(), "SELECT `a` FROM `t`")
	if p2.Count != 2 || p2.BucketCounts[7] != 2 || p2.StartTime != p.StartTime || math.Abs(p2.Sum-7) > 1e-3 {
		t.Errorf("after one more: %v count %d sum %v start %v", p2.BucketCounts, p2.Count, p2.Sum, p2.StartTime)
	}
}

// promQuantile is PromQL's histogram_quantile over one cumulative
// explicit-bucket point: the bucket where the rank falls, and a linear
// interpolation inside it (from 0 for the first bucket; the last finite
// bound for the +Inf bucket).
func promQuantile(q float64, p metricdata.HistogramDataPoint[float64]) float64 {
	var total uint64
	for _, c := range p.BucketCounts {
		total += c
	}
	rank := q * float64(total)
	var cum uint64
	for i, c := range p.BucketCounts {
		if float64(cum+c) < rank || c == 0 {
			cum += c
			continue
		}
		if i == len(p.Bounds) {
			return p.Bounds[len(p.Bounds)-1]
		}
		lo := 0.0
		if i > 0 {
			lo = p.Bounds[i-1]
		}
		return lo + (p.Bounds[i]-lo)*(rank-float64(cum))/float64(c)
	}
	return math.NaN()
}

// TestHistogramQuantilesAgreeWithEngine: the 95th and 99th percentiles a
// backend interpolates from the exported histogram (PromQL's
// histogram_quantile) are within 15% of the engine's QUANTILE_95 and
// QUANTILE_99, for digests whose waits lie anywhere from 10 µs to 10 s:
// spread over a decade or more, packed in a few percent, in two modes.
func TestHistogramQuantilesAgreeWithEngine(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	rng := rand.New(rand.NewPCG(1, 2))
	logUniform := func(lo, hi float64) func() float64 {
		return func() float64 { return lo * math.Pow(hi/lo, rng.Float64()) }
	}
	n9 := 0
	cases := map[string]func() float64{ // statement text -> its waits, seconds
		"SELECT a FROM t1": logUniform(10e-6, 100e-6),
		"SELECT a FROM t2": logUniform(90e-6, 400e-6),
		"SELECT a FROM t3": logUniform(200e-6, 210e-6),
		"SELECT a FROM t4": logUniform(1e-3, 1.2e-3),
		"SELECT a FROM t5": logUniform(5e-3, 2),
		"SELECT a FROM t6": logUniform(0.7, 9),
		"SELECT a FROM t7": func() float64 { // fast, with a slow tail of 3%
			if rng.Float64() < 0.03 {
				return logUniform(20e-3, 40e-3)()
			}
			return logUniform(50e-6, 80e-6)()
		},
		"SELECT a FROM t8": func() float64 { return 333e-6 },
		// The 95th percentile early in a bucket whose waits all lie at
		// its top: the most a quantile interpolated in a bucket can be
		// off, the bucket's width.
		"SELECT a FROM t9": func() float64 {
			if n9++; n9%18 == 0 { // 5.6%: the rank a tenth into the bucket
				return bridge.DefaultStatementBuckets[40] * 0.995
			}
			return 60e-6
		},
	}
	for text, draw := range cases {
		for range 2000 {
			runFor(s, nil, text, time.Duration(draw()*1e9), [16]byte{}, [8]byte{})
		}
	}
	ms := h.collect()
	for _, r := range h.rows("events_statements_summary_by_digest") {
		summary := r["DIGEST_TEXT"].(string)
		p := histPoint(t, ms, summary)
		if !slices.Equal(p.Bounds, bridge.DefaultStatementBuckets) {
			t.Fatalf("bounds %v, want DefaultStatementBuckets", p.Bounds)
		}
		for _, q := range []struct {
			col string
			q   float64
		}{{"QUANTILE_95", 0.95}, {"QUANTILE_99", 0.99}} {
			engine := bridge.Seconds(r[q.col].(uint64))
			prom := promQuantile(q.q, p)
			if d := math.Abs(prom-engine) / engine; !(d <= 0.15) {
				t.Errorf("%s: %s %.6g s, histogram_quantile(%v) %.6g s: %.0f%% apart", summary, q.col, engine, q.q, prom, 100*d)
			}
		}
	}
}

// TestConventionHistograms: SQL digests carry the database conventions'
// attributes and add up into db.client.operation.duration by query
// summary; HTTP routes carry http.request.method and http.route, never a
// db.* attribute, and add up into http.server.request.duration.
func TestConventionHistograms(t *testing.T) {
	h := newHarness(t, nil)
	s := h.s
	req := s.MustRegister("statement/http/request", pfscore.WithDefault(true, true))
	for i := range 3 {
		// Two texts, two digests, one summary: SELECT items.
		runFor(s, nil, fmt.Sprintf("SELECT title FROM items WHERE id = %d", i), time.Millisecond, [16]byte{}, [8]byte{})
		runFor(s, nil, "SELECT body FROM items WHERE id = 1", 2*time.Millisecond, [16]byte{}, [8]byte{})
		st := s.StartStatement(nil, req, pfscore.StatementInfo{Text: "GET /items/{id}", Normalized: true})
		st.EndAt(st.Start()+uint64(3*time.Millisecond.Nanoseconds())*1000, pfscore.StatementResult{})
	}
	ms := h.collect()
	db, ok := ms["db.client.operation.duration"].Data.(metricdata.Histogram[float64])
	if !ok || len(db.DataPoints) != 1 {
		t.Fatalf("db.client.operation.duration: %+v", ms["db.client.operation.duration"])
	}
	p := db.DataPoints[0]
	if p.Count != 6 || attrString(p.Attributes, "db.query.summary") != "SELECT items" ||
		attrString(p.Attributes, "db.operation.name") != "SELECT" || attrString(p.Attributes, "db.collection.name") != "items" ||
		attrString(p.Attributes, "db.system.name") != bridge.DefaultDBSystem || attrString(p.Attributes, "db.namespace") != "shop" {
		t.Errorf("db.client.operation.duration point: count %d, %v", p.Count, p.Attributes.ToSlice())
	}
	hs, ok := ms["http.server.request.duration"].Data.(metricdata.Histogram[float64])
	if !ok || len(hs.DataPoints) != 1 {
		t.Fatalf("http.server.request.duration: %+v", ms["http.server.request.duration"])
	}
	if p := hs.DataPoints[0]; p.Count != 3 || attrString(p.Attributes, "http.route") != "/items/{id}" ||
		attrString(p.Attributes, "http.request.method") != "GET" {
		t.Errorf("http.server.request.duration point: count %d, %v", p.Count, p.Attributes.ToSlice())
	}
	// The route's digest series: HTTP attributes, no database ones.
	for _, dp := range ms["pfs.events_statements.by_digest.count"].Data.(metricdata.Sum[int64]).DataPoints {
		route := attrString(dp.Attributes, "pfs.digest_text") == "GET /items/{id}"
		_, hasDB := dp.Attributes.Value("db.query.summary")
		_, hasRoute := dp.Attributes.Value("http.route")
		if route == hasDB || route != hasRoute {
			t.Errorf("digest series %v: db.* %v, http.route %v", dp.Attributes.ToSlice(), hasDB, hasRoute)
		}
	}
}
