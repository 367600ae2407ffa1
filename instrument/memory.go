package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A MemoryClass is a memory/<component>/<name> instrument: a kind of memory
// the application allocates and frees (request buffers, a cache's entries, a
// parser's arena), counted in the memory_summary_*_by_event_name tables of
// its schema: by thread, account, user, host and globally, with the blocks
// and bytes in use now and their low and high water marks.
//
//	var buffers = instrument.NewMemoryClass("memory/app/buffers")
//
//	func handle(ctx context.Context, …) {
//		buf := make([]byte, n)
//		m := buffers.Alloc(ctx, len(buf)) // keep m with buf
//		defer m.Free()
//		…
//	}
//
// The class does not allocate: it counts what the caller says it allocated
// and freed. BufferPool and Cache are memory holders built on it.
//
// As in MySQL, memory classes are off by default: enable them in
// setup_instruments (Schema.UpdateInstruments("memory/app/%", &on, nil),
// OTELPFS_INSTRUMENT='memory/app/%=ON', or pfscore.WithInstrument). An
// allocation made while its class is off is never counted, nor is its free,
// even if the class is turned on meanwhile; an allocation made while it is
// on counts its free whenever that comes, even if the class is turned off
// meanwhile. So CURRENT_NUMBER_OF_BYTES_USED is the memory held by the
// allocations counted, whatever the switches did in between.
type MemoryClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: an invalid name or a full schema
}

// NewMemoryClass registers the memory class name (memory/<component>/<name>).
// It takes WithSchema and WithDocumentation (WithSource is ignored: memory
// rows have no SOURCE). An invalid name, a name of another kind, or a full
// schema gives a class that counts nothing, reported to the error handler
// (see SetErrorHandler) as the other constructors' are.
func NewMemoryClass(name string, opts ...Option) *MemoryClass {
	return newMemoryClass(name, "NewMemoryClass", opts)
}

func newMemoryClass(name, ctor string, opts []Option) *MemoryClass {
	c := newConfig(opts)
	return &MemoryClass{schema: c.schema, class: c.registerAs(name, ctor, pfscore.KindMemory)}
}

// Name returns the class's name, "" if it counts nothing (an invalid name).
func (c *MemoryClass) Name() string {
	if c == nil || c.class == nil {
		return ""
	}
	return c.class.Name()
}

// Alloc counts an allocation of size bytes (a negative size counts as 0) on
// the thread ctx carries (none: the global statistics only) and returns its
// record, to Free when the memory is released. It counts nothing if the
// class is off, and then does not look the thread up. It allocates nothing.
func (c *MemoryClass) Alloc(ctx context.Context, size int) Memory {
	if !c.on() {
		return Memory{c: c, size: max(size, 0)}
	}
	return c.alloc(ThreadFromContext(ctx), max(size, 0))
}

// AllocOn is Alloc on thread t (nil: no thread). It must be called from the
// goroutine that drives t, as every event of t.
func (c *MemoryClass) AllocOn(t *Thread, size int) Memory {
	if !c.on() {
		return Memory{c: c, size: max(size, 0)}
	}
	return c.alloc(t, max(size, 0))
}

// on reports whether the class counts now: the fast path's one atomic load.
// MemoryAlloc checks again; what it returns is what counted.
func (c *MemoryClass) on() bool { return c != nil && c.class != nil && c.class.On() }

func (c *MemoryClass) alloc(t *Thread, size int) Memory {
	return Memory{c: c, size: size, owner: c.schema.MemoryAlloc(t, c.class, uint64(size))}
}

// A Memory is the record of one allocation that a MemoryClass counted (or
// did not count, the class being off): its class, its size, and where it
// counted. It is a small value (four words) that allocates nothing; the
// zero Memory is an allocation that counted nothing.
//
// Keep the Memory with the memory it describes, in the same struct or the
// same local scope, and pass it along with the memory: the free must be
// given the record its allocation returned, not a new one, for the free to
// count exactly when the allocation did, on the same row. Like the memory,
// a Memory has one owner at a time: Free and Realloc must not be called
// concurrently on the same Memory. Free may be called from any goroutine,
// not only from the one that allocated: the free counts on the allocating
// thread's row if that thread is still running (and, when it is writing at
// that instant, after that write), else on the rows its statistics went to
// when it ended: its account, or its user and host.
type Memory struct {
	c     *MemoryClass // nil: the zero Memory, or a class that counts nothing
	size  int
	owner pfscore.MemoryOwner
}

// Size returns the size in bytes the allocation was counted with (0 after
// Free).
func (m Memory) Size() int { return m.size }

// Counted reports whether the allocation counted (its class was on), so that
// its Free will count.
func (m Memory) Counted() bool { return m.owner.Counted() }

// Free counts the free of the allocation, if the allocation counted, and
// resets m to an allocation of size 0 that counted nothing, so a second Free
// counts nothing. It allocates nothing.
func (m *Memory) Free() {
	if m.owner.Counted() {
		m.free()
	}
	m.size = 0
}

//go:noinline
func (m *Memory) free() {
	m.c.schema.MemoryFree(m.c.class, uint64(m.size), m.owner)
	m.owner = pfscore.MemoryOwner{}
}

// Realloc counts the reallocation of m's memory to newSize bytes on the
// thread ctx carries and updates m in place, as MySQL counts a realloc: the
// new block is allocated (counted if the class is on now), then the old one
// freed (counted if it was counted). A Memory that was freed (its class
// kept) is allocated again; a newSize of 0 or less frees m, as C's realloc
// frees. The zero Memory has no class and counts nothing.
func (m *Memory) Realloc(ctx context.Context, newSize int) {
	m.ReallocOn(ThreadFromContext(ctx), newSize)
}

// ReallocOn is Realloc on thread t (nil: no thread), from the goroutine that
// drives t.
func (m *Memory) ReallocOn(t *Thread, newSize int) {
	switch {
	case newSize <= 0:
		m.Free()
	case m.c == nil || m.c.class == nil || !m.owner.Counted() && !m.c.class.On():
		m.size = newSize
	default:
		m.owner = m.c.schema.MemoryRealloc(t, m.c.class, uint64(m.size), uint64(newSize), m.owner)
		m.size = newSize
	}
}
