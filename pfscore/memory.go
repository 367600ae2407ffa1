package pfscore

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/memsum"
)

// Memory instruments: memory/<component>/<name> classes, their statistics by
// thread, account, user, host and globally, and the five
// memory_summary_*_by_event_name tables. The arithmetic is package memsum's;
// this file decides where each allocation counts and keeps the sources a
// row sums from moving under its reader.
//
// # Where an allocation counts
//
// MemoryAlloc counts on its thread's memsum.Stat (one per thread and class,
// written in the thread's write sections, so by one goroutine at a time)
// when the class is on and the thread instrumented, else on the class's
// global Shared; it returns a MemoryOwner saying which. MemoryFree counts a
// free exactly when its allocation counted, whatever the flags say by then
// (MySQL's rule): on the owner thread's Stat if the thread is still the
// same and is not writing its storage at that instant (another free that
// holds it is waited for), else where the thread's statistics go when it
// ends (its account, or user and host). A new high or low water
// mark on a thread is carried to its parents at once (memsum's carry: the
// account, then the user and the host, then the global Shared); the totals
// stay in the thread's Stat until it ends.
//
// # Moves, and what a reader sees
//
// A row is a sum of sources (a thread's Stat; an account's, user's or
// host's Shared; the global Shared). Three things move counts between
// sources: a thread's end (its Stat drained into its parents), TRUNCATE of
// accounts, users or hosts removing a row (memRemoveActor: an account's
// Shared into its user and host, a host's into the global Shared), and
// TRUNCATE of a memory table (every source rebased). Each runs under
// memMoveMu with memMoves odd; a reader sums its sources between two loads
// of memMoves and keeps the sums only if both were even and equal, retrying
// a few times and then reading under memMoveMu. So a reader never counts a
// moved part twice or not at all, and the cumulative columns of every row
// never go down but by TRUNCATE (TestSummariesMonotoneConcurrentSafe). The
// marks of a row that sums Shared statistics (every row but a thread's) are
// estimates a read concurrent with an update may see off by that update
// (memsum.Shared writes its words one at a time): always LOW <= CURRENT <=
// HIGH, and HIGH at least every CURRENT since the TRUNCATE, but a HIGH may
// read one allocation higher than a later read of it. A thread's row is
// exact: its Stat is seqlocked.
//
// # A thread's end
//
// An ended thread's statistics move whole to its parents (its account; else
// its user and host), memory it left allocated included, and so does the
// later free of that memory (memFree): the memory stays its account's until
// it is freed. MySQL moves only the balanced part to the parents and the
// leaked part to the global statistics, which takes a parent row's
// COUNT_ALLOC and HIGH marks down; here no cumulative column and no HIGH
// mark ever goes down but by TRUNCATE, and the global row is the same.

// memPage is how many classes' statistics a page of pages holds.
const memPage = 16

// pages is a growable array of T that never moves an element: a directory
// of fixed pages, made on first use and replaced by a longer copy under mu.
// Readers load the directory and may find a page missing (nil: nothing
// counted there yet).
type pages[T any] struct {
	dir atomic.Pointer[[]*[memPage]T]
	mu  sync.Mutex
}

// get returns element k, nil if its page was never made. (Unsigned
// arithmetic: k is never negative, and the division is then a shift.)
func (p *pages[T]) get(k int) *T {
	d := p.dir.Load()
	if d == nil {
		return nil
	}
	if i := uint(k) / memPage; i < uint(len(*d)) {
		if pg := (*d)[i]; pg != nil {
			return &pg[uint(k)%memPage]
		}
	}
	return nil
}

// at returns element k, making its page if needed.
func (p *pages[T]) at(k int) *T {
	if e := p.get(k); e != nil {
		return e
	}
	return p.grow(k)
}

//go:noinline
func (p *pages[T]) grow(k int) *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.get(k); e != nil {
		return e
	}
	var old []*[memPage]T
	if d := p.dir.Load(); d != nil {
		old = *d
	}
	next := make([]*[memPage]T, max(len(old), k/memPage+1))
	copy(next, old)
	next[k/memPage] = new([memPage]T)
	p.dir.Store(&next)
	return &next[k/memPage][k%memPage]
}

