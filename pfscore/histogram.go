package pfscore

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"sync/atomic"
)

// Statement latency histograms: MySQL's 450 buckets (pfs_histogram.cc).
//
// Bucket 0 holds waits below 10 µs; bucket i, for i from 1 to 448, waits in
// [bound[i], bound[i+1]), each bound 10^(1/50) (4.7%) above the one before,
// so every 50 buckets span a factor of ten; bucket 449 everything from about
// 9.1 hours up. The bounds are MySQL's to the picosecond: the same double
// accumulator, truncated to an integer at every step, so BUCKET_TIMER_LOW
// and BUCKET_TIMER_HIGH and the quantiles derived from them match the
// server's.

const (
	histBuckets    = 450
	histBaseTimer  = 10_000_000 // 10 µs in ps: the top of bucket 0
	histBaseFactor = 1.0471285480508996
)

// histBounds[i] is bucket i's lower bound in picoseconds, histBounds[i+1]
// its upper bound (exclusive); histBounds[450] is the largest uint64.
var histBounds = func() (b [histBuckets + 1]uint64) {
	cur := float64(histBaseTimer)
	for i := 1; i < histBuckets; i++ {
		b[i] = uint64(cur)
		cur *= histBaseFactor
	}
	b[histBuckets] = math.MaxUint64
	return b
}()

// histSub maps a wait's bit length and the four bits below its top bit to
// the bucket of the least wait with those bits: entry (n-1)<<4 | m is the
// bucket of 2^(n-1) + m*2^(n-5). Such a sixteenth of an octave spans a
// factor of at most 17/16, less than two buckets' (1.0471^2 = 1.096), so a
// wait lies in that bucket or one of the next two. Only bit lengths from
// that of histBaseTimer up are filled: shorter waits are in bucket 0.
var histSub = func() (t [64 << 4]uint16) {
	for n := bits.Len64(histBaseTimer); n <= 64; n++ {
		for m := range uint64(16) {
			t[(n-1)<<4|int(m)] = uint16(histBucketSearch(1<<(n-1)|m<<(n-5), 0, histBuckets))
		}
	}
	return t
}()

// histBucket returns the bucket of a wait of ps picoseconds: the i with
// histBounds[i] <= ps < histBounds[i+1]. A table lookup and at most two
// comparisons (histSub), not a search: it runs for every statement.
func histBucket(ps uint64) int {
	if ps < histBaseTimer {
		return 0
	}
	n := uint(bits.Len64(ps)) // at least 24: histBaseTimer is 10^7
	b := int(histSub[(n-1)<<4|uint(ps>>(n-5))&15])
	for b < histBuckets-1 && histBounds[b+1] <= ps {
		b++
	}
	return b
}

// histBucketSearch returns histBucket(ps), given lo <= histBucket(ps) < hi.
func histBucketSearch(ps uint64, lo, hi int) int {
	for hi-lo > 1 { // histBounds[lo] <= ps < histBounds[hi]
		m := int(uint(lo+hi) / 2)
		if histBounds[m] <= ps {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// histogram is a statement histogram any goroutine adds to.
type histogram [histBuckets]atomic.Uint64

// load copies the buckets.
func (h *histogram) load() (out [histBuckets]uint64) {
	for i := range h {
		out[i] = h[i].Load()
	}
	return out
}

// histCounts are a histogram's buckets as a reader copied them.
type histCounts [histBuckets]uint64

// total returns the count of the histogram's statements.
func (h *histCounts) total() (n uint64) {
	for _, c := range h {
		n += c
	}
	return n
}

// sub returns h less a baseline (TRUNCATE of a histogram table); a bucket
// never goes below zero.
func (h histCounts) sub(base *histCounts) histCounts {
	if base == nil {
		return h
	}
	for i := range h {
		if h[i] > base[i] {
			h[i] -= base[i]
		} else {
			h[i] = 0
		}
	}
	return h
}

// quantiles returns QUANTILE_95, QUANTILE_99 and QUANTILE_999 as MySQL
// computes them (table_esms_by_digest.cc): the upper bound, in
// picoseconds, of the first bucket whose cumulative count reaches the
// ceiling of n*q; zeros for an empty histogram.
func (h *histCounts) quantiles() (q95, q99, q999 uint64) {
	n := h.total()
	if n == 0 {
		return 0, 0, 0
	}
	t95, t99, t999 := (n*95+99)/100, (n*99+99)/100, (n*999+999)/1000
	var cum uint64
	for i, c := range h {
		cum += c
		if q95 == 0 && cum >= t95 {
			q95 = histBounds[i+1]
		}
		if q99 == 0 && cum >= t99 {
			q99 = histBounds[i+1]
		}
		if cum >= t999 {
			q999 = histBounds[i+1]
			break
		}
	}
	return q95, q99, q999
}

// HistogramBucket is a row of events_statements_histogram_global, and the
// bucket columns of events_statements_histogram_by_digest.
type HistogramBucket struct {
	BucketNumber        uint64   `pfs:"BUCKET_NUMBER,dim"`
	BucketTimerLow      uint64   `pfs:"BUCKET_TIMER_LOW,attr,ps"`
	BucketTimerHigh     uint64   `pfs:"BUCKET_TIMER_HIGH,attr,ps"`
	CountBucket         uint64   `pfs:"COUNT_BUCKET,counter"`
	CountBucketAndLower uint64   `pfs:"COUNT_BUCKET_AND_LOWER,counter"`
	BucketQuantile      Fraction `pfs:"BUCKET_QUANTILE,gauge"`
}

// A Fraction is a DOUBLE(7,6) column: a value in [0, 1] shown, as MySQL
// shows it, with six decimals.
type Fraction float64

func (f Fraction) String() string { return strconv.FormatFloat(float64(f), 'f', 6, 64) }

// UnmarshalText reads a Fraction as String shows it (Scan uses it).
func (f *Fraction) UnmarshalText(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("pfs: bad fraction %q: %w", b, err)
	}
	*f = Fraction(v)
	return nil
}

// appendBuckets appends h's 450 rows, as MySQL shows them: each bucket's
// bounds, its count, the cumulative count and the fraction of all events at
// or below it (0 for an empty histogram).
func appendBuckets(out []HistogramBucket, h *histCounts) []HistogramBucket {
	var n uint64
	for _, c := range h {
		n += c
	}
	var cum uint64
	for i, c := range h {
		cum += c
		var q Fraction
		if n != 0 {
			q = Fraction(float64(cum) / float64(n))
		}
		out = append(out, HistogramBucket{uint64(i), histBounds[i], histBounds[i+1], c, cum, q})
	}
	return out
}
