package store

import "time"

// Reclaim retires pages whose records have all been FREE, with no allocation
// in them, for at least ReclaimIdle, and returns how many it retired. It is
// MySQL's missing half: a container shrinks back after a peak. The engine
// calls it periodically with the current time; the container starts no
// goroutine and reads no clock. It takes the growth mutex (allocators that
// need a new page wait for it) but never blocks allocators that find room in
// existing pages, nor readers. It costs one load per record of every page
// with no live record, and stops at the first live record of the others:
// call it every few seconds, not per event.
//
// # Policy (hysteresis)
//
// A page is retired only if
//   - every record was FREE at two Reclaim calls at least ReclaimIdle apart,
//     and the page's frees counter did not move between them: no record was
//     allocated and freed in between (a record allocated and still held is
//     not FREE). A page in use, even briefly, restarts its clock;
//   - more than MinPages pages remain, and more than KeepEmpty empty pages:
//     the spare empty pages absorb the next burst without creating a page.
//
// Pages with the highest slots go first, so the live pages gather at the low
// end of the table, where allocation walks begin after a growth.
//
// # Retiring a page without racing allocators
//
// Allocators hold no lock. A page is handed over in three steps, all under the
// mutex, so only one reclaimer (and no grower) acts at a time:
//
//	reclaimer                                allocator (page.allocate)
//	---------                                -------------------------
//	1. w := state.Load(); check the frees    a. w := state.Load();
//	   counter is unchanged since the idle      skip if full or retiring
//	   clock started, and !retiring          b. CAS record FREE -> DIRTY
//	2. CAS state w -> w|retiring             c. state.Load(): retiring?
//	   (fails if any free happened)             yes: DIRTY -> FREE, give up
//	3. scan: every record FREE?                 the page; no: keep the record
//	   no:  clear retiring, keep the page
//	   yes: unpublish (page table slot = nil)
//
// An allocator that backed off at (a) or (c) does not count itself lost
// when the table is at MaxPages: it looks again under the mutex, once the
// reclaimer is done, because the page may have been kept (the reclaimer's
// scan saw the record the allocator was giving back). It goes by what it saw,
// not by the bit, which the reclaimer may already have cleared.
//
// Claim: a page is never unpublished while it holds a record an allocator
// keeps. All operations are Go atomics, which are sequentially consistent.
// Take an allocator that keeps record r of the page, so its load (c) saw no
// retiring bit: (c) comes before (2) in the total order, so (b) does too, and
// the scan (3) of r, which follows (2), sees r DIRTY, ALLOCATED, or FREE only
// because its owner already freed it (and is no longer keeping it). The
// reclaimer therefore aborts, or the record is no longer kept. An allocator
// whose (b) comes after (2) sees the bit at (c) and gives the record back, and
// one that reaches (a) after (2) does not enter the page. Both sides may back
// off at once (the reclaimer's scan sees a record an allocator is about to
// return); that costs one Reclaim round, never a record.
//
// Claim: a retiring page is never handed to an allocator: allocators keep a
// record only if (c) saw no retiring bit, and the bit stays set on a retired
// page forever.
//
// # Memory
//
// Unpublishing is the whole retirement: Go's garbage collector is the grace
// period. An allocator or reader that loaded the page pointer before step 3
// keeps the page alive until it lets go; allocators then see the retiring bit
// and move on, readers see only FREE records and skip them. When nothing
// references the page any more, its memory returns to the Go heap, and the
// container's statistics count it as freed at once (COUNT_FREE,
// SUM_NUMBER_OF_BYTES_FREE).
func (c *Container[T]) Reclaim(now time.Time) int {
	if c.idleTime <= 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()

	// Observe every page; start or continue its idle clock.
	hi := c.hi.Load()
	empty := 0
	for i := range hi {
		p := c.pages[i].Load()
		if p == nil {
			continue
		}
		w := p.state.Load()
		if !p.allFree() {
			p.idle = false
			continue
		}
		empty++
		if !p.idle || p.idleFrees != w>>2 {
			p.idle, p.idleSince, p.idleFrees = true, now, w>>2
		}
	}

	retired := 0
	for i := int(hi) - 1; i >= 0; i-- {
		if int(c.published.Load()) <= c.minPages || empty <= c.keepEmpty {
			break
		}
		p := c.pages[i].Load()
		if p == nil || !p.idle || now.Sub(p.idleSince) < c.idleTime {
			continue
		}
		// Step 1.
		w := p.state.Load()
		if w>>2 != p.idleFrees || w&pageRetiring != 0 {
			p.idle = false // used since it was observed: restart the clock
			empty--        // and maybe no longer empty: do not count it as spare
			continue
		}
		// Step 2.
		if !p.state.CompareAndSwap(w, w|pageRetiring) {
			p.idle = false
			empty--
			continue
		}
		// Step 3.
		if !p.allFree() {
			p.state.And(^uint64(pageRetiring))
			p.idle = false
			empty--
			continue
		}
		c.published.Add(^uint32(0))
		c.pages[i].Store(nil)
		c.countPages(-1)
		empty--
		retired++
	}
	if retired > 0 {
		n := c.hi.Load()
		for n > 0 && c.pages[n-1].Load() == nil {
			n--
		}
		c.hi.Store(n)
	}
	return retired
}

// allocateShared is the test-only MySQL allocation (see export_test.go): a
// container-wide counter, advanced by every failed page, chooses the next page
// to try, so concurrent allocators skip pages none of them tried.
func (c *Container[T]) allocateShared() (*Record[T], DirtyState) {
	gen := c.gen.Load()
	if n := uint64(c.hi.Load()); n != 0 {
		m := c.monotonic.Load()
		for end := m + n; m < end; m = c.monotonic.Add(1) {
			if p := c.pages[m%n].Load(); p != nil {
				if r, d := p.allocateShared(); r != nil {
					return r, d
				}
			}
		}
	}
	return c.allocateSlow(gen, false)
}
