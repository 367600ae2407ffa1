package memsum

// Row is one row's statistics in the five memory summary tables, without its
// grouping columns (EVENT_NAME, THREAD_ID, USER, HOST).
//
// A Row built from a consistent source (a Stat snapshot, a Shared load, a
// Counts) satisfies
//
//	CurrentCountUsed         == int64(CountAlloc - CountFree)
//	CurrentNumberOfBytesUsed == int64(SumNumberOfBytesAlloc - SumNumberOfBytesFree)
//	Low* <= Current* <= High*
//
// and sums of such rows (Add) satisfy them too; Valid checks them. The
// subtractions are modulo 2^64, so the identity survives wraparound.
type Row struct {
	CountAlloc            uint64 // COUNT_ALLOC
	CountFree             uint64 // COUNT_FREE
	SumNumberOfBytesAlloc uint64 // SUM_NUMBER_OF_BYTES_ALLOC
	SumNumberOfBytesFree  uint64 // SUM_NUMBER_OF_BYTES_FREE

	LowCountUsed     int64 // LOW_COUNT_USED
	CurrentCountUsed int64 // CURRENT_COUNT_USED
	HighCountUsed    int64 // HIGH_COUNT_USED

	LowNumberOfBytesUsed     int64 // LOW_NUMBER_OF_BYTES_USED
	CurrentNumberOfBytesUsed int64 // CURRENT_NUMBER_OF_BYTES_USED
	HighNumberOfBytesUsed    int64 // HIGH_NUMBER_OF_BYTES_USED
}

// Add adds o to r, column by column: the worst-case estimate of a group of
// sources (an account's threads and its own stat, say). LOW and HIGH add up,
// as in the reference's example (1-2 MB and 10-12 MB make 11-14 MB): the sum
// of lows is reached only if every source hits its low at the same moment.
func (r *Row) Add(o Row) {
	r.CountAlloc += o.CountAlloc
	r.CountFree += o.CountFree
	r.SumNumberOfBytesAlloc += o.SumNumberOfBytesAlloc
	r.SumNumberOfBytesFree += o.SumNumberOfBytesFree
	r.LowCountUsed += o.LowCountUsed
	r.CurrentCountUsed += o.CurrentCountUsed
	r.HighCountUsed += o.HighCountUsed
	r.LowNumberOfBytesUsed += o.LowNumberOfBytesUsed
	r.CurrentNumberOfBytesUsed += o.CurrentNumberOfBytesUsed
	r.HighNumberOfBytesUsed += o.HighNumberOfBytesUsed
}

// Global returns r normalized for memory_summary_global_by_event_name, as
// MySQL's normalize(global=true): the process as a whole never holds fewer
// than zero blocks or bytes, so a negative LOW (the sum of per-thread lows
// that went negative when memory changed hands) is raised to 0. It is never
// raised above CURRENT: a sum of sources read at different moments can have
// a negative CURRENT for an instant, and then LOW = CURRENT.
func (r Row) Global() Row {
	if r.LowCountUsed < 0 {
		r.LowCountUsed = min(0, r.CurrentCountUsed)
	}
	if r.LowNumberOfBytesUsed < 0 {
		r.LowNumberOfBytesUsed = min(0, r.CurrentNumberOfBytesUsed)
	}
	return r
}

// Rebase returns what TRUNCATE TABLE leaves of r: COUNT_ALLOC and COUNT_FREE
// both reduced by min(COUNT_ALLOC, COUNT_FREE), the byte sums likewise by
// theirs, LOW = HIGH = CURRENT, CURRENT unchanged. Rebase is idempotent.
func (r Row) Rebase() Row {
	c := min(r.CountAlloc, r.CountFree)
	s := min(r.SumNumberOfBytesAlloc, r.SumNumberOfBytesFree)
	r.CountAlloc -= c
	r.CountFree -= c
	r.SumNumberOfBytesAlloc -= s
	r.SumNumberOfBytesFree -= s
	r.LowCountUsed, r.HighCountUsed = r.CurrentCountUsed, r.CurrentCountUsed
	r.LowNumberOfBytesUsed, r.HighNumberOfBytesUsed = r.CurrentNumberOfBytesUsed, r.CurrentNumberOfBytesUsed
	return r
}

// Valid reports whether r satisfies the invariants in Row's doc comment.
func (r Row) Valid() bool {
	return r.CurrentCountUsed == int64(r.CountAlloc-r.CountFree) &&
		r.CurrentNumberOfBytesUsed == int64(r.SumNumberOfBytesAlloc-r.SumNumberOfBytesFree) &&
		r.LowCountUsed <= r.CurrentCountUsed && r.CurrentCountUsed <= r.HighCountUsed &&
		r.LowNumberOfBytesUsed <= r.CurrentNumberOfBytesUsed &&
		r.CurrentNumberOfBytesUsed <= r.HighNumberOfBytesUsed
}

// Counts is the raw form of a statistic, MySQL's eight counters: four
// cumulative totals and four capacities. A capacity is the headroom between
// CURRENT and a water mark:
//
//	CURRENT = Alloc - Free
//	HIGH    = CURRENT + AllocCapacity   (an allocation within it is no new high)
//	LOW     = CURRENT - FreeCapacity    (a free within it is no new low)
//
// Counts is what moves between sources when they are aggregated (a thread
// that ends, a live source on TRUNCATE); Row is what a table shows. Both are
// linear: Row of a sum of Counts is the sum of their Rows.
type Counts struct {
	AllocCount, FreeCount uint64 // COUNT_ALLOC, COUNT_FREE
	AllocSize, FreeSize   uint64 // SUM_NUMBER_OF_BYTES_ALLOC, SUM_NUMBER_OF_BYTES_FREE

	AllocCountCapacity, AllocSizeCapacity uint64 // HIGH - CURRENT
	FreeCountCapacity, FreeSizeCapacity   uint64 // CURRENT - LOW
}

