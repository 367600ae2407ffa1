package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// The tests of this file aim at single steps of the container's lock-free
// protocols: Reclaim's step 2 (a compare-and-swap) and step 3 (the re-scan),
// and page.allocate's conditional full flag (see internal/mutate, which
// removes each). Each step matters only when another goroutine acts inside a
// window of a few instructions, so each test replays one short interleaving
// many times, in lock step, with an offset between the two goroutines that
// adapts until they meet around the window, and checks a property that holds
// on every schedule. None asserts anything about time.

// mutantRec is a minimal pointer-free record.
type mutantRec struct{ a owned.Uint64 }

// mutantBudget bounds a test of this file: it runs for a short while, or
// longer, up to a hard limit, while it has done too few rounds (a loaded
// machine may seldom run its two goroutines at once), and never more than a
// maximum number of rounds.
type mutantBudget struct {
	start                time.Time
	soft, hard           time.Duration
	minRounds, maxRounds int
}

func newMutantBudget() mutantBudget {
	if testing.Short() {
		return mutantBudget{time.Now(), 250 * time.Millisecond, time.Second, 5_000, 200_000}
	}
	return mutantBudget{time.Now(), time.Second, 2 * time.Second, 20_000, 1_000_000}
}

// more reports whether to run another round after rounds.
func (b mutantBudget) more(rounds int) bool {
	if rounds >= b.maxRounds {
		return false
	}
	d := time.Since(b.start)
	return d < b.soft || rounds < b.minRounds && d < b.hard
}

// mutantSpin burns about n atomic loads: it moves one goroutine's next step
// across another's window, with no clock and no sleep.
func mutantSpin(n int, w *atomic.Uint64) {
	for range n {
		w.Load()
	}
}

// mutantBackoff is the pause of a goroutine that spins until another acts.
// The goroutines of these tests spin, so that each keeps its own P and they
// act at once (runtime.Gosched could leave both taking turns on one P). A
// wait longer than a millisecond (one P, a GC) sleeps between its checks.
type mutantBackoff struct {
	n     int
	since time.Time
}

func (b *mutantBackoff) pause() {
	if b.n++; b.n%1024 != 0 {
		return
	}
	if b.since.IsZero() {
		b.since = time.Now()
	} else if time.Since(b.since) > time.Millisecond {
		time.Sleep(50 * time.Microsecond)
	}
}

// reclaimRounds runs rounds of two back-to-back Reclaim calls on a container
// of one page, in lock step with an actor goroutine, the only one to allocate
// or free. Round k:
//
//  1. the actor calls release, then allocates and frees a record of the page
//     (growing the page back if it was retired): the page's frees counter
//     moves, so the first call only starts the page's idle clock;
//  2. the first Reclaim call runs;
//  3. the second one starts, a millisecond of fake time later (past
//     ReclaimIdle: it retires the page if it is still idle), and with it the
//     actor, which calls act with the page;
//  4. once the second call has returned, the actor calls check; a non-empty
//     result fails the test.
//
// Before step 3 the actor or the reclaimer spins by an offset that adapts: the
// actor starts earlier after a round in which the second call retired the
// page, later after one in which it did not. So act lands around the second
// call's step 2, where the windows are, whatever the machine's speed. It
// returns the number of rounds and of pages retired.
func reclaimRounds(t *testing.T, c *Container[mutantRec], release func(), act func(p *page[mutantRec]), check func(p *page[mutantRec], round int) string) (rounds, retired int) {
	t.Helper()
	spread := c.PageSize() / 4
	var phase atomic.Uint64 // 3k+1: round k requested; 3k+2: first call returned; 3k+3: second call returned
	var offset atomic.Int64 // > 0: the actor spins that long before act; < 0: the reclaimer does before the second call
	var stop atomic.Bool
	var jitter atomic.Uint64
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
	done.Add(2)
	go func() { // the reclaimer
		defer done.Done()
		now := time.Unix(0, 0)
		for k := uint64(0); await(3*k + 1); k++ {
			now = now.Add(time.Millisecond)
			c.Reclaim(now)
			off := offset.Load()
			phase.Store(3*k + 2)
			mutantSpin(int(-off), &jitter)
			now = now.Add(time.Millisecond)
			c.Reclaim(now)
			phase.Store(3*k + 3)
		}
	}()
	var failure string
	go func() { // the actor
		defer done.Done()
		defer stop.Store(true)
		rng := rand.New(rand.NewPCG(1, 2))
		delay := 0
		budget := newMutantBudget()
		for k := 0; budget.more(k); k++ {
			release()
			p := c.pages[0].Load()
			if p == nil {
				r, _ := c.Allocate() // grows the page back
				if r == nil {
					failure = "an allocation in an empty container failed"
					return
				}
				c.Free(r)
				p = c.pages[0].Load()
			} else if r, _, _ := p.allocate(); r != nil {
				c.Free(r)
			}
			off := delay - spread + rng.IntN(2*spread+1)
			offset.Store(int64(off))
			phase.Store(3*uint64(k) + 1)
			if !await(3*uint64(k) + 2) {
				return
			}
			mutantSpin(off, &jitter)
			act(p)
			if !await(3*uint64(k) + 3) {
				return
			}
			step := 1 + max(delay, -delay)/16
			if c.pages[0].Load() != p {
				retired++
				delay -= step
			} else {
				delay += step
			}
			delay = min(max(delay, -1<<16), 1<<16)
			if failure = check(p, k); failure != "" {
				return
			}
			rounds++
		}
	}()
	done.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	return rounds, retired
}