// each calls f for every element of every page made, with its index.
func (p *pages[T]) each(f func(k int, e *T)) {
	d := p.dir.Load()
	if d == nil {
		return
	}
	for i, pg := range *d {
		if pg != nil {
			for j := range pg {
				f(i*memPage+j, &pg[j])
			}
		}
	}
}

// MemoryOwner is what MemoryAlloc returns and MemoryFree needs: whether the
// allocation counted, and where. The zero MemoryOwner is an allocation that
// did not count; its free counts nothing either. Keep it with the memory it
// describes (package instrument's helpers do).
type MemoryOwner struct {
	t   *Thread // the thread whose Stat counted it; nil: the global Shared
	how uint8
}

const (
	memNone   = iota // not counted
	memGlobal        // on the class's global Shared
	memThread        // on t's Stat
)

// Counted reports whether the allocation counted, so that its free will.
func (o MemoryOwner) Counted() bool { return o.how != memNone }

// memClass reports whether c is one of s's memory classes, on.
func (s *Schema) memClass(c *Class) bool {
	return c != nil && c.kind == KindMemory && c.flags.Load()&flagOn != 0 && s.owns(c)
}

// MemoryAlloc counts an allocation of size bytes of memory class c on
// thread t (nil: none). It returns the MemoryOwner to pass to MemoryFree; the
// allocation counts only while c is on (memory classes are off unless
// enabled, as in MySQL). Safe from the goroutine that drives t.
func (s *Schema) MemoryAlloc(t *Thread, c *Class, size uint64) MemoryOwner {
	if !s.memClass(c) {
		return MemoryOwner{}
	}
	return s.memAlloc(t, c.kindIndex, size)
}

func (s *Schema) memAlloc(t *Thread, k int, size uint64) MemoryOwner {
	if t != nil && t.s == s && s.consumers.Load()&t.mask.Load()&(1<<ConsumerThreadInstrumentation) != 0 {
		if g, ok := t.tryEnter(guardBusy); ok {
			t.memUsed.mark(k)
			d := t.mem.at(k).Alloc(s.memEpoch.Load(), size)
			t.leave(g)
			if !d.IsZero() {
				s.carryAlloc(t, k, d)
			}
			return MemoryOwner{t: t, how: memThread}
		}
	}
	s.memGlobal.at(k).Alloc(size)
	return MemoryOwner{how: memGlobal}
}

// MemoryFree counts the free of size bytes of class c that MemoryAlloc
// counted as o (nothing if it did not). It is safe from any goroutine: a
// free of memory a thread still owns counts on the thread (waiting out a
// write of the thread's in progress), and once the thread has ended on the
// rows the thread's statistics went to.
func (s *Schema) MemoryFree(c *Class, size uint64, o MemoryOwner) {
	if o.how == memNone || c == nil || c.kind != KindMemory || !s.owns(c) {
		return
	}
	s.memFree(c.kindIndex, size, o)
}

func (s *Schema) memFree(k int, size uint64, o MemoryOwner) {
	t := o.t
	if t == nil {
		s.memGlobal.at(k).Free(size)
		return
	}
	if g, ok := t.enterFree(); ok {
		t.memUsed.mark(k)
		d := t.mem.at(k).Free(s.memEpoch.Load(), size)
		t.leave(g)
		if !d.IsZero() {
			s.carryFree(t, k, d)
		}
		return
	}
	// The thread has ended: its statistics are, or are about to be, with
	// its parents, and so is the free.
	s.memMoveMu.Lock() // not a move, but an account must not be removed meanwhile
	s.memParents(t, k, func(sh *memsum.Shared) { sh.Free(size) })
	s.memMoveMu.Unlock()
}

// MemoryRealloc counts a reallocation from oldSize to newSize bytes of an
// allocation counted as o, on thread t: as MySQL's, the new block is
// allocated, then the old one freed. The new block counts if c is on now.
func (s *Schema) MemoryRealloc(t *Thread, c *Class, oldSize, newSize uint64, o MemoryOwner) MemoryOwner {
	n := s.MemoryAlloc(t, c, newSize)
	s.MemoryFree(c, oldSize, o)
	return n
}

