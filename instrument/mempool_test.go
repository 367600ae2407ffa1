package instrument

import (
	"context"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

func TestBufferPoolSizeClasses(t *testing.T) {
	p := NewBufferPool("memory/test/pool", WithSchema(memSchema(t, "")))
	for _, tc := range []struct{ n, cap int }{
		{0, 64}, {1, 64}, {64, 64}, {65, 128}, {128, 128}, {129, 256}, {1000, 1024}, {4096, 4096},
		{4097, 8192}, {MaxPooledBuffer - 1, MaxPooledBuffer}, {MaxPooledBuffer, MaxPooledBuffer},
		{MaxPooledBuffer + 1, MaxPooledBuffer + 1}, {3 << 20, 3 << 20},
	} {
		b := p.Get(context.Background(), tc.n)
		if len(b.B) != tc.n || cap(b.B) != tc.cap {
			t.Errorf("Get(%d): len %d cap %d, want cap %d", tc.n, len(b.B), cap(b.B), tc.cap)
		}
		p.Put(b)
	}
	for k := range numBufferClasses {
		if n := 64 << k; bufferClass(n) != k || bufferClass(n/2+1) != k && n > 64 {
			t.Errorf("bufferClass(%d) = %d, bufferClass(%d) = %d; want %d", n, bufferClass(n), n/2+1, bufferClass(n/2+1), k)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Get(-1) did not panic")
		}
	}()
	p.Get(context.Background(), -1)
}

// CURRENT_NUMBER_OF_BYTES_USED is the bytes checked out, on the thread that
// got them.
func TestBufferPoolAccounting(t *testing.T) {
	const name = "memory/test/pool"
	s := memSchema(t, name)
	p := NewBufferPool(name, WithSchema(s))
	if p.Class().Name() != name {
		t.Fatalf("Class().Name() = %q", p.Class().Name())
	}
	ctx, th := StartThread(context.Background(), "thread/test/pooler", WithSchema(s))
	sizes := []int{10, 100, 1000, 5000, MaxPooledBuffer + 7, 64, 65}
	var out []*Buffer
	var total, high int64
	for _, n := range sizes {
		b := p.Get(ctx, n)
		out = append(out, b)
		total += int64(cap(b.B))
	}
	high = total
	want := pfscore.MemoryStats{CountAlloc: uint64(len(sizes)), SumNumberOfBytesAlloc: uint64(total),
		CurrentCountUsed: int64(len(sizes)), HighCountUsed: int64(len(sizes)),
		CurrentNumberOfBytesUsed: total, HighNumberOfBytesUsed: high}
	if r, ok := threadMem(s, th, name); !ok || r != want {
		t.Errorf("by thread after the Gets:\n got %+v\nwant %+v", r, want)
	}
	// The holder appends past the capacity: the free counts what Get counted.
	out[0].B = append(out[0].B, make([]byte, 200)...)
	var freed int64
	for _, b := range out[:4] {
		freed += int64(b.mem.Size())
		p.Put(b)
	}
	if freed != 64+128+1024+8192 {
		t.Errorf("freed %d bytes", freed)
	}
	if r, _ := threadMem(s, th, name); r.CountFree != 4 || r.CurrentNumberOfBytesUsed != total-freed || r.HighNumberOfBytesUsed != high {
		t.Errorf("by thread after 4 Puts: %+v (want CURRENT %d)", r, total-freed)
	}
	// The oversize buffer is put back by another goroutine; the rest after
	// the thread's end.
	var wg sync.WaitGroup
	wg.Go(func() { p.Put(out[4]) })
	wg.Wait()
	th.End()
	p.Put(out[5])
	p.Put(out[6])
	if g := globalMem(t, s, name); g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 || g.HighNumberOfBytesUsed != high {
		t.Errorf("global after every Put: %+v", g)
	}
	// Put twice panics; Put(nil) does nothing.
	p.Put(nil)
	b := p.Get(context.Background(), 1)
	p.Put(b)
	defer func() {
		if recover() == nil {
			t.Errorf("a second Put did not panic")
		}
		if g := globalMem(t, s, name); g.CurrentNumberOfBytesUsed != 0 || g.CountAlloc != g.CountFree {
			t.Errorf("global after a second Put: %+v", g)
		}
	}()
	p.Put(b)
}

// A buffer got while the class was off counts nothing at its Put, whatever
// the switch says then, and one got while on counts its Put after the class
// is turned off.
func TestBufferPoolSwitched(t *testing.T) {
	const name = "memory/test/pool"
	s := memSchema(t, "")
	p := NewBufferPool(name, WithSchema(s))
	off := p.Get(context.Background(), 100)
	setMemory(t, s, name, true)
	on := p.Get(context.Background(), 100)
	p.Put(off)
	if g := globalMem(t, s, name); g.CountAlloc != 1 || g.CountFree != 0 || g.CurrentNumberOfBytesUsed != 128 {
		t.Errorf("global: %+v", g)
	}
	setMemory(t, s, name, false)
	p.Put(on)
	if g := globalMem(t, s, name); g.CountFree != 1 || g.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("global: %+v", g)
	}
}

