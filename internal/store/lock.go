package store

import "sync/atomic"

// Lock is pfs_lock: one 32-bit word that says whether a record is free, being
// written, or readable, and a version that tells a reader whether the record
// changed while it was being copied. Every record of a Container carries one.
//
// # Layout
//
//	 31                                   2 1  0
//	+--------------------------------------+----+
//	|               version                |state|
//	+--------------------------------------+----+
//
// The state (low 2 bits) is FREE (0), DIRTY (1) or ALLOCATED (2). The version
// (high 30 bits) grows by one on every DIRTY -> ALLOCATED and on nothing else;
// it is never reset when a record is recycled, so a reader that saw
// ALLOCATED(n) and later sees ALLOCATED(n+1) knows the record was rewritten
// (ABA becomes A(n) B A(n+1)). The version wraps modulo 2^30: a reader is
// fooled only if 2^30 rewrites of one record happen during one copy.
//
// # States and transitions
//
//	          FreeToDirty (CAS: of many racing writers, one wins)
//	FREE(n) ---------------------------------------------> DIRTY(n)
//	 ^   ^                                                  |   ^
//	 |   +--------------- DirtyToFree (owner: abort) -------+   |
//	 |                                                      |   | AllocatedToDirty
//	 |                         DirtyToAllocated (owner)     v   | (owner: rewrite)
//	 +--- AllocatedToFree (owner) ----------------------- ALLOCATED(n+1)
//
// A rewrite goes ALLOCATED(n+1) -> DIRTY(n+1) -> ALLOCATED(n+2); a free keeps
// the version, so the next allocation publishes ALLOCATED(n+2) too.
//
// Whoever wins FreeToDirty owns the record until it makes it FREE again; every
// other transition is made by that owner only and is a single atomic store or
// add. A rewrite is AllocatedToDirty, plain stores of owned cells,
// DirtyToAllocated: two atomic instructions per record write, however many
// cells change.
//
// # Reading
//
// Readers never write the word. They copy a record optimistically:
//
//	s := l.BeginOptimistic()
//	... load every cell they need with atomic loads (owned.Uint64.Load) ...
//	if !l.EndOptimistic(s) { skip or retry: the copy may be torn }
//
// EndOptimistic succeeds only if the record was ALLOCATED at the begin and the
// word is unchanged at the end. Since every write of a cell happens between a
// transition to DIRTY and the next transition out of DIRTY, and DIRTY ->
// ALLOCATED changes the version, an unchanged ALLOCATED word means no write
// overlapped the copy.
//
// # Memory model
//
// The argument is the one of internal/owned, made concrete here:
//
//   - Writer, entering DIRTY: FreeToDirty is a compare-and-swap and
//     AllocatedToDirty an atomic add, never a plain atomic store. On amd64 they
//     are LOCK CMPXCHG and LOCK XADD, full fences: no later store (the plain
//     cell stores) becomes visible before them. On arm64 with LSE atomics
//     (ARMv8.1 and later: every current server core) they are CASAL and
//     LDADDAL, which are fully ordered. An atomic Store here would be wrong on
//     arm64: STLR is a release store and lets later plain stores be observed
//     before it, so a reader could see new cells under the old version.
//   - Writer, leaving DIRTY: DirtyToAllocated, DirtyToFree and AllocatedToFree
//     are atomic stores (XCHG on amd64, STLR on arm64): release stores, so every
//     cell store before them is visible to anyone who observes the new word.
//   - Reader: the begin load, the cell loads and the end load are all atomic
//     loads (plain MOVs on amd64, which TSO keeps in order; LDAR on arm64,
//     which are not reordered with each other). So the end load is performed
//     after every cell load, and if it still returns the begin word no
//     transition to DIRTY, hence no cell store, came between.
//   - The compiler does not move the owner's plain stores across the atomic
//     operations: they are ordered on the SSA memory chain.
//
// On ARMv8.0 cores without LSE, Go implements the compare-and-swap and the
// add with a load-acquire/store-release exclusive pair, which is not a full
// barrier: a plain store after it could become visible before the exclusive
// store. The transitions into DIRTY therefore end with an atomic load of the
// word (LDAR), which is ordered after the store-release and before the
// owner's later stores (see fence).
//
// Under the race detector cells are stored atomically (see internal/owned), so
// -race sees only synchronized accesses and needs no suppressions.
//
// The zero Lock is FREE with version 0. A Lock must not be copied after first
// use.
type Lock struct {
	w atomic.Uint32
}

// LockState is the state part of a Lock word.
type LockState uint32

// The states of a Lock, with MySQL's values.
const (
	LockFree      LockState = 0 // PFS_LOCK_FREE: nobody owns the record; readers skip it
	LockDirty     LockState = 1 // PFS_LOCK_DIRTY: the owner is writing; readers skip it
	LockAllocated LockState = 2 // PFS_LOCK_ALLOCATED: readable, validated by the version
)

