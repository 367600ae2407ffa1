package pfscore

import (
	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
)

// Stage events: the phases a thread goes through (stage/<component>/<name>:
// "parsing request", "waiting for the pool", "writing response"), and the
// rows of events_stages_current, events_stages_history and
// events_stages_history_long.
//
// A thread is in at most one stage at a time, as in MySQL: StartStage ends
// the stage in progress, if any, and begins the next; EndStage ends it; End
// of the thread ends it too. A stage's time adds to the thread's statistics
// of its class, which the events_stages_summary_* family reads. Waits that
// begin while a stage is in progress nest in it (NESTING_EVENT_TYPE STAGE).
//
// Every write is a section of the thread's storage (Thread.enter), like the
// wait path's, so a stale or shared Thread never tears a stage row; the
// current row is read with the seqlock protocol on the guard word.

// The words of a stage row, as a thread's current slot and the history
// rings store it.
const (
	sThreadID   = iota // THREAD_ID
	sEventID           // EVENT_ID
	sEndEventID        // END_EVENT_ID+1; 0 while in progress
	sClass             // class index+1; 0: empty slot
	sTimerStart        // TIMER_START, ps; 0: untimed
	sTimerEnd          // TIMER_END, ps
	sCompleted         // WORK_COMPLETED+1; 0: NULL
	sEstimated         // WORK_ESTIMATED+1; 0: NULL
	sSource            // interned SOURCE
	sMisc              // timer<<miscTimer | nesting type<<8
	sNestingID         // NESTING_EVENT_ID; 0: NULL
	stageWidth
)

// stageState is the thread's stage in progress, its owner's (written in
// write sections only).
type stageState struct {
	nest    uint64 // the EVENT_ID waits nest in: id while a stage with a current row is in progress, else 0
	on      bool   // a stage is in progress
	class   int
	id      uint64 // its EVENT_ID
	timer   hwclock.Timer
	timed   bool
	event   bool // it has a current row
	history bool // its row goes to events_stages_history when it ends
	long    bool // and to events_stages_history_long
	start   uint64
	// stmtDepth is the thread's statement depth when the stage began: the
	// stage ends with the statement it began in (see endStatement).
	stmtDepth int
}

// stageSlot is the thread's current (or last) stage row, with a sequence
// word of its own: the guard word's sequence moves with every wait, and a
// stage row read through it would drop out of events_stages_current while
// its thread waits. The guard still admits one writer at a time; seq only
// tells readers the row is being written.
type stageSlot struct {
	seq   owned.Seq
	cells [stageWidth]owned.Uint64
}

