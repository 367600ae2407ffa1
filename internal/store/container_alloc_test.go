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

// TestAllocateRetriesNewPagesConcurrentSafe targets allocateSlow's retry of
// the pages created since the walk began (see internal/mutate,
// alloc-no-retry-new-pages, which removes it). Each round, a container whose
// only page is full receives two allocations at once. Both walks see one full
// page; whichever takes the growth mutex first creates page 1 and claims one
// of its records. The other either sees page 1 in its walk (it loaded the
// page-table length after page 1 was published) or, having loaded the growth
// generation before page 1 was created, finds the generation moved in
// allocateSlow and must try page 1, which has free records, instead of
// creating a page of its own. So on every schedule the two allocations
// succeed and leave exactly two pages; without the retry, two allocators
// whose walks both end before page 1 is published create two pages.
//
// The two goroutines run in lock step, one round at a time, with a small
// random offset between their calls; page creation (allocating and
// initializing a page of records) is long enough that most rounds in which
// both goroutines run at once overlap the window. Nothing is asserted about
// time.
func TestAllocateRetriesNewPagesConcurrentSafe(t *testing.T) {
	const pageSize = 256
	var (
		phase  atomic.Uint64 // 2k+1: round k started; 2k+2: the helper's allocation returned
		offset atomic.Int64  // > 0: the driver spins that long before allocating; < 0: the helper does
		stop   atomic.Bool
		jitter atomic.Uint64
		c      *Container[mutantRec] // set by the driver before it starts a round
		helped *Record[mutantRec]    // the helper's record, read after phase 2k+2
	)
	await := func(v uint64) bool {
		var b mutantBackoff
		for phase.Load() < v {
			if stop.Load() {
				return false
			}
			b.pause()
		}
		return true
	}
	var done sync.WaitGroup
	done.Add(1)
	go func() { // the helper
		defer done.Done()
		for k := uint64(0); await(2*k + 1); k++ {
			cc := c
			mutantSpin(int(-offset.Load()), &jitter)
			helped, _ = cc.Allocate()
			phase.Store(2*k + 2)
		}
	}()

	rng := rand.New(rand.NewPCG(3, 4))
	const spread = 64
	limit, maxRounds := time.Second, 1_000_000
	if testing.Short() {
		limit, maxRounds = 250*time.Millisecond, 200_000
	}
	start := time.Now()
	var failure string
	rounds := 0
	for k := uint64(0); rounds < maxRounds && time.Since(start) < limit; k++ {
		cc := MustNewContainer[mutantRec]("alloc_retry", ContainerConfig{PageSize: pageSize, MaxPages: 4})
		if r, _ := cc.Allocate(); r == nil {
			failure = "the first allocation failed"
			break
		}
		// Claim the other records of page 0 directly: an Allocate per record
		// would cost a walk over the page each.
		p0 := cc.pages[0].Load()
		for i := range p0.recs {
			p0.recs[i].Lock.FreeToDirty()
		}
		// A lap over the full page sets its full flag, so that both walks
		// below are short.
		if r, _, _ := p0.allocate(); r != nil {
			failure = "a full page had a FREE record"
			break
		}
		c = cc
		off := -spread + rng.IntN(2*spread+1)
		offset.Store(int64(off))
		phase.Store(2*k + 1)
		mutantSpin(off, &jitter)
		mine, _ := cc.Allocate()
		// The helper may be parked on the growth mutex, and woken onto
		// this goroutine's P: yield rather than spin (the window is past).
		for phase.Load() < 2*k+2 {
			runtime.Gosched()
		}
		switch {
		case mine == nil || helped == nil:
			failure = fmt.Sprintf("round %d: an allocation failed with room in the container (lost %d)", k, cc.Lost())
		case mine == helped:
			failure = fmt.Sprintf("round %d: both allocations returned the same record", k)
		case cc.Pages() != 2:
			failure = fmt.Sprintf("round %d: two allocations into a full page left %d pages, want 2 (the second page had %d free records)",
				k, cc.Pages(), pageSize-2)
		}
		if failure != "" {
			break
		}
		rounds++
	}
	stop.Store(true)
	done.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	t.Logf("%d rounds", rounds)
}
