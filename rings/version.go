package rings

// Version words. Every slot has one 64-bit version word, kept in a slice of
// atomic.Uint64 beside the cells (see doc.go, "Version words"):
//
//	 63                                            2 1 0
//	+-----------------------------------------------+---+
//	|                ticket (62 bits)               |st |
//	+-----------------------------------------------+---+
//
// The state st is stateFree (never written), stateDirty (one writer owns the
// slot and is storing its cells) or stateCommitted (the cells hold the row of
// ticket, readable). A ticket is the append's position in the ring's history,
// counted modulo 2^62 from the ring's construction.
const (
	stateFree      = 0
	stateDirty     = 1
	stateCommitted = 2
	stateMask      = 3
	stateBits      = 2

	// ticketMask masks a ticket to its 62 bits; ticket arithmetic is modulo
	// ticketMask+1.
	ticketMask = 1<<(64-stateBits) - 1
	// halfTickets splits the ticket circle: a ticket less than halfTickets
	// ahead of another is newer than it.
	halfTickets = 1 << (64 - stateBits - 1)
)

func dirty(t uint64) uint64     { return t<<stateBits | stateDirty }
func committed(t uint64) uint64 { return t<<stateBits | stateCommitted }
func ticketOf(v uint64) uint64  { return v >> stateBits }

// before reports whether ticket a is older than ticket b, modulo 2^62.
func before(a, b uint64) bool {
	d := (b - a) & ticketMask
	return d != 0 && d < halfTickets
}

// window returns how many tickets the rows of a ring holding rows slots may
// come from, given the oldest ticket not cut by Reset (base) and the next
// ticket to be handed out (head): min(rows, head-base), 0 if base is not
// behind head.
func window(base, head uint64, rows int) uint64 {
	n := (head - base) & ticketMask
	if n >= halfTickets { // base is ahead of head: nothing to show
		return 0
	}
	return min(n, uint64(rows))
}
