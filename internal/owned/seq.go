package owned

import (
	"sync/atomic"
	"unsafe"
)

// Seq is the version word of a record written by one owner and read with the
// seqlock protocol: even while the record is stable, odd while its owner
// writes it. The zero value is an even (stable) sequence.
//
//	owner                      reader
//	s.BeginWrite()             v := s.Load(); if v is odd, retry
//	cells[i].Set(...)          copy cells with Load
//	s.EndWrite()               if s.Load() != v, retry
//
// # Cost, and why it is correct
//
// Where the hardware keeps stores in program order (amd64: total store
// order; 386 too, but its 64-bit stores are not single stores, so it takes
// the atomic path), BeginWrite and EndWrite are plain stores, like Uint64.Set: a reader
// that sees any of the cells' new values also sees the odd sequence stored
// before them, because stores become visible in order and the reader's loads
// are not reordered with each other. The compiler must keep the stores too:
// it never reorders stores, but it does remove a store that a later store to
// the same word overwrites with only other stores in between (dead-store
// elimination), which would drop the odd value of an inlined BeginWrite. So
// the plain store is a call (storeSeq, not inlined): a call may read memory,
// so the store before it stays, and no store moves across it. That makes a
// record write cost two calls and no locked instruction.
//
// Elsewhere (arm64 and the rest), BeginWrite is an atomic add: on arm64 an
// LDADDAL, whose acquire half keeps the cells' stores from being performed
// before it; EndWrite is an atomic add too, whose release half keeps them
// from being performed after it. On arm64 cores without LSE atomics
// (ARMv8.0) Go falls back to an LDAXR/STLXR loop, after which later plain
// stores may become visible before the STLXR; so BeginWrite (and
// BeginStore) follow the read-modify-write with an atomic load (LDAR, which
// is ordered after the STLXR and before later stores). Under the race
// detector both are atomic adds everywhere, as Set is an atomic store.
type Seq struct {
	v atomic.Uint64
}

// Load atomically loads the sequence. Safe for concurrent use.
func (s *Seq) Load() uint64 { return s.v.Load() }

// BeginWrite makes the sequence odd. Owner only.
func (s *Seq) BeginWrite() {
	s.bump()
	AfterRMW(&s.v)
}

// EndWrite makes the sequence even again. Owner only.
func (s *Seq) EndWrite() { s.bump() }

func (s *Seq) bump() {
	if storesOrdered && !raceEnabled {
		p := (*uint64)(unsafe.Pointer(&s.v))
		storeSeq(p, *p+1)
		return
	}
	s.v.Add(1)
}

// BeginStore stores v into w, a version word its one writer is about to
// bracket a write with (a ring slot going dirty): the stores that follow it
// are not seen before it. A plain store where stores are ordered (as in Seq),
// an atomic swap elsewhere.
func BeginStore(w *atomic.Uint64, v uint64) {
	if storesOrdered && !raceEnabled {
		storeSeq((*uint64)(unsafe.Pointer(w)), v)
		return
	}
	w.Swap(v)
	AfterRMW(w)
}

// AfterRMW orders an atomic read-modify-write of w (an add, swap or
// compare-and-swap that opens a write) before the plain stores that follow
// it, on architectures where the RMW may be an LL/SC loop (see Seq). Where
// stores are ordered it is nothing.
func AfterRMW(w *atomic.Uint64) {
	if !storesOrdered {
		w.Load()
	}
}

// EndStore stores v into w, closing the bracket (a ring slot committed): the
// stores before it are seen before it. A plain store where stores are
// ordered, an atomic (release) store elsewhere.
func EndStore(w *atomic.Uint64, v uint64) {
	if storesOrdered && !raceEnabled {
		storeSeq((*uint64)(unsafe.Pointer(w)), v)
		return
	}
	w.Store(v)
}

// storeSeq stores v at p. It must not be inlined: see Seq.
//
//go:noinline
func storeSeq(p *uint64, v uint64) { *p = v }