// enterFree opens a write section for a free, which may come from any
// goroutine: it waits out a section in progress (the thread's own, or
// another free's), which is short and waits for nothing, as End does, and
// gives up only when the thread has ended. So a free counts on the thread
// its allocation counted on for as long as the thread lives: a thread
// that serves request after request (a pooled one) does not pile up bytes
// other goroutines freed while it was busy. (A bound on the wait would
// not do: a thread busy most of the time, with gaps of a few instructions
// between its sections, starved a free of 65,536 tries in one run in five
// of TestReview23PooledThreadMemoryAfterForeignFrees.)
func (t *Thread) enterFree() (uint64, bool) {
	for i := 1; ; i++ {
		g := t.guard.Load()
		if g&genMask != t.owner || g&guardEnded != 0 {
			return 0, false
		}
		if g&guardBusy == 0 && t.guard.CompareAndSwap(g, g|guardBusy|guardForeign) {
			owned.AfterRMW(&t.guard)
			return g, true
		}
		if i%16 == 0 {
			runtime.Gosched() // the section's goroutine was preempted in it
		}
	}
}

// tryEnter is enter without counting a loss, for the paths that count
// elsewhere instead (an allocation, Settle); bits are guardBusy. Like
// enter, it waits out a free another goroutine has in progress.
func (t *Thread) tryEnter(bits uint64) (uint64, bool) {
	g := t.guard.Load()
	if g&^seqMask == t.owner && t.guard.CompareAndSwap(g, g|bits) {
		owned.AfterRMW(&t.guard)
		return g, true
	}
	return t.enterAfterForeign(bits)
}

// waitSection returns once the write section in progress on the thread's
// storage, if any, has ended.
func (t *Thread) waitSection() {
	g := t.guard.Load()
	for i := 1; g&guardBusy != 0 && t.guard.Load() == g; i++ {
		if i%16 == 0 {
			runtime.Gosched()
		}
	}
}

// carryAlloc carries a thread's new high water mark to its parents:
// its account, whose remainder goes to its user (where the rest is
// dropped: the host's copy carries on) and its host, whose remainder goes to
// the global Shared (see package memsum, "Carry").
func (s *Schema) carryAlloc(t *Thread, k int, d memsum.AllocDelta) {
	if a := t.acct; a != nil {
		if d = a.mem.at(k).ApplyAllocDelta(d); d.IsZero() {
			return
		}
	}
	if u := t.usr; u != nil {
		u.mem.at(k).ApplyAllocDelta(d)
	}
	if h := t.hst; h != nil {
		if d = h.mem.at(k).ApplyAllocDelta(d); d.IsZero() {
			return
		}
	}
	s.memGlobal.at(k).ApplyAllocDelta(d)
}

// carryFree is carryAlloc for a new low water mark.
func (s *Schema) carryFree(t *Thread, k int, d memsum.FreeDelta) {
	if a := t.acct; a != nil {
		if d = a.mem.at(k).ApplyFreeDelta(d); d.IsZero() {
			return
		}
	}
	if u := t.usr; u != nil {
		u.mem.at(k).ApplyFreeDelta(d)
	}
	if h := t.hst; h != nil {
		if d = h.mem.at(k).ApplyFreeDelta(d); d.IsZero() {
			return
		}
	}
	s.memGlobal.at(k).ApplyFreeDelta(d)
}

// memMoveBegin and memMoveEnd bracket a move of counts between sources
// (see "Moves" above).
func (s *Schema) memMoveBegin() {
	s.memMoveMu.Lock()
	s.memMoves.Add(1)
}

func (s *Schema) memMoveEnd() {
	s.memMoves.Add(1)
	s.memMoveMu.Unlock()
}

// memRead runs read, which sums sources into its own output (starting
// afresh each call), so that no move happens meanwhile: optimistically a
// few times, then holding memMoveMu.
func (s *Schema) memRead(read func(epoch uint64)) {
	for range 4 {
		v := s.memMoves.Load()
		if v&1 == 0 {
			read(s.memEpoch.Load())
			if s.memMoves.Load() == v {
				return
			}
		}
		runtime.Gosched()
	}
	s.memMoveMu.Lock()
	defer s.memMoveMu.Unlock()
	read(s.memEpoch.Load())
}

