package store

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Container is MySQL's PFS_buffer_scalable_container: records of type T in
// pages of fixed-size arrays, created on demand up to a maximum, allocated and
// freed without locks, read by scans that copy records optimistically. Unlike
// MySQL's, its allocation never skips a page or a record, and it returns the
// memory of pages that stay empty (Reclaim).
//
// # Records
//
// T must hold no Go pointers (NewContainer checks), so page arrays are not
// scanned by the garbage collector and a record can be copied by any reader
// at any time. Every field of T that a reader may load while the owner writes
// it must be an owned cell (internal/owned) or an atomic; the owner writes
// those cells only while the record is DIRTY (see Lock).
//
// # Allocation
//
// Allocate walks the page table once, from the page where the last
// allocation succeeded, with an index local to the call:
//
//  1. load the growth generation g and the page-table length n;
//  2. for i in start, start+1, ... (mod n), n slots in all: skip an empty
//     slot; skip a page whose state word says full or retiring; otherwise
//     visit its records once each, from a random position, and claim the
//     first FREE one with a compare-and-swap (FREE -> DIRTY);
//  3. if no page had one: take the growth mutex; if pages were added since
//     g, try those (once each); else create one page, claim a record in it
//     before publishing it, publish it; else (the table is full) count the
//     allocation as lost and return nil.
//
// Nothing in step 2 is shared between allocators except the records' locks
// and the read-mostly hint: no counter advanced by failures, so one
// allocation looks at every record of every published page, and concludes
// "full" only if each record was taken when it looked (and a page's full flag
// is set only when that was true of the whole page at once; see page). Step 3
// makes allocators that find the container full together create one page,
// not one each. Together they keep a live set that fits in K pages within
// K+1 pages (TestContainerPageGrowthConcurrentSafe). That bound is a
// property of schedules, not a theorem: a walk is not atomic, so frees behind
// its cursor and allocations ahead of it could, in an adversarial schedule,
// make it see a container with room as full. MySQL's shared counter makes
// such misses systematic; here nothing does.
//
// A failed allocation never blocks and never panics: it returns nil and adds
// one to Lost, MySQL's Performance_schema_<container>_lost. Creating a page
// takes the mutex; so does Reclaim.
//
// # Freeing
//
// Free makes the record FREE (an atomic store) and adds one to its page's
// frees counter (an atomic add, which also clears the page's full flag).
// Neither allocation nor free updates any container-wide word, so parallel
// allocators on different pages share no cache line. The price: the number of
// records in use is not kept; InUse counts it by a scan.
//
// # Reading
//
// All and AppendRows visit every record that is ALLOCATED, page by page.
// Readers copy under the record's Lock and drop torn copies; they never write
// anything, so writers never wait for them.
//
// All methods are safe for concurrent use, with the ownership rules of Lock:
// only the goroutine that allocated a record writes or frees it.
type Container[T any] struct {
	// Read-mostly: the page table and what sizes it.
	pages     []atomic.Pointer[page[T]] // len MaxPages; nil slot: no page
	hi        atomic.Uint32             // 1 + the highest published slot
	published atomic.Uint32             // number of published pages
	gen       atomic.Uint64             // incremented by every page creation
	name      string
	pageSize  uint32
	maxPages  uint32
	pageBytes uint64 // memory of one page: its records and its header
	idleTime  time.Duration
	minPages  int
	keepEmpty int
	shared    bool // test-only: MySQL's shared-counter allocation (export_test.go)
	_         [CacheLine]byte

	// hint is the slot of the page where an allocation last succeeded. It is
	// stored only when it changes, so in a steady state it is read-only.
	hint atomic.Uint32
	_    [CacheLine - 4]byte

	// lost counts failed allocations (Performance_schema_*_lost).
	lost atomic.Uint64
	_    [CacheLine - 8]byte

	// monotonic is the container-wide counter of the test-only MySQL-like
	// allocation (allocateShared).
	monotonic atomic.Uint64
	_         [CacheLine - 8]byte

	// mu serializes page creation and Reclaim: the page table, the
	// reclaimer's page bookkeeping and the stats cells have one writer.
	mu    sync.Mutex
	stats containerStatCells

	// Test hooks (export_test.go): initial words of new pages.
	initLock  uint32
	initFrees uint64
}

