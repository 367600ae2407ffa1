package pfscore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests aimed at mutations internal/mutate plants that the broader stress
// tests did not catch.

// TestTruncateExtremesOfNewEvents: after a TRUNCATE, two waits of clearly
// different lengths give MIN < MAX: the first event of the new epoch
// replaced the old extremes, and the second was compared with it.
func TestTruncateExtremesOfNewEvents(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	wait := func(d time.Duration) {
		var w WaitState
		if f.m.BeginWait(&w, th, OpLock) {
			time.Sleep(d)
			w.EndWait(-1)
		}
	}
	wait(3 * time.Millisecond)
	for _, table := range []string{"events_waits_summary_by_instance", "events_waits_summary_by_thread_by_event_name"} {
		if err := f.s.Truncate(table); err != nil {
			t.Fatal(err)
		}
		waitOnce(f.m, th)
		wait(200 * time.Microsecond)
		for _, r := range findRows(t, f.s, table, map[string]Value{"EVENT_NAME": f.mutex.Name()}) {
			cnt, sum, mn, mx := r["COUNT_STAR"].(uint64), r["SUM_TIMER_WAIT"].(uint64), r["MIN_TIMER_WAIT"].(uint64), r["MAX_TIMER_WAIT"].(uint64)
			if cnt != 2 || mn >= mx || mx > sum || mx < uint64(200*time.Microsecond)*1000 {
				t.Errorf("%s after TRUNCATE, a short and a 200 us wait: %v", table, r)
			}
		}
	}
}

// mutantsBudget is how long the concurrency tests below run.
func mutantsBudget() time.Duration {
	if testing.Short() {
		return 300 * time.Millisecond
	}
	return time.Second
}

// TestGlobalSummaryMonotoneWhileInstancesDieConcurrentSafe: instances that
// are destroyed during a read count once, live or rolled up (instMu).
func TestGlobalSummaryMonotoneWhileInstancesDieConcurrentSafe(t *testing.T) {
	f := newFixture(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m := f.s.NewSyncInstance(f.mutex, "mutants_test.go:1")
				for range 100 {
					waitOnce(m, nil)
				}
				m.Destroy()
			}
		}()
	}
	defer wg.Wait()
	defer stop.Store(true)
	var prev uint64
	reads := 0
	for deadline := time.Now().Add(mutantsBudget()); time.Now().Before(deadline); reads++ {
		n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.mutex.Name()})
		if n < prev {
			t.Fatalf("global COUNT_STAR went down: %d -> %d", prev, n)
		}
		prev = n
	}
	t.Logf("%d reads", reads)
}

// TestThreadsShownOnlyWhenReadyConcurrentSafe: a thread appears in the
// threads table only once it is set up: its INSTRUMENTED is decided.
func TestThreadsShownOnlyWhenReadyConcurrentSafe(t *testing.T) {
	f := newFixture(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
				th.End()
			}
		}()
	}
	defer wg.Wait()
	defer stop.Store(true)
	reads := 0
	for deadline := time.Now().Add(mutantsBudget()); time.Now().Before(deadline); reads++ {
		for _, r := range selectMap(t, f.s, "threads") {
			if r["INSTRUMENTED"] != "YES" {
				t.Fatalf("a thread shown before it was set up: %v", r)
			}
		}
	}
	t.Logf("%d reads", reads)
}

// TestActorSummariesMonotoneWhileThreadsEndConcurrentSafe: a thread that
// ends during a read of by_account, by_user or by_host counts once, live or
// rolled up (End rolls up and leaves the live lists under the rows' locks).
// The threads do their waits first and only end during the reads, so the
// totals do not change: any decrease is a thread counted nowhere.
func TestActorSummariesMonotoneWhileThreadsEndConcurrentSafe(t *testing.T) {
	f := newFixture(t)
	opts := []ThreadOptions{{User: "u", Host: "h"}, {User: "u"}, {Host: "h"}}
	tables := []struct {
		name  string
		where map[string]Value
	}{
		{"events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "u", "HOST": "h", "EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_host_by_event_name", map[string]Value{"HOST": "h", "EVENT_NAME": f.mutex.Name()}},
	}
	reads, rounds := 0, 0
	for deadline := time.Now().Add(mutantsBudget()); time.Now().Before(deadline); rounds++ {
		const n = 60
		ending := make(chan *Thread, n)
		for i := range n {
			th := f.s.NewThread(f.thread, opts[i%len(opts)])
			for range 50 {
				waitOnce(f.m, th)
			}
			ending <- th
		}
		close(ending)
		want := make([]uint64, len(tables))
		for i, tc := range tables {
			want[i] = count(t, f.s, tc.name, tc.where)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for th := range ending {
					th.End()
					time.Sleep(time.Microsecond) // leave the reader time between ends
				}
			}()
		}
		for ; len(ending) > 0; reads++ {
			for i, tc := range tables {
				if got := count(t, f.s, tc.name, tc.where); got != want[i] {
					wg.Wait()
					t.Fatalf("%s COUNT_STAR %d while threads end, want %d throughout", tc.name, got, want[i])
				}
			}
		}
		wg.Wait()
	}
	t.Logf("%d reads in %d rounds", reads, rounds)
}
