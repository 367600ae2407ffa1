package rings

// Hooks for tests: start counters near wraparound, split an append.

// TicketMask is the largest ticket; tickets wrap to 0 after it.
const TicketMask = ticketMask

// NewPerThreadAt returns a ring whose first append takes ticket t.
func NewPerThreadAt(rows, width int, t uint64) (*PerThread, error) {
	return NewPerThreadRefsAt(rows, width, 0, t)
}

// NewPerThreadRefsAt is NewPerThreadAt for a ring with refs.
func NewPerThreadRefsAt(rows, width, refs int, t uint64) (*PerThread, error) {
	r, err := NewPerThreadRefs(rows, width, refs)
	if err != nil {
		return nil, err
	}
	r.head.Set(t & ticketMask)
	r.base.Store(t & ticketMask)
	return r, nil
}

// NewGlobalAt returns a ring whose 64-bit ticket counter starts at c: its
// first ticket is c mod 2^62.
func NewGlobalAt(rows, width int, c uint64) (*Global, error) {
	return NewGlobalRefsAt(rows, width, 0, c)
}

// NewGlobalRefsAt is NewGlobalAt for a ring with refs.
func NewGlobalRefsAt(rows, width, refs int, c uint64) (*Global, error) {
	g, err := NewGlobalRefs(rows, width, refs)
	if err != nil {
		return nil, err
	}
	g.next.Store(c)
	g.base.Store(c & ticketMask)
	return g, nil
}

// TakeTicket is the first half of Global.Begin.
func (g *Global) TakeTicket() uint64 { return (g.next.Add(1) - 1) & ticketMask }

// Claim is the second half of Global.Begin.
func (g *Global) Claim(t uint64) Slot {
	s, ok := g.claim(t)
	if !ok {
		return Slot{}
	}
	return g.tb.slot(s, t)
}

// Head returns the next ticket of the ring.
func (r *PerThread) Head() uint64 { return r.head.Load() }

// Head returns the next ticket of the ring.
func (g *Global) Head() uint64 { return g.next.Load() & ticketMask }
