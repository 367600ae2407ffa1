package pfscore

// usedSet is the set of indexes of one of a thread's statistics tables
// (by class, by statement kind, by memory kind) that the thread has
// written, so that End rolls up, and recycle clears, only those: a request
// thread touches a handful of the schema's classes, and walking every class
// at each End cost more than the request's events did.
//
// Invariant: only a write section of the thread marks an index (every
// write of the tables it tracks is in one, right after the mark), End reads
// the set once no write section can begin (its compare-and-swap of the
// guard word orders it after every section's release), and recycle clears
// it while no reader and no writer can reach the storage (see takeCore).
// So plain memory suffices, and every index whose statistics are not zero
// is in the set.
type usedSet struct {
	words []uint64 // a bit per index
	list  []int32  // the indexes set, in the order they were first set
}

// mark adds index i.
func (u *usedSet) mark(i int) {
	w := uint(i) >> 6
	if w >= uint(len(u.words)) {
		u.grow(int(w))
	}
	if bit := uint64(1) << (uint(i) & 63); u.words[w]&bit == 0 {
		u.words[w] |= bit
		u.list = append(u.list, int32(i))
	}
}

//go:noinline
func (u *usedSet) grow(w int) {
	next := make([]uint64, max(w+1, 2*len(u.words)))
	copy(next, u.words)
	u.words = next
}

// clear empties the set, keeping its storage for the next thread.
func (u *usedSet) clear() {
	for _, i := range u.list {
		u.words[uint(i)>>6] = 0
	}
	u.list = u.list[:0]
}
