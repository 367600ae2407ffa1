package memsum

import (
	"runtime"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Stat is the statistic of one (thread, memory class): MySQL's
// PFS_memory_safe_stat. One goroutine, its owner, writes it (Alloc, Free,
// and, once the owner is gone, Drain); any goroutine reads it (Load,
// TryLoad, LoadCounts).
//
// The four totals and four marks are owned.Uint64 cells: the owner stores
// them with plain stores bracketed by seq, an owned.Seq, so a write costs no
// locked instruction on amd64; within the marks an Alloc or Free stores two
// cells and the two version bumps. A reader copies the cells between two loads of seq
// and keeps the copy only if seq was even and unchanged: it never sees a
// half-applied Alloc or Free. The zero Stat is empty, at epoch 0, ready to
// use. A Stat must not be copied after first use.
//
// # Epochs: TRUNCATE without writing another goroutine's Stat
//
// TRUNCATE must rebase every Stat (Counts.Rebase), but only the owner may
// write one. So the engine keeps an epoch, a counter it increments on
// TRUNCATE, and passes its current value to every call. The Stat records the
// epoch of its last rebase. When the owner's Alloc or Free sees a newer
// epoch, it rebases first (a slow path, once per TRUNCATE). A reader that
// passes a newer epoch than the recorded one applies the rebase to its copy
// instead. Rebase is idempotent, so both give the same row, and a TRUNCATE
// takes effect for every reader the moment the epoch moves, however long the
// owner sleeps. An epoch older than the recorded one (a reader that loaded
// the engine's epoch just before a TRUNCATE the owner already saw) rebases
// nothing: that reader sees the rows as they are. Epochs are compared as
// unsigned numbers; the engine must only ever increase its epoch.
//
// The epoch an owner passes must still be current when its operation's
// writes land: the engine must not advance the epoch while an operation
// that loaded it runs (TestStatConcurrentSafe holds a lock per owner for
// that). Otherwise a reader that applied the TRUNCATE to its copy before
// that operation landed, and one after, rebase by different balanced parts,
// and the second sees COUNT_ALLOC lower than the first.
type Stat struct {
	seq   owned.Seq
	epoch owned.Uint64 // epoch of the last rebase; under seq

	allocCount, freeCount owned.Uint64
	allocSize, freeSize   owned.Uint64

	// The marks themselves, as two's complement int64, rather than MySQL's
	// capacities (HIGH - CURRENT, CURRENT - LOW): an operation within the
	// marks then stores two cells instead of six. Counts converts.
	lowCount, highCount owned.Uint64
	lowSize, highSize   owned.Uint64
}

// Alloc counts an allocation of size bytes (MySQL's count_alloc): COUNT_ALLOC
// and CURRENT_COUNT_USED up by 1, SUM_NUMBER_OF_BYTES_ALLOC and
// CURRENT_NUMBER_OF_BYTES_USED up by size. If CURRENT passes HIGH, HIGH
// follows, and how far it moved is returned: the delta the caller must carry
// to the parents (zero in the steady state). This is MySQL's capacity
// arithmetic: the delta is what the headroom HIGH - CURRENT could not
// absorb. Owner only.
func (s *Stat) Alloc(epoch, size uint64) (d AllocDelta) {
	if s.epoch.Load() != epoch {
		s.catchUp(epoch)
	}
	s.seq.BeginWrite()
	cc := s.allocCount.Add(1) - s.freeCount.Load()
	cs := s.allocSize.Add(size) - s.freeSize.Load()
	if h := s.highCount.Load(); int64(cc) > int64(h) {
		d.Count = cc - h
		s.highCount.Set(cc)
	}
	if h := s.highSize.Load(); int64(cs) > int64(h) {
		d.Size = cs - h
		s.highSize.Set(cs)
	}
	s.seq.EndWrite()
	return d
}

// Free counts a free of size bytes (MySQL's count_free), the mirror of
// Alloc: COUNT_FREE up by 1, SUM_NUMBER_OF_BYTES_FREE up by size, CURRENT
// down; if CURRENT passes LOW, LOW follows and how far it moved is returned
// as the delta to carry. Owner only.
//
// The block need not have been counted by this Stat: when memory changes
// hands (allocated by one thread, freed by another), this Stat's CURRENT and
// LOW go negative. That is expected in the per-thread, account, user and
// host tables; the global row, which sums every source, stays right
// (Row.Global).
func (s *Stat) Free(epoch, size uint64) (d FreeDelta) {
	if s.epoch.Load() != epoch {
		s.catchUp(epoch)
	}
	s.seq.BeginWrite()
	cc := s.allocCount.Load() - s.freeCount.Add(1)
	cs := s.allocSize.Load() - s.freeSize.Add(size)
	if l := s.lowCount.Load(); int64(cc) < int64(l) {
		d.Count = l - cc
		s.lowCount.Set(cc)
	}
	if l := s.lowSize.Load(); int64(cs) < int64(l) {
		d.Size = l - cs
		s.lowSize.Set(cs)
	}
	s.seq.EndWrite()
	return d
}

// catchUp rebases the Stat for a TRUNCATE the owner has not seen yet, or
// records the epoch if it is older than the recorded one (nothing to do).
//
//go:noinline
func (s *Stat) catchUp(epoch uint64) {
	if epoch < s.epoch.Load() {
		return // an epoch older than ours: we already rebased past it
	}
	s.seq.BeginWrite()
	s.store(s.counts().Rebase())
	s.epoch.Set(epoch)
	s.seq.EndWrite()
}

// counts copies the cells with atomic loads; the caller validates with seq
// or owns the Stat.
func (s *Stat) counts() Counts {
	ac, fc := s.allocCount.Load(), s.freeCount.Load()
	as, fs := s.allocSize.Load(), s.freeSize.Load()
	cc, cs := ac-fc, as-fs
	return Counts{
		AllocCount: ac, FreeCount: fc, AllocSize: as, FreeSize: fs,
		AllocCountCapacity: s.highCount.Load() - cc, AllocSizeCapacity: s.highSize.Load() - cs,
		FreeCountCapacity: cc - s.lowCount.Load(), FreeSizeCapacity: cs - s.lowSize.Load(),
	}
}

// store writes c into the cells; writer only, inside a seq bracket.
func (s *Stat) store(c Counts) {
	cc, cs := c.AllocCount-c.FreeCount, c.AllocSize-c.FreeSize
	s.allocCount.Set(c.AllocCount)
	s.freeCount.Set(c.FreeCount)
	s.allocSize.Set(c.AllocSize)
	s.freeSize.Set(c.FreeSize)
	s.highCount.Set(cc + c.AllocCountCapacity)
	s.highSize.Set(cs + c.AllocSizeCapacity)
	s.lowCount.Set(cc - c.FreeCountCapacity)
	s.lowSize.Set(cs - c.FreeSizeCapacity)
}

// TryLoadCounts makes one attempt at a consistent copy of the counters as of
// epoch (rebased if the Stat has not seen epoch yet). ok is false if the
// owner was writing; the caller retries or skips. Safe for concurrent use.
func (s *Stat) TryLoadCounts(epoch uint64) (c Counts, ok bool) {
	v := s.seq.Load()
	if v&1 != 0 {
		return Counts{}, false
	}
	c = s.counts()
	e := s.epoch.Load()
	if s.seq.Load() != v {
		return Counts{}, false
	}
	if e < epoch {
		c = c.Rebase()
	}
	return c, true
}

// LoadCounts is TryLoadCounts retried until it succeeds, yielding the
// processor now and then; an owner's write lasts a few nanoseconds, so a
// reader waits only while its owner writes back to back. Writers never wait
// for readers. Safe for concurrent use.
func (s *Stat) LoadCounts(epoch uint64) Counts {
	for i := 0; ; i++ {
		if c, ok := s.TryLoadCounts(epoch); ok {
			return c
		}
		if i%16 == 15 {
			runtime.Gosched()
		}
	}
}

// TryLoad is TryLoadCounts returning the row. Safe for concurrent use.
func (s *Stat) TryLoad(epoch uint64) (Row, bool) {
	c, ok := s.TryLoadCounts(epoch)
	return c.Row(), ok
}

// Load returns a consistent row as of epoch: it satisfies Row's invariants,
// and its cumulative columns are never below those of an earlier Load of the
// same Stat unless a TRUNCATE (a newer epoch) came in between. Safe for
// concurrent use.
func (s *Stat) Load(epoch uint64) Row { return s.LoadCounts(epoch).Row() }

// Drain empties the Stat of a thread that has ended and returns what it held
// as of epoch, for the parents (Counts.Reassign, Shared.Aggregate). Only the
// goroutine that now owns the Stat may call it: the owner itself at its end,
// or the engine once the owner is known to be gone (its last write
// happens before the Drain, for example through the lock that retires the
// thread). Readers see the Stat either full or empty, never in between; a
// reader that sums the Stat and its parents may count the drained part
// twice or not at all while the caller moves it, unless the engine orders
// the two (see doc.go).
func (s *Stat) Drain(epoch uint64) Counts {
	c := s.counts()
	if s.epoch.Load() < epoch {
		c = c.Rebase()
	}
	s.seq.BeginWrite()
	s.store(Counts{})
	s.epoch.Set(max(epoch, s.epoch.Load()))
	s.seq.EndWrite()
	return c
}

// Version returns the Stat's version word: it changes with every write. A
// reader that sums a Stat with its parents can load it before and after to
// learn whether the Stat (and a Drain) moved meanwhile. Safe for concurrent
// use.
func (s *Stat) Version() uint64 { return s.seq.Load() }
