package instrument

import (
	"context"
	"sync"
	"unsafe"
)

// A Cache is a map of bounded size that accounts its memory: each entry is
// an allocation of size(key, value) bytes on a memory class while it is in
// the cache, counted when Put adds it and freed when it leaves (Delete, a
// Put that replaces it, or eviction). When an entry would take the bytes
// held over the bound, the least recently used entries are evicted first,
// before the new entry counts, so the bytes held (Bytes) never exceed the
// bound, and once the cache is quiet neither does the global
// CURRENT_NUMBER_OF_BYTES_USED of a class only this cache uses. A read of
// the global row while threads fill the cache may show more: it sums the
// threads' rows one after another, not at one instant. Its
// HIGH_NUMBER_OF_BYTES_USED may too: as in MySQL, a row's high water mark
// is bounded by the sum of its sources' marks, so when several threads fill
// the cache the global HIGH can reach the sum of each thread's own peak.
//
//	var sessions = instrument.NewCache("memory/app/sessions", 64<<20,
//		func(id string, s *Session) int { return len(id) + s.Size() })
//
//	sessions.Put(ctx, id, s)
//	s, ok := sessions.Get(id)
//
// An entry counts on the thread that put it (the thread ctx carries), as
// MySQL counts a cache's memory on the thread that allocated it; its free
// counts on that thread while it runs, and once it has ended on the rows
// its statistics went to (its account, or its user and host; see pfscore).
//
// The size function is the caller's estimate: the cache counts what it
// says, not what the Go heap holds. It is called without the cache's lock
// held, once per Put.
//
// All methods are safe for concurrent use; one mutex guards the cache (the
// accounting under it is a few atomic operations).
type Cache[K comparable, V any] struct {
	mem      *MemoryClass
	size     func(K, V) int
	maxBytes int

	mu    sync.Mutex
	items map[K]*cacheEntry[K, V]
	lru   cacheEntry[K, V] // sentinel of the ring: lru.next is the most recently used
	bytes int              // the sizes of the entries held
}

// cacheEntry is an entry of a Cache, in the LRU ring.
type cacheEntry[K comparable, V any] struct {
	key        K
	val        V
	mem        Memory // its allocation: mem.Size() is its size
	prev, next *cacheEntry[K, V]
}

// NewCache returns a cache holding at most maxBytes bytes of entries as
// size measures them (a negative size counts as 0; a nil size counts every
// entry as the sizes of its key and value types, unsafe.Sizeof), counted on
// the memory class name (memory/<component>/<name>, registered on first
// use). It takes WithSchema and WithDocumentation. An invalid name gives a
// cache that works and counts nothing, reported as NewMemoryClass reports it.
// A maxBytes of 0 or less gives a cache that holds nothing.
func NewCache[K comparable, V any](name string, maxBytes int, size func(K, V) int, opts ...Option) *Cache[K, V] {
	if size == nil {
		var k K
		var v V
		n := int(unsafe.Sizeof(k) + unsafe.Sizeof(v))
		size = func(K, V) int { return n }
	}
	c := &Cache[K, V]{
		mem:      newMemoryClass(name, "NewCache", opts),
		size:     size,
		maxBytes: maxBytes,
		items:    make(map[K]*cacheEntry[K, V]),
	}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// Class returns the memory class the cache's entries count on.
func (c *Cache[K, V]) Class() *MemoryClass { return c.mem }

// Get returns the value cached under key, and whether there was one, making
// it the most recently used entry.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.val, true
}

// Put caches val under key, replacing (and freeing) any entry key had, as
// the most recently used entry, counted as an allocation of size(key, val)
// bytes on the thread ctx carries. Least recently used entries are evicted
// first as needed to stay within the bound; an entry larger than the bound
// is not cached (and any entry key had is removed all the same).
func (c *Cache[K, V]) Put(ctx context.Context, key K, val V) {
	c.PutOn(ThreadFromContext(ctx), key, val)
}

// PutOn is Put on thread t (nil: no thread), from the goroutine that drives
// t.
func (c *Cache[K, V]) PutOn(t *Thread, key K, val V) {
	n := max(c.size(key, val), 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[key]; ok {
		c.removeLocked(old)
	}
	if n > c.maxBytes || c.maxBytes <= 0 {
		return
	}
	for c.bytes+n > c.maxBytes { // free before allocating: the bound holds at every instant
		c.removeLocked(c.lru.prev)
	}
	e := &cacheEntry[K, V]{key: key, val: val, mem: c.mem.AllocOn(t, n)}
	c.items[key] = e
	c.pushFront(e)
	c.bytes += n
}

// Delete removes the entry cached under key, freeing its bytes, and reports
// whether there was one.
func (c *Cache[K, V]) Delete(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if ok {
		c.removeLocked(e)
	}
	return ok
}

// Len returns the number of entries cached.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Bytes returns the bytes the entries cached hold, as their sizes measured
// them when they were put: what the class counts of this cache when it was
// on throughout.
func (c *Cache[K, V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// removeLocked removes e from the cache and frees its allocation; c.mu is
// held.
func (c *Cache[K, V]) removeLocked(e *cacheEntry[K, V]) {
	c.unlink(e)
	delete(c.items, e.key)
	c.bytes -= e.mem.Size()
	e.mem.Free()
}

func (c *Cache[K, V]) unlink(e *cacheEntry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *Cache[K, V]) pushFront(e *cacheEntry[K, V]) {
	e.prev, e.next = &c.lru, c.lru.next
	c.lru.next.prev = e
	c.lru.next = e
}
