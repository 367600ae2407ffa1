package pfscore

import (
	"runtime"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/internal/store"
	"github.com/otelpfs/otelpfs/memsum"
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
// channel send, a WaitGroup). Two goroutines using one Thread at once is a
// misuse the engine survives: each write to the thread's storage is a short
// section that the thread's guard word admits one writer at a time (see
// threadCore.guard), so a row is never torn; an event that finds another
// writer inside drops its per-thread part (its thread statistics, current
// row and history) and counts in Performance_schema_thread_events_lost.
// Instance and global statistics still count it.
//
// A Thread is a handle: its identity is immutable, and its storage (the
// current-wait stack, the history ring, the statistics) is recycled once the
// thread ends. An ended handle stays ended: End again does nothing,
// instruments given an ended thread treat it as no thread, and an event in
// flight when its thread ended (another goroutine called End) drops its
// per-thread part at its end, counted as above: the guard names the thread
// the storage belongs to, so a stale handle never writes into storage
// recycled for another thread.
//
// A nil *Thread is valid everywhere and means "no thread": events still feed
// the global and per-instance summaries.
type Thread struct {
	*threadCore // the storage, this handle's until End

	s     *Schema
	id    uint64 // THREAD_ID
	owner uint64 // the owner field of the storage's guard while it is this thread's
	class *Class
	user  string
	host  string
	acct  *actorRow // accounts row; nil without user and host, or when accounts is full
	usr   *actorRow // users row; nil without user, or when users is full
	hst   *actorRow // hosts row; nil without host, or when hosts is full
	start uint64    // when the thread started, picoseconds

	// live holds the thread's position in the live lists of acct, usr and
	// hst (see actorRow.live), under each row's mu.
	live [3]int

	// mask holds the consumer bits this thread lets through: all but those
	// INSTRUMENTED=NO or HISTORY=NO switch off. An event ANDs it with the
	// schema's consumers.
	mask atomic.Uint32

	// ended is set once, by End.
	ended atomic.Bool
}

// threadCore is a thread's storage, recycled from one thread to the next.
type threadCore struct {
	// guard says whose the storage is, admits one writer at a time, and is
	// the sequence word of the seqlock of its current rows (the wait stack
	// and the stage):
	//
	//	owner | seq<<2          owned by the thread owner names, idle
	//	owner | seq<<2 | busy   a write section in progress
	//	owner | seq<<2 | ended  the thread ended: nothing writes any more
	//	0                       not yet handed to a thread
	//
	// owner is the storage's generation (how many threads it has served) in
	// the top 24 bits; each Thread handle keeps the one it was given
	// (Thread.owner). A generation is never given out twice: storage that
	// served 2^24-1 threads is retired (see putCore), so a handle whose
	// thread ended never again matches its storage's guard. seq counts the
	// write sections completed, mod 2^38.
	//
	// A write section (enter ... leave) starts with a compare-and-swap from
	// an idle word of the handle's owner to the same word with busy set,
	// made by the goroutine that writes, and ends with a store of the word
	// with seq advanced and busy clear. End sets ended the same way, waiting
	// out a section in progress, before it rolls the statistics up; so
	// nothing writes the storage after the roll-up, and a stale handle (its
	// thread ended, the storage given to another thread) fails the
	// compare-and-swap, its owner being older. Only NewThread, holding a
	// core no reader can reach (see Schema.readers), stores a new owner.
	//
	// Readers of the current rows use it as a seqlock (see
	// threadCore.copyWaits and copyStage): a copy made between two equal
	// loads of an idle word is one no section wrote during. One word doing both saves the
	// stack's own sequence stores: a section costs one compare-and-swap and
	// one store, whatever it writes.
	guard atomic.Uint64
	gen   uint64 // the owner NewThread gave out last; NewThread's alone

	// Written in write sections only.
	rec *store.Record[threadRecord]
	// capture is the tree of the sampled top-level statement in progress
	// (capture.go), nil when none is captured.
	capture *captureBuf
	eventID uint64 // the next EVENT_ID (MySQL's m_event_id)
	depth   int    // waits in progress

	// Read by the tables.
	depthCell owned.Uint64 // depth, published for readers
	waits     [waitStackDepth]waitSlot
	history   *rings.PerThread // events_waits_history; nil when its size is 0
	// The stage in progress (written in write sections only), the current
	// stage row, and events_stages_history (nil when its size is 0).
	stage        stageState
	stageRow     stageSlot
	stageHistory *rings.PerThread
	// The statements in progress (written in write sections only): the
	// stack, its depth, and the EVENT_ID what begins now nests in (the
	// innermost statement with a current row; 0: none); the depth published
	// for readers, the current rows, and events_statements_history.
	stmts         [statementStackDepth]stmtLevel
	stmtDepth     int
	stmtNest      uint64
	stmtSeq       uint64 // statements pushed so far: stmtLevel.seq
	stmtDepthCell owned.Uint64
	stmtRows      [statementStackDepth]stmtSlot
	stmtRowsUsed  int // the levels below it had a current row since recycle
	stmtHistory   *rings.PerThread
	// stmtX is the thread's statement counters by statement class kind
	// index, grown like stats.
	stmtX atomic.Pointer[[]ownedCounts]
	// The transaction in progress (written in write sections only), the
	// current transaction row, events_transactions_history, and the
	// thread's transaction statistics, read-write and read-only.
	trx        trxState
	trxSeq     uint64 // transactions begun so far: trxState.seq
	trxRow     trxSlot
	trxHistory *rings.PerThread
	trxStats   [2]ownedStat
	// stats is the thread's by-event-name statistics, indexed by class. The
	// owner grows it by publishing a longer copy; the slice a pointer
	// points to never changes, so anyone may load and index it.
	stats atomic.Pointer[[]ownedStat]
	// mem is the thread's memory statistics, by memory class kind index,
	// written in write sections (memory.go); End drains them.
	mem pages[memsum.Stat]
	// The indexes of stats, stmtX and mem the thread has written (see
	// usedSet).
	statsUsed, stmtUsed, memUsed usedSet
}

// Guard word fields; see threadCore.guard.
const (
	guardBusy    = 1
	guardEnded   = 2
	guardSeq     = 1 << 2                  // one write section
	seqMask      = (1<<37 - 1) * guardSeq  // seq's bits
	guardForeign = 1 << 39                 // with guardBusy: a free from another goroutine (memFree)
	genShift     = 40                      // owner's position
	genMask      = (1<<24 - 1) << genShift // owner's bits
)

// enter opens a write section of the thread's storage and returns the guard
// word leave needs. It reports false, counting the loss, if another
// goroutine is writing the storage or the thread has ended: the caller then
// writes nothing of the thread's.
func (t *Thread) enter() (uint64, bool) {
	g := t.guard.Load()
	if g&^seqMask == t.owner && t.guard.CompareAndSwap(g, g|guardBusy) {
		owned.AfterRMW(&t.guard)
		return g, true
	}
	if g, ok := t.enterAfterForeign(guardBusy); ok {
		return g, true
	}
	t.s.threadEventsLost.Add(1)
	return 0, false
}

// enterAfterForeign is enter's way when the guard was not free: it waits
// while another goroutine's free of the thread's memory holds it (a few
// stores, legitimately from any goroutine: memFree), then opens the
// section with bits. It gives up on anything else: another goroutine writing
// the storage (a misuse), the thread's end.
//
//go:noinline
func (t *Thread) enterAfterForeign(bits uint64) (uint64, bool) {
	for i := 1; ; i++ {
		g := t.guard.Load()
		if g&^seqMask == t.owner && t.guard.CompareAndSwap(g, g|bits) {
			owned.AfterRMW(&t.guard)
			return g, true
		}
		if g&guardForeign == 0 && g&^seqMask != t.owner {
			return 0, false
		}
		if i%16 == 0 {
			runtime.Gosched() // the freeing goroutine was preempted in its section
		}
	}
}

// leave closes the write section enter opened, g being what enter returned:
// the storage's writes are seen before the guard is idle again with its
// sequence advanced (a plain store where stores are ordered, see
// owned.EndStore).
func (t *Thread) leave(g uint64) {
	owned.EndStore(&t.guard, g&^seqMask|(g+guardSeq)&seqMask) // left(g), spelled out: leave stays inlined
}

// left is the guard word leave stores after a section entered at g.
func left(g uint64) uint64 { return g&^seqMask | (g+guardSeq)&seqMask }

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
	c := s.takeCore()
	c.rec, c.eventID = rec, 1
	// Statistics for every class registered so far, so that the first
	// events allocate nothing; a class registered later grows the table on
	// the thread's first event of it.
	if n := len(s.Classes()); len(*c.stats.Load()) < n {
		c.growStats(s, n-1)
	}
	c.gen += 1 << genShift // below genMask: putCore retires storage that reached it
	t := &Thread{threadCore: c, s: s, id: s.threadIDs.Add(1), owner: c.gen, class: class,
		user: opt.User, host: opt.Host, start: hwclock.Nanosecond.Now()}
	rec.Value.id.Set(t.id)
	c.guard.Store(t.owner) // the storage is t's from here on

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
	s.actorsConnect(t)

	s.threadObjs[rec.Index()].Store(t)
	rec.Lock.DirtyToAllocated(d)
	return t
}

