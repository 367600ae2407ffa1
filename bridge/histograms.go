package bridge

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelpfs/otelpfs/pfscore"
)

// Digest histograms.
//
// The engine keeps, per digest, MySQL's 450 latency buckets
// (events_statements_histogram_by_digest). The producer exports each
// top-N digest's as one explicit-bucket Histogram point,
// pfs.events_statements.by_digest.duration, with the digest's attributes:
// 450 buckets per digest would be 45,000 series in Prometheus for 100
// digests, so the engine's buckets are added up into the explicit bounds
// (by default DefaultStatementBuckets, or those of a view on the metric's
// name). An engine bucket counts in the explicit bucket that holds its
// upper bound: a statement may count one engine bucket (4.7%) above its
// true wait, never below, as MySQL's quantiles do. The point's Count is
// the timed statements its buckets count, its Sum their waits (the
// digest's SUM_TIMER_WAIT, less what it was at the histogram table's last
// TRUNCATE), and its exemplar the query sample, the digest's slowest
// recent statement, with the trace and span it ran in
// (QUERY_SAMPLE_TRACE_ID, _SPAN_ID), so a dashboard jumps from a slow
// digest to the trace that shows why.
//
// The buckets come from pfscore.Schema.DigestBuckets: a producer over
// another Tables (a remote service's) exports no histograms. The overflow
// series has none either: summing the buckets of every digest outside the
// top N would read 450 counters for each of thousands of digests per
// collection.

// DefaultStatementBuckets are the bounds, in seconds, of the statement
// histograms unless a view on their metric sets explicit buckets: every
// third bound of the engine's 450 buckets from 10 µs to 10 s (101 bounds,
// each 1.0471^3 = 14.8% above the one before), each rounded up to four
// significant digits. Since every bound is an engine bound (rounded up by
// less than the 4.7% to the next), an engine bucket falls wholly in one
// explicit bucket, and a quantile a backend interpolates in an explicit
// bucket (PromQL's histogram_quantile) is within that bucket's width,
// under 15%, of the engine's own QUANTILE_95 and QUANTILE_99, which name
// the top of the engine bucket the quantile falls in. Coarser buckets (the
// semantic conventions' advice, [0.005, 0.01, ...] for HTTP and [0.001,
// 0.005, ...] for databases) put most of a fast service's statements in
// the first bucket, and every quantile at its top.
var DefaultStatementBuckets = engineAlignedBounds(3, 10e-6, 10)

// engineAlignedBounds returns every step-th bound of the engine's
// statement histogram from lo to hi seconds, each rounded up to four
// significant digits.
func engineAlignedBounds(step int, lo, hi float64) []float64 {
	eb := pfscore.StatementHistogramBounds()
	var out []float64
	first := -1
	for i := 1; i < len(eb)-1; i++ {
		b := Seconds(eb[i])
		if first < 0 && b >= lo*(1-1e-6) {
			first = i
		}
		if first < 0 || (i-first)%step != 0 {
			continue
		}
		if b > hi*(1+1e-3) {
			break
		}
		out = append(out, roundUp4(b))
	}
	return out
}

// roundUp4 rounds x > 0 up to four significant digits.
func roundUp4(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x))-3)
	r := math.Ceil(x/e-1e-9) * e
	// Print as the decimal it is (1.259e-05, not 1.2590000000000001e-05).
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 4, 64), 64)
	if v < x {
		v = math.Nextafter(x, math.Inf(1))
	}
	return v
}

// digestHistogramMetric is the name of the digest histograms.
const digestHistogramMetric = "pfs.events_statements.by_digest.duration"

// histogramSource is what the producer reads the buckets from: a
// *pfscore.Schema.
type histogramSource interface {
	DigestBuckets(schema, digest string) (pfscore.DigestBuckets, bool)
}

// digestHist is a digest table's histogram plan: the columns it reads, and
// where each engine bucket counts among the explicit bounds.
type digestHist struct {
	src            histogramSource
	schema, digest int // SCHEMA_NAME, DIGEST
	bounds         []float64
	slot           []int // engine bucket -> explicit bucket
	desc           string
	points         []metricdata.HistogramDataPoint[float64]
	counts         []uint64 // scratch: one point's buckets
}

// histState is a digest series' histogram between collections: its
// StartTime, and the values its point subtracts (after the digest came
// back into the top N: the overflow series counted its statements
// meanwhile) and last showed (to notice a TRUNCATE).
type histState struct {
	start     time.Time
	offCounts []uint64
	offSum    uint64
	last      []uint64
	lastSum   uint64
}