const (
	lockStateMask   = 0x3
	lockVersionMask = ^uint32(lockStateMask)
	lockVersionInc  = 4
)

// String returns FREE, DIRTY or ALLOCATED.
func (s LockState) String() string {
	switch s {
	case LockFree:
		return "FREE"
	case LockDirty:
		return "DIRTY"
	case LockAllocated:
		return "ALLOCATED"
	}
	return "INVALID"
}

// DirtyState is the word a writer read when it made the record DIRTY; it passes
// it to the transition that leaves DIRTY.
type DirtyState uint32

// OptimisticState is the word a reader saw at BeginOptimistic.
type OptimisticState uint32

// Allocated reports whether the record was ALLOCATED at BeginOptimistic; if
// not, EndOptimistic will fail and the reader can skip the copy.
func (s OptimisticState) Allocated() bool { return LockState(s)&lockStateMask == LockAllocated }

// Version returns the version part of the word seen at BeginOptimistic.
func (s OptimisticState) Version() uint32 { return uint32(s) >> 2 }

// State returns the current state. Safe for concurrent use.
func (l *Lock) State() LockState { return LockState(l.w.Load() & lockStateMask) }

// Version returns the current version (30 bits). Safe for concurrent use.
func (l *Lock) Version() uint32 { return l.w.Load() >> 2 }

// IsFree reports whether the record is FREE (MySQL's is_free). Safe for
// concurrent use; the answer may be stale at once.
func (l *Lock) IsFree() bool { return l.State() == LockFree }

// IsPopulated reports whether the record is ALLOCATED (MySQL's
// is_populated), a cheap pre-filter for scans. Safe for concurrent use.
func (l *Lock) IsPopulated() bool { return l.State() == LockAllocated }

// FreeToDirty claims a FREE record for the caller: FREE(n) -> DIRTY(n). It is
// the only transition safe among competing writers; at most one wins. On
// success the caller owns the record and must later call DirtyToAllocated or
// DirtyToFree with the returned state.
func (l *Lock) FreeToDirty() (DirtyState, bool) {
	old := l.w.Load()
	if LockState(old&lockStateMask) != LockFree {
		return 0, false
	}
	dirty := old&lockVersionMask | uint32(LockDirty)
	if !l.w.CompareAndSwap(old, dirty) {
		return 0, false
	}
	l.fence()
	return DirtyState(dirty), true
}

// fence orders a transition into DIRTY before the owner's cell stores that
// follow on arm64 cores without LSE atomics, where Go's compare-and-swap and
// add are LDAXR/STLXR loops that later plain stores may overtake: an atomic
// load (LDAR) after them is ordered after the STLXR and before those stores.
// On amd64 the locked instructions are full fences already, and the load is
// a plain MOV.
func (l *Lock) fence() { l.w.Load() }

// DirtyToAllocated publishes the record: DIRTY(n) -> ALLOCATED(n+1). Owner
// only; d is the state returned by FreeToDirty or AllocatedToDirty.
func (l *Lock) DirtyToAllocated(d DirtyState) {
	l.w.Store(uint32(d)&lockVersionMask + lockVersionInc | uint32(LockAllocated))
}

// AllocatedToDirty starts a rewrite of a published record: ALLOCATED(n) ->
// DIRTY(n). Owner only. It is an atomic add, not a store, for the ordering
// reason in the type's documentation.
func (l *Lock) AllocatedToDirty() DirtyState {
	// ALLOCATED (2) minus one is DIRTY (1); the version bits are untouched.
	d := DirtyState(l.w.Add(^uint32(0)))
	l.fence()
	return d
}

// DirtyToFree abandons a record that was never published, or whose rewrite is
// abandoned: DIRTY(n) -> FREE(n). Owner only.
func (l *Lock) DirtyToFree(d DirtyState) {
	l.w.Store(uint32(d)&lockVersionMask | uint32(LockFree))
}

// AllocatedToFree releases a published record: ALLOCATED(n) -> FREE(n). Owner
// only; readers copying it fail their EndOptimistic.
func (l *Lock) AllocatedToFree() {
	l.w.Store(l.w.Load()&lockVersionMask | uint32(LockFree))
}

// BeginOptimistic starts an optimistic read. Safe for concurrent use.
func (l *Lock) BeginOptimistic() OptimisticState { return OptimisticState(l.w.Load()) }

// EndOptimistic reports whether everything copied since BeginOptimistic
// returned s is a consistent copy of an ALLOCATED record. Safe for concurrent
// use.
func (l *Lock) EndOptimistic(s OptimisticState) bool {
	return s.Allocated() && l.w.Load() == uint32(s)
}

// word returns the raw word, for tests and invariant checks.
func (l *Lock) word() uint32 { return l.w.Load() }
