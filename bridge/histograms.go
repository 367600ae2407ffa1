package bridge

import (
	"encoding/hex"
	"slices"
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
// true wait, never below, as MySQL's quantiles do. The point's Sum is the
// digest's SUM_TIMER_WAIT, its Count the timed statements, and its
// exemplar the query sample, the digest's slowest recent statement, with
// the trace and span it ran in (QUERY_SAMPLE_TRACE_ID, _SPAN_ID), so a
// dashboard jumps from a slow digest to the trace that shows why.
//
// The buckets come from pfscore.Schema.DigestHistogram: a producer over
// another Tables (a remote service's) exports no histograms. The overflow
// series has none either: summing the buckets of every digest outside the
// top N would read 450 counters for each of thousands of digests per
// collection.

// DefaultStatementBuckets are the bounds, in seconds, of the digest
// histograms unless a view on pfs.events_statements.by_digest.duration sets
// explicit buckets: the database semantic conventions' advice for
// db.client.operation.duration.
var DefaultStatementBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// digestHistogramMetric is the name of the digest histograms.
const digestHistogramMetric = "pfs.events_statements.by_digest.duration"

// histogramSource is what the producer reads the buckets from: a
// *pfscore.Schema.
type histogramSource interface {
	DigestHistogram(schema, digest string) ([]uint64, bool)
}

// digestHist is a digest table's histogram plan: the columns it reads, and
// where each engine bucket counts among the explicit bounds.
type digestHist struct {
	src                     histogramSource
	schema, digest, sum     int // SCHEMA_NAME, DIGEST, SUM_TIMER_WAIT
	sampleTrace, sampleSpan int // QUERY_SAMPLE_TRACE_ID, _SPAN_ID (-1: none)
	sampleWait, sampleSeen  int // QUERY_SAMPLE_TIMER_WAIT, _SEEN
	bounds                  []float64
	slot                    []int // engine bucket -> explicit bucket
	desc                    string
	points                  []metricdata.HistogramDataPoint[float64]
	counts                  []uint64 // scratch: one point's buckets
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
// there is nothing to export histograms from.
func newDigestHist(t pfscore.Tables, tp *tablePlan, views *viewState) *digestHist {
	src, ok := t.(histogramSource)
	if !ok || !tp.digest {
		return nil
	}
	h := &digestHist{src: src, schema: tp.column("SCHEMA_NAME"), digest: tp.column("DIGEST"), sum: tp.sumTimer,
		sampleTrace: tp.column("QUERY_SAMPLE_TRACE_ID"), sampleSpan: tp.column("QUERY_SAMPLE_SPAN_ID"),
		sampleWait: tp.column("QUERY_SAMPLE_TIMER_WAIT"), sampleSeen: tp.column("QUERY_SAMPLE_SEEN"),
		bounds: DefaultStatementBuckets,
		desc:   "latency histogram of performance_schema.events_statements_histogram_by_digest, in the explicit bounds"}
	if h.schema < 0 || h.digest < 0 || h.sum < 0 {
		return nil
	}
	if views != nil {
		r := resolve(views.views, sdkmetric.Instrument{Name: digestHistogramMetric, Unit: "s",
			Kind: sdkmetric.InstrumentKindHistogram, Scope: instrumentation.Scope{Name: ScopeName}})
		if e, ok := r.hist.(sdkmetric.AggregationExplicitBucketHistogram); ok && len(e.Boundaries) > 0 {
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
	return h
}

// begin starts a collection's points.
func (h *digestHist) begin(n int) {
	h.points = make([]metricdata.HistogramDataPoint[float64], 0, n)
}

// add appends the histogram point of a top-N digest row for series s; a
// digest the engine no longer has (the table was truncated between the
// reads) adds nothing. restart says the digest is back in the top N; fresh
// is the StartTime of counts made since the previous collection.
func (h *digestHist) add(s *series, row pfscore.Row, restart bool, fresh, now time.Time) {
	schema, _ := row[h.schema].(string)
	dg, _ := row[h.digest].(string)
	if dg == "" {
		return // the NULL row: the statements of digests the table had no room for
	}
	buckets, ok := h.src.DigestHistogram(schema, dg)
	if !ok {
		return
	}
	clear(h.counts)
	var count uint64
	for i, c := range buckets {
		if i < len(h.slot) {
			h.counts[h.slot[i]] += c
			count += c
		}
	}
	sum := asUint(row[h.sum])
	st := s.hist
	if st == nil {
		st = &histState{start: s.start}
		s.hist = st
	}
	reset := sum < st.lastSum || len(st.last) != len(h.counts)
	for i := range st.last {
		if !reset && h.counts[i] < st.last[i] {
			reset = true
		}
	}
	st.last = append(st.last[:0], h.counts...)
	st.lastSum = sum
	switch {
	case restart: // back in the top N: count from now
		st.start, st.offCounts, st.offSum = now, slices.Clone(h.counts), sum
	case reset: // a TRUNCATE: everything counted is new
		st.start, st.offCounts, st.offSum = fresh, nil, 0
	}
	p := metricdata.HistogramDataPoint[float64]{Attributes: s.attrs, StartTime: st.start, Time: now,
		Bounds: h.bounds, BucketCounts: make([]uint64, len(h.counts))}
	copy(p.BucketCounts, h.counts)
	if st.offCounts != nil {
		count = 0
		for i := range p.BucketCounts {
			p.BucketCounts[i] -= min(p.BucketCounts[i], st.offCounts[i])
			count += p.BucketCounts[i]
		}
		sum -= min(sum, st.offSum)
	}
	p.Count, p.Sum = count, Seconds(sum)
	if e, ok := h.exemplar(row, st.start); ok {
		p.Exemplars = []metricdata.Exemplar[float64]{e}
	}
	h.points = append(h.points, p)
}

// exemplar returns the row's query sample as an exemplar, if it ran in a
// span and since the point's StartTime.
func (h *digestHist) exemplar(row pfscore.Row, start time.Time) (metricdata.Exemplar[float64], bool) {
	if h.sampleTrace < 0 || h.sampleSpan < 0 || h.sampleWait < 0 || h.sampleSeen < 0 {
		return metricdata.Exemplar[float64]{}, false
	}
	tr, _ := row[h.sampleTrace].(string)
	sp, _ := row[h.sampleSpan].(string)
	seen, _ := row[h.sampleSeen].(string)
	if tr == "" || sp == "" || seen == "" {
		return metricdata.Exemplar[float64]{}, false
	}
	var ts pfscore.Timestamp
	if err := ts.UnmarshalText([]byte(seen)); err != nil || ts.Time().Before(start) {
		return metricdata.Exemplar[float64]{}, false
	}
	traceID, err1 := hex.DecodeString(tr)
	spanID, err2 := hex.DecodeString(sp)
	if err1 != nil || err2 != nil || len(traceID) != 16 || len(spanID) != 8 {
		return metricdata.Exemplar[float64]{}, false
	}
	return metricdata.Exemplar[float64]{Time: ts.Time(), Value: Seconds(asUint(row[h.sampleWait])),
		TraceID: traceID, SpanID: spanID}, true
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
