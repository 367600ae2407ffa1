package pfscore

import (
	"fmt"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
)

// Wait events: the provider path of every wait instrument, and the rows of
// events_waits_current, events_waits_history and events_waits_history_long.
//
// # The path of one event
//
//	BeginWait  one atomic load of the class word: off -> return false, the
//	           caller runs the raw operation; on -> read the wait timer if
//	           TIMED; with a thread whose consumers allow it, fill the
//	           thread's current row (a slot of owned cells, see
//	           threadCore.guard).
//	(the instrumented operation)
//	EndWait    read the timer; add the wait to the instance's statistics and
//	           the thread's by-event-name statistics; close the current row;
//	           copy it to the history rings whose consumers are on.
//
// Nothing on this path allocates, locks, or writes a word another core
// writes, except the instance's own statistics (a mutex's are written by its
// holder alone; a file's and a socket's, shared by design, with atomic adds).
// With a thread, the thread's part of BeginWait and of EndWait are each a
// write section of its storage (Thread.enter): one compare-and-swap on the
// thread's own guard word, uncontended unless the Thread is misused, and a
// plain store that closes it. The guard word doubles as the sequence word
// readers validate the current rows with, so a section needs no other
// bracket. The compare-and-swaps cost about 7 ns each on a 2.8 GHz Xeon;
// they are what keeps a stale or shared Thread from tearing rows.
// The flags an event samples at its start decide its end: an event that
// started enabled ends enabled, as WL#2360 requires.

// An Operation is the OPERATION column of a wait.
type Operation uint8

// Operations, with MySQL's names.
const (
	OpLock Operation = iota + 1
	OpTryLock
	OpReadLock
	OpWriteLock
	OpTryReadLock
	OpTryWriteLock
	OpWait
	OpTimedWait
	OpFileCreate
	OpFileOpen
	OpFileRead
	OpFileWrite
	OpFileSeek
	OpFileTell
	OpFileFlush
	OpFileStat
	OpFileFstat
	OpFileChsize
	OpFileDelete
	OpFileRename
	OpFileSync
	OpFileClose
	OpSocketCreate
	OpSocketConnect
	OpSocketBind
	OpSocketClose
	OpSocketSend
	OpSocketRecv
	OpSocketAccept
	OpSocketShutdown
	OpSocketOpt
	OpSocketStat
	OpIdle
	numOperations
)

var operationNames = [numOperations]string{"",
	"lock", "try_lock", "read_lock", "write_lock", "try_read_lock", "try_write_lock",
	"wait", "timed_wait",
	"create", "open", "read", "write", "seek", "tell", "flush", "stat", "fstat", "chsize",
	"delete", "rename", "sync", "close",
	"create", "connect", "bind", "close", "send", "recv", "accept", "shutdown", "opt", "stat",
	"idle",
}

func (o Operation) String() string {
	if o > 0 && o < numOperations {
		return operationNames[o]
	}
	return fmt.Sprintf("Operation(%d)", uint8(o))
}

// ioKind is where an I/O operation counts in file_summary_* and
// socket_summary_*: READ, WRITE or MISC.
func (o Operation) ioKind() int {
	switch o {
	case OpFileRead, OpSocketRecv:
		return ioRead
	case OpFileWrite, OpSocketSend:
		return ioWrite
	}
	return ioMisc
}

const (
	ioRead = iota
	ioWrite
	ioMisc
)

// NestingType is NESTING_EVENT_TYPE.
type NestingType uint8

const (
	NestingNone NestingType = iota
	NestingTransaction
	NestingStatement
	NestingStage
	NestingWait
)

var nestingNames = [...]string{"", "TRANSACTION", "STATEMENT", "STAGE", "WAIT"}

func (n NestingType) String() string {
	if int(n) < len(nestingNames) {
		return nestingNames[n]
	}
	return fmt.Sprintf("NestingType(%d)", uint8(n))
}

