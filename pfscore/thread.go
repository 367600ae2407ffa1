package pfscore

import (
	"sync/atomic"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/rings"
)

// A Thread is an actor: a request handler, a worker, a connection. Go has no
// goroutine-local storage, so threads are explicit: a service creates one
// with NewThread, carries it (in a context.Context, see package instrument),
// passes it to the instruments it uses, and ends it with End.
//
// A Thread is driven by one goroutine at a time, as a MySQL thread is by one
// OS thread: its events, statistics and history are written by that
// goroutine without locks (owned cells, see internal/owned). Handing a
// Thread to another goroutine is fine when the hand-over synchronizes (a
// channel send, a WaitGroup); using it from two goroutines at once is a bug
// that loses counts. Readers (the tables) read it at any time.
//
// A Thread is a handle: its identity is immutable, and its storage (the
// current-wait stack, the history ring, the statistics) is recycled through
// a pool once the thread ends. An ended handle stays ended: End again does
// nothing, and instruments given an ended thread treat it as no thread.
//
// A nil *Thread is valid everywhere and means "no thread": events still feed
// the global and per-instance summaries.
type Thread struct {
	*threadCore // the storage, this handle's until End

	s     *Schema
	id    uint64 // THREAD_ID
	class *Class
	user  string
	host  string
	acct  *actorRow // accounts row; nil without user and host
	usr   *actorRow // users row; nil without user
	hst   *actorRow // hosts row; nil without host
	start uint64    // when the thread started, picoseconds

	// mask holds the consumer bits this thread lets through: all but those
	// INSTRUMENTED=NO or HISTORY=NO switch off. An event ANDs it with the
	// schema's consumers.
	mask atomic.Uint32

	// ended is set once, by End, under Schema.actorsMu.
	ended atomic.Bool
}

// threadCore is a thread's storage, recycled from one thread to the next.
type threadCore struct {
	// Owner only.
	rec     *Record[threadRecord]
	eventID uint64 // the next EVENT_ID (MySQL's m_event_id)
	depth   int    // waits in progress

	// Read by the tables.
	depthCell owned.Uint64 // depth, published for readers
	waits     [waitStackDepth]waitSlot
	history   *rings.PerThread // events_waits_history; nil when its size is 0
	// stats is the thread's by-event-name statistics, indexed by class. The
	// owner grows it by publishing a longer copy; the slice a pointer
	// points to never changes, so anyone may load and index it.
	stats atomic.Pointer[[]ownedStat]
}

// threadRecord is a thread's slot in the threads container, which bounds the
// number of threads, counts the ones lost, and gives each a row index.
type threadRecord struct {
	id owned.Uint64
}

// waitStackDepth bounds nested waits per thread (MySQL's WAIT_STACK_SIZE
// less its dummy bottom): a wait inside a wait inside a wait ... A deeper
// wait still feeds the summaries but is not shown as an event, and counts in
// Performance_schema_nested_wait_lost.
const waitStackDepth = 4

// ThreadOptions are a thread's identity, as the threads table shows it.
type ThreadOptions struct {
	// User and Host are PROCESSLIST_USER and PROCESSLIST_HOST: the account
	// whose statistics the thread rolls up into, and the key setup_actors
	// matches. A thread with a user is a foreground thread, whose
	// INSTRUMENTED and HISTORY come from setup_actors; one without takes
	// them from setup_threads.
	User, Host string
}

// NewThread starts a thread of class (a thread/<component>/<name> class)
// and returns it, or nil if the threads container is full (counted in
// Performance_schema_thread_instances_lost) or class is not a thread class.
// The thread counts in its account's CURRENT_CONNECTIONS until End.
func (s *Schema) NewThread(class *Class, opt ThreadOptions) *Thread {
	if class == nil || class.kind != KindThread {
		return nil
	}
	rec, d := s.threads.Allocate()
	if rec == nil {
		return nil
	}
	c, _ := s.threadPool.Get().(*threadCore)
	if c == nil {
		c = &threadCore{}
		if n := s.cfg.waitsHistorySize; n > 0 {
			c.history, _ = rings.NewPerThread(n, waitWidth) // sizes are validated by config
		}
		empty := []ownedStat{}
		c.stats.Store(&empty)
	} else {
		c.recycle()
	}
	c.rec, c.eventID = rec, 1
	// Statistics for every class registered so far, so that the first
	// events allocate nothing; a class registered later grows the table on
	// the thread's first event of it.
	if n := len(s.Classes()); len(*c.stats.Load()) < n {
		c.growStats(s, n-1)
	}
	t := &Thread{threadCore: c, s: s, id: s.threadIDs.Add(1), class: class,
		user: opt.User, host: opt.Host, start: hwclock.Nanosecond.Now()}
	rec.value.id.Set(t.id)

	var instrumented, history bool
	if opt.User != "" {
		instrumented, history = s.lookupActor(opt.User, opt.Host)
	} else {
		instrumented, history = threadClassDefaults(class)
	}
	if !class.Enabled() {
		instrumented = false
	}
	t.mask.Store(threadMask(instrumented, history))
	t.acct, t.usr, t.hst = s.actorsConnect(opt.User, opt.Host)

	s.threadObjs[rec.Index()].Store(t)
	rec.lock.DirtyToAllocated(d)
	return t
}

