package rings

import (
	"github.com/otelpfs/otelpfs/internal/owned"
	"sync/atomic"
	"unsafe"
)

// Global is the history ring of the whole process: the last Rows rows any
// goroutine appended, behind events_*_history_long. Every method is safe for
// concurrent use.
type Global struct {
	_ [0]func() // not comparable

	// Read-only after construction, read by every append: its own lines.
	tb  table
	div divisor
	_   [128 - unsafe.Sizeof(table{}) - unsafe.Sizeof(divisor{})]byte

	// next is the ticket counter every append increments: MySQL's
	// events_waits_history_long_index, but 64 bits wide. The ticket is the
	// value before the increment, modulo 2^62.
	next atomic.Uint64
	_    [128 - unsafe.Sizeof(atomic.Uint64{})]byte

	// lost counts appends dropped because their slot was taken (doc.go,
	// "Collisions"); base is the oldest ticket Reset left visible. Both are
	// rarely written.
	lost atomic.Uint64
	base atomic.Uint64
	_    [128 - 2*unsafe.Sizeof(atomic.Uint64{})]byte
}

// NewGlobal returns a ring of rows slots, each a row of width 64-bit words,
// all zero. Nothing is allocated after construction.
func NewGlobal(rows, width int) (*Global, error) {
	return NewGlobalRefs(rows, width, 0)
}

// NewGlobalRefs is NewGlobal for rows that also carry refs pointers each
// (refs in [0, 64]; 0 is NewGlobal), all nil: ref cells, which the garbage
// collector sees. A row's refs keep what they point to alive until their slot
// is overwritten (see doc.go, "Refs").
func NewGlobalRefs(rows, width, refs int) (*Global, error) {
	tb, err := newTable(rows, width, refs)
	if err != nil {
		return nil, err
	}
	return &Global{tb: tb, div: newDivisor(uint64(rows))}, nil
}

// Rows returns the number of slots: events_*_history_long's size.
func (g *Global) Rows() int { return g.tb.rows }

// Width returns the number of words in a row.
func (g *Global) Width() int { return g.tb.width }

// Refs returns the number of ref cells in a row: 0 unless the ring was made
// by NewGlobalRefs.
func (g *Global) Refs() int { return g.tb.nrefs }

// Lost returns the number of appends dropped because another writer held
// their slot, or had already filled it with a newer row. It only grows.
func (g *Global) Lost() uint64 { return g.lost.Load() }

// Begin starts an append: it takes a ticket and the ticket's slot, and returns
// the slot for the caller to fill with Set and publish with Commit. If the
// slot is held by another writer or already holds a newer row, the append is
// dropped, counted in Lost, and Begin returns a discard slot. The caller owns
// the returned slot until Commit; a slot never committed stays invisible
// until a later lap's writer takes it over. On a ring with refs, the row's
// refs are nil: rows with refs are appended with AppendRefs.
func (g *Global) Begin() Slot {
	t := (g.next.Add(1) - 1) & ticketMask
	s, ok := g.claim(t)
	if !ok {
		return Slot{}
	}
	return g.tb.slot(s, t)
}

// claim takes ticket t's slot for its writer and returns it, or drops the
// append, counts it and returns false.
func (g *Global) claim(t uint64) (int, bool) {
	s := int(g.div.mod(t))
	seq := &g.tb.seq[s]
	for {
		v := seq.Load()
		switch v & stateMask {
		case stateDirty:
			g.lost.Add(1) // another writer is storing cells: never share them
			return 0, false
		case stateCommitted:
			if !before(ticketOf(v), t) {
				g.lost.Add(1) // a newer row is already there: ours is stale
				return 0, false
			}
		}
		// The CAS is an atomic read-modify-write: on arm64 (CASAL) the cell
		// stores that follow cannot be performed before it; where it is an
		// LL/SC loop (ARMv8.0), owned.AfterRMW orders them.
		if seq.CompareAndSwap(v, dirty(t)) {
			owned.AfterRMW(seq)
			return s, true
		}
		// Another writer of this slot moved first: look again.
	}
}

// Append appends row, which must hold Width words. It is Begin, a Set of each
// word and Commit in one call, and costs less than them. The append may be
// dropped and counted in Lost (see Begin). On a ring with refs, the row's
// refs are nil, so the slot's old row no longer keeps its targets alive.
func (g *Global) Append(row []uint64) {
	if len(row) != g.tb.width {
		panic("pfs: BUG: rings: Append of a row whose length is not the ring's width")
	}
	t := (g.next.Add(1) - 1) & ticketMask
	if s, ok := g.claim(t); ok {
		g.tb.store(s, t, row, nil)
	}
}

// AppendRefs appends row, which must hold Width words, and refs, which must
// hold Refs pointers, published together under the slot's version word: a
// reader that returns the row returns exactly these refs with it. The append
// may be dropped and counted in Lost, refs and all (see Begin). The refs keep
// their targets alive until the slot is overwritten. AppendRefs keeps the
// pointers, not refs itself: refs may be an array on the caller's stack.
func (g *Global) AppendRefs(row []uint64, refs []unsafe.Pointer) {
	if len(row) != g.tb.width {
		panic("pfs: BUG: rings: AppendRefs of a row whose length is not the ring's width")
	}
	if len(refs) != g.tb.nrefs {
		panic("pfs: BUG: rings: AppendRefs of refs whose length is not the ring's Refs")
	}
	t := (g.next.Add(1) - 1) & ticketMask
	if s, ok := g.claim(t); ok {
		g.tb.store(s, t, row, refs)
	}
}

// AppendRows appends the ring's rows to dst, oldest first, Width words each,
// and returns the extended slice. Safe for concurrent use with appends, other
// readers and Reset. It allocates only when dst lacks capacity for the rows
// the ring holds (appends during the call may add some), when it holds more
// than 256, or when appends during the call leave the rows it copied out of
// order.
func (g *Global) AppendRows(dst []uint64) []uint64 {
	return g.tb.appendRows(dst, &g.base, g.head)
}

// AppendRowsRefs is AppendRows that also appends each returned row's Refs
// pointers to dstRefs, in the same order: row k's refs are at
// dstRefs[k*Refs : (k+1)*Refs] from where dstRefs ended. It returns both
// extended slices. It allocates in AppendRows' cases, and when dstRefs lacks
// capacity for Rows rows' refs.
func (g *Global) AppendRowsRefs(dst []uint64, dstRefs []unsafe.Pointer) ([]uint64, []unsafe.Pointer) {
	return g.tb.appendRowsRefs(dst, dstRefs, &g.base, g.head)
}

// head returns the ticket the next append will take.
func (g *Global) head() uint64 { return g.next.Load() & ticketMask }

// Reset empties the ring, as TRUNCATE of events_*_history_long does: rows
// whose ticket was taken before it are never returned again, including those
// still being written. It writes no slot, only the ring's base ticket.
func (g *Global) Reset() {
	resetTo(&g.base, g.head())
}
