package store

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Failed on 6e6d93f (about one run in a hundred, more under -race; see
// TestReview24NoLossWhileAnotherGrowsConcurrentSafe for the window); fixed.
// Several allocators churn records of a container
// at MaxPages while a reclaimer retires its idle page again and again. Each
// allocator holds at most one record and the pages that can churn have more
// records than there are allocators, so no allocation may ever be lost: an
// allocator that finds every record of a page DIRTY would need more
// claimants (kept or given back) than there are allocators. Each allocation
// is also checked to be the allocator's own (its tag survives until it frees
// the record) and to lie in a published page (a retired page is never
// handed out).
//
// Configurations: MaxPages 1 (the only page is retired, allocators grow it
// again, racing one another), and MaxPages 2 with one page held full for
// good (the table stays at its maximum while the second page churns: the
// case of TestNoSpuriousLostDuringRetire, with several allocators).
func TestReview24ConcurrentAllocatorsNeverLostDuringRetire(t *testing.T) {
	for _, tc := range []struct {
		maxPages, held int
	}{{1, 0}, {2, 8}} {
		t.Run(fmt.Sprintf("maxPages=%d", tc.maxPages), func(t *testing.T) {
			const ps, workers = 8, 4
			c := MustNewContainer[lostRec]("review24", ContainerConfig{PageSize: ps, MaxPages: tc.maxPages, ReclaimIdle: time.Nanosecond, KeepEmpty: -1})
			for range tc.held {
				r, d := c.Allocate()
				r.Lock.DirtyToAllocated(d)
			}
			iters := 100_000
			if testing.Short() {
				iters = 20_000
			}
			var stop atomic.Bool
			var failed atomic.Pointer[string]
			fail := func(s string) { failed.CompareAndSwap(nil, &s) }
			var wg, rwg sync.WaitGroup
			rwg.Add(1)
			var retired atomic.Int64
			go func() { // the reclaimer
				defer rwg.Done()
				now := time.Unix(0, 0)
				for !stop.Load() {
					now = now.Add(time.Millisecond)
					retired.Add(int64(c.Reclaim(now)))
				}
			}()
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range iters {
						r, d := c.Allocate()
						if r == nil {
							fail(fmt.Sprintf("worker %d: allocation %d lost", w, i))
							return
						}
						tag := uint64(w)<<32 | uint64(i)
						r.Value.a.Set(tag)
						r.Lock.DirtyToAllocated(d)
						if p := c.pages[r.page].Load(); p == nil || &p.recs[r.pos] != r {
							fail(fmt.Sprintf("worker %d: holds a record of an unpublished page", w))
							return
						}
						if v := r.Value.a.Load(); v != tag {
							fail(fmt.Sprintf("worker %d: its record was overwritten (%#x, want %#x)", w, v, tag))
							return
						}
						c.Free(r)
					}
				}()
			}
			wg.Wait()
			stop.Store(true)
			rwg.Wait()
			if s := failed.Load(); s != nil {
				t.Error(*s)
			}
			if n := c.Lost(); n != 0 {
				t.Errorf("%d allocations lost; at most %d records are ever wanted", n, workers+tc.held)
			}
			if c.Pages() > tc.maxPages {
				t.Errorf("%d pages published, MaxPages %d", c.Pages(), tc.maxPages)
			}
			t.Logf("%d workers x %d allocations, %d pages retired", workers, iters, retired.Load())
		})
	}
}

// Failed on 6e6d93f; fixed. Two allocators race on an empty container of one
// page of two records: one grows the page, and the other must take the
// page's second record, not count itself lost. grow raised the published
// count before it stored the new generation, so an allocator whose walk had
// begun before the growth could see the table at MaxPages and the
// generation it started at, and count a loss without taking the mutex
// (allocateSlow's first check). The same window, on a container whose page
// was retired and is grown back, made
// TestReview24ConcurrentAllocatorsNeverLostDuringRetire fail about once in a hundred runs. Each round uses a
// fresh container; the second allocator starts after a delay that sweeps
// across the first one's growth.
func TestReview24NoLossWhileAnotherGrowsConcurrentSafe(t *testing.T) {
	const ps = 2
	var phase atomic.Uint64 // 2k+1: round k started (container in cur); 2k+2: B done
	var cur atomic.Pointer[Container[mutantRec]]
	var offset atomic.Int64
	var stop atomic.Bool
	var jitter atomic.Uint64
	var bGot atomic.Bool
	// A waiter yields now and then: an allocator that slept on the
	// container's mutex is woken onto the spinning goroutine's P.
	await := func(v uint64) bool {
		for n := 1; phase.Load() < v; n++ {
			if stop.Load() {
				return false
			}
			if n%256 == 0 {
				runtime.Gosched()
			}
		}
		return true
	}
	var done sync.WaitGroup
	done.Add(2)
	go func() { // B
		defer done.Done()
		for k := uint64(0); await(2*k + 1); k++ {
			c := cur.Load()
			off := offset.Load()
			mutantSpin(int(off), &jitter)
			r, _ := c.Allocate()
			bGot.Store(r != nil)
			phase.Store(2*k + 2)
		}
	}()
	var failure string
	rounds := 0
	go func() { // A
		defer done.Done()
		defer stop.Store(true)
		rng := rand.New(rand.NewPCG(3, 4))
		budget := newMutantBudget()
		for k := 0; budget.more(k); k++ {
			c := MustNewContainer[mutantRec]("review24_grow", ContainerConfig{PageSize: ps, MaxPages: 1})
			cur.Store(c)
			off := rng.IntN(512)
			offset.Store(int64(off - 256))
			phase.Store(2*uint64(k) + 1)
			if off < 256 {
				mutantSpin(256-off, &jitter)
			}
			r, _ := c.Allocate()
			if !await(2*uint64(k) + 2) {
				return
			}
			if r == nil || !bGot.Load() || c.Lost() != 0 {
				failure = fmt.Sprintf("round %d: %d of two allocations lost in a container of %d records", k, c.Lost(), ps)
				return
			}
			rounds++
		}
	}()
	done.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	t.Logf("%d rounds", rounds)
}