// memEnd moves an ended thread's memory statistics to its parents; End
// calls it once no write section can begin (the guard says ended), within
// memMoveBegin and memMoveEnd.
func (s *Schema) memEnd(t *Thread) {
	epoch := s.memEpoch.Load()
	for _, k := range t.memUsed.list { // the kinds it counted; the rest are zero
		if c := t.mem.at(int(k)).Drain(epoch); c != (memsum.Counts{}) {
			s.memParents(t, int(k), func(sh *memsum.Shared) { sh.Aggregate(c) })
		}
	}
}

// memParents calls f with the statistics of class kind index k that thread
// t's go to when it ends: its account's; else its user's and its host's (the
// global Shared's without a host: the global row sums hosts, not users);
// else the global Shared's. A row a TRUNCATE removed sent its statistics on
// (memRemoveActor), and so do an ended thread's frees: a removed account's
// to the user and host it moved them to, a removed host's to the global
// Shared; a removed user's go nowhere (its copy went with it). Within a
// move, or holding memMoveMu.
func (s *Schema) memParents(t *Thread, k int, f func(*memsum.Shared)) {
	usr, hst := t.usr, t.hst
	if a := t.acct; a != nil {
		if !a.memRemoved {
			f(a.mem.at(k))
			return
		}
		usr, hst = a.memUser, a.memHost
	}
	if usr != nil && !usr.memRemoved {
		f(usr.mem.at(k))
	}
	if hst != nil && !hst.memRemoved {
		f(hst.mem.at(k))
	} else {
		f(s.memGlobal.at(k))
	}
}

// memRemoveActor moves the memory statistics of an account, user or host
// row TRUNCATE removes to where the rows above it will sum them: an
// account's into user and host (the rows found for it now; the global
// Shared without a host), a host's into the global Shared; a user's are
// dropped, as the global row never summed them. Under the rows' locks and
// within memMoveBegin and memMoveEnd.
func (s *Schema) memRemoveActor(a, user, host *actorRow) {
	account, isHost := a.user != "" && a.host != "", a.user == "" && a.host != ""
	a.mem.each(func(k int, sh *memsum.Shared) {
		c := sh.LoadCounts()
		switch {
		case c == (memsum.Counts{}):
		case account:
			if user != nil {
				user.mem.at(k).Aggregate(c)
			}
			if host != nil {
				host.mem.at(k).Aggregate(c)
			} else {
				s.memGlobal.at(k).Aggregate(c)
			}
		case isHost:
			s.memGlobal.at(k).Aggregate(c)
		}
	})
	a.memRemoved, a.memUser, a.memHost = true, user, host
}

// truncateMemory is TRUNCATE of any memory summary table: every source is
// rebased (package memsum, "TRUNCATE"), so all five tables restart from
// their CURRENT values. A row's counts go down by the same value, the sum of
// its sources' balanced parts: an allocation and its free counted on two
// sources (a free that found its thread busy) stay in the counts.
func (s *Schema) truncateMemory() {
	s.memMoveBegin()
	defer s.memMoveEnd()
	s.memEpoch.Add(1) // first: threads' Stats rebase with it
	// A thread's memory operation loads the epoch inside its write
	// section; wait for the sections in progress, so that no operation of
	// the old epoch lands after the move ends (memsum's contract: readers
	// that rebased a copy and readers after would disagree).
	s.beginRead()
	for _, t := range s.liveThreads() {
		t.waitSection()
	}
	s.endRead()
	s.memGlobal.each(func(_ int, sh *memsum.Shared) { sh.Rebase() })
	s.actorsMu.Lock()
	for _, m := range []map[accountKey]*actorRow{s.accounts, s.users, s.hosts} {
		for _, r := range m {
			r.mem.each(func(_ int, sh *memsum.Shared) { sh.Rebase() })
		}
	}
	s.actorsMu.Unlock()
	s.rebaseBuiltinMemory()
}