// containerStatCells is the container's own memory statistics, written under
// Container.mu and read with the optimistic protocol of their Lock.
type containerStatCells struct {
	lock       Lock
	countAlloc owned.Uint64
	countFree  owned.Uint64
	countUsed  owned.Uint64
	highCount  owned.Uint64
}

// ContainerConfig sizes a Container and sets its reclamation policy.
type ContainerConfig struct {
	// PageSize is the number of records in one page. By default, 256.
	PageSize int
	// MaxPages is the maximum number of pages. By default, 1024.
	// PageSize*MaxPages must fit in 32 bits.
	MaxPages int
	// ReclaimIdle is how long every record of a page must have stayed FREE,
	// with no allocation in the page meanwhile, before Reclaim retires it.
	// By default (0), Reclaim retires nothing.
	ReclaimIdle time.Duration
	// MinPages is the number of pages Reclaim never goes below. By default,
	// 0.
	MinPages int
	// KeepEmpty is the number of empty pages Reclaim leaves published, so
	// that a load that shrinks and grows back finds room without creating a
	// page. By default (0), 1; a negative value keeps none.
	KeepEmpty int
}

// ErrContainerConfig is returned (wrapped) by NewContainer for a
// configuration it cannot honour.
var ErrContainerConfig = errors.New("pfs: invalid container configuration")

// NewContainer returns an empty container of T records whose own memory shows
// as memory/performance_schema/<name>. No page is created until the first
// allocation.
func NewContainer[T any](name string, cfg ContainerConfig) (*Container[T], error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty name", ErrContainerConfig)
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = 256
	}
	if cfg.MaxPages == 0 {
		cfg.MaxPages = 1024
	}
	if cfg.KeepEmpty == 0 {
		cfg.KeepEmpty = 1
	} else if cfg.KeepEmpty < 0 {
		cfg.KeepEmpty = 0
	}
	switch {
	case cfg.PageSize < 0 || cfg.MaxPages < 0:
		return nil, fmt.Errorf("%w: %s: negative size (PageSize %d, MaxPages %d)", ErrContainerConfig, name, cfg.PageSize, cfg.MaxPages)
	case uint64(cfg.PageSize) > math.MaxUint32 || uint64(cfg.MaxPages) > math.MaxUint32 ||
		uint64(cfg.PageSize)*uint64(cfg.MaxPages) > 1<<32:
		return nil, fmt.Errorf("%w: %s: PageSize*MaxPages = %d does not fit in 32 bits", ErrContainerConfig, name, uint64(cfg.PageSize)*uint64(cfg.MaxPages))
	case cfg.ReclaimIdle < 0 || cfg.MinPages < 0:
		return nil, fmt.Errorf("%w: %s: negative ReclaimIdle or MinPages", ErrContainerConfig, name)
	}
	if t := reflect.TypeFor[T](); hasPointers(t) {
		return nil, fmt.Errorf("%w: %s: record type %v holds Go pointers", ErrContainerConfig, name, t)
	}
	c := &Container[T]{
		pages:     make([]atomic.Pointer[page[T]], cfg.MaxPages),
		name:      name,
		pageSize:  uint32(cfg.PageSize),
		maxPages:  uint32(cfg.MaxPages),
		idleTime:  cfg.ReclaimIdle,
		minPages:  cfg.MinPages,
		keepEmpty: cfg.KeepEmpty,
	}
	c.pageBytes = uint64(cfg.PageSize)*uint64(unsafe.Sizeof(Record[T]{})) + uint64(unsafe.Sizeof(page[T]{}))
	if d, ok := c.stats.lock.FreeToDirty(); ok {
		c.stats.lock.DirtyToAllocated(d)
	}
	return c, nil
}