// Row returns the row c shows.
func (c Counts) Row() Row {
	cc := int64(c.AllocCount - c.FreeCount)
	cs := int64(c.AllocSize - c.FreeSize)
	return Row{
		CountAlloc:               c.AllocCount,
		CountFree:                c.FreeCount,
		SumNumberOfBytesAlloc:    c.AllocSize,
		SumNumberOfBytesFree:     c.FreeSize,
		LowCountUsed:             cc - int64(c.FreeCountCapacity),
		CurrentCountUsed:         cc,
		HighCountUsed:            cc + int64(c.AllocCountCapacity),
		LowNumberOfBytesUsed:     cs - int64(c.FreeSizeCapacity),
		CurrentNumberOfBytesUsed: cs,
		HighNumberOfBytesUsed:    cs + int64(c.AllocSizeCapacity),
	}
}

// Add adds o to c, counter by counter (MySQL's memory_full_aggregate).
func (c *Counts) Add(o Counts) {
	c.AllocCount += o.AllocCount
	c.FreeCount += o.FreeCount
	c.AllocSize += o.AllocSize
	c.FreeSize += o.FreeSize
	c.AllocCountCapacity += o.AllocCountCapacity
	c.AllocSizeCapacity += o.AllocSizeCapacity
	c.FreeCountCapacity += o.FreeCountCapacity
	c.FreeSizeCapacity += o.FreeSizeCapacity
}

// Rebase returns what TRUNCATE leaves of c (MySQL's rebase): the balanced
// part min(alloc, free) taken off both totals, counts and sizes separately,
// and the capacities zeroed, so that LOW = HIGH = CURRENT. c.Rebase().Row()
// equals c.Row().Rebase().
func (c Counts) Rebase() Counts {
	_, kept := c.Partial()
	return kept
}

// Partial splits c as MySQL's memory_partial_aggregate does for a live
// source: moved is the balanced part (min(alloc, free) on both sides, counts
// and sizes separately) and all four capacities, for the parents; kept is
// the net part that stays, with no capacity. moved + kept == c.
func (c Counts) Partial() (moved, kept Counts) {
	bc := min(c.AllocCount, c.FreeCount)
	bs := min(c.AllocSize, c.FreeSize)
	moved = Counts{
		AllocCount: bc, FreeCount: bc, AllocSize: bs, FreeSize: bs,
		AllocCountCapacity: c.AllocCountCapacity, AllocSizeCapacity: c.AllocSizeCapacity,
		FreeCountCapacity: c.FreeCountCapacity, FreeSizeCapacity: c.FreeSizeCapacity,
	}
	kept = Counts{
		AllocCount: c.AllocCount - bc, FreeCount: c.FreeCount - bc,
		AllocSize: c.AllocSize - bs, FreeSize: c.FreeSize - bs,
	}
	return moved, kept
}

// Reassign splits the stat of a thread that ended as MySQL's
// memory_full_aggregate_with_reassign does, counts and sizes separately:
//
//   - alloc <= free: everything goes to the parents (toGlobal gets nothing);
//   - alloc > free: the parents get free on both sides (the balanced part),
//     the net alloc-free goes to the global bucket as allocations (memory the
//     thread leaked to caches, which other threads will free against the
//     global bucket), and the low-mark capacity is split: min(capacity, net)
//     to the global bucket, the rest to the parents. The high-mark capacity
//     goes to the parents.
//
// toParents is added to every parent (the account; or the user and the host;
// see doc.go), toGlobal to the global Shared. toParents + toGlobal == c, so
// the global row, which sums both, is unchanged by the move; a parent's row
// loses the net allocation, and with it up to net of its LOW and exactly net
// of its HIGH: the parent's marks read as if the leaked memory had never
// been its own.
func (c Counts) Reassign() (toParents, toGlobal Counts) {
	toParents = c
	if c.AllocCount > c.FreeCount {
		net := c.AllocCount - c.FreeCount
		capa := min(c.FreeCountCapacity, net)
		toParents.AllocCount = c.FreeCount
		toParents.FreeCountCapacity -= capa
		toGlobal.AllocCount = net
		toGlobal.FreeCountCapacity = capa
	}
	if c.AllocSize > c.FreeSize {
		net := c.AllocSize - c.FreeSize
		capa := min(c.FreeSizeCapacity, net)
		toParents.AllocSize = c.FreeSize
		toParents.FreeSizeCapacity -= capa
		toGlobal.AllocSize = net
		toGlobal.FreeSizeCapacity = capa
	}
	return toParents, toGlobal
}

// AllocDelta is how far an allocation pushed a source's HIGH marks past
// their previous values (MySQL's PFS_memory_stat_alloc_delta). The zero value
// means no new high; a non-zero delta is carried to the parents
// (Shared.ApplyAllocDelta), so their HIGH marks cover the new peak.
type AllocDelta struct {
	Count, Size uint64
}

// IsZero reports whether d carries nothing.
func (d AllocDelta) IsZero() bool { return d.Count|d.Size == 0 }

// FreeDelta is how far a free pushed a source's LOW marks below their
// previous values (MySQL's PFS_memory_stat_free_delta); carried with
// Shared.ApplyFreeDelta.
type FreeDelta struct {
	Count, Size uint64
}

// IsZero reports whether d carries nothing.
func (d FreeDelta) IsZero() bool { return d.Count|d.Size == 0 }
