package owned

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// The plain store writes through a pointer to atomic.Uint64's only non-zero
// field; this pins the layout that relies on.
func TestLayout(t *testing.T) {
	var w Uint64
	if unsafe.Sizeof(w) != 8 || unsafe.Alignof(w.v) != 8 {
		t.Fatalf("owned.Uint64 is %d bytes, align %d; want one aligned word", unsafe.Sizeof(w), unsafe.Alignof(w.v))
	}
	w.Set(42)
	if w.Load() != 42 {
		t.Fatalf("Load after Set = %d", w.Load())
	}
	if w.Add(^uint64(0)) != 41 { // wraps like an unsigned add
		t.Fatalf("Add(-1) = %d", w.Load())
	}
	var i Int64
	i.Set(-5)
	if i.Add(7) != 2 || i.Load() != 2 {
		t.Fatalf("Int64 = %d", i.Load())
	}
}

// record is a seqlocked pair whose invariant (b == ^a) a torn copy breaks.
type record struct {
	seq  Seq
	a, b Uint64
}

func (r *record) write(x uint64) {
	r.seq.BeginWrite() // odd: writing
	r.a.Set(x)
	r.b.Set(^x)
	r.seq.EndWrite() // even: stable
}

func (r *record) read() (a, b uint64, ok bool) {
	v1 := r.seq.Load()
	if v1&1 != 0 {
		return 0, 0, false
	}
	a, b = r.a.Load(), r.b.Load()
	return a, b, r.seq.Load() == v1
}

// TestSeqlockConcurrentSafe runs one writer against readers; every validated
// copy must satisfy the record's invariant, and readers must make progress.
func TestSeqlockConcurrentSafe(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 20000
	}
	var r record
	r.write(0)
	var start, done sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	var valid, torn atomic.Int64
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			for !stop.Load() {
				a, b, ok := r.read()
				if !ok {
					torn.Add(1)
					continue
				}
				if b != ^a {
					t.Errorf("validated copy is torn: a=%#x b=%#x", a, b)
					return
				}
				valid.Add(1)
			}
		}()
	}
	start.Done()
	for i := range n {
		r.write(uint64(i) * 0x9E3779B97F4A7C15)
	}
	// The record is stable now: a reader must validate a copy, however the
	// scheduler interleaved the writes with the reads.
	for valid.Load() == 0 && !t.Failed() {
		runtime.Gosched()
	}
	stop.Store(true)
	done.Wait()
}

func BenchmarkStoreAtomic(b *testing.B) {
	var w [8]atomic.Uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range w {
			w[j].Store(uint64(i))
		}
	}
}

func BenchmarkStoreOwned(b *testing.B) {
	var w [8]Uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range w {
			w[j].Set(uint64(i))
		}
	}
}

// BenchmarkSeqlockWrite is eight owned cells bracketed by a Seq, the shape
// of a thread's current-event writes.
func BenchmarkSeqlockWrite(b *testing.B) {
	var seq Seq
	var w [8]Uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		seq.BeginWrite()
		for j := range w {
			w[j].Set(uint64(i))
		}
		seq.EndWrite()
	}
}

// BenchmarkSeqlockWriteAtomic is the same bracketed by two atomic adds, what
// Seq costs where stores are not ordered.
func BenchmarkSeqlockWriteAtomic(b *testing.B) {
	var seq atomic.Uint64
	var w [8]Uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		seq.Add(1)
		for j := range w {
			w[j].Set(uint64(i))
		}
		seq.Add(1)
	}
}

// strRecord is a seqlocked string: its bytes through a Pointer, its length
// in a Uint64, as a statement row keeps SQL_TEXT.
type strRecord struct {
	seq Seq
	p   Pointer
	n   Uint64
}

// TestPointerConcurrentSafe writes freshly allocated strings, each its own
// length repeated, into a Pointer cell while readers rebuild them and the
// collector runs: a validated copy must always be a whole string the writer
// made, whose bytes are still intact (a pointer the collector failed to keep
// alive would show reused memory).
func TestPointerConcurrentSafe(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	var r strRecord
	var start, done sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	var valid atomic.Int64
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			for !stop.Load() {
				v := r.seq.Load()
				if v&1 != 0 {
					continue
				}
				p, l := r.p.Load(), r.n.Load()
				if r.seq.Load() != v || p == nil {
					continue
				}
				s := unsafe.String((*byte)(p), l)
				runtime.GC() // the copy alone must keep the bytes alive
				for i := range len(s) {
					if s[i] != byte(len(s)) {
						t.Errorf("validated string of %d bytes has byte %d at %d", len(s), s[i], i)
						return
					}
				}
				valid.Add(1)
			}
		}()
	}
	start.Done()
	for i := range n {
		l := 1 + i%200
		b := make([]byte, l)
		for j := range b {
			b[j] = byte(l)
		}
		r.seq.BeginWrite()
		r.p.Set(unsafe.Pointer(&b[0]))
		r.n.Set(uint64(l))
		r.seq.EndWrite()
	}
	for valid.Load() == 0 && !t.Failed() {
		runtime.Gosched()
	}
	stop.Store(true)
	done.Wait()
}

var sinkBytes = [4][]byte{make([]byte, 8), make([]byte, 8), make([]byte, 8), make([]byte, 8)}

// BenchmarkPointerStoreAtomic is what a ref cell cost as an
// atomic.Pointer: a runtime call and a locked instruction a store.
func BenchmarkPointerStoreAtomic(b *testing.B) {
	var w [4]atomic.Pointer[byte]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range w {
			w[j].Store(&sinkBytes[(i+j)&3][0])
		}
	}
}

// BenchmarkPointerStoreOwned is the same four stores as Pointer.Set.
func BenchmarkPointerStoreOwned(b *testing.B) {
	var w [4]Pointer
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range w {
			w[j].Set(unsafe.Pointer(&sinkBytes[(i+j)&3][0]))
		}
	}
}

// SetAll stores what a loop of Set stores, for rows of every length on both
// sides of bulkWords, and touches no cell past the row.
func TestSetAll(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 16, 17, 31, 33, 64, 200, bulkWords - 1, bulkWords, bulkWords + 5} {
		src := make([]uint64, n)
		for i := range src {
			src[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		}
		dst := make([]Uint64, n+3)
		for i := range dst {
			dst[i].Set(^uint64(0))
		}
		SetAll(dst, src)
		for i := range dst {
			want := ^uint64(0)
			if i < n {
				want = src[i]
			}
			if got := dst[i].Load(); got != want {
				t.Fatalf("n=%d: cell %d = %#x, want %#x", n, i, got, want)
			}
		}
	}
}

// OwnLoadAll copies what Load would load, and only the cells given.
func TestOwnLoadAll(t *testing.T) {
	for _, n := range []int{0, 1, 5, 33, 300} {
		src := make([]Uint64, n)
		for i := range src {
			src[i].Set(uint64(i) + 7)
		}
		dst := make([]uint64, n+2)
		dst[n], dst[n+1] = 1, 2
		OwnLoadAll(dst, src)
		for i := range n {
			if dst[i] != src[i].Load() {
				t.Fatalf("n=%d: dst[%d] = %d, want %d", n, i, dst[i], src[i].Load())
			}
		}
		if dst[n] != 1 || dst[n+1] != 2 {
			t.Fatalf("n=%d: wrote past the row", n)
		}
	}
}