// MustNewContainer is NewContainer for configurations known to be valid; it
// panics on error.
func MustNewContainer[T any](name string, cfg ContainerConfig) *Container[T] {
	c, err := NewContainer[T](name, cfg)
	if err != nil {
		panic(err)
	}
	return c
}

// hasPointers reports whether values of t contain Go pointers.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Slice, reflect.String,
		reflect.Interface, reflect.Chan, reflect.Func:
		return true
	}
	return false
}

// Name returns the container's instrument name,
// memory/performance_schema/<name>.
func (c *Container[T]) Name() string { return "memory/performance_schema/" + c.name }

// PageSize returns the number of records in one page.
func (c *Container[T]) PageSize() int { return int(c.pageSize) }

// Allocate claims a FREE record and returns it DIRTY, with the state to pass
// to its Lock's DirtyToAllocated (publish) or to Free (abandon). The record
// holds whatever its previous owner left: the caller writes every field
// before publishing. If no record is free and no page can be added, Allocate
// returns nil and counts the loss. It never blocks on other allocators or
// readers; only creating a page takes a mutex.
func (c *Container[T]) Allocate() (*Record[T], DirtyState) {
	if c.shared {
		return c.allocateShared()
	}
	gen := c.gen.Load()
	n := c.hi.Load()
	retiring := false
	if n != 0 {
		start := c.hint.Load()
		if start >= n {
			start = 0
		}
		i := start
		for range n {
			if p := c.pages[i].Load(); p != nil {
				r, d, ret := p.allocate()
				if r != nil {
					if i != start {
						c.hint.Store(i)
					}
					return r, d
				}
				// A page seen retiring may be kept after all (the
				// reclaimer saw our claim and backed off): look again
				// once it is done, instead of counting a loss.
				retiring = retiring || ret
			}
			if i++; i == n {
				i = 0
			}
		}
	}
	return c.allocateSlow(gen, retiring)
}

// allocateSlow runs when a walk over the page table, begun at generation gen,
// found no FREE record: it tries pages created since, else creates one.
//
//go:noinline
func (c *Container[T]) allocateSlow(gen uint64, retiring bool) (*Record[T], DirtyState) {
	if !retiring && c.published.Load() >= c.maxPages && c.gen.Load() == gen {
		// Every slot holds a page and none was added since the walk began:
		// lost, without touching the mutex. (grow raises the count after
		// the generation, so a count that includes a page the walk may
		// have missed comes with a new generation.)
		c.lost.Add(1)
		return nil, 0
	}
	c.mu.Lock()
	if retiring {
		for i := range c.hi.Load() {
			if p := c.pages[i].Load(); p != nil {
				if r, d, _ := p.allocate(); r != nil {
					c.mu.Unlock()
					return r, d
				}
			}
		}
	} else if c.gen.Load() != gen {
		// Another allocator created pages while we walked: try those
		// first, so that allocators that find the container full together
		// create one page, not one each.
		for i := range c.hi.Load() {
			if p := c.pages[i].Load(); p != nil && p.gen > gen {
				if r, d, _ := p.allocate(); r != nil {
					c.mu.Unlock()
					c.hint.Store(i)
					return r, d
				}
			}
		}
	}
	r, d := c.grow()
	c.mu.Unlock()
	if r == nil {
		c.lost.Add(1)
	}
	return r, d
}

