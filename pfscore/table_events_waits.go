package pfscore

import (
	"sync"

	"github.com/otelpfs/otelpfs/hwclock"
)

// events_waits_current, events_waits_history, events_waits_history_long.

// WaitEvent is a row of the events_waits_* tables. Zero values of the
// nullable columns mean NULL (EndEventID and NestingEventID are never 0
// otherwise). The columns MySQL has and otelpfs never fills (SPINS,
// OBJECT_SCHEMA, INDEX_NAME, FLAGS) are always NULL.
type WaitEvent struct {
	ThreadID            uint64      `pfs:"THREAD_ID,id"`
	EventID             uint64      `pfs:"EVENT_ID,id"`
	EndEventID          uint64      `pfs:"END_EVENT_ID,id,valid=!InProgress"`
	EventName           string      `pfs:"EVENT_NAME,dim"`
	Source              string      `pfs:"SOURCE,text,null"`
	TimerStart          uint64      `pfs:"TIMER_START,time,valid=Timed"`
	TimerEnd            uint64      `pfs:"TIMER_END,time,valid=Timed"` // for an event in progress, now
	TimerWait           uint64      `pfs:"TIMER_WAIT,duration,valid=Timed"`
	_                   struct{}    `pfs:"SPINS,counter,uint"`
	_                   struct{}    `pfs:"OBJECT_SCHEMA,attr,string"`
	ObjectName          string      `pfs:"OBJECT_NAME,text,null"`
	_                   struct{}    `pfs:"INDEX_NAME,attr,string"`
	ObjectType          string      `pfs:"OBJECT_TYPE,attr,null"`
	ObjectInstanceBegin uint64      `pfs:"OBJECT_INSTANCE_BEGIN,id"`
	NestingEventID      uint64      `pfs:"NESTING_EVENT_ID,id,null"`
	NestingEventType    NestingType `pfs:"NESTING_EVENT_TYPE,attr,null"`
	Operation           Operation   `pfs:"OPERATION,attr"`
	NumberOfBytes       int64       `pfs:"NUMBER_OF_BYTES,attr,valid=HasBytes"`
	_                   struct{}    `pfs:"FLAGS,attr,uint"`

	HasBytes   bool // NUMBER_OF_BYTES is not NULL
	InProgress bool // the event has not ended: END_EVENT_ID is NULL
	Timed      bool // the event was timed: the TIMER_* columns are not NULL
}

// decodeWait turns a row's words into a WaitEvent. It returns false for an
// empty slot or a class that no longer exists.
func (s *Schema) decodeWait(c []uint64) (WaitEvent, bool) {
	classes := s.Classes()
	ci := c[wClass]
	if ci == 0 || ci > uint64(len(classes)) {
		return WaitEvent{}, false
	}
	class := classes[ci-1]
	misc := c[wMisc]
	e := WaitEvent{
		ThreadID:            c[wThreadID],
		EventID:             c[wEventID],
		EventName:           class.name,
		Source:              s.names.Lookup(c[wSource]),
		TimerStart:          c[wTimerStart],
		ObjectName:          s.names.Lookup(c[wName]),
		ObjectInstanceBegin: c[wInstance],
		NestingEventID:      c[wNestingID],
		NestingEventType:    NestingType(misc >> 8 & 0xff),
		Operation:           Operation(misc & 0xff),
		HasBytes:            misc&miscHasBytes != 0,
		NumberOfBytes:       int64(c[wBytes]),
	}
	switch class.kind {
	case KindFile:
		e.ObjectType = "FILE"
	case KindSocket:
		e.ObjectType = "SOCKET"
	}
	if end := c[wEndEventID]; end != 0 {
		e.EndEventID = end - 1
		e.TimerEnd = c[wTimerEnd]
	} else {
		e.InProgress = true
		// MySQL shows an event in progress as ending now, read with the
		// event's own timer (recorded in the row; a reader never trusts a
		// row's byte as an index).
		if tm := hwclock.Timer(misc >> miscTimer & 0xff); e.TimerStart != 0 && tm < hwclock.NumTimers {
			e.TimerEnd = inProgressEnd(tm, e.TimerStart)
		}
	}
	if e.TimerStart != 0 {
		e.Timed = true
		e.TimerWait = e.TimerEnd - e.TimerStart
	} else {
		e.TimerEnd = 0
	}
	return e, true
}

// EventsWaitsCurrent returns events_waits_current: for each thread, its
// waits in progress, or its last wait if none is.
func (s *Schema) EventsWaitsCurrent() []WaitEvent {
	return s.eventsWaitsCurrent(nil)
}

