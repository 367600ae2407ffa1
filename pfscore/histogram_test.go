package pfscore

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestHistogramBounds checks bucket bounds against the values MySQL's
// histograms.result shows.
func TestHistogramBounds(t *testing.T) {
	for _, c := range []struct {
		bucket    int
		low, high uint64
	}{
		{0, 0, 10000000},
		{1, 10000000, 10471285},
		{10, 15135612, 15848931},
		{440, 6025595860743779, 6309573444802144},
		{449, 9120108393559408, math.MaxUint64},
	} {
		if histBounds[c.bucket] != c.low || histBounds[c.bucket+1] != c.high {
			t.Errorf("bucket %d: [%d, %d), want [%d, %d)", c.bucket, histBounds[c.bucket], histBounds[c.bucket+1], c.low, c.high)
		}
	}
	// Every wait falls in the bucket whose bounds hold it, at the edges too.
	for i := range histBuckets {
		lo, hi := histBounds[i], histBounds[i+1]
		for _, ps := range []uint64{lo, lo + (hi-lo)/2, hi - 1} {
			if b := histBucket(ps); b != i {
				t.Fatalf("histBucket(%d) = %d, want %d (bounds [%d, %d))", ps, b, i, lo, hi)
			}
		}
	}
	if b := histBucket(math.MaxUint64); b != histBuckets-1 {
		t.Errorf("histBucket(max) = %d", b)
	}
}

// TestQuantiles checks QUANTILE_95/99/999 against values worked out by
// hand with MySQL's rule: the upper bound of the first bucket whose
// cumulative count reaches ceil(n*q).
func TestQuantiles(t *testing.T) {
	var h histCounts
	if a, b, c := h.quantiles(); a != 0 || b != 0 || c != 0 {
		t.Errorf("empty histogram: %d %d %d", a, b, c)
	}
	// 100 statements: 90 in bucket 5, 9 in bucket 100, 1 in bucket 300.
	// ceil(95) = 95 and ceil(99) = 99 are reached in bucket 100, ceil(99.9)
	// = 100 in bucket 300.
	h[5], h[100], h[300] = 90, 9, 1
	q95, q99, q999 := h.quantiles()
	if q95 != histBounds[101] || q99 != histBounds[101] || q999 != histBounds[301] {
		t.Errorf("quantiles %d %d %d, want %d %d %d", q95, q99, q999, histBounds[101], histBounds[101], histBounds[301])
	}
	// 1000 statements: 950 in bucket 1, 40 in bucket 2, 9 in bucket 3, 1 in
	// bucket 4: 950 reaches ceil(950); 990 reaches ceil(990); 999 reaches
	// ceil(999).
	h = histCounts{}
	h[1], h[2], h[3], h[4] = 950, 40, 9, 1
	q95, q99, q999 = h.quantiles()
	if q95 != histBounds[2] || q99 != histBounds[3] || q999 != histBounds[4] {
		t.Errorf("quantiles %d %d %d, want %d %d %d", q95, q99, q999, histBounds[2], histBounds[3], histBounds[4])
	}
	// 10 statements, 9 in bucket 1 and 1 in bucket 2: ceil(9.5) = 10 and
	// ceil(9.9) = 10 are reached only in bucket 2 (a floor would stop at 9).
	h = histCounts{}
	h[1], h[2] = 9, 1
	if a, b, c := h.quantiles(); a != histBounds[3] || b != histBounds[3] || c != histBounds[3] {
		t.Errorf("quantiles %d %d %d, want %d for all", a, b, c, histBounds[3])
	}
	// One statement: every quantile is its bucket's upper bound.
	h = histCounts{}
	h[7] = 1
	if a, b, c := h.quantiles(); a != histBounds[8] || b != a || c != a {
		t.Errorf("one statement: %d %d %d", a, b, c)
	}
	rows := appendBuckets(nil, &h)
	if len(rows) != histBuckets || rows[6].CountBucketAndLower != 0 || rows[7].CountBucket != 1 ||
		rows[7].BucketQuantile.String() != "1.000000" || rows[449].CountBucketAndLower != 1 || rows[0].BucketQuantile.String() != "0.000000" {
		t.Errorf("bucket rows: %+v %+v %+v", rows[6], rows[7], rows[449])
	}
}