// grow creates a page in the lowest free slot of the page table, claims its
// first record for the caller and publishes it. It returns nil if the table is
// full. Called with c.mu held.
func (c *Container[T]) grow() (*Record[T], DirtyState) {
	slot := -1
	for i := range c.pages {
		if c.pages[i].Load() == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, 0
	}
	p := &page[T]{
		slot: uint32(slot),
		gen:  c.gen.Load() + 1,
		recs: make([]Record[T], c.pageSize),
	}
	p.state.Store(c.initFrees)
	base := uint32(slot) * c.pageSize
	for i := range p.recs {
		r := &p.recs[i]
		r.page, r.pos, r.index = uint32(slot), uint32(i), base+uint32(i)
		if c.initLock != 0 {
			r.Lock.w.Store(c.initLock)
		}
	}
	// The page is private until the Store below: claiming its first record
	// cannot fail.
	r := &p.recs[0]
	d, _ := r.Lock.FreeToDirty()
	// Publish: the atomic store orders every write above before any load
	// that returns p.
	c.pages[slot].Store(p)
	if uint32(slot) >= c.hi.Load() {
		c.hi.Store(uint32(slot) + 1)
	}
	// The count last, after the generation: an allocator whose walk began
	// before this growth (and may have found the slot empty, its old page
	// retired) and that sees the table at MaxPages must also see the new
	// generation, and look at this page under the mutex rather than count
	// itself lost (allocateSlow's check without the mutex).
	c.gen.Store(p.gen)
	c.published.Add(1)
	c.hint.Store(uint32(slot))
	c.countPages(+1)
	return r, d
}

// Free releases a record the caller allocated, DIRTY or ALLOCATED; readers
// copying it fail their validation. Owner only, once per allocation.
func (c *Container[T]) Free(r *Record[T]) {
	p := c.pages[r.page].Load()
	if invariants {
		if r.Lock.IsFree() {
			panic("pfs: BUG: Container.Free of a FREE record")
		}
		if p == nil || &p.recs[r.pos] != r {
			panic("pfs: BUG: Container.Free of a record that is not in this container")
		}
	}
	r.Lock.AllocatedToFree()
	p.freed()
}

// Lost returns the number of failed allocations since the container was
// created: MySQL's Performance_schema_<container>_lost.
func (c *Container[T]) Lost() uint64 { return c.lost.Load() }

// Pages returns the number of published pages.
func (c *Container[T]) Pages() int { return int(c.published.Load()) }

// Get returns the record with the given dense index if its page is published
// and the record is ALLOCATED at the time of the call, else nil. The caller
// still validates its copy with the record's Lock.
func (c *Container[T]) Get(index uint64) *Record[T] {
	s, pos := index/uint64(c.pageSize), index%uint64(c.pageSize)
	if s >= uint64(len(c.pages)) {
		return nil
	}
	p := c.pages[s].Load()
	if p == nil || !p.recs[pos].Lock.IsPopulated() {
		return nil
	}
	return &p.recs[pos]
}

// All returns an iterator over the records that are ALLOCATED when visited,
// in index order, with their index. It copies nothing: the caller brackets its
// copy with the record's Lock (BeginOptimistic, EndOptimistic) and drops torn
// copies. A record that is allocated or freed during the iteration may or may
// not be visited.
func (c *Container[T]) All() iter.Seq2[uint64, *Record[T]] {
	return func(yield func(uint64, *Record[T]) bool) {
		for i := range c.hi.Load() {
			p := c.pages[i].Load()
			if p == nil {
				continue
			}
			for j := range p.recs {
				r := &p.recs[j]
				if r.Lock.IsPopulated() && !yield(uint64(r.index), r) {
					return
				}
			}
		}
	}
}

// AppendRows appends to dst one row per record that is ALLOCATED, copied by
// copyRow between the record's BeginOptimistic and EndOptimistic, and
// returns the extended slice. A copy that EndOptimistic rejects (torn by a
// concurrent write, free or reuse) is removed again: every row returned is a
// consistent copy of one record at one moment. copyRow must only load the
// record's cells (it may see torn values, which are then discarded) and must
// not retain src. Beyond growing dst, AppendRows does not allocate.
func AppendRows[T, R any](c *Container[T], dst []R, copyRow func(dst *R, index uint64, src *T)) []R {
	var zero R
	for i := range c.hi.Load() {
		p := c.pages[i].Load()
		if p == nil {
			continue
		}
		for j := range p.recs {
			r := &p.recs[j]
			s := r.Lock.BeginOptimistic()
			if !s.Allocated() {
				continue
			}
			dst = append(dst, zero)
			copyRow(&dst[len(dst)-1], uint64(r.index), &r.Value)
			if !r.Lock.EndOptimistic(s) {
				dst = dst[:len(dst)-1]
			}
		}
	}
	return dst
}

