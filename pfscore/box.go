package pfscore

import "unsafe"

// Boxing the cells of a table read.
//
// A Value holding a uint64, an int64 or a string is an interface whose data
// word points to a copy of the value; Go allocates that copy for each
// conversion (8 or 16 bytes: a 10,000-row summary read made 50,000 such
// allocations, a fifth of its time). A boxer carves the copies out of
// chunks instead: one allocation per chunk of boxChunk values.
//
// Invariant: a chunk slot is written once, before the Value pointing to it
// exists, and never again; an interface's data is immutable, as Go's own
// conversions make it. A chunk is never reused: a boxer appends, and makes
// a new chunk when one is full, so every Value it returned keeps its own
// slot (and, through the interior pointer, its chunk) alive. The interface
// is assembled from the type word Go itself uses for the type (taken from
// a converted value) and the slot's address: the layout of an empty
// interface, a (type, data) pair, which the runtime, reflect and the
// garbage collector have relied on since Go 1.

const boxChunk = 512

// A boxer boxes the cells of one read; its zero value is ready. A nil
// *boxer uses Go's conversions.
type boxer struct {
	u []uint64
	i []int64
	s []string
}

// eface is the layout of an empty interface.
type eface struct {
	typ, data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	uint64Word = typeWord(uint64(0))
	int64Word  = typeWord(int64(0))
	stringWord = typeWord("")
)

func makeEface(typ, data unsafe.Pointer) (v Value) {
	*(*eface)(unsafe.Pointer(&v)) = eface{typ, data}
	return v
}

// uint returns u as a Value. Go boxes values below 256 without allocating
// (they point into a static table), so those take its conversion.
func (b *boxer) uint(u uint64) Value {
	if b == nil || u < 256 {
		return u
	}
	if len(b.u) == cap(b.u) {
		b.u = make([]uint64, 0, boxChunk)
	}
	b.u = append(b.u, u)
	return makeEface(uint64Word, unsafe.Pointer(&b.u[len(b.u)-1]))
}

// int returns i as a Value.
func (b *boxer) int(i int64) Value {
	if b == nil || uint64(i) < 256 {
		return i
	}
	if len(b.i) == cap(b.i) {
		b.i = make([]int64, 0, boxChunk)
	}
	b.i = append(b.i, i)
	return makeEface(int64Word, unsafe.Pointer(&b.i[len(b.i)-1]))
}

// string returns s as a Value; the string's bytes are shared, not copied.
func (b *boxer) string(s string) Value {
	if b == nil || s == "" {
		return s
	}
	if len(b.s) == cap(b.s) {
		b.s = make([]string, 0, boxChunk)
	}
	b.s = append(b.s, s)
	return makeEface(stringWord, unsafe.Pointer(&b.s[len(b.s)-1]))
}