// takeCore returns storage for a new thread: an ended thread's, reset, when
// no reader is active, else new storage.
//
// Invariant: storage is reset for another thread only while no reader is
// active. A reader counts itself in s.readers before it lists threads
// (liveThreads, the actor rows' live lists) and until it is done with the
// storage it reached through them; a thread leaves those lists in End before
// its storage joins the free list; and takeCore checks the count after
// that. So a reader that listed the ended thread is counted when takeCore
// looks, and one that was not counted then lists only threads that are still
// live: no reader ever sees storage change owner under it. (Every step is a
// sequentially consistent atomic or under a mutex.) A reader that is always
// active makes every new thread take new storage, which the free list's bound
// keeps from piling up.
func (s *Schema) takeCore() *threadCore {
	if s.readers.Load() == 0 {
		s.coresMu.Lock()
		var c *threadCore
		if n := len(s.freeCores); n > 0 {
			c = s.freeCores[n-1]
			s.freeCores[n-1] = nil
			s.freeCores = s.freeCores[:n-1]
		}
		s.coresMu.Unlock()
		if c != nil {
			c.recycle()
			return c
		}
	}
	c := &threadCore{}
	held := s.coresMade.Add(1) - s.coresDropped.Load()
	for h := s.coresHigh.Load(); held > h && !s.coresHigh.CompareAndSwap(h, held); h = s.coresHigh.Load() {
	}
	if n := s.cfg.waitsHistorySize; n > 0 {
		c.history, _ = rings.NewPerThread(n, waitWidth) // New bounded the size
	}
	if n := s.cfg.stagesHistory; n > 0 {
		c.stageHistory, _ = rings.NewPerThread(n, stageWidth) // likewise
	}
	if n := s.cfg.trxHistory; n > 0 {
		c.trxHistory, _ = rings.NewPerThread(n, trxWidth) // likewise
	}
	if n := s.cfg.stmtHistory; n > 0 {
		c.stmtHistory, _ = rings.NewPerThreadRefs(n, stmtWidth, stmtRefs) // likewise
	}
	empty := []ownedStat{}
	c.stats.Store(&empty)
	noCounts := []ownedCounts{}
	c.stmtX.Store(&noCounts)
	return c
}