// InUse counts the records that are not FREE, by a scan of every published
// page. The count is a sample: records change state during the scan.
func (c *Container[T]) InUse() int {
	n := 0
	for i := range c.hi.Load() {
		p := c.pages[i].Load()
		if p == nil {
			continue
		}
		for j := range p.recs {
			if !p.recs[j].Lock.IsFree() {
				n++
			}
		}
	}
	return n
}

// ContainerStats is a container's row of memory_summary_global_by_event_name
// (EVENT_NAME memory/performance_schema/<name>), with its sizes and its lost
// counter. The memory counted is the pages': each page is one allocation of
// PageBytes bytes.
type ContainerStats struct {
	Name       string // EVENT_NAME: memory/performance_schema/<name>
	RecordSize uint64 // bytes of one record, its Lock and header included
	PageSize   uint64 // records per page
	PageBytes  uint64 // bytes of one page: its records and its header
	MaxPages   uint64 // most pages the container may hold

	CountAlloc       uint64 // COUNT_ALLOC: pages created
	CountFree        uint64 // COUNT_FREE: pages retired by Reclaim
	CurrentCountUsed uint64 // CURRENT_COUNT_USED: pages held now
	HighCountUsed    uint64 // HIGH_COUNT_USED: most pages ever held at once

	SumBytesAlloc     uint64 // SUM_NUMBER_OF_BYTES_ALLOC
	SumBytesFree      uint64 // SUM_NUMBER_OF_BYTES_FREE
	CurrentBytesUsed  uint64 // CURRENT_NUMBER_OF_BYTES_USED
	HighBytesUsed     uint64 // HIGH_NUMBER_OF_BYTES_USED
	RecordCapacity    uint64 // records in the pages held now
	Lost              uint64 // Performance_schema_<name>_lost: failed allocations
	MaxRecordCapacity uint64 // PageSize * MaxPages
}

// Stats returns the container's memory statistics. The page counts are one
// consistent snapshot; Lost is read separately. Safe for concurrent use; it
// never blocks allocators.
func (c *Container[T]) Stats() ContainerStats {
	var alloc, free, used, high uint64
	for try := 0; ; try++ {
		s := c.stats.lock.BeginOptimistic()
		alloc, free = c.stats.countAlloc.Load(), c.stats.countFree.Load()
		used, high = c.stats.countUsed.Load(), c.stats.highCount.Load()
		if c.stats.lock.EndOptimistic(s) {
			break
		}
		if try >= 3 { // the writer holds c.mu and may be descheduled: let it run
			runtime.Gosched()
		}
	}
	pb := c.pageBytes
	return ContainerStats{
		Name:              c.Name(),
		RecordSize:        uint64(unsafe.Sizeof(Record[T]{})),
		PageSize:          uint64(c.pageSize),
		PageBytes:         pb,
		MaxPages:          uint64(c.maxPages),
		CountAlloc:        alloc,
		CountFree:         free,
		CurrentCountUsed:  used,
		HighCountUsed:     high,
		SumBytesAlloc:     alloc * pb,
		SumBytesFree:      free * pb,
		CurrentBytesUsed:  used * pb,
		HighBytesUsed:     high * pb,
		RecordCapacity:    used * uint64(c.pageSize),
		Lost:              c.lost.Load(),
		MaxRecordCapacity: uint64(c.maxPages) * uint64(c.pageSize),
	}
}

// countPages records the creation (+1) or retirement (-1) of a page. Called
// with c.mu held: the stats cells have one writer.
func (c *Container[T]) countPages(delta int) {
	s := &c.stats
	d := s.lock.AllocatedToDirty()
	if delta > 0 {
		s.countAlloc.Add(1)
		if used := s.countUsed.Add(1); used > s.highCount.Load() {
			s.highCount.Set(used)
		}
	} else {
		s.countFree.Add(1)
		s.countUsed.Add(^uint64(0))
	}
	s.lock.DirtyToAllocated(d)
}