// TestReclaimKeepsHeldRecordsConcurrentSafe targets Reclaim's step 3, the
// re-scan of the page's records once the retiring bit is set. An allocator
// that claims a record of an idle page after the observation scan passed it
// and before step 2 keeps it (its load (c) sees no retiring bit), and step 1
// cannot tell: an allocation frees nothing, so the frees counter has not
// moved. Only the re-scan sees the record and keeps the page. Each round, the
// actor claims a record during the Reclaim call that retires its idle page,
// holds it until the call has returned, and checks that it is still
// reachable: its page published, Get returning it, All visiting it.
func TestReclaimKeepsHeldRecordsConcurrentSafe(t *testing.T) {
	c := MustNewContainer[mutantRec]("mutants_held", ContainerConfig{PageSize: 64, MaxPages: 1, ReclaimIdle: time.Nanosecond, KeepEmpty: -1})
	var held *Record[mutantRec]
	rounds, retired := reclaimRounds(t, c,
		func() {
			if held != nil {
				c.Free(held)
				held = nil
			}
		},
		func(p *page[mutantRec]) {
			// page.allocate is the allocator of Reclaim's protocol
			// (Allocate's walk calls it on each page). Called directly, it
			// never waits for the container's mutex, which the reclaimer
			// holds: the actor stays on its P.
			r, d, _ := p.allocate()
			if r == nil {
				return // the page is retiring
			}
			r.Value.a.Set(uint64(r.index))
			r.Lock.DirtyToAllocated(d)
			held = r
		},
		func(_ *page[mutantRec], round int) string {
			if held == nil {
				return ""
			}
			seen := false
			for i, r := range c.All() {
				seen = seen || (i == held.Index() && r == held)
			}
			if !PublishedForTest(c, held) || c.Get(held.Index()) != held || !seen {
				held = nil // not freed: its page is gone
				return fmt.Sprintf("round %d: Reclaim retired a page while a record in it was held: "+
					"Get and All no longer reach the record", round)
			}
			return ""
		})
	if held != nil {
		c.Free(held)
	}
	t.Logf("%d rounds, %d pages retired", rounds, retired)
}

// TestReclaimCountsEveryFreeConcurrentSafe targets Reclaim's step 2, the
// compare-and-swap that sets the retiring bit against the state word step 1
// loaded. A free between the two changes that word: the CAS fails and the
// page, used since it was observed, is kept. A plain store instead would
// write the old word back, retiring bit added, and erase the free from the
// page's frees counter (then retire a page that was just used). Each round,
// the actor claims and frees one record of the page during the Reclaim call
// that retires it if it is idle; it is the only goroutine that frees, and
// allocates nothing between its free and the check, so the page's frees
// counter must have moved by exactly one.
func TestReclaimCountsEveryFreeConcurrentSafe(t *testing.T) {
	c := MustNewContainer[mutantRec]("mutants_frees", ContainerConfig{PageSize: 64, MaxPages: 1, ReclaimIdle: time.Nanosecond, KeepEmpty: -1})
	var before uint64
	freed := false
	rounds, retired := reclaimRounds(t, c,
		func() {},
		func(p *page[mutantRec]) {
			freed = false
			r, _, _ := p.allocate() // as in TestReclaimKeepsHeldRecordsConcurrentSafe
			if r == nil {
				return // the page is retiring
			}
			before = p.state.Load() >> 2
			c.Free(r) // abandoned while DIRTY
			freed = true
		},
		func(p *page[mutantRec], round int) string {
			if !freed {
				return ""
			}
			if after := p.state.Load() >> 2; after != before+1 {
				return fmt.Sprintf("round %d: one free moved the page's frees counter from %d to %d (retired: %v)",
					round, before, after, c.pages[0].Load() != p)
			}
			return ""
		})
	t.Logf("%d rounds, %d pages retired", rounds, retired)
}