// A pooled array serves the next Get of its size class, whatever the
// previous holder did to B.
func TestBufferPoolReuse(t *testing.T) {
	p := NewBufferPool("memory/test/pool", WithSchema(memSchema(t, "")))
	b := p.Get(context.Background(), 300)
	b.B = b.B[:0:0] // the holder lost the array
	p.Put(b)
	for range 10 { // sync.Pool may drop a Put (always under -race, at random)
		b = p.Get(context.Background(), 500)
		if len(b.B) != 500 || cap(b.B) != 512 {
			t.Fatalf("Get(500): len %d cap %d", len(b.B), cap(b.B))
		}
		p.Put(b)
	}
	// Reslices that keep B's length: Get must still hand out the whole
	// array from its start (it skips the store only when B is already so).
	for _, reslice := range []func(b []byte) []byte{
		func(b []byte) []byte { return b[:500:500] },              // capacity cut
		func(b []byte) []byte { return b[1:501] },                 // start moved
		func(b []byte) []byte { return append(b[:500], 1)[:500] }, // same array, len kept
	} {
		for range 10 {
			b = p.Get(context.Background(), 500)
			b.B = reslice(b.B)
			p.Put(b)
			b = p.Get(context.Background(), 500)
			if len(b.B) != 500 || cap(b.B) != 512 || &b.B[:512][511] != &b.buf[511] {
				t.Fatalf("Get(500) after a reslice: len %d cap %d", len(b.B), cap(b.B))
			}
			p.Put(b)
		}
	}
}

// Get and Put allocate nothing in the steady state, class off or on.
func TestBufferPoolAllocs(t *testing.T) {
	if raceBuild() {
		t.Skip("sync.Pool drops Puts at random under -race")
	}
	const name = "memory/test/pool"
	s := memSchema(t, name)
	on := NewBufferPool(name, WithSchema(s))
	off := NewBufferPool("memory/test/off", WithSchema(s))
	ctx, th := StartThread(context.Background(), "thread/test/pooler", WithSchema(s))
	defer th.End()
	for what, p := range map[string]*BufferPool{"on": on, "off": off} {
		for _, n := range []int{0, 256, 5000, MaxPooledBuffer} {
			p.Put(p.Get(ctx, n)) // warm
			if a := testing.AllocsPerRun(1000, func() { p.Put(p.Get(ctx, n)) }); a != 0 {
				t.Errorf("%s: Get(%d)+Put: %v allocations, want 0", what, n, a)
			}
		}
	}
	if r, _ := threadMem(s, th, name); r.CurrentNumberOfBytesUsed != 0 || r.CountAlloc < 4004 || r.CountAlloc != r.CountFree {
		t.Errorf("by thread: %+v", r)
	}
}
