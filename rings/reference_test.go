package rings_test

import (
	"slices"
	"sync"

	"github.com/otelpfs/otelpfs/rings"
)

// refRing is the mutex-based reference: the obvious history ring, a slice of
// the last rows appended since the last reset, each with its ticket.
type refRing struct {
	mu      sync.Mutex
	rows    int
	width   int
	next    uint64 // ticket of the next append
	data    [][]uint64
	tickets []uint64
}

func newRef(rows, width int, start uint64) *refRing {
	return &refRing{rows: rows, width: width, next: start}
}

func (r *refRing) Append(row []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = append(r.data, slices.Clone(row))
	r.tickets = append(r.tickets, r.next)
	r.next = (r.next + 1) & rings.TicketMask
	if len(r.data) > r.rows {
		r.data = r.data[1:]
		r.tickets = r.tickets[1:]
	}
}

func (r *refRing) AppendRows(dst []uint64) []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range r.data {
		dst = append(dst, row...)
	}
	return dst
}

func (r *refRing) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data, r.tickets = nil, nil
}

// ticketsHeld returns the tickets of the rows held, oldest first.
func (r *refRing) ticketsHeld() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tickets)
}
