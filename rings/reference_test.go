package rings_test

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/otelpfs/otelpfs/rings"
)

// refRing is the mutex-based reference: the obvious history ring, a slice of
// the last rows appended since the last reset, each with its refs and its
// ticket.
type refRing struct {
	mu      sync.Mutex
	rows    int
	width   int
	nrefs   int
	next    uint64 // ticket of the next append
	data    [][]uint64
	refs    [][]unsafe.Pointer
	tickets []uint64
}

func newRef(rows, width, nrefs int, start uint64) *refRing {
	return &refRing{rows: rows, width: width, nrefs: nrefs, next: start}
}

// Append appends row with nil refs, as the rings' Append and Begin do.
func (r *refRing) Append(row []uint64) { r.AppendRefs(row, nil) }

// AppendRefs appends row and refs (nil: nrefs nil refs).
func (r *refRing) AppendRefs(row []uint64, refs []unsafe.Pointer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := make([]unsafe.Pointer, r.nrefs)
	copy(rs, refs)
	r.data = append(r.data, slices.Clone(row))
	r.refs = append(r.refs, rs)
	r.tickets = append(r.tickets, r.next)
	r.next = (r.next + 1) & rings.TicketMask
	if len(r.data) > r.rows {
		r.data = r.data[1:]
		r.refs = r.refs[1:]
		r.tickets = r.tickets[1:]
	}
}

func (r *refRing) AppendRows(dst []uint64) []uint64 {
	dst, _ = r.AppendRowsRefs(dst, nil)
	return dst
}

func (r *refRing) AppendRowsRefs(dst []uint64, dstRefs []unsafe.Pointer) ([]uint64, []unsafe.Pointer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, row := range r.data {
		dst = append(dst, row...)
		dstRefs = append(dstRefs, r.refs[i]...)
	}
	return dst, dstRefs
}

func (r *refRing) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data, r.refs, r.tickets = nil, nil, nil
}

// ticketsHeld returns the tickets of the rows held, oldest first.
func (r *refRing) ticketsHeld() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tickets)
}