// recycle clears what the storage kept of its previous thread, before a new
// thread uses it: the rows of its current-wait stack, its history, its
// statistics. A reader still holding the previous handle sees rows vanish,
// never rows of the new thread under the old identity (rows carry their
// THREAD_ID).
func (c *threadCore) recycle() {
	for i := range c.waits {
		w := &c.waits[i]
		w.seq.BeginWrite()
		w.cells[wClass].Set(0) // an empty slot
		w.seq.EndWrite()
	}
	c.depth = 0
	c.depthCell.Set(0)
	if c.history != nil {
		c.history.Reset()
	}
	st := *c.stats.Load()
	for i := range st {
		st[i].reset()
	}
}

// threadMask derives a thread's consumer mask from INSTRUMENTED and HISTORY.
func threadMask(instrumented, history bool) uint32 {
	m := ^uint32(0)
	if !instrumented {
		m &^= 1 << ConsumerThreadInstrumentation
	}
	if !history {
		m &^= historyConsumers
	}
	return m
}

// ID returns THREAD_ID. Safe for concurrent use.
func (t *Thread) ID() uint64 {
	if t == nil {
		return 0
	}
	return t.id
}

// Instrumented returns the threads table's INSTRUMENTED.
func (t *Thread) Instrumented() bool {
	return t != nil && t.mask.Load()&(1<<ConsumerThreadInstrumentation) != 0
}

// History returns the threads table's HISTORY.
func (t *Thread) History() bool {
	return t != nil && t.mask.Load()&(1<<ConsumerEventsWaitsHistory) != 0
}

// SetInstrumented is UPDATE threads SET INSTRUMENTED=…: effective from the
// thread's next event. Safe for concurrent use.
func (t *Thread) SetInstrumented(on bool) {
	t.updateMask(func(_, history bool) (bool, bool) { return on, history })
}

// SetHistory is UPDATE threads SET HISTORY=…. Safe for concurrent use.
func (t *Thread) SetHistory(on bool) {
	t.updateMask(func(instrumented, _ bool) (bool, bool) { return instrumented, on })
}

// updateMask changes INSTRUMENTED and HISTORY with a compare-and-swap, so
// that concurrent updates of the two do not lose one another.
func (t *Thread) updateMask(f func(instrumented, history bool) (bool, bool)) {
	if t == nil {
		return
	}
	for {
		old := t.mask.Load()
		next := threadMask(f(old&(1<<ConsumerThreadInstrumentation) != 0, old&(1<<ConsumerEventsWaitsHistory) != 0))
		if t.mask.CompareAndSwap(old, next) {
			return
		}
	}
}

// stat returns the thread's statistic for class index i, growing the table
// if a class registered after the last growth. Owner only.
func (t *Thread) stat(i int) *ownedStat {
	if st := *t.stats.Load(); i < len(st) {
		return &st[i]
	}
	return t.growStats(t.s, i)
}

//go:noinline
func (c *threadCore) growStats(s *Schema, i int) *ownedStat {
	old := *c.stats.Load()
	n := max(len(s.Classes()), i+1)
	next := make([]ownedStat, n)
	for j := range old { // the owner is the only writer: a plain copy is exact
		next[j].count.Set(old[j].count.Load())
		next[j].sum.Set(old[j].sum.Load())
		next[j].minInv.Set(old[j].minInv.Load())
		next[j].max.Set(old[j].max.Load())
	}
	c.stats.Store(&next)
	return &next[i]
}

// End ends the thread: its statistics roll up into its account (or user and
// host), its account's CURRENT_CONNECTIONS drops, and its rows leave the
// threads and per-thread tables, in one step as readers see it (under
// actorsMu, which the actor summaries read under). Owner only; a second End
// does nothing, and the Thread must not be used for new events afterwards.
func (t *Thread) End() {
	if t == nil || t.ended.Load() {
		return
	}
	s := t.s
	s.actorsMu.Lock()
	if t.ended.Swap(true) {
		s.actorsMu.Unlock()
		return
	}
	s.rollUpLocked(t, *t.stats.Load())
	s.threadObjs[t.rec.Index()].Store(nil)
	s.actorsMu.Unlock()
	s.threads.Free(t.rec)
	s.threadPool.Put(t.threadCore) // the storage serves the next thread; this handle stays ended
	s.maybeReclaim()
}

// Schema returns the schema the thread belongs to, or nil for a nil thread.
func (t *Thread) Schema() *Schema {
	if t == nil {
		return nil
	}
	return t.s
}
