package store

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// CacheLine is the padding unit for words that different cores write. 128
// bytes covers the adjacent-line prefetcher of x86 and the 128-byte lines of
// some arm64 cores.
const CacheLine = 128

// Record is one slot of a Container: the record's Lock, its position, and the
// Value the owner writes. A Record lives in a page array for the whole life
// of the page, so its address is stable: pfscore hands *Record to the hot path
// and keeps nothing else to find it again.
type Record[T any] struct {
	// Lock is the record's pfs_lock. The owner uses it to rewrite the record
	// (AllocatedToDirty ... DirtyToAllocated), readers to validate copies;
	// only the Container claims a FREE record or makes one FREE.
	Lock  Lock
	page  uint32 // slot of the record's page in the container's page table; immutable
	pos   uint32 // position inside the page; immutable
	index uint32 // dense row index, page*PageSize + pos; immutable
	// Value is the record's data. The owner writes it only while the record
	// is DIRTY; readers load its cells between BeginOptimistic and
	// EndOptimistic.
	Value T
}

// Index returns the record's dense row index (page * PageSize + position), the
// row's position in a table scan. An index is reused when its record is.
func (r *Record[T]) Index() uint64 { return uint64(r.index) }

// The page state word. One 64-bit word holds two flags and a counter of frees:
//
//	 63                                     2    1        0
//	+----------------------------------------+--------+------+
//	|          frees (mod 2^62)              |retiring| full |
//	+----------------------------------------+--------+------+
//
// The parts:
//   - full: an allocator visited every record of the page, found none FREE,
//     and no record of the page was freed between the start of its visit and
//     the moment it set the flag (it sets it with a compare-and-swap against
//     the word it loaded before the visit, and every free changes the word).
//     So the flag is never stale: the page really was full when it was set,
//     and the first free afterwards clears it. Allocators skip full pages
//     without reading their records.
//   - retiring: the reclaimer is taking the page away. Allocators neither
//     enter a retiring page nor keep a record they claimed in one; see
//     Container.Reclaim. Once a page is retired the bit stays set.
//   - frees: incremented by every free of a record of the page. It invalidates
//     concurrent full-flag CASes, and tells the reclaimer whether the page saw
//     any activity between two of its observations.
const (
	pageFull     = 1 << 0
	pageRetiring = 1 << 1
	pageFreeInc  = 1 << 2
)

// page is one fixed-size array of records and its state word. Pages are
// created by Container.grow, published in the page table with an atomic
// pointer store, and unpublished by Container.Reclaim.
type page[T any] struct {
	// state is written by every free of one of the page's records and by
	// allocators that find the page full: it has its own cache line.
	state atomic.Uint64
	_     [CacheLine - 8]byte

	// Immutable after publication (the atomic pointer store that publishes
	// the page orders these writes before any reader's load of the pointer).
	slot uint32      // index in the container's page table
	gen  uint64      // container growth generation that created the page
	recs []Record[T] // the records; no Go pointers inside

	// Reclaimer bookkeeping, read and written only under Container.mu.
	idle      bool      // all records were FREE at the last Reclaim
	idleSince time.Time // when the page was first seen idle
	idleFrees uint64    // the frees counter then; any change restarts the clock

	// monotonic is the shared per-page counter of the test-only MySQL-like
	// allocation (see allocateShared); unused otherwise.
	monotonic atomic.Uint64
}

// allocate claims a FREE record of the page, visiting each record at most
// once from a random start, or returns nil if the page is full or retiring.
// retiring reports that it found the page retiring: at its first load, or
// after it claimed a record, which it then gave back. The caller must not
// take a nil for a full page then, even if the bit is clear again by the time
// it looks (the reclaimer's re-scan saw the record and kept the page).
func (p *page[T]) allocate() (r *Record[T], d DirtyState, retiring bool) {
	w := p.state.Load()
	if w&(pageFull|pageRetiring) != 0 {
		return nil, 0, w&pageRetiring != 0
	}
	n := uint32(len(p.recs))
	// A random start spreads concurrent allocators over the page without a
	// shared counter; rand.Uint32 is per-M state in the runtime, no lock.
	i := uint32(uint64(rand.Uint32()) * uint64(n) >> 32)
	for range n {
		r := &p.recs[i]
		if d, ok := r.Lock.FreeToDirty(); ok {
			// The reclaimer may have marked the page retiring after our
			// first load. Our CAS and this load, against its CAS of the
			// page word and its scan of the records, are sequentially
			// consistent atomics: either this load sees retiring and we
			// give the record back, or the reclaimer's scan sees the
			// record DIRTY and aborts (or both). See Container.Reclaim.
			if p.state.Load()&pageRetiring != 0 {
				r.Lock.DirtyToFree(d)
				p.freed()
				return nil, 0, true
			}
			return r, d, false
		}
		if i++; i == n {
			i = 0
		}
	}
	// A full lap without a FREE record. Mark the page full unless a record
	// was freed (or the page started retiring) since we loaded w.
	p.state.CompareAndSwap(w, w|pageFull)
	return nil, 0, false
}

// freed records that one of the page's records became FREE.
func (p *page[T]) freed() {
	if w := p.state.Add(pageFreeInc); w&pageFull != 0 {
		p.state.And(^uint64(pageFull))
	}
}

// allFree reports whether every record of the page is FREE. Reclaimer only.
func (p *page[T]) allFree() bool {
	for i := range p.recs {
		if !p.recs[i].Lock.IsFree() {
			return false
		}
	}
	return true
}

// allocateShared is MySQL's page allocation, kept only so that the K+1 test
// can show it fails: a per-page counter shared by all allocators and advanced
// by every failed attempt, so that concurrent allocators skip records that
// none of them looked at, and a full flag set without checking for frees.
func (p *page[T]) allocateShared() (*Record[T], DirtyState) {
	if p.state.Load()&(pageFull|pageRetiring) != 0 {
		return nil, 0
	}
	n := uint64(len(p.recs))
	m := p.monotonic.Add(1) - 1
	for end := m + n; m < end; m = p.monotonic.Add(1) - 1 {
		r := &p.recs[m%n]
		if d, ok := r.Lock.FreeToDirty(); ok {
			return r, d
		}
	}
	p.state.Or(pageFull)
	return nil, 0
}