// TestHistogramTables runs statements of known waits through the tables.
func TestHistogramTables(t *testing.T) {
	f := newStmtFixture(t)
	for range 3 {
		f.run(nil, f.sel, "SELECT 1", StatementResult{})
	}
	g := f.s.EventsStatementsHistogramGlobal()
	var n uint64
	for _, b := range g {
		n += b.CountBucket
	}
	if len(g) != histBuckets || n != 3 || g[449].CountBucketAndLower != 3 {
		t.Errorf("histogram_global: %d rows, %d statements", len(g), n)
	}
	d := f.s.EventsStatementsHistogramByDigest()
	if len(d) != histBuckets || d[0].Digest == "" || d[0].SchemaName != "app" || d[449].CountBucketAndLower != 3 {
		t.Errorf("histogram_by_digest: %d rows, %+v", len(d), d[449])
	}
	// TRUNCATE of a histogram restarts its buckets, and the quantiles.
	for _, table := range []string{"events_statements_histogram_global", "events_statements_histogram_by_digest"} {
		if err := f.s.Truncate(table); err != nil {
			t.Fatal(err)
		}
	}
	if g := f.s.EventsStatementsHistogramGlobal(); g[449].CountBucketAndLower != 0 {
		t.Errorf("histogram_global after TRUNCATE: %+v", g[449])
	}
	if d := f.s.EventsStatementsHistogramByDigest(); d[449].CountBucketAndLower != 0 {
		t.Errorf("histogram_by_digest after TRUNCATE: %+v", d[449])
	}
	if r := f.s.EventsStatementsSummaryByDigest(); r[0].Quantile95 != 0 || r[0].CountStar != 3 {
		t.Errorf("summary after a histogram TRUNCATE: %+v", r[0])
	}
	f.run(nil, f.sel, "SELECT 1", StatementResult{})
	if g := f.s.EventsStatementsHistogramGlobal(); g[449].CountBucketAndLower != 1 {
		t.Errorf("histogram_global after a statement: %+v", g[449])
	}
}

// TestDigestHistogram: DigestBuckets and StatementHistogramGlobal give
// the counts the histogram tables show, TRUNCATE included (and the sum of
// what the buckets count); an unknown or malformed digest is not found.
func TestDigestHistogram(t *testing.T) {
	f := newStmtFixture(t)
	for _, q := range []string{"SELECT 1", "SELECT 2", "SELECT a FROM t"} {
		f.run(nil, f.sel, q, StatementResult{})
	}
	check := func(when string) {
		t.Helper()
		rows := f.s.EventsStatementsHistogramByDigest()
		byKey := map[ByDigest][]uint64{}
		for _, r := range rows {
			byKey[r.ByDigest] = append(byKey[r.ByDigest], r.CountBucket)
		}
		if len(byKey) != 2 {
			t.Fatalf("%s: %d digests", when, len(byKey))
		}
		for k, want := range byKey {
			got, ok := f.s.DigestBuckets(k.SchemaName, k.Digest)
			if got.EventName != f.sel.Name() {
				t.Errorf("%s: DigestBuckets(%q, %s).EventName %q, want its statements' class %s", when, k.SchemaName, k.Digest, got.EventName, f.sel.Name())
			}
			if !ok || !slices.Equal(got.Counts, want) {
				t.Errorf("%s: DigestBuckets(%q, %s) = %v, %v; the table has %v", when, k.SchemaName, k.Digest, got.Counts, ok, want)
			}
			var n uint64
			for _, c := range got.Counts {
				n += c
			}
			if n == 0 && got.Sum != 0 || n != 0 && got.Sum == 0 {
				t.Errorf("%s: %d statements with a sum of %d ps", when, n, got.Sum)
			}
		}
		var want []uint64
		for _, r := range f.s.EventsStatementsHistogramGlobal() {
			want = append(want, r.CountBucket)
		}
		if got := f.s.StatementHistogramGlobal(); !slices.Equal(got, want) {
			t.Errorf("%s: StatementHistogramGlobal %v, the table %v", when, got, want)
		}
	}
	check("before TRUNCATE")
	f.run(nil, f.sel, "SELECT 3", StatementResult{})
	if err := f.s.Truncate("events_statements_histogram_by_digest"); err != nil {
		t.Fatal(err)
	}
	f.run(nil, f.sel, "SELECT 4", StatementResult{})
	check("after TRUNCATE")
	d := f.s.EventsStatementsSummaryByDigest()[0]
	for _, c := range []struct{ schema, digest string }{
		{d.SchemaName + "x", d.Digest}, {d.SchemaName, strings.Repeat("0", 64)}, {d.SchemaName, d.Digest[:10]}, {d.SchemaName, strings.Repeat("z", 64)},
	} {
		if got, ok := f.s.DigestBuckets(c.schema, c.digest); ok {
			t.Errorf("DigestBuckets(%q, %q) found %v", c.schema, c.digest, got)
		}
	}
	if b := StatementHistogramBounds(); len(b) != histBuckets+1 || b[1] != histBaseTimer || b[histBuckets] != math.MaxUint64 {
		t.Errorf("bounds: %d, %v ... %v", len(b), b[:2], b[len(b)-1])
	}
}

