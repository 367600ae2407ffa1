package rings

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

func TestDivisor(t *testing.T) {
	ds := []uint64{1, 2, 3, 5, 6, 7, 10, 12, 100, 641, 1000, 10000, 10007, 1 << 20, 1<<20 + 1, 1<<30 - 1, 1 << 30}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		ds = append(ds, 1+rng.Uint64N(maxRows))
	}
	for _, d := range ds {
		v := newDivisor(d)
		ns := []uint64{0, 1, d - 1, d, d + 1, 1<<62 - 1, 1 << 62, 1<<63 - 1, 1<<63 - d, ticketMask - d}
		for range 2000 {
			ns = append(ns, rng.Uint64()>>1, rng.Uint64()>>(1+rng.UintN(63)))
		}
		for _, n := range ns {
			if got, want := v.mod(n), n%d; got != want {
				t.Fatalf("divisor(%d).mod(%d) = %d, want %d", d, n, got, want)
			}
		}
	}
}

func TestBefore(t *testing.T) {
	cases := []struct {
		a, b uint64
		want bool
	}{
		{0, 1, true}, {1, 0, false}, {5, 5, false},
		{ticketMask, 0, true}, {0, ticketMask, false},
		{ticketMask - 3, 2, true}, {2, ticketMask - 3, false},
		{0, halfTickets - 1, true}, {0, halfTickets, false},
	}
	for _, c := range cases {
		if got := before(c.a, c.b); got != c.want {
			t.Errorf("before(%#x, %#x) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestWindow(t *testing.T) {
	cases := []struct {
		base, head uint64
		rows       int
		want       uint64
	}{
		{0, 0, 10, 0}, {0, 3, 10, 3}, {0, 30, 10, 10},
		{ticketMask - 1, 1, 10, 3}, {ticketMask - 1, 20, 10, 10},
		{5, 3, 10, 0}, // base ahead of head (a racing Reset): empty
	}
	for _, c := range cases {
		if got := window(c.base, c.head, c.rows); got != c.want {
			t.Errorf("window(%#x, %#x, %d) = %d, want %d", c.base, c.head, c.rows, got, c.want)
		}
	}
}

// TestLayout pins the padding that keeps hot words on lines of their own.
func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(PerThread{}); s != 128 {
		t.Errorf("PerThread is %d bytes, want 128", s)
	}
	var g Global
	if s := unsafe.Sizeof(g); s != 3*128 {
		t.Errorf("Global is %d bytes, want 384", s)
	}
	if off := unsafe.Offsetof(g.next); off != 128 {
		t.Errorf("Global.next at offset %d, want 128", off)
	}
	if off := unsafe.Offsetof(g.lost); off != 256 {
		t.Errorf("Global.lost at offset %d, want 256", off)
	}
}

// TestKeepOrderMoveRefs: keep and order move each row's refs with it. keep
// drops rows only when a Reset or a lap races the scan, and order sorts only
// when rows are written during it, so the concurrent tests reach those paths
// by chance: here they are reached on purpose.
func TestKeepOrderMoveRefs(t *testing.T) {
	const w, nr = 2, 3
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		n := 1 + rng.IntN(40)
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = uint64(rng.IntN(1000))
		}
		if rng.IntN(2) == 0 {
			// A rotation of ascending keys, as a quiet scan finds them.
			slices.Sort(keys)
			m := rng.IntN(n)
			keys = append(keys[m:], keys[:m]...)
		}
		// Row i holds its key and i; its refs point to boxes holding the key.
		rows := make([]uint64, n*w)
		refs := make([]unsafe.Pointer, n*nr)
		for i, key := range keys {
			rows[i*w], rows[i*w+1] = key, uint64(i)
			for j := range nr {
				refs[i*nr+j] = unsafe.Pointer(&[2]uint64{key, uint64(i)})
			}
		}
		cut := uint64(rng.IntN(1000))
		k := keep(rows, refs, keys, w, nr, func(key uint64) bool { return key >= cut })
		order(rows[:k*w], refs[:k*nr], keys[:k], w, nr)
		for i := range k {
			key, id := rows[i*w], rows[i*w+1]
			if key != keys[i] || key < cut || i > 0 && keys[i-1] > key {
				t.Fatalf("row %d: key %d, keys[%d] = %d, cut %d", i, key, i, keys[i], cut)
			}
			for j := range nr {
				if box := (*[2]uint64)(refs[i*nr+j]); box[0] != key || box[1] != id {
					t.Fatalf("row %d (key %d, id %d): ref %d points to %v", i, key, id, j, *box)
				}
			}
		}
	}
}