// eventsWaitsCurrent is EventsWaitsCurrent, adding to unread the threads
// whose waits it could not copy (when unread is not nil).
func (s *Schema) eventsWaitsCurrent(unread map[uint64]bool) []WaitEvent {
	s.beginRead()
	defer s.endRead()
	s.readMu.Lock()
	marks := s.curMarks
	s.readMu.Unlock()
	var out []WaitEvent
	var stack [waitStackDepth][waitWidth]uint64
	for _, t := range s.liveThreads() {
		n, ok := t.copyWaits(&stack)
		if !ok {
			markUnread(unread, t)
			continue
		}
		for level := range n {
			e, ok := s.decodeWait(stack[level][:])
			if !ok || e.EventID <= marks[e.ThreadID] {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// copyWaits copies the thread's current-wait stack into dst with the
// seqlock protocol on the guard word (see threadCore.guard): its waits in
// progress, or its last wait if none is. It retries while the owner writes,
// and reports false if it got no stable copy; n is the number of rows
// copied, some of which may be empty (no event yet).
func (c *threadCore) copyWaits(dst *[waitStackDepth][waitWidth]uint64) (n int, ok bool) {
	for i := 0; copyRetry(i); i++ {
		g := c.guard.Load()
		if g&guardBusy != 0 {
			continue
		}
		n = min(max(int(c.depthCell.Load()), 1), waitStackDepth)
		for level := range n {
			cells := &c.waits[level].cells
			for i := range cells {
				dst[level][i] = cells[i].Load()
			}
		}
		if c.guard.Load() == g {
			return n, true
		}
	}
	return 0, false
}

// EventsWaitsHistory returns events_waits_history: each thread's last waits,
// oldest first.
func (s *Schema) EventsWaitsHistory() []WaitEvent {
	s.beginRead()
	defer s.endRead()
	var out []WaitEvent
	var words []uint64
	for _, t := range s.liveThreads() {
		if t.history == nil {
			continue
		}
		words = t.history.AppendRows(words[:0])
		out = s.appendDecoded(out, words)
	}
	return out
}

// EventsWaitsHistoryLong returns events_waits_history_long, oldest first.
func (s *Schema) EventsWaitsHistoryLong() []WaitEvent {
	if s.waitsLong == nil {
		return nil
	}
	return s.appendDecoded(nil, s.waitsLong.AppendRows(nil))
}

func (s *Schema) appendDecoded(out []WaitEvent, words []uint64) []WaitEvent {
	for i := 0; i+waitWidth <= len(words); i += waitWidth {
		if e, ok := s.decodeWait(words[i : i+waitWidth]); ok {
			out = append(out, e)
		}
	}
	return out
}

func init() {
	defineRows("events_waits_current", (*Schema).EventsWaitsCurrent, func(s *Schema) {
		// Hide every row shown now; each thread's next wait shows again.
		marks := map[uint64]uint64{}
		var stack [waitStackDepth][waitWidth]uint64
		for _, t := range s.liveThreads() {
			n, ok := t.copyWaits(&stack)
			for level := range n {
				if row := &stack[level]; ok && row[wClass] != 0 {
					id := row[wThreadID]
					marks[id] = max(marks[id], row[wEventID])
				}
			}
		}
		s.curMarks = marks
	})
	defineRows("events_waits_history", (*Schema).EventsWaitsHistory, func(s *Schema) {
		for _, t := range s.liveThreads() {
			if t.history != nil {
				t.history.Reset()
			}
		}
	})
	defineRows("events_waits_history_long", (*Schema).EventsWaitsHistoryLong, func(s *Schema) {
		if s.waitsLong != nil {
			s.waitsLong.Reset()
		}
	})
}

// inProgressEnd is TIMER_END for an event in progress: now, read with the
// event's timer, and never before TIMER_START. RDTSC is not serialized
// (hwclock/cycles_amd64.go), so the reader's read of the counter may execute
// before its load of TIMER_START completes; when the writer's store of the
// start was a cache miss away, the reading can come out tens of nanoseconds
// earlier than the writer's (CI saw 57 ns), and TIMER_WAIT would wrap.
func inProgressEnd(tm hwclock.Timer, start uint64) uint64 {
	if now := tm.Now(); now > start {
		return now
	}
	return start
}

// wordsPool holds the buffers EventsWaitsHistoryLongNested copies a ring
// into: a reader that calls it every few milliseconds would otherwise
// allocate and clear the whole ring's words (about 1 MB at 10,000 rows)
// each time. Nothing the read returns points into one.
var wordsPool = sync.Pool{New: func() any { return new([]uint64) }}

// EventsWaitsHistoryLongNested reads events_waits_history_long as
// EventsWaitsHistoryLong does, oldest first, but decodes only the rows
// that nest in another event, or are in progress: it appends those to
// rows, and to outer, undecoded, the keys of the others, ended waits
// outside any event (NESTING_EVENT_ID NULL). A reader that builds trees of
// events (the bridge's History) needs such a wait's key alone, and a
// service's waits are mostly such waits: decoding them is most of a read.
func (s *Schema) EventsWaitsHistoryLongNested(rows []WaitEvent, outer []EventKey) ([]WaitEvent, []EventKey) {
	if s.waitsLong == nil {
		return rows, outer
	}
	buf := wordsPool.Get().(*[]uint64)
	defer func() { wordsPool.Put(buf) }()
	words := s.waitsLong.AppendRows((*buf)[:0])
	*buf = words           // grown, kept for the next read
	classes := s.Classes() // only grows: a class found here, decodeWait finds
	for i := 0; i+waitWidth <= len(words); i += waitWidth {
		c := words[i : i+waitWidth]
		if ci := c[wClass]; ci != 0 && ci <= uint64(len(classes)) && c[wNestingID] == 0 && c[wEndEventID] != 0 {
			outer = append(outer, EventKey{c[wThreadID], c[wEventID]})
			continue
		}
		if e, ok := s.decodeWait(c); ok {
			rows = append(rows, e)
		}
	}
	return rows, outer
}