// The words of a wait row, as a thread's current slot and the history rings
// store it.
const (
	wThreadID   = iota // THREAD_ID
	wEventID           // EVENT_ID
	wEndEventID        // END_EVENT_ID+1; 0 while in progress
	wClass             // class index+1; 0: empty slot
	wTimerStart        // TIMER_START, ps; 0: untimed
	wTimerEnd          // TIMER_END, ps
	wInstance          // OBJECT_INSTANCE_BEGIN
	wName              // interned OBJECT_NAME
	wNestingID         // NESTING_EVENT_ID
	wMisc              // operation | nesting type<<8 | has bytes<<16 | timer<<24
	wBytes             // NUMBER_OF_BYTES
	wSource            // interned SOURCE
	waitWidth
)

const (
	miscHasBytes = 1 << 16
	miscTimer    = 24
)

// waitSlot is one level of a thread's current-wait stack: a row of owned
// cells, written in the thread's write sections and read with the seqlock
// protocol on the thread's guard word (see threadCore.guard).
type waitSlot struct {
	cells [waitWidth]owned.Uint64
}

// WaitState is what an event carries from BeginWait to EndWait, on the
// caller's stack (MySQL's PSI_*_locker_state). Its zero value is ready.
type WaitState struct {
	s      *Schema
	t      *Thread     // nil: no per-thread statistics or events
	own    *ownedStat  // the instance's statistics, if its writers are serialized
	shared *sharedStat // or, if they are not
	io     *ioInstance // file and socket instances: bytes and READ/WRITE/MISC
	class  int
	flags  uint8
	timer  hwclock.Timer
	op     Operation
	level  int8
	grp    uint8 // the instance's truncation group (see table_summary.go)
	start  uint64
	id     uint64 // EVENT_ID, when wsEvent
}

// WaitState flags: what the event's start decided.
const (
	wsTimed uint8 = 1 << iota
	wsEvent
	wsHistory
	wsHistoryLong
)

// beginWait is the part of BeginWait common to every wait. It returns false
// if the class is off; the caller then runs the operation uninstrumented.
//
// objTimed is setup_objects' TIMED for the object (true where it does not
// apply); tc the setup_timers row whose timer the event uses.
func (s *Schema) beginWait(w *WaitState, c *Class, t *Thread, op Operation, inst, name, source uint64, objTimed bool, tc hwclock.EventClass) bool {
	f := c.flags.Load()
	if f&flagOn == 0 {
		return false
	}
	w.s, w.class, w.op, w.flags, w.t = s, c.index, op, 0, nil
	w.own, w.shared, w.io, w.start = nil, nil, nil, 0
	if f&flagSetTimed != 0 && objTimed {
		w.flags = wsTimed
		w.timer = s.timers.Timer(tc)
		w.start = w.timer.Now()
	}
	if t == nil || t.ended.Load() || t.s != s { // an ended thread's handle, or another schema's thread, is no thread
		return true
	}
	cons := s.consumers.Load() & t.mask.Load()
	if cons&(1<<ConsumerThreadInstrumentation) == 0 {
		return true
	}
	w.t = t
	if cons&(1<<ConsumerEventsWaitsCurrent) != 0 {
		if cons&(1<<ConsumerEventsWaitsHistory) != 0 && t.history != nil {
			w.flags |= wsHistory
		}
		if cons&(1<<ConsumerEventsWaitsHistoryLong) != 0 && s.waitsLong != nil {
			w.flags |= wsHistoryLong
		}
		t.beginWaitEvent(w, op, inst, name, source)
	}
	return true
}

// beginWaitEvent fills the thread's current row for a new wait, in a write
// section of the thread (see Thread.enter).
func (t *Thread) beginWaitEvent(w *WaitState, op Operation, inst, name, source uint64) {
	g, ok := t.enter()
	if !ok {
		w.flags &^= wsHistory | wsHistoryLong
		w.t = nil // the thread is another goroutine's now, or ended
		return
	}
	level := t.depth
	if level >= waitStackDepth {
		t.leave(g)
		t.s.nestedWaitLost.Add(1)
		w.flags &^= wsHistory | wsHistoryLong
		return
	}
	w.flags |= wsEvent
	w.level = int8(level)
	id := t.eventID
	w.id = id
	t.eventID++
	var nestID uint64
	var nestType NestingType
	if level > 0 {
		nestID, nestType = t.waits[level-1].cells[wEventID].Load(), NestingWait
	} else if op != OpIdle { // MySQL nests no idle wait
		nestID, nestType = t.nesting()
	}
	misc := uint64(op) | uint64(nestType)<<8 | uint64(w.timer)<<miscTimer
	c := &t.waits[level].cells
	c[wThreadID].Set(t.id)
	c[wEventID].Set(id)
	c[wEndEventID].Set(0)
	c[wClass].Set(uint64(w.class) + 1)
	c[wTimerStart].Set(w.start) // 0 if untimed
	c[wTimerEnd].Set(0)
	c[wInstance].Set(inst)
	c[wName].Set(name)
	c[wNestingID].Set(nestID)
	c[wMisc].Set(misc)
	c[wBytes].Set(0)
	c[wSource].Set(source)
	t.depth = level + 1
	t.depthCell.Set(uint64(level + 1))
	t.leave(g)
}

