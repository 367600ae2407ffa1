package pfscore

// Review 18: adversarial reproducers for the review17 fixes (commit
// 12adc37). Every test here FAILS on that code; each says what it shows
// and how it fails.

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestReview18HistogramTruncateSumBaselineRace: the TRUNCATE of
// events_statements_histogram_by_digest takes each digest's baseline as
// its SUM_TIMER_WAIT, then its 450 buckets (table_digests.go: "the sum
// before the buckets: its writer adds the bucket first"). That order is
// the wrong one for a baseline: a statement whose bucket is added after
// the sum was loaded, but before its bucket is (a window of 450 atomic
// loads), is in the baseline's buckets and not in its sum. Taken off the
// table's values, the statement stays in DigestBuckets' Sum and not in
// its Counts, for ever (until the next TRUNCATE): every statement here
// waits exactly 10 ms, and once the writers stop, Sum is 10 ms more than
// total(Counts) x 10 ms. (For a read, sum then buckets is right: Sum may
// lag Counts, and catches up.)
// Fails (within the first ~60 rounds here, 5 runs of 5): e.g. "after TRUNCATE #4:
// Sum 2880000000000 ps, Counts 101 statements of 10 ms = 1010000000000 ps".
func TestReview18HistogramTruncateSumBaselineRace(t *testing.T) {
	s, err := New(WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	tc := s.MustRegister("thread/app/worker")
	const wait = 10_000_000_000 // 10 ms, ps
	run := func(th *Thread) {
		st := s.StartSQL(th, StatementInfo{Text: "SELECT a FROM t", Schema: "shop"})
		st.EndAt(st.start+wait, StatementResult{}) // exactly 10 ms
	}
	th0 := s.NewThread(tc, ThreadOptions{})
	run(th0)
	th0.End()
	var dg string
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if r.DigestText == "SELECT `a` FROM `t`" {
			dg = r.Digest
		}
	}
	if dg == "" {
		t.Fatal("no digest")
	}
	for k := range 1000 {
		var stop atomic.Bool
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				th := s.NewThread(tc, ThreadOptions{})
				defer th.End()
				for i := 0; i < 100 || !stop.Load(); i++ {
					run(th)
				}
			}()
		}
		for range 20 {
			if err := s.Truncate("events_statements_histogram_by_digest"); err != nil {
				t.Fatal(err)
			}
		}
		stop.Store(true)
		wg.Wait()
		b, ok := s.DigestBuckets("shop", dg)
		if !ok {
			t.Fatal("DigestBuckets: no digest")
		}
		var n uint64
		for _, c := range b.Counts {
			n += c
		}
		// The baseline tries to load the buckets while no sum moves, and
		// keeps the try with the least movement: under writers that never
		// pause, the statements ending during that try's loads stay off by
		// one each between Sum and Counts. Before the fix, every statement
		// ending during the 450 loads did (177 in one run); on this 2-core
		// machine with two writers and preemption, a handful now.
		if d := int64(b.Sum) - int64(n*wait); d > 20*wait || d < -20*wait {
			t.Fatalf("after TRUNCATE #%d: Sum %d ps, Counts %d statements of 10 ms = %d ps", k, b.Sum, n, n*wait)
		}
	}
}
