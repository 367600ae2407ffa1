package instrument

import (
	"context"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/otelpfs/otelpfs/pfscore"
)

// Size classes of a BufferPool: powers of two from 64 bytes to 1 MiB.
const (
	minBufferShift   = 6
	maxBufferShift   = 20
	numBufferClasses = maxBufferShift - minBufferShift + 1

	// MaxPooledBuffer is the largest buffer a BufferPool pools: a larger
	// Get is allocated for that Get alone and dropped by its Put.
	MaxPooledBuffer = 1 << maxBufferShift
)

// bufferClass returns the size class of a buffer of n bytes, n at most
// MaxPooledBuffer: the smallest k with n <= 64<<k.
func bufferClass(n int) int {
	// (n-1)>>6 is 0 for n in 1..64, and max(n, 1) keeps 0 in class 0
	// without a branch.
	return bits.Len(uint(max(n, 1)-1) >> minBufferShift)
}

// A BufferPool is a pool of byte slices in the manner of sync.Pool, by size
// class (powers of two from 64 bytes to MaxPooledBuffer), whose buffers in
// use are counted on a memory class: between Get and Put a buffer is an
// allocation of cap(B) bytes in the memory_summary_*_by_event_name tables,
// on the thread that got it. So CURRENT_NUMBER_OF_BYTES_USED is the bytes
// checked out, and HIGH_NUMBER_OF_BYTES_USED the most ever checked out at
// once; the idle buffers the pool keeps are not counted (as sync.Pool's,
// they may go at any garbage collection).
//
//	var bufs = instrument.NewBufferPool("memory/app/request_buffers")
//
//	func handle(ctx context.Context, …) {
//		b := bufs.Get(ctx, 4096)
//		defer bufs.Put(b)
//		n, err := r.Read(b.B)
//		…
//	}
//
// Get and Put allocate nothing in the steady state: the *Buffer objects are
// pooled with their arrays, and the accounting record lives in the Buffer.
// With the class off (memory classes are off by default), a Get and a Put
// cost little more than sync.Pool's.
//
// # Ownership
//
// A *Buffer that Get returned belongs to the caller until it passes it to
// Put, once; after Put neither the Buffer nor any slice of B may be used:
// the pool gives them to the next Get, in any goroutine. Put panics on a
// Buffer already put back, if it can tell (not if another Get has taken it
// since: then the two owners share it, a data race the race detector
// reports). A Buffer that is never put back is garbage collected as any
// slice, but its bytes stay counted as in use: a leak the tables show.
//
// All methods are safe for concurrent use.
type BufferPool struct {
	mem   *MemoryClass
	class *pfscore.Class              // mem.class, one load nearer: nil counts nothing
	pools [numBufferClasses]sync.Pool // of *Buffer, by size class
}

// A Buffer is a byte slice checked out of a BufferPool, with the record of
// its accounting. Its contents are not zeroed: a pooled array holds what its
// last user wrote.
type Buffer struct {
	// B is the buffer: len(B) is the size asked of Get, cap(B) its size
	// class. The caller may reslice or append to it; Put reuses the array
	// Get gave whatever B has become.
	B []byte

	buf  []byte // the pooled array, len == cap == its size class; nil: oversize
	mem  Memory // the allocation cap(B) counted at Get, freed at Put; its size stays len(buf)
	k    uint8  // buf's size class
	held bool   // between Get and Put
}

// NewBufferPool returns a pool whose buffers in use count on the memory
// class name (memory/<component>/<name>, registered on first use). It takes
// WithSchema and WithDocumentation. An invalid name gives a pool that
// works and counts nothing, reported as NewMemoryClass reports it.
func NewBufferPool(name string, opts ...Option) *BufferPool {
	mem := newMemoryClass(name, "NewBufferPool", opts)
	return &BufferPool{mem: mem, class: mem.class}
}

// Class returns the memory class the pool's buffers count on.
func (p *BufferPool) Class() *MemoryClass { return p.mem }

// Get returns a buffer of n bytes (len(b.B) == n), counted as an allocation
// of cap(b.B) bytes on the thread ctx carries (none: the global statistics
// only) if the pool's class is on. A buffer of at most MaxPooledBuffer bytes
// comes from its size class's pool, or is allocated with that class's
// capacity; a larger one is allocated for this Get alone (cap(b.B) == n).
// It panics if n is negative.
func (p *BufferPool) Get(ctx context.Context, n int) *Buffer {
	if p.on() {
		return p.getSlow(ThreadFromContext(ctx), n, true)
	}
	if uint(n) <= MaxPooledBuffer { // the fast path: a class off, no thread lookup
		k := bufferClass(n)
		if v := p.pools[k].Get(); v != nil {
			b := v.(*Buffer)
			if len(b.B) != n || cap(b.B) != cap(b.buf) || unsafe.SliceData(b.B) != unsafe.SliceData(b.buf) {
				b.B = b.buf[:n] // a store only when B changed: no write barrier in the common case
			}
			b.held = true // b.mem is {p.mem or another pool's class, len(b.buf), zero owner}: Put left it so
			return b
		}
	}
	return p.getSlow(nil, n, false)
}

// GetOn is Get on thread t (nil: no thread), from the goroutine that drives
// t.
func (p *BufferPool) GetOn(t *Thread, n int) *Buffer { return p.getSlow(t, n, p.on()) }

// on reports whether the pool's class counts now.
func (p *BufferPool) on() bool { return p.class != nil && p.class.On() }

// getSlow is Get with the class's switch read: on, the allocation is
// counted (if the class is still on when MemoryAlloc reads it).
func (p *BufferPool) getSlow(t *Thread, n int, on bool) *Buffer {
	var b *Buffer
	switch {
	case n < 0:
		panic("instrument: BufferPool.Get of a negative size")
	case n > MaxPooledBuffer:
		b = &Buffer{B: make([]byte, n), mem: Memory{c: p.mem}}
	default:
		k := bufferClass(n)
		if v := p.pools[k].Get(); v != nil {
			b = v.(*Buffer)
		} else {
			b = &Buffer{buf: make([]byte, 1<<(k+minBufferShift)), mem: Memory{c: p.mem}, k: uint8(k)}
		}
		b.B = b.buf[:n]
	}
	b.held = true
	if on {
		b.mem = p.mem.alloc(t, cap(b.B))
	} else {
		b.mem.size = cap(b.B) // b.mem.owner is zero: Put zeroed it
	}
	return b
}

// Put returns b to the pool and counts the free of its allocation, if Get
// counted it (whatever the class's switch says now), on the thread that got
// it if that thread is still running, else globally: Put may be called from
// any goroutine. b must not be used afterwards (see Ownership). A buffer
// larger than MaxPooledBuffer is dropped, not pooled. Put(nil) does nothing.
func (p *BufferPool) Put(b *Buffer) {
	if b == nil || !b.held {
		putNotHeld(b)
		return
	}
	b.held = false
	if b.mem.owner.Counted() {
		b.mem.free()
	}
	if b.buf != nil { // B is left as it is: Get sets it
		p.pools[b.k].Put(b)
	}
}

// putNotHeld is Put of nil (nothing to do) or of a Buffer not checked out.
func putNotHeld(b *Buffer) {
	if b != nil {
		panic("instrument: BufferPool.Put of a Buffer not checked out (put twice?)")
	}
}
