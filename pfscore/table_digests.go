package pfscore

import (
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/hwclock"
)

// events_statements_summary_by_digest, events_statements_histogram_by_digest
// and events_statements_histogram_global.

// A Timestamp is a TIMESTAMP(6) column: a moment as picoseconds on the
// timers' epoch, shown as local wall-clock time with microseconds, as MySQL
// shows FIRST_SEEN.
type Timestamp uint64

func (t Timestamp) String() string {
	if t == 0 {
		return ""
	}
	return hwclock.WallTime(uint64(t)).Format(timestampLayout)
}

// Time returns the wall-clock time of t.
func (t Timestamp) Time() time.Time { return hwclock.WallTime(uint64(t)) }

// timestampLayout is how a Timestamp shows: MySQL's TIMESTAMP(6).
const timestampLayout = "2006-01-02 15:04:05.000000"

// UnmarshalText reads a Timestamp as String shows it (Scan uses it).
func (t *Timestamp) UnmarshalText(b []byte) error {
	w, err := time.ParseInLocation(timestampLayout, string(b), time.Local)
	if err != nil {
		return fmt.Errorf("pfs: bad TIMESTAMP %q: %w", b, err)
	}
	// The picoseconds since the timers' epoch, to the microsecond shown.
	*t = Timestamp(uint64(w.Sub(hwclock.WallTime(0)).Nanoseconds()) * 1000)
	return nil
}

// ByDigest is the key of a by-digest row: CURRENT_SCHEMA and DIGEST, both
// NULL in the row that counts the statements of digests the full table
// could not take.
type ByDigest struct {
	SchemaName string `pfs:"SCHEMA_NAME,dim,null"`
	Digest     string `pfs:"DIGEST,dim,null"`
}

// DigestSummary is a row of events_statements_summary_by_digest.
type DigestSummary struct {
	ByDigest
	DigestText string `pfs:"DIGEST_TEXT,text,null"`
	WaitStats
	StatementCounts
	FirstSeen            Timestamp `pfs:"FIRST_SEEN,attr,null"`
	LastSeen             Timestamp `pfs:"LAST_SEEN,attr,null"`
	Quantile95           uint64    `pfs:"QUANTILE_95,gauge,ps"`
	Quantile99           uint64    `pfs:"QUANTILE_99,gauge,ps"`
	Quantile999          uint64    `pfs:"QUANTILE_999,gauge,ps"`
	QuerySampleText      string    `pfs:"QUERY_SAMPLE_TEXT,text,null"`
	QuerySampleSeen      Timestamp `pfs:"QUERY_SAMPLE_SEEN,attr,null"`
	QuerySampleTimerWait uint64    `pfs:"QUERY_SAMPLE_TIMER_WAIT,duration"`
	ClientTimes
	// QUERY_SAMPLE_TRACE_ID and QUERY_SAMPLE_SPAN_ID are otelpfs's own:
	// the OpenTelemetry span the query sample ran in (see
	// StatementInfo.TraceID), NULL if none.
	QuerySampleTraceID string `pfs:"QUERY_SAMPLE_TRACE_ID,id,null"`
	QuerySampleSpanID  string `pfs:"QUERY_SAMPLE_SPAN_ID,id,null"`
}

// load copies a record's statistics. The count is loaded last, so that it
// covers every statement whose sums were loaded (see ownedStat.load): the
// histogram, which counts the timed statements, after the sum, and the
// untimed count after the counters.
func (d *digestStats) load() (stmtStat, histCounts) {
	var st stmtStat
	st.x = d.x.load()
	mn, mx := d.min.Load(), d.max.Load()
	st.Sum = d.sum.Load()
	h := histCounts(d.hist.load())
	st.Count = d.untimed.Load() + h.total()
	if mn <= mx {
		st.Min, st.Max, st.ext = mn, mx, true
	}
	return st, h
}