// newDigestHist returns the histogram plan of digest table tp, or nil when
// there is nothing to export histograms from; an error if a view sets
// bounds that are not finite and increasing.
func newDigestHist(t pfscore.Tables, tp *tablePlan, views *viewState) (*digestHist, error) {
	src, ok := t.(histogramSource)
	if !ok || !tp.digest {
		return nil, nil
	}
	h := &digestHist{src: src, schema: tp.column("SCHEMA_NAME"), digest: tp.column("DIGEST"),
		bounds: DefaultStatementBuckets,
		desc:   "latency histogram of performance_schema.events_statements_histogram_by_digest, in the explicit bounds"}
	if h.schema < 0 || h.digest < 0 {
		return nil, nil
	}
	if views != nil {
		r := resolve(views.views, sdkmetric.Instrument{Name: digestHistogramMetric, Unit: "s",
			Kind: sdkmetric.InstrumentKindHistogram, Scope: instrumentation.Scope{Name: ScopeName}})
		if e, ok := r.hist.(sdkmetric.AggregationExplicitBucketHistogram); ok && len(e.Boundaries) > 0 {
			for i, b := range e.Boundaries {
				// (sdkmetric.NewView checks this; a View written by hand may not.)
				if math.IsNaN(b) || math.IsInf(b, 0) || i > 0 && !(b > e.Boundaries[i-1]) {
					return nil, fmt.Errorf("bridge: a view gives %s the bucket boundaries %v: they must be finite and increasing",
						digestHistogramMetric, e.Boundaries)
				}
			}
			h.bounds = slices.Clone(e.Boundaries)
		}
	}
	bounds := pfscore.StatementHistogramBounds()
	h.slot = make([]int, len(bounds)-1)
	for i := range h.slot {
		// The engine bucket's upper bound, in seconds; the last bucket's
		// is unbounded, and so lands in the last explicit bucket.
		up := Seconds(bounds[i+1])
		h.slot[i], _ = slices.BinarySearch(h.bounds, up)
	}
	h.counts = make([]uint64, len(h.bounds)+1)
	return h, nil
}

// begin starts a collection's points.
func (h *digestHist) begin(n int) {
	h.points = make([]metricdata.HistogramDataPoint[float64], 0, n)
}

// read returns a digest row's buckets added up into the explicit bounds
// (in h.counts), their statements and sum, and the digest's sample; false
// for the NULL row (the statements of digests the table had no room for),
// and for a digest the engine no longer has (the table was truncated
// between the reads).
func (h *digestHist) read(row pfscore.RowView) (count uint64, b pfscore.DigestBuckets, ok bool) {
	schema, _ := row.String(h.schema)
	dg, _ := row.String(h.digest)
	if dg == "" {
		return 0, b, false
	}
	if b, ok = h.src.DigestBuckets(schema, dg); !ok {
		return 0, b, false
	}
	clear(h.counts)
	for i, c := range b.Counts {
		if i < len(h.slot) {
			h.counts[h.slot[i]] += c
			count += c
		}
	}
	return count, b, true
}

// observe records the buckets and sum a digest's histogram shows now in
// st, and reports whether they went down since it last did (a TRUNCATE).
func (h *digestHist) observe(st *histState, sum uint64) (reset bool) {
	reset = sum < st.lastSum || len(st.last) != len(h.counts)
	for i := range st.last {
		if !reset && h.counts[i] < st.last[i] {
			reset = true
		}
	}
	st.last = append(st.last[:0], h.counts...)
	st.lastSum = sum
	return reset
}

// track follows a digest outside the top N whose histogram was exported
// before (s.hist), so that when it comes back its histogram restarts as
// its sums do: at the previous collection, with that collection's values
// taken off.
func (h *digestHist) track(s *series, row pfscore.RowView) {
	if s.hist == nil {
		return
	}
	if _, b, ok := h.read(row); ok {
		h.observe(s.hist, b.Sum)
	}
}

// add appends the histogram point of a top-N digest row for series s.
// back says the digest is back in the top N; fresh is the StartTime of
// counts made since the previous collection.
func (h *digestHist) add(s *series, row pfscore.RowView, back bool, fresh, now time.Time) {
	count, b, ok := h.read(row)
	if !ok {
		return
	}
	sum := b.Sum
	st := s.hist
	switch {
	case st == nil && back:
		// Back in the top N, its histogram never exported: count from now.
		st = &histState{start: now, offCounts: slices.Clone(h.counts), offSum: sum}
		h.observe(st, sum)
	case st == nil:
		st = &histState{start: s.start}
		h.observe(st, sum)
	case back:
		// The values of the previous collection, which track kept, come
		// off, as they do from the sums (see series).
		st.start, st.offCounts, st.offSum = fresh, slices.Clone(st.last), st.lastSum
		if h.observe(st, sum) {
			st.start, st.offCounts, st.offSum = fresh, nil, 0
		}
	default:
		if h.observe(st, sum) { // a TRUNCATE: everything counted is new
			st.start, st.offCounts, st.offSum = fresh, nil, 0
		}
	}
	s.hist = st
	p := metricdata.HistogramDataPoint[float64]{Attributes: s.attrs, StartTime: st.start, Time: now,
		Bounds: h.bounds, BucketCounts: slices.Clone(h.counts)}
	if st.offCounts != nil {
		count = 0
		for i := range p.BucketCounts {
			p.BucketCounts[i] -= min(p.BucketCounts[i], st.offCounts[i])
			count += p.BucketCounts[i]
		}
		sum -= min(sum, st.offSum)
	}
	p.Count, p.Sum = count, Seconds(sum)
	if b.SampleTraced && !b.SampleSeen.Before(st.start) {
		p.Exemplars = []metricdata.Exemplar[float64]{{Time: b.SampleSeen, Value: Seconds(b.SampleWait),
			TraceID: slices.Clone(b.SampleTrace[:]), SpanID: slices.Clone(b.SampleSpan[:])}}
	}
	h.points = append(h.points, p)
}

// metric returns the collection's histogram metric, false if no point.
func (h *digestHist) metric() (metricdata.Metrics, bool) {
	if len(h.points) == 0 {
		return metricdata.Metrics{}, false
	}
	return metricdata.Metrics{Name: digestHistogramMetric, Description: h.desc, Unit: "s",
		Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: h.points}}, true
}

// column returns the index of column name, -1 if the table has none.
func (tp *tablePlan) column(name string) int {
	for i, c := range tp.columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}
