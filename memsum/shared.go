package memsum

import "sync/atomic"

// Shared is a statistic that many goroutines write: the per-(account, class),
// per-(user, class), per-(host, class) and global per-class statistics,
// MySQL's PFS_memory_shared_stat. Every counter is its own atomic; writers
// update them one at a time, with no lock and no version word. The zero
// Shared is empty and ready to use. A Shared must not be copied after first
// use. All methods are safe for concurrent use.
//
// # What a concurrent reader sees
//
// Load and LoadCounts load each counter once, atomically, in the order
// FreeCount, FreeSize, AllocCount, AllocSize, then the capacities. Each
// value is one that some write stored, but different counters may come
// from different moments: a reader may see an Alloc's AllocCount and not
// yet its AllocSize, or a carry half applied. The row is nonetheless built
// to satisfy Row's invariants:
//
//   - CURRENT is derived from the loaded totals, so CURRENT = ALLOC - FREE
//     holds exactly;
//   - LOW = CURRENT - FreeCapacity and HIGH = CURRENT + AllocCapacity with
//     the capacities clamped at zero (a capacity is transiently negative
//     while an optimistic subtraction is being undone), so LOW <= CURRENT
//     <= HIGH;
//   - the four totals only grow between Rebase and MoveBalanced calls, so
//     two loads by one goroutine never see them shrink otherwise.
//
// The marks of a read concurrent with writes may therefore be wider than
// those of any single moment (LOW lower, HIGH higher, as estimates may be),
// and CURRENT may include part of an operation that is still being counted,
// but never a free whose allocation it misses.
// A read concurrent with Rebase or MoveBalanced may see the totals partly
// reduced: CURRENT off by at most the balanced part moved, for that read.
type Shared struct {
	allocCount, freeCount atomic.Uint64
	allocSize, freeSize   atomic.Uint64

	// Capacities are signed so that the optimistic subtraction of Alloc,
	// Free and the carries can undershoot and be undone without a
	// compare-and-swap loop; readers clamp them at zero.
	allocCountCap, allocSizeCap atomic.Int64
	freeCountCap, freeSizeCap   atomic.Int64
}

// consume takes up to n from the capacity c and returns what it could not
// take. It is MySQL's "optimistic fetch_sub then clamp", made exact: the
// subtraction is one atomic add; if it went below zero, the part that was
// not there is added back. Concurrent consumers each add back only their own
// shortfall, so together they never take more than was there, and a
// concurrent increment is never lost (MySQL's clamp stores 0 and may lose
// one, which would lower a HIGH below a peak).
func consume(c *atomic.Int64, n uint64) (rest uint64) {
	if n == 0 {
		return 0
	}
	after := c.Add(-int64(n))
	if after >= 0 {
		return 0
	}
	back := min(uint64(-after), n)
	c.Add(int64(back))
	return back
}

// Alloc counts an allocation of size bytes made with no thread to charge
// (the global "no thread" path: MySQL's count_global_alloc). The Shared is
// the top of the hierarchy: a new high is absorbed here, nothing is carried.
// Six atomic adds in the steady state.
func (s *Shared) Alloc(size uint64) {
	s.allocCount.Add(1)
	s.freeCountCap.Add(1)
	s.allocSize.Add(size)
	s.freeSizeCap.Add(int64(size))
	consume(&s.allocCountCap, 1)
	consume(&s.allocSizeCap, size)
}

// Free counts a free of size bytes against the Shared: the mirror of Alloc,
// used for the global "no thread" path and, in MySQL, for a block freed by a
// thread other than the one it was charged to.
func (s *Shared) Free(size uint64) {
	s.freeCount.Add(1)
	s.allocCountCap.Add(1)
	s.freeSize.Add(size)
	s.allocSizeCap.Add(int64(size))
	consume(&s.freeCountCap, 1)
	consume(&s.freeSizeCap, size)
}

// ApplyAllocDelta carries a child's new high into this parent (MySQL's
// apply_alloc_delta): the parent's own high-mark headroom absorbs what it
// can (the peak of the group grows only by what the headroom cannot cover),
// and the rest is returned, to be carried to the next parent; the top parent
// drops it.
func (s *Shared) ApplyAllocDelta(d AllocDelta) (rest AllocDelta) {
	rest.Count = consume(&s.allocCountCap, d.Count)
	rest.Size = consume(&s.allocSizeCap, d.Size)
	return rest
}