// TestPageFullFlagNeverStaleConcurrentSafe targets page.allocate's full flag,
// set by a compare-and-swap against the state word loaded before its lap, so
// that a free during the lap (which the lap may have passed already) cancels
// it. Set unconditionally, as MySQL does, the flag can outlive that free: the
// page then has a FREE record that every allocator skips. Each round, on a
// container of one full page, an allocator keeps trying to allocate while a
// freer frees one record at a random point of the allocator's lap; once the
// free is done, the allocator's next attempt must succeed: nothing else
// allocates, so the freed record is there to find.
func TestPageFullFlagNeverStaleConcurrentSafe(t *testing.T) {
	const pageSize, spread = 256, 64
	c := MustNewContainer[mutantRec]("mutants_full", ContainerConfig{PageSize: pageSize, MaxPages: 1})
	held := make([]*Record[mutantRec], pageSize)
	for i := range held {
		r, d := c.Allocate()
		if r == nil {
			t.Fatal("an allocation in a page with room failed")
		}
		r.Lock.DirtyToAllocated(d)
		held[i] = r
	}
	var begun, freed atomic.Uint64 // k: round k begun; round k's record freed
	var offset atomic.Int64        // > 0: the freer spins that long first; < 0: the allocator does
	var victim atomic.Pointer[Record[mutantRec]]
	var stop atomic.Bool
	var jitter atomic.Uint64
	var done sync.WaitGroup
	done.Add(2)
	go func() { // the freer
		defer done.Done()
		for k := uint64(1); ; k++ {
			var b mutantBackoff
			for begun.Load() < k {
				if stop.Load() {
					return
				}
				b.pause()
			}
			mutantSpin(int(offset.Load()), &jitter)
			c.Free(victim.Load())
			freed.Store(k)
		}
	}()
	var failure string
	rounds, firstTry := 0, 0
	go func() { // the allocator
		defer done.Done()
		defer stop.Store(true)
		rng := rand.New(rand.NewPCG(3, 4))
		delay := 0 // adapts so that about half the rounds free the record before the first lap passes it
		budget := newMutantBudget()
		for k := uint64(1); budget.more(int(k - 1)); k++ {
			// The record passes to the freer with the stores below: it has
			// one owner at a time.
			v := rng.IntN(pageSize)
			victim.Store(held[v])
			off := delay - spread + rng.IntN(2*spread+1)
			offset.Store(int64(off))
			begun.Store(k)
			mutantSpin(-off, &jitter)
			var got *Record[mutantRec]
			tries := 0
			var b mutantBackoff
			for {
				after := freed.Load() == k // this attempt begins after the free
				tries++
				if r, d := c.Allocate(); r != nil {
					r.Lock.DirtyToAllocated(d)
					got = r
					break
				}
				if after {
					break
				}
				b.pause()
			}
			if got == nil {
				failure = fmt.Sprintf("round %d: an allocation that began after a record was freed, with no other allocator, "+
					"found the page full (attempt %d of the round)", k, tries)
				return
			}
			held[v] = got
			step := 1 + max(delay, -delay)/16
			if tries == 1 {
				firstTry++
				delay += step
			} else {
				delay -= step
			}
			delay = min(max(delay, -1<<16), 1<<16)
			rounds++
		}
	}()
	done.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	t.Logf("%d rounds, %d found the record at the first attempt", rounds, firstTry)
}

// TestAllocateNeverLostToAbortedRetireConcurrentSafe targets the case where
// both sides of Reclaim's protocol back off at once: an allocator claims a
// record of a page the reclaimer has just marked retiring, sees the bit and
// gives the record back, while the reclaimer's re-scan sees the record DIRTY
// and clears the bit again. The page is then published and has room, so the
// allocation must look again (under the mutex, after the reclaimer) rather
// than count itself lost because the container, at MaxPages, cannot grow.
// Each round, the actor allocates through Container.Allocate during the
// Reclaim call that retires the idle page; no allocation may be lost.
func TestAllocateNeverLostToAbortedRetireConcurrentSafe(t *testing.T) {
	c := MustNewContainer[mutantRec]("mutants_lost", ContainerConfig{PageSize: 64, MaxPages: 1, ReclaimIdle: time.Nanosecond, KeepEmpty: -1})
	var held *Record[mutantRec]
	rounds, retired := reclaimRounds(t, c,
		func() {
			if held != nil {
				c.Free(held)
				held = nil
			}
		},
		func(*page[mutantRec]) {
			// Allocate may wait for the mutex the reclaimer holds: only
			// when it saw the page retiring, which is the case under test.
			if r, d := c.Allocate(); r != nil {
				r.Value.a.Set(uint64(r.index))
				r.Lock.DirtyToAllocated(d)
				held = r
			}
		},
		func(_ *page[mutantRec], round int) string {
			if n := c.Lost(); n != 0 {
				return fmt.Sprintf("round %d: %d allocations lost in a container whose one page always had room", round, n)
			}
			return ""
		})
	if held != nil {
		c.Free(held)
	}
	t.Logf("%d rounds, %d pages retired", rounds, retired)
}