// TestDigestBucketsSumAfterTruncate: with no statement running, a TRUNCATE
// of the histogram table takes the sum off with the buckets, exactly: the
// statements after it count in both, with their own waits.
func TestDigestBucketsSumAfterTruncate(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	run := func(wait uint64) {
		st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1", Schema: "app"})
		st.EndAt(st.start+wait, StatementResult{})
	}
	const ms = 1_000_000_000 // ps
	run(3 * ms)
	run(5 * ms)
	if err := f.s.Truncate("events_statements_histogram_by_digest"); err != nil {
		t.Fatal(err)
	}
	run(7 * ms)
	row := f.s.EventsStatementsSummaryByDigest()[0]
	b, ok := f.s.DigestBuckets(row.SchemaName, row.Digest)
	var n uint64
	for _, c := range b.Counts {
		n += c
	}
	if !ok || n != 1 || b.Sum != 7*ms || row.SumTimerWait != 15*ms {
		t.Errorf("after TRUNCATE and one 7 ms statement: %d statements, Sum %d ps (SUM_TIMER_WAIT %d); want 1 and 7 ms (15 ms)", n, b.Sum, row.SumTimerWait)
	}
}

// TestHistBucketTable checks histBucket's table against a search of all
// the bounds: at both ends of every sixteenth of an octave the table
// covers, and for random waits; and that no sixteenth holds more than two
// bounds, the steps histBucket takes past its table's bucket.
func TestHistBucketTable(t *testing.T) {
	check := func(ps uint64) {
		t.Helper()
		if got, want := histBucket(ps), histBucketSearch(ps, 0, histBuckets); got != want {
			t.Fatalf("histBucket(%d) = %d, want %d", ps, got, want)
		}
	}
	for n := uint(24); n <= 64; n++ {
		for m := range uint64(16) {
			lo := uint64(1)<<(n-1) | m<<(n-5)
			hi := lo + 1<<(n-5) - 1 // the sixteenth's last wait
			check(lo)
			check(hi)
			if lo >= histBaseTimer {
				if d := histBucketSearch(hi, 0, histBuckets) - int(histSub[(n-1)<<4|uint(m)]); d > 2 {
					t.Fatalf("bit length %d, sixteenth %d: %d bounds", n, m, d)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(r.Uint64() >> r.IntN(64))
	}
}

// BenchmarkHistBucket times the bucket lookup every statement's end makes
// (twice: the global histogram and the digest's), over waits spread from
// 10 µs to 10 s.
func BenchmarkHistBucket(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	waits := make([]uint64, 1024)
	for i := range waits {
		waits[i] = uint64(1e7 * math.Pow(10, 6*r.Float64()))
	}
	b.ReportAllocs()
	sum := 0
	for i := 0; b.Loop(); i++ {
		sum += histBucket(waits[i&1023])
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