// ApplyFreeDelta carries a child's new low into this parent, as
// ApplyAllocDelta does for highs.
func (s *Shared) ApplyFreeDelta(d FreeDelta) (rest FreeDelta) {
	rest.Count = consume(&s.freeCountCap, d.Count)
	rest.Size = consume(&s.freeSizeCap, d.Size)
	return rest
}

// Aggregate adds c to the Shared: a child's counters moving up (a drained
// Stat's toParents or toGlobal from Counts.Reassign, a MoveBalanced part).
// Totals are added before capacities, so that a concurrent reader's marks
// are never narrower than those of the Shared before or after.
func (s *Shared) Aggregate(c Counts) {
	s.allocCount.Add(c.AllocCount)
	s.freeCount.Add(c.FreeCount)
	s.allocSize.Add(c.AllocSize)
	s.freeSize.Add(c.FreeSize)
	s.allocCountCap.Add(int64(c.AllocCountCapacity))
	s.allocSizeCap.Add(int64(c.AllocSizeCapacity))
	s.freeCountCap.Add(int64(c.FreeCountCapacity))
	s.freeSizeCap.Add(int64(c.FreeSizeCapacity))
}

// LoadCounts returns the counters (see "What a concurrent reader sees").
// The free totals are loaded before the allocation totals: every free a
// reader sees then has its allocation seen too (a free follows its
// allocation), so a Shared's CURRENT never reads below the usage it had at
// some instant of the read, however long the reader is held up between
// the loads.
func (s *Shared) LoadCounts() Counts {
	freeCount, freeSize := s.freeCount.Load(), s.freeSize.Load()
	return Counts{
		AllocCount: s.allocCount.Load(), FreeCount: freeCount,
		AllocSize: s.allocSize.Load(), FreeSize: freeSize,
		AllocCountCapacity: clamp(s.allocCountCap.Load()), AllocSizeCapacity: clamp(s.allocSizeCap.Load()),
		FreeCountCapacity: clamp(s.freeCountCap.Load()), FreeSizeCapacity: clamp(s.freeSizeCap.Load()),
	}
}

// Load returns the Shared's row (see "What a concurrent reader sees").
func (s *Shared) Load() Row { return s.LoadCounts().Row() }

func clamp(v int64) uint64 { return uint64(max(v, 0)) }

// MoveBalanced takes the balanced part and the capacities out of the Shared
// and returns them (MySQL's memory_partial_aggregate, source side), for the
// caller to Aggregate into the parents; the net part stays. Rebase is
// MoveBalanced with the moved part dropped.
func (s *Shared) MoveBalanced() (moved Counts) {
	// Capacities first: a reader between the steps sees tight marks around
	// a CURRENT that is already right, never marks that exclude it.
	moved.AllocCountCapacity = clamp(s.allocCountCap.Swap(0))
	moved.AllocSizeCapacity = clamp(s.allocSizeCap.Swap(0))
	moved.FreeCountCapacity = clamp(s.freeCountCap.Swap(0))
	moved.FreeSizeCapacity = clamp(s.freeSizeCap.Swap(0))
	// Totals only grow between the loads and the subtractions, so
	// min(alloc, free) loaded now is still at most both when subtracted.
	bc := min(s.allocCount.Load(), s.freeCount.Load())
	bs := min(s.allocSize.Load(), s.freeSize.Load())
	s.freeCount.Add(-bc)
	s.allocCount.Add(-bc)
	s.freeSize.Add(-bs)
	s.allocSize.Add(-bs)
	moved.AllocCount, moved.FreeCount = bc, bc
	moved.AllocSize, moved.FreeSize = bs, bs
	return moved
}

// Rebase is TRUNCATE for this Shared (MySQL's rebase): the balanced part
// min(alloc, free) comes off both totals, the capacities go to zero, so LOW =
// HIGH = CURRENT as of the call. Operations concurrent with it are counted
// in full; their marks may survive it.
func (s *Shared) Rebase() { s.MoveBalanced() }