// StartStage begins a stage of class c (a stage/<component>/<name> class) on
// thread t, ending the stage in progress first. source is the row's SOURCE
// (where the stage's class was declared, say); c not a stage class, or off,
// ends the stage in progress and begins none. Safe only from the goroutine
// that drives t (see Thread).
func (t *Thread) StartStage(c *Class, source string) {
	if t == nil || t.ended.Load() {
		return
	}
	var src uint64
	if c != nil && t.s.owns(c) { // the cache holds ids of c's schema only
		src = t.s.classSource(c, source)
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	var rd reading // one reading ends the old stage and begins the new, as in MySQL
	t.endStage(&rd)
	t.beginStage(c, src, &rd)
	t.leave(g)
}

// A reading is a clock reading shared by events that end or begin at one
// moment (a stage ending where the next begins, a stage ending with its
// statement): the first that needs the time on a timer reads it, and the
// others with the same timer take it.
type reading struct {
	timer hwclock.Timer
	now   uint64
	ok    bool
}

// at returns the time on timer, reading it unless the reading has it.
func (rd *reading) at(timer hwclock.Timer) uint64 {
	if !rd.ok || rd.timer != timer {
		rd.timer, rd.now, rd.ok = timer, timer.Now(), true
	}
	return rd.now
}

// internedSource is a SOURCE string and its id in the schema's names.
type internedSource struct {
	s  string
	id uint64
}

// classSource returns the id of source in s's names ("" is 0) through c's
// cache of the last SOURCE its events were given: a class is begun from the
// same place again and again, and the cache's hit costs a load and a string
// comparison where the names table's costs a sync.Map lookup. c must be
// s's. A SOURCE the full names table refused is cached as 0 too, so it is
// counted lost once per change of SOURCE, not once per event.
func (s *Schema) classSource(c *Class, source string) uint64 {
	if source == "" {
		return 0
	}
	if e := c.source.Load(); e != nil && e.s == source {
		return e.id
	}
	id := s.names.Intern(source)
	c.source.Store(&internedSource{source, id})
	return id
}

// EndStage ends the stage in progress on t, if any.
func (t *Thread) EndStage() {
	if t == nil || t.ended.Load() {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	t.endStage(new(reading))
	t.leave(g)
}

// Settle ends the stage in progress on t, if any, and reports whether t is
// now between events: no wait, statement or transaction in progress. A
// thread that serves one task after another (a pooled request thread, see
// pfshttp.WithThreadPool) settles between tasks, and only a settled thread
// takes its next: an event a task left in progress would otherwise be
// counted in the next task's. Called by the goroutine driving t; false for
// a nil or ended thread, or when another goroutine is writing t's storage
// (a misuse, see Thread).
func (t *Thread) Settle() bool {
	_, settled := t.SettleMark()
	return settled
}

// SettleMark is Settle that also returns a mark of the thread as Settle
// left it, for Settled.
func (t *Thread) SettleMark() (mark uint64, settled bool) {
	if t == nil || t.ended.Load() {
		return 0, false
	}
	g, ok := t.tryEnter(guardBusy) // a refusal loses no event: none is counted
	if !ok {
		return 0, false
	}
	t.endStage(new(reading))
	settled = t.depth == 0 && t.stmtDepth == 0 && !t.trx.on
	t.leave(g)
	return left(g), settled
}

// Settled reports whether t is still as the SettleMark that returned mark
// left it: not ended, and no write section has run on it since (none
// began or ended an event: every change of a thread's events is made in
// one, and each one's leave moves the guard's sequence). If that
// SettleMark reported t settled, t is then still settled, and the goroutine
// taking t up again (a pool's next request) need not Settle it again: one
// atomic load instead of a section. false says only that something may
// have happened: Settle tells what.
func (t *Thread) Settled(mark uint64) bool {
	return t != nil && !t.ended.Load() && t.guard.Load() == mark
}

// SetStageProgress sets WORK_COMPLETED and WORK_ESTIMATED of the stage in
// progress, if it has a current row. MySQL shows them for stage classes with
// the progress property; otelpfs, for any stage that sets them.
func (t *Thread) SetStageProgress(completed, estimated uint64) {
	if t == nil || t.ended.Load() {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	if st := &t.stage; st.on && st.event {
		t.stageRow.seq.BeginWrite()
		t.stageRow.cells[sCompleted].Set(completed + 1)
		t.stageRow.cells[sEstimated].Set(estimated + 1)
		t.stageRow.seq.EndWrite()
	}
	t.leave(g)
}

// beginStage starts a stage of class c, in a write section, at rd's time if
// it is on the stage's timer.
func (t *Thread) beginStage(c *Class, src uint64, rd *reading) {
	if c == nil || c.kind != KindStage || !t.s.owns(c) {
		return
	}
	f := c.flags.Load()
	if f&flagOn == 0 {
		return
	}
	s := t.s
	cons := s.consumers.Load() & t.mask.Load()
	if cons&(1<<ConsumerThreadInstrumentation) == 0 {
		return
	}
	st := &t.stage
	*st = stageState{on: true, class: c.index, stmtDepth: t.stmtDepth}
	if f&flagSetTimed != 0 {
		st.timed = true
		st.timer = s.timers.Timer(hwclock.ClassStage)
		st.start = rd.at(st.timer)
	}
	if cons&(1<<ConsumerEventsStagesCurrent) == 0 {
		return
	}
	st.event = true
	st.history = cons&(1<<ConsumerEventsStagesHistory) != 0 && t.stageHistory != nil
	st.long = cons&(1<<ConsumerEventsStagesHistoryLong) != 0 && s.stagesLong != nil
	st.id = t.eventID
	st.nest = st.id
	t.eventID++
	t.stageRow.seq.BeginWrite()
	c2 := &t.stageRow.cells
	c2[sThreadID].Set(t.id)
	c2[sEventID].Set(st.id)
	c2[sEndEventID].Set(0)
	c2[sClass].Set(uint64(c.index) + 1)
	c2[sTimerStart].Set(st.start) // 0 if untimed
	c2[sTimerEnd].Set(0)
	c2[sCompleted].Set(0)
	c2[sEstimated].Set(0)
	c2[sSource].Set(src)
	misc := uint64(st.timer) << miscTimer
	if t.stmtNest != 0 { // a stage nests in the statement it is a phase of
		misc |= uint64(NestingStatement) << 8
	}
	c2[sMisc].Set(misc)
	c2[sNestingID].Set(t.stmtNest)
	t.stageRow.seq.EndWrite()
}

// endStage ends the stage in progress, if any, in a write section: its time
// to the thread's statistics, its row closed and copied to history. It ends
// at rd's time if rd is on the stage's timer.
func (t *Thread) endStage(rd *reading) {
	st := &t.stage
	if !st.on {
		return
	}
	st.on, st.nest = false, 0
	var end, wait uint64
	if st.timed {
		end = rd.at(st.timer)
		if int64(end-st.start) < 0 { // a statement EndAt ended before the stage began
			end = st.timer.Now()
		}
		wait = end - st.start
	}
	t.stat(st.class).aggregate(t.s.epochOf(truncThreads), st.timed, wait)
	if !st.event {
		return
	}
	c := &t.stageRow.cells
	t.stageRow.seq.BeginWrite()
	c[sEndEventID].Set(t.eventID) // the last EVENT_ID so far, stored +1
	c[sTimerEnd].Set(end)
	// The row's sequence stays odd until the history rows exist: a reader
	// sees the stage in progress or finds it in history, never neither
	// (bridge.History counts an event seen in neither as lost).
	if st.history || st.long || t.capture != nil {
		row := owned.OwnView(c[:]) // the row is this thread's: no copy
		if st.history {
			t.stageHistory.Append(row)
		}
		if st.long {
			t.s.stagesLong.Append(row)
		}
		if t.capture != nil {
			t.capture.addStage(row)
		}
	}
	t.stageRow.seq.EndWrite()
}

// copyStage copies the thread's current stage row with the seqlock protocol
// on the row's own sequence (see stageSlot); it reports false if it got no
// stable copy, the row being rewritten all along.
func (c *threadCore) copyStage(dst *[stageWidth]uint64) bool {
	for i := 0; copyRetry(i); i++ {
		v := c.stageRow.seq.Load()
		if v&1 != 0 {
			continue
		}
		for i := range c.stageRow.cells {
			dst[i] = c.stageRow.cells[i].Load()
		}
		if c.stageRow.seq.Load() == v {
			return true
		}
	}
	return false
}

// StageEvent is a row of the events_stages_* tables.
type StageEvent struct {
	ThreadID         uint64      `pfs:"THREAD_ID,id"`
	EventID          uint64      `pfs:"EVENT_ID,id"`
	EndEventID       uint64      `pfs:"END_EVENT_ID,id,valid=!InProgress"`
	EventName        string      `pfs:"EVENT_NAME,dim"`
	Source           string      `pfs:"SOURCE,text,null"`
	TimerStart       uint64      `pfs:"TIMER_START,time,valid=Timed"`
	TimerEnd         uint64      `pfs:"TIMER_END,time,valid=Timed"` // for a stage in progress, now
	TimerWait        uint64      `pfs:"TIMER_WAIT,duration,valid=Timed"`
	WorkCompleted    uint64      `pfs:"WORK_COMPLETED,gauge,valid=HasProgress"`
	WorkEstimated    uint64      `pfs:"WORK_ESTIMATED,gauge,valid=HasProgress"`
	NestingEventID   uint64      `pfs:"NESTING_EVENT_ID,id,null"`
	NestingEventType NestingType `pfs:"NESTING_EVENT_TYPE,attr,null"`

	HasProgress bool // WORK_COMPLETED and WORK_ESTIMATED are not NULL
	InProgress  bool // the stage has not ended: END_EVENT_ID is NULL
	Timed       bool // the stage was timed: the TIMER_* columns are not NULL
}

// decodeStage turns a row's words into a StageEvent; false for an empty
// slot or a class that no longer exists.
func (s *Schema) decodeStage(c []uint64) (StageEvent, bool) {
	classes := s.Classes()
	ci := c[sClass]
	if ci == 0 || ci > uint64(len(classes)) {
		return StageEvent{}, false
	}
	e := StageEvent{
		ThreadID:   c[sThreadID],
		EventID:    c[sEventID],
		EventName:  classes[ci-1].name,
		Source:     s.names.Lookup(c[sSource]),
		TimerStart: c[sTimerStart],

		NestingEventID:   c[sNestingID],
		NestingEventType: NestingType(c[sMisc] >> 8 & 0xff),
	}
	if c[sCompleted] != 0 || c[sEstimated] != 0 {
		e.HasProgress = true
		e.WorkCompleted, e.WorkEstimated = c[sCompleted]-1, c[sEstimated]-1
	}
	if end := c[sEndEventID]; end != 0 {
		e.EndEventID = end - 1
		e.TimerEnd = c[sTimerEnd]
	} else {
		e.InProgress = true
		if tm := hwclock.Timer(c[sMisc] >> miscTimer & 0xff); e.TimerStart != 0 && tm < hwclock.NumTimers {
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

// EventsStagesCurrent returns events_stages_current: each thread's stage in
// progress, or its last stage if none is.
func (s *Schema) EventsStagesCurrent() []StageEvent {
	return s.eventsStagesCurrent(nil)
}

// eventsStagesCurrent is EventsStagesCurrent, adding to unread the threads
// whose row it could not copy (when unread is not nil).
func (s *Schema) eventsStagesCurrent(unread map[uint64]bool) []StageEvent {
	s.beginRead()
	defer s.endRead()
	s.readMu.Lock()
	marks := s.stageMarks
	s.readMu.Unlock()
	var out []StageEvent
	var row [stageWidth]uint64
	for _, t := range s.liveThreads() {
		if !t.copyStage(&row) {
			markUnread(unread, t)
			continue
		}
		if e, ok := s.decodeStage(row[:]); ok && e.EventID > marks[e.ThreadID] {
			out = append(out, e)
		}
	}
	return out
}

// EventsStagesHistory returns events_stages_history: each thread's last
// stages, oldest first.
func (s *Schema) EventsStagesHistory() []StageEvent {
	s.beginRead()
	defer s.endRead()
	var out []StageEvent
	var words []uint64
	for _, t := range s.liveThreads() {
		if t.stageHistory == nil {
			continue
		}
		words = t.stageHistory.AppendRows(words[:0])
		out = s.appendStages(out, words)
	}
	return out
}

// EventsStagesHistoryLong returns events_stages_history_long, oldest first.
func (s *Schema) EventsStagesHistoryLong() []StageEvent {
	if s.stagesLong == nil {
		return nil
	}
	return s.appendStages(nil, s.stagesLong.AppendRows(nil))
}

func (s *Schema) appendStages(out []StageEvent, words []uint64) []StageEvent {
	for i := 0; i+stageWidth <= len(words); i += stageWidth {
		if e, ok := s.decodeStage(words[i : i+stageWidth]); ok {
			out = append(out, e)
		}
	}
	return out
}

// threadsOnly returns, by class index, the statistics of classes that only
// threads carry (stages, idle): the ended threads' totals and the live
// threads'.
func (s *Schema) threadsOnly(m members) []statRow {
	tag := s.extTags[truncThreads].Load()
	s.beginRead()
	defer s.endRead()
	out, live := s.endedAndLive(len(m.classes), tag)
	for _, t := range live {
		addStatsAt(out, *t.stats.Load(), m.idx, tag)
	}
	return out
}

func init() {
	defineRows("events_stages_current", (*Schema).EventsStagesCurrent, func(s *Schema) {
		// Hide every row shown now; each thread's next stage shows again.
		marks := map[uint64]uint64{}
		var row [stageWidth]uint64
		for _, t := range s.liveThreads() {
			if t.copyStage(&row) && row[sClass] != 0 {
				marks[row[sThreadID]] = row[sEventID]
			}
		}
		s.stageMarks = marks
	})
	defineRows("events_stages_history", (*Schema).EventsStagesHistory, func(s *Schema) {
		for _, t := range s.liveThreads() {
			if t.stageHistory != nil {
				t.stageHistory.Reset()
			}
		}
	})
	defineRows("events_stages_history_long", (*Schema).EventsStagesHistoryLong, func(s *Schema) {
		if s.stagesLong != nil {
			s.stagesLong.Reset()
		}
	})
	defineFamily(eventFamily[WaitStats, statRow]{
		prefix: "events_stages_summary",
		member: func(c *Class) bool { return c.kind == KindStage },
		groups: groupsThreads,
		group:  func(*Class) uint8 { return truncThreads },
		global: (*Schema).threadsOnly,
		thread: threadStatRows,
		actor:  actorStatRows,
	})
}
