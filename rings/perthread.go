package rings

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Limits on a ring's shape: rows*width cells must be addressable with room to
// spare, and a ring's tickets must never lap the 2^62 ticket circle. A row's
// refs are a few pointers, not a second row.
const (
	maxRows  = 1 << 30
	maxWidth = 1 << 10
	maxRefs  = 64
)

// ErrSize is returned by the constructors when rows, width or refs is not in
// [1, 2^30], [1, 1024] or [0, 64].
var ErrSize = errors.New("rings: rows must be in [1, 2^30], width in [1, 1024] and refs in [0, 64]")

// PerThread is the history ring of one actor: the last Rows rows one writer
// appended, behind events_*_history. The owner (the goroutine driving the
// thread, one at a time) calls Begin and Append; any goroutine may call
// AppendRows, Reset and the accessors at any time.
type PerThread struct {
	_ [0]func() // not comparable

	tb table

	// index is the slot the next append writes: MySQL's
	// m_waits_history_index. Owner only; readers never look at it.
	index int

	// head is the ticket of the next append. The owner stores it when it
	// begins an append; readers load it.
	head owned.Uint64

	// base is the oldest ticket Reset left visible. Reset moves it forward
	// with a CAS; nothing else writes it.
	base atomic.Uint64

	// Keep rings of different threads, allocated next to each other, off
	// each other's cache lines: head is written on every append.
	_ [128 - unsafe.Sizeof(table{}) - 3*8]byte
}

// NewPerThread returns a ring of rows slots, each a row of width 64-bit
// words, all zero. Nothing is allocated after construction.
func NewPerThread(rows, width int) (*PerThread, error) {
	return NewPerThreadRefs(rows, width, 0)
}

// NewPerThreadRefs is NewPerThread for rows that also carry refs pointers
// each (refs in [0, 64]; 0 is NewPerThread), all nil: ref cells, which the
// garbage collector sees. A row's refs keep what they point to alive until
// their slot is overwritten (see doc.go, "Refs").
func NewPerThreadRefs(rows, width, refs int) (*PerThread, error) {
	tb, err := newTable(rows, width, refs)
	if err != nil {
		return nil, err
	}
	return &PerThread{tb: tb}, nil
}

// Rows returns the number of slots: events_*_history's rows per thread.
func (r *PerThread) Rows() int { return r.tb.rows }

// Width returns the number of words in a row.
func (r *PerThread) Width() int { return r.tb.width }

// Refs returns the number of ref cells in a row: 0 unless the ring was made
// by NewPerThreadRefs.
func (r *PerThread) Refs() int { return r.tb.nrefs }

// Begin starts an append: it takes the oldest slot, which readers stop
// returning at once, and returns it for the caller to fill with Set and
// publish with Commit. Owner only. An append that is never committed leaves an
// empty slot; the next Begin proceeds regardless. Append is cheaper when the
// row is at hand (see doc.go, "Cost"). On a ring with refs, the row's refs are
// nil: rows with refs are appended with AppendRefs.
func (r *PerThread) Begin() Slot {
	s, t := r.take()
	return r.tb.slot(s, t)
}

// take marks the oldest slot dirty for the next ticket and advances the
// owner's index and the published head; it returns the slot and the ticket.
func (r *PerThread) take() (int, uint64) {
	t := r.head.Load()
	s := r.index
	// On arm64 this is a swap (SWPAL): the cell stores that follow cannot
	// be performed before it. On amd64 a plain store suffices (owned.BeginStore).
	owned.BeginStore(&r.tb.seq[s], dirty(t))
	r.head.Set((t + 1) & ticketMask)
	if s+1 == r.tb.rows {
		r.index = 0
	} else {
		r.index = s + 1
	}
	return s, t
}

// Append appends row, which must hold Width words. Owner only. It is Begin,
// a Set of each word and Commit in one call, and costs less than them. On a
// ring with refs, the row's refs are nil, so the slot's old row no longer
// keeps its targets alive.
func (r *PerThread) Append(row []uint64) {
	w := r.tb.width
	if len(row) != w {
		panic("pfs: BUG: rings: Append of a row whose length is not the ring's width")
	}
	s, t := r.take()
	r.tb.store(s, t, row, nil)
}

// AppendRefs appends row, which must hold Width words, and refs, which must
// hold Refs pointers, published together under the slot's version word: a
// reader that returns the row returns exactly these refs with it. Owner only.
// The refs keep their targets alive until the slot is overwritten. AppendRefs
// keeps the pointers, not refs itself: refs may be an array on the caller's
// stack.
func (r *PerThread) AppendRefs(row []uint64, refs []unsafe.Pointer) {
	if len(row) != r.tb.width {
		panic("pfs: BUG: rings: AppendRefs of a row whose length is not the ring's width")
	}
	if len(refs) != r.tb.nrefs {
		panic("pfs: BUG: rings: AppendRefs of refs whose length is not the ring's Refs")
	}
	s, t := r.take()
	r.tb.store(s, t, row, refs)
}

// AppendRows appends the ring's rows to dst, oldest first, Width words each,
// and returns the extended slice. Safe for concurrent use with the owner,
// other readers and Reset; see doc.go for what a concurrent append does to
// the result. It allocates only when dst lacks capacity for the rows the
// ring holds (appends during the call may add some), when it holds more
// than 256, or when appends during the call leave the rows it copied out of
// order.
func (r *PerThread) AppendRows(dst []uint64) []uint64 {
	return r.tb.appendRows(dst, &r.base, r.head.Load)
}

// AppendRowsRefs is AppendRows that also appends each returned row's Refs
// pointers to dstRefs, in the same order: row k's refs are at
// dstRefs[k*Refs : (k+1)*Refs] from where dstRefs ended. It returns both
// extended slices. It allocates in AppendRows' cases, and when dstRefs lacks
// capacity for Rows rows' refs.
func (r *PerThread) AppendRowsRefs(dst []uint64, dstRefs []unsafe.Pointer) ([]uint64, []unsafe.Pointer) {
	return r.tb.appendRowsRefs(dst, dstRefs, &r.base, r.head.Load)
}

// Reset empties the ring, as TRUNCATE of events_*_history does: rows appended
// before it are never returned again. It writes no slot, only the ring's
// base ticket, so it is safe for concurrent use with the owner, readers and
// other Resets. Reset cuts every append begun before it, including one the
// owner has begun but not committed.
func (r *PerThread) Reset() {
	resetTo(&r.base, r.head.Load())
}

// resetTo moves base forward to head, never backward, so that concurrent
// Resets keep the latest cut.
func resetTo(base *atomic.Uint64, head uint64) {
	for {
		b := base.Load()
		if !before(b, head) {
			return
		}
		if base.CompareAndSwap(b, head) {
			return
		}
	}
}