// maxFreeCores bounds the ended threads' storage kept for reuse.
const maxFreeCores = 1024

// putCore keeps an ended thread's storage for a later thread.
//
// Storage whose owner generation reached its last value is not kept: the
// next thread would take generation 0, "not yet handed out", and then
// generations an ended thread's handle may still hold. Retired, it stays
// with whatever stale handles point at it, ended for good, and the garbage
// collector takes it once they are gone. (Once per 2^24-1 threads of one
// storage, so the free list's reuse costs nothing that matters.)
func (s *Schema) putCore(c *threadCore) {
	if c.gen == genMask {
		s.coresDropped.Add(1)
		return
	}
	s.coresMu.Lock()
	if len(s.freeCores) < maxFreeCores {
		s.freeCores = append(s.freeCores, c)
	} else {
		s.coresDropped.Add(1)
	}
	s.coresMu.Unlock()
}

// beginRead counts a reader that will reach thread storage (see takeCore);
// endRead ends it.
func (s *Schema) beginRead() { s.readers.Add(1) }
func (s *Schema) endRead()   { s.readers.Add(-1) }

// recycle clears what the storage kept of its previous thread, before a new
// thread uses it: the rows of its current-wait stack, its history, its
// statistics. No reader can reach it (see takeCore).
func (c *threadCore) recycle() {
	for i := range c.waits {
		c.waits[i].cells[wClass].Set(0) // an empty slot
	}
	c.depth = 0
	c.depthCell.Set(0)
	if c.history != nil {
		c.history.Reset()
	}
	c.stage = stageState{}
	c.stageRow.cells[sClass].Set(0)
	if c.stageHistory != nil {
		c.stageHistory.Reset()
	}
	st := *c.stats.Load()
	for _, i := range c.statsUsed.list {
		st[i].reset()
	}
	c.statsUsed.clear()
	c.memUsed.clear() // End drained the memory statistics
	c.stmtDepth, c.stmtNest = 0, 0
	c.stmtDepthCell.Set(0)
	for i := range c.stmtRows[:c.stmtRowsUsed] { // the others are empty, their refs nil
		c.stmtRows[i].cells[qClass].Set(0)
		for j := range c.stmtRows[i].refs {
			c.stmtRows[i].refs[j].Set(nil) // let the old strings go
		}
	}
	c.stmtRowsUsed = 0
	if b := c.capture; b != nil { // its thread ended within the tree
		c.capture = nil
		b.q.drop(b)
	}
	if c.stmtHistory != nil {
		c.stmtHistory.Reset()
	}
	x := *c.stmtX.Load()
	for _, i := range c.stmtUsed.list {
		x[i].reset()
	}
	c.stmtUsed.clear()
	c.trx = trxState{}
	c.trxRow.cells[xState].Set(0)
	if c.trxHistory != nil {
		c.trxHistory.Reset()
	}
	c.trxStats[0].reset()
	c.trxStats[1].reset()
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

// Ended reports whether the thread has ended (End was called). Safe for
// concurrent use; a nil thread has not ended.
func (t *Thread) Ended() bool { return t != nil && t.ended.Load() }

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
// if a class registered after the last growth. In a write section only.
func (t *Thread) stat(i int) *ownedStat {
	t.statsUsed.mark(i)
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
	for j := range old { // the only writer: a plain copy is exact
		next[j].copyFrom(&old[j])
	}
	c.stats.Store(&next)
	return &next[i]
}

// End ends the thread: its statistics roll up into its account (or user and
// host) and into the ended threads' totals, its account's
// CURRENT_CONNECTIONS drops, and its rows leave the threads and per-thread
// tables. Each roll-up and the thread's leaving the list its readers take
// happen in one critical section (the actor rows' mu, Schema.endMu), so a
// summary counts the thread once, live or rolled up, and its cumulative
// columns never go down. Waits for a write section another goroutine has in
// progress on the thread (a misuse, see Thread); a second End does nothing,
// and the Thread must not be used for new events afterwards.
func (t *Thread) End() {
	if t == nil || t.ended.Load() {
		return
	}
	t.EndStage() // a stage in progress ends with its thread
	for {
		g := t.guard.Load()
		if g&genMask != t.owner || g&guardEnded != 0 {
			return // ended by another goroutine
		}
		if g&guardBusy == 0 && t.guard.CompareAndSwap(g, g|guardEnded) {
			break
		}
		runtime.Gosched() // a write section in progress: it is short
	}
	t.ended.Store(true)
	s := t.s
	stats := *t.stats.Load()
	x := *t.stmtX.Load()
	s.memMoveBegin() // memory readers see the thread live or moved, never both (memory.go)
	s.memEnd(t)
	s.actorsDisconnect(t, stats, x)
	s.endMu.Lock()
	s.rollUpEndedLocked(stats, x, t.threadCore, &t.trxStats)
	s.threadObjs[t.rec.Index()].Store(nil)
	s.endMu.Unlock()
	s.memMoveEnd()
	s.threads.Free(t.rec)
	s.putCore(t.threadCore) // the storage serves a later thread; this handle stays ended
	s.maybeReclaim()
}

// Schema returns the schema the thread belongs to, or nil for a nil thread.
func (t *Thread) Schema() *Schema {
	if t == nil {
		return nil
	}
	return t.s
}