// EndWait ends the event BeginWait started. bytes is NUMBER_OF_BYTES, or
// negative for an operation that moves none.
func (w *WaitState) EndWait(bytes int64) {
	var end, wait uint64
	timed := w.flags&wsTimed != 0
	if timed {
		end = w.timer.Now()
		wait = end - w.start
	}
	if w.own != nil || w.io != nil || w.shared != nil {
		e := w.s.epochOf(w.grp)
		switch {
		case w.own != nil:
			w.own.aggregate(e, timed, wait)
		case w.io != nil:
			w.io.aggregate(e, w.op, timed, wait, bytes)
		default:
			w.shared.aggregate(e, timed, wait)
		}
	}
	if t := w.t; t != nil {
		t.endWait(w, timed, wait, end, bytes)
	}
}

// endWait adds the wait to the thread's statistics and closes its current
// row, in a write section of the thread.
func (t *Thread) endWait(w *WaitState, timed bool, wait, end uint64, bytes int64) {
	g, ok := t.enter()
	if !ok {
		return
	}
	t.stat(w.class).aggregate(t.s.epochOf(truncThreads), timed, wait)
	if w.flags&wsEvent != 0 {
		t.endWaitEvent(w, end, bytes)
	}
	t.leave(g)
}

// endWaitEvent closes the thread's current row and copies it to history.
// A row that is no longer the event's (a misuse of the thread by two
// goroutines reused its level) is left alone.
func (t *Thread) endWaitEvent(w *WaitState, end uint64, bytes int64) {
	c := &t.waits[w.level].cells
	if c[wEventID].Load() != w.id {
		t.s.threadEventsLost.Add(1)
		return
	}
	c[wEndEventID].Set(t.eventID) // END_EVENT_ID is the last event id so far: eventID-1, stored +1
	c[wTimerEnd].Set(end)
	if bytes >= 0 {
		c[wBytes].Set(uint64(bytes))
		c[wMisc].Set(c[wMisc].Load() | miscHasBytes)
	}
	if d := int(w.level); d == t.depth-1 {
		// The innermost wait ended: pop it, and any below it that ended
		// out of order (only a Thread misused by two goroutines ends an
		// outer wait before an inner one).
		for d > 0 && t.waits[d-1].cells[wEndEventID].Load() != 0 {
			d--
		}
		t.depth = d
		t.depthCell.Set(uint64(d))
	}
	if w.flags&(wsHistory|wsHistoryLong) != 0 || t.capture != nil {
		// Whole-row appends straight from the row's cells, which are this
		// thread's: rings.Append is about twice as fast as filling a slot
		// word by word, and the view saves a copy on the stack.
		row := owned.OwnView(c[:])
		if w.flags&wsHistory != 0 {
			t.history.Append(row)
		}
		if w.flags&wsHistoryLong != 0 {
			t.s.waitsLong.Append(row)
		}
		if t.capture != nil {
			t.capture.addWait(row)
		}
	}
}

// aggregate counts an I/O wait in READ, WRITE or MISC.
func (io *ioInstance) aggregate(tag epoch, op Operation, timed bool, wait uint64, bytes int64) {
	switch op.ioKind() {
	case ioRead:
		io.read.aggregate(tag, timed, wait)
		if bytes > 0 {
			io.readBytes.Add(uint64(bytes))
		}
	case ioWrite:
		io.write.aggregate(tag, timed, wait)
		if bytes > 0 {
			io.writeBytes.Add(uint64(bytes))
		}
	default:
		io.misc.aggregate(tag, timed, wait)
	}
}