// EventsStatementsSummaryByDigest returns events_statements_summary_by_digest.
func (s *Schema) EventsStatementsSummaryByDigest() []DigestSummary {
	s.readMu.RLock()
	defer s.readMu.RUnlock()
	var out []DigestSummary
	for _, r := range s.digests.Load().records(nil) {
		st, h := r.stats.load()
		st = st.settled()
		h = h.sub(s.histDigestBase[r].countsOf())
		// FIRST_SEEN and the sample before LAST_SEEN, which their writers
		// move first: LAST_SEEN >= FIRST_SEEN, QUERY_SAMPLE_SEEN.
		first, q := r.stats.first.Load(), r.stats.sample.Load()
		row := DigestSummary{
			DigestText:      r.text,
			WaitStats:       st.statRow.view(),
			StatementCounts: st.x.counts(),
			ClientTimes:     st.x.client(),
			FirstSeen:       Timestamp(first),
			LastSeen:        Timestamp(r.stats.last.Load()),
		}
		if r.schema != "" || r.text != "" {
			row.SchemaName, row.Digest = r.schema, r.digest.Hex()
		}
		row.Quantile95, row.Quantile99, row.Quantile999 = h.quantiles()
		if q != nil {
			row.QuerySampleText = showText(q.text, q.truncated)
			row.QuerySampleSeen = Timestamp(q.seen)
			row.QuerySampleTimerWait = q.wait
			if q.traced {
				row.QuerySampleTraceID, row.QuerySampleSpanID = hexString(q.trace[:]), hexString(q.span[:])
			}
		}
		out = append(out, row)
	}
	return out
}

// DigestHistogramBucket is a row of events_statements_histogram_by_digest.
type DigestHistogramBucket struct {
	ByDigest
	HistogramBucket
}

// EventsStatementsHistogramByDigest returns
// events_statements_histogram_by_digest: 450 rows per digest.
func (s *Schema) EventsStatementsHistogramByDigest() []DigestHistogramBucket {
	s.readMu.RLock()
	defer s.readMu.RUnlock()
	var out []DigestHistogramBucket
	var buckets []HistogramBucket
	for _, r := range s.digests.Load().records(nil) {
		_, h := r.stats.load()
		h = h.sub(s.histDigestBase[r].countsOf())
		key := ByDigest{}
		if r.schema != "" || r.text != "" {
			key = ByDigest{r.schema, r.digest.Hex()}
		}
		buckets = appendBuckets(buckets[:0], &h)
		for _, b := range buckets {
			out = append(out, DigestHistogramBucket{key, b})
		}
	}
	return out
}

// StatementHistogramBounds returns the bounds of the statement histograms'
// buckets, in picoseconds: bucket i (BUCKET_NUMBER i) counts the waits w
// with bounds[i] <= w < bounds[i+1]; the last bound is the largest uint64.
func StatementHistogramBounds() []uint64 { return slices.Clone(histBounds[:]) }

// histBase is a digest's TRUNCATE baseline of
// events_statements_histogram_by_digest: its buckets, and the sum of the
// waits they counted.
type histBase struct {
	counts histCounts
	sum    uint64
}

func (b *histBase) countsOf() *histCounts {
	if b == nil {
		return nil
	}
	return &b.counts
}

// histBaseline returns the digest's buckets and the sum of the waits they
// count, as a TRUNCATE of the histogram table records them. A statement
// adds to its bucket, then to the sum, so the two cannot be loaded at one
// instant: a statement ending while the 450 buckets are loaded is in the
// baseline's buckets and not in its sum, or the other way round, and stays
// counted in DigestBuckets.Sum and not in its Counts (or the reverse)
// until the next TRUNCATE. So the buckets are loaded between two loads of
// the sum, up to histBaselineTries times, and the try during which the sum
// moved least is kept (one during which it did not move at all ends the
// search): Sum and Counts then disagree by the statements that ended
// during that try, none when the digest paused for a microsecond. MySQL's
// histogram tables have no sum; this one is the exporters'.
func (d *digestStats) histBaseline() *histBase {
	best, moved := &histBase{}, uint64(math.MaxUint64)
	for range histBaselineTries {
		s1 := d.sum.Load()
		counts := histCounts(d.hist.load())
		s2 := d.sum.Load()
		if s2-s1 < moved {
			best.counts, best.sum, moved = counts, s1, s2-s1
		}
		if moved == 0 {
			break
		}
	}
	return best
}

