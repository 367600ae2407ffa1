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
// channel send, a WaitGroup); using it from two goroutines at once loses
// counts but never corrupts memory. Readers (the tables) read it at any time.
//
// A nil *Thread is valid everywhere and means "no thread": events still feed
// the global and per-instance summaries.
type Thread struct {
	s *Schema

	// ident is the thread's identity. Readers load it once per row; a
	// Thread recycled after End (Schema keeps a pool of them) gets a new
	// one, so a reader holding an ended Thread never sees a mixed identity.
	ident atomic.Pointer[threadIdent]

	// mask holds the consumer bits this thread lets through: all but those
	// INSTRUMENTED=NO or HISTORY=NO switch off. An event ANDs it with the
	// schema's consumers.
	mask atomic.Uint32

	// Owner only.
	rec       *Record[threadRecord]
	id        uint64 // ident's id, for the owner's hot path
	eventID   uint64 // the next EVENT_ID (MySQL's m_event_id)
	depth     int    // waits in progress
	statsHint []ownedStat

	// Read by the tables.
	depthCell owned.Uint64 // depth, published for readers
	waits     [waitStackDepth]waitSlot
	history   *rings.PerThread // events_waits_history; nil when its size is 0
	stats     atomic.Pointer[[]ownedStat]
	ended     atomic.Bool
}

// threadIdent is a thread's identity: immutable once published.
type threadIdent struct {
	id    uint64
	class *Class
	user  string
	host  string
	acct  *actorRow // accounts row; nil without user and host
	usr   *actorRow // users row; nil without user
	hst   *actorRow // hosts row; nil without host
	start uint64    // when the thread started, picoseconds
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
	t, _ := s.threadPool.Get().(*Thread)
	if t == nil {
		t = &Thread{s: s}
		if n := s.cfg.waitsHistorySize; n > 0 {
			t.history, _ = rings.NewPerThread(n, waitWidth) // sizes are validated by config
		}
	} else {
		t.recycle()
	}
	id := s.threadIDs.Add(1)
	t.rec, t.id, t.eventID = rec, id, 1
	rec.value.id.Set(id)
	// Statistics for every class registered so far, so that the first
	// events allocate nothing; a class registered later grows the table on
	// the thread's first event of it.
	if n := len(s.Classes()); len(t.statsHint) < n {
		t.growStats(n - 1)
	}

	var instrumented, history bool
	if opt.User != "" {
		instrumented, history = s.lookupActor(opt.User, opt.Host)
	} else {
		instrumented, history = threadClassDefaults(class)
	}
	if !class.Enabled() {
		instrumented = false
	}
	t.setMask(instrumented, history)
	acct, usr, hst := s.actorsConnect(opt.User, opt.Host)
	t.ident.Store(&threadIdent{id: id, class: class, user: opt.User, host: opt.Host,
		acct: acct, usr: usr, hst: hst, start: hwclock.Nanosecond.Now()})
	t.ended.Store(false)

	s.threadObjs[rec.Index()].Store(t)
	rec.lock.DirtyToAllocated(d)
	return t
}

// recycle clears what a Thread kept of its previous life, before it is
// published again: the rows of its current-wait stack, its history, its
// statistics. Readers that still hold it from before see rows vanish, never
// rows of the new life under the old identity (rows carry their THREAD_ID).
func (t *Thread) recycle() {
	for i := range t.waits {
		w := &t.waits[i]
		w.seq.BeginWrite()
		w.cells[wClass].Set(0) // an empty slot
		w.seq.EndWrite()
	}
	t.depth = 0
	t.depthCell.Set(0)
	if t.history != nil {
		t.history.Reset()
	}
	for i := range t.statsHint {
		t.statsHint[i].reset()
	}
}

// setMask derives the thread's consumer mask from INSTRUMENTED and HISTORY.
func (t *Thread) setMask(instrumented, history bool) {
	m := ^uint32(0)
	if !instrumented {
		m &^= 1 << ConsumerThreadInstrumentation
	}
	if !history {
		m &^= historyConsumers
	}
	t.mask.Store(m)
}

// ID returns THREAD_ID. Safe for concurrent use.
func (t *Thread) ID() uint64 {
	if t == nil {
		return 0
	}
	return t.ident.Load().id
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
// thread's next event.
func (t *Thread) SetInstrumented(on bool) {
	if t != nil {
		t.setMask(on, t.History())
	}
}

// SetHistory is UPDATE threads SET HISTORY=….
func (t *Thread) SetHistory(on bool) {
	if t != nil {
		t.setMask(t.Instrumented(), on)
	}
}

// stat returns the thread's statistic for class index i, growing the table
// if a class registered after the last growth. Owner only.
func (t *Thread) stat(i int) *ownedStat {
	if i < len(t.statsHint) {
		return &t.statsHint[i]
	}
	return t.growStats(i)
}

//go:noinline
func (t *Thread) growStats(i int) *ownedStat {
	old := t.statsHint // the owner's copy of *t.stats
	n := max(len(t.s.Classes()), i+1)
	next := make([]ownedStat, n)
	for j := range old { // the owner is the only writer: a plain copy is exact
		next[j].count.Set(old[j].count.Load())
		next[j].sum.Set(old[j].sum.Load())
		next[j].minInv.Set(old[j].minInv.Load())
		next[j].max.Set(old[j].max.Load())
	}
	t.stats.Store(&next)
	t.statsHint = next
	return &next[i]
}

// End ends the thread: its statistics roll up into its account (or user and
// host), its account's CURRENT_CONNECTIONS drops, and its rows leave the
// threads and per-thread tables. Owner only, once; the Thread must not be
// used afterwards.
func (t *Thread) End() {
	if t == nil || t.ended.Swap(true) {
		return
	}
	s := t.s
	s.actorsDisconnect(t.ident.Load(), *t.stats.Load())
	s.threadObjs[t.rec.Index()].Store(nil)
	s.threads.Free(t.rec)
	s.threadPool.Put(t) // its memory (stack rows, history ring, statistics) serves the next thread
	s.maybeReclaim()
}

// Schema returns the schema the thread belongs to, or nil for a nil thread.
func (t *Thread) Schema() *Schema {
	if t == nil {
		return nil
	}
	return t.s
}