// histBaselineTries bounds histBaseline's tries.
const histBaselineTries = 32

// DigestBuckets is one digest of events_statements_histogram_by_digest as
// a program reads it (Schema.DigestBuckets), with what an exporter needs
// beside the buckets.
type DigestBuckets struct {
	// Counts is COUNT_BUCKET by BUCKET_NUMBER (see StatementHistogramBounds).
	Counts []uint64
	// Sum is the waits of the statements Counts counts, ps: the digest's
	// SUM_TIMER_WAIT, less what it was at the histogram table's last
	// TRUNCATE.
	Sum uint64
	// EventName is the class of the digest's statements (of the first the
	// table counted): statement/sql/select, statement/http/request, ...
	EventName string
	// Sample is the digest's query sample: its wait (ps), when it was seen,
	// and the OpenTelemetry span it ran in (Traced false: none).
	SampleWait   uint64
	SampleSeen   time.Time
	SampleTraced bool
	SampleTrace  [16]byte
	SampleSpan   [8]byte
}

// DigestBuckets returns one digest of events_statements_histogram_by_digest,
// as the table shows it, without making its 450 rows: schema and digest are
// the row's SCHEMA_NAME and DIGEST (in hex). ok is false if the table has
// no such digest (or digest is not 64 hex digits).
func (s *Schema) DigestBuckets(schema, digestHex string) (b DigestBuckets, ok bool) {
	var d digest.Digest
	if len(digestHex) != 2*len(d) {
		return b, false
	}
	if _, err := hex.Decode(d[:], []byte(digestHex)); err != nil {
		return b, false
	}
	s.readMu.RLock()
	defer s.readMu.RUnlock()
	r := s.digests.Load().lookup(schema, &d)
	if r == nil {
		return b, false
	}
	q := r.stats.sample.Load()
	st, h := r.stats.load()
	base := s.histDigestBase[r]
	h = h.sub(base.countsOf())
	b.Counts, b.Sum = h[:], st.Sum
	if r.class != nil {
		b.EventName = r.class.name
	}
	if base != nil {
		b.Sum -= min(b.Sum, base.sum)
	}
	if q != nil {
		b.SampleWait, b.SampleSeen = q.wait, hwclock.WallTime(q.seen)
		b.SampleTraced, b.SampleTrace, b.SampleSpan = q.traced, q.trace, q.span
	}
	return b, true
}

// StatementHistogramGlobal returns the bucket counts of
// events_statements_histogram_global, as the table shows them.
func (s *Schema) StatementHistogramGlobal() []uint64 {
	s.readMu.RLock()
	defer s.readMu.RUnlock()
	h := histCounts(s.stmtHist.load()).sub(s.histGlobalBase)
	return h[:]
}

// EventsStatementsHistogramGlobal returns events_statements_histogram_global:
// every timed statement's wait, digest or not.
func (s *Schema) EventsStatementsHistogramGlobal() []HistogramBucket {
	s.readMu.RLock()
	defer s.readMu.RUnlock()
	h := histCounts(s.stmtHist.load()).sub(s.histGlobalBase)
	return appendBuckets(nil, &h)
}

func init() {
	defineRows("events_statements_summary_by_digest", (*Schema).EventsStatementsSummaryByDigest, func(s *Schema) {
		// A new, empty table: records are never reset under their writers.
		s.digests.Store(newDigestTable(s.digestGen.Add(1), s.cfg.digestsSize, &s.digestLost))
		s.histDigestBase = nil
	})
	defineRows("events_statements_histogram_by_digest", (*Schema).EventsStatementsHistogramByDigest, func(s *Schema) {
		base := map[*digestRecord]*histBase{}
		for _, r := range s.digests.Load().records(nil) {
			base[r] = r.stats.histBaseline()
		}
		s.histDigestBase = base
	})
	defineRows("events_statements_histogram_global", (*Schema).EventsStatementsHistogramGlobal, func(s *Schema) {
		h := histCounts(s.stmtHist.load())
		s.histGlobalBase = &h
	})
}
