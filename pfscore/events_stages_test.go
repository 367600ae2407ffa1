package pfscore

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// stageFixture is a schema with the stage consumers on, two stage classes,
// a mutex and a thread class.
type stageFixture struct {
	*fixture
	parse, write *Class
}

func newStageFixture(t testing.TB, opts ...Option) *stageFixture {
	f := newFixture(t, append([]Option{WithConsumer(ConsumerEventsStagesCurrent, true),
		WithConsumer(ConsumerEventsStagesHistory, true), WithConsumer(ConsumerEventsStagesHistoryLong, true)}, opts...)...)
	return &stageFixture{fixture: f,
		parse: f.s.MustRegister("stage/test/parsing", WithDefault(true, true)),
		write: f.s.MustRegister("stage/test/writing", WithDefault(true, true))}
}

func TestStageEvents(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()

	th.StartStage(f.parse, "handler.go:10")
	waitOnce(f.m, th) // nests in the stage
	th.SetStageProgress(3, 10)
	cur := f.s.EventsStagesCurrent()
	if len(cur) != 1 || !cur[0].InProgress || cur[0].EventName != f.parse.Name() || !cur[0].HasProgress ||
		cur[0].WorkCompleted != 3 || cur[0].WorkEstimated != 10 || cur[0].Source != "handler.go:10" || !cur[0].Timed {
		t.Fatalf("events_stages_current during the stage: %+v", cur)
	}
	parseID := cur[0].EventID
	waits := f.s.EventsWaitsCurrent()
	if len(waits) != 1 || waits[0].NestingEventID != parseID || waits[0].NestingEventType != NestingStage {
		t.Errorf("the wait does not nest in the stage %d: %+v", parseID, waits)
	}

	th.StartStage(f.write, "handler.go:20") // ends parsing
	th.EndStage()
	th.EndStage() // nothing in progress: nothing happens

	hist := f.s.EventsStagesHistory()
	if len(hist) != 2 || hist[0].EventName != f.parse.Name() || hist[1].EventName != f.write.Name() ||
		hist[0].InProgress || hist[1].InProgress || hist[0].EndEventID < hist[0].EventID ||
		hist[0].TimerEnd < hist[0].TimerStart || hist[0].TimerWait != hist[0].TimerEnd-hist[0].TimerStart ||
		hist[1].HasProgress || !hist[0].HasProgress {
		t.Errorf("events_stages_history: %+v", hist)
	}
	if long := f.s.EventsStagesHistoryLong(); len(long) != 2 {
		t.Errorf("events_stages_history_long: %+v", long)
	}
	if cur := f.s.EventsStagesCurrent(); len(cur) != 1 || cur[0].EventName != f.write.Name() || cur[0].InProgress {
		t.Errorf("events_stages_current after the stages: %+v", cur)
	}
	// A wait after the stages nests in nothing.
	waitOnce(f.m, th)
	if w := f.s.EventsWaitsCurrent(); len(w) != 1 || w[0].NestingEventID != 0 {
		t.Errorf("a wait outside any stage: %+v", w)
	}

	for table, where := range map[string]map[string]Value{
		"events_stages_summary_global_by_event_name":     {"EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_thread_by_event_name":  {"THREAD_ID": th.ID(), "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_account_by_event_name": {"USER": "alice", "HOST": "web1", "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_user_by_event_name":    {"USER": "alice", "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_host_by_event_name":    {"HOST": "web1", "EVENT_NAME": f.parse.Name()},
	} {
		if n := count(t, f.s, table, where); n != 1 {
			t.Errorf("%s: COUNT_STAR %d, want 1", table, n)
		}
	}
	// Only stage classes are listed in the stage summaries.
	if rows := findRows(t, f.s, "events_stages_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.mutex.Name()}); len(rows) != 0 {
		t.Errorf("a mutex class in the stage summary: %v", rows)
	}
}

// TestStageSwitchedOff: a disabled class begins no stage (and ends the one in
// progress); without the current consumer a stage still counts in the
// summaries but has no row.
func TestStageSwitchedOff(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	off := false
	if _, err := f.s.UpdateInstruments(f.write.Name(), &off, nil); err != nil {
		t.Fatal(err)
	}
	th.StartStage(f.write, "") // ends parsing, begins nothing
	if cur := f.s.EventsStagesCurrent(); len(cur) != 1 || cur[0].EventName != f.parse.Name() || cur[0].InProgress {
		t.Errorf("after a disabled stage: %+v", cur)
	}
	th.StartStage(f.mutex, "") // not a stage class: the same
	f.s.SetConsumer(ConsumerEventsStagesCurrent, false)
	th.StartStage(f.parse, "")
	th.EndStage()
	if n := count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.parse.Name()}); n != 2 {
		t.Errorf("parsing counted %d times, want 2", n)
	}
	if h := f.s.EventsStagesHistory(); len(h) != 1 {
		t.Errorf("history with the current consumer off: %+v", h)
	}
	// A nil or ended thread is no thread.
	var nilThread *Thread
	nilThread.StartStage(f.parse, "")
	nilThread.SetStageProgress(1, 2)
	nilThread.EndStage()
}

// TestStageEndsWithThread: a stage in progress when its thread ends counts,
// and its row is gone with the thread.
func TestStageEndsWithThread(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	th.StartStage(f.parse, "")
	th.End()
	for table, where := range map[string]map[string]Value{
		"events_stages_summary_by_account_by_event_name": {"USER": "u", "HOST": "h", "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_user_by_event_name":    {"USER": "u", "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_by_host_by_event_name":    {"HOST": "h", "EVENT_NAME": f.parse.Name()},
		"events_stages_summary_global_by_event_name":     {"EVENT_NAME": f.parse.Name()},
	} {
		if n := count(t, f.s, table, where); n != 1 {
			t.Errorf("%s after the thread ended: %d, want 1", table, n)
		}
	}
	if cur := f.s.EventsStagesCurrent(); len(cur) != 0 {
		t.Errorf("an ended thread's stage row: %+v", cur)
	}
	// Its storage, reused, starts with no stage.
	th2 := f.s.NewThread(f.thread, ThreadOptions{})
	defer th2.End()
	th2.EndStage()
	if h := f.s.EventsStagesHistory(); len(h) != 0 {
		t.Errorf("history of the new thread: %+v", h)
	}
}

func TestStagesTruncate(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	th.EndStage()
	for _, table := range []string{"events_stages_current", "events_stages_history", "events_stages_history_long"} {
		if err := f.s.Truncate(table); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.s.EventsStagesCurrent())+len(f.s.EventsStagesHistory())+len(f.s.EventsStagesHistoryLong()) != 0 {
		t.Error("rows after TRUNCATE")
	}
	if err := f.s.Truncate("events_stages_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.parse.Name()}); n != 0 {
		t.Errorf("by_thread after TRUNCATE of the global summary: %d", n)
	}
	th.StartStage(f.parse, "")
	if cur := f.s.EventsStagesCurrent(); len(cur) != 1 || !cur[0].InProgress {
		t.Errorf("the next stage shows again: %+v", cur)
	}
}

// TestStageRowsNotTornConcurrentSafe: one goroutine drives a thread through
// stages whose progress satisfies WORK_ESTIMATED = 2*WORK_COMPLETED + 1 and
// WORK_COMPLETED = EVENT_ID; readers check every row they get. Then two
// goroutines misuse the same Thread, with progress of another range that
// keeps the first relation: no row may mix two writes.
func TestStageRowsNotTornConcurrentSafe(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	n := 300000
	if testing.Short() {
		n = 30000
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	const misused = 1 << 40
	check := func(e StageEvent) {
		if e.HasProgress && (e.WorkEstimated != 2*e.WorkCompleted+1 || e.WorkCompleted < misused && e.WorkCompleted != e.EventID) {
			t.Errorf("torn stage row: %+v", e)
			stop.Store(true)
		}
	}
	wg.Add(2)
	go func() { // the tables, now and then
		defer wg.Done()
		for !stop.Load() {
			for _, e := range f.s.EventsStagesCurrent() {
				check(e)
			}
			for _, e := range f.s.EventsStagesHistory() {
				check(e)
			}
		}
	}()
	go func() { // the current row as fast as it can be copied
		defer wg.Done()
		var row [stageWidth]uint64
		for !stop.Load() {
			if th.copyStage(&row) {
				if e, ok := f.s.decodeStage(row[:]); ok {
					check(e)
				}
			}
		}
	}()
	drive := func(n int, owner bool) {
		for i := 0; i < n && !stop.Load(); i++ {
			c := f.parse
			if i%2 == 1 {
				c = f.write
			}
			th.StartStage(c, "")
			if !owner {
				k := uint64(misused + i)
				th.SetStageProgress(k, 2*k+1)
			} else if cur := th.stage; cur.on && cur.event { // the owner's own state
				th.SetStageProgress(cur.id, 2*cur.id+1)
			}
		}
	}
	drive(n, true)
	// A misuse: two goroutines on the Thread. Progress is then set from a
	// stale idea of the current stage, so rows may show no progress or
	// another stage's, but never a mix of two writes.
	var misuse sync.WaitGroup
	for range 2 {
		misuse.Add(1)
		go func() { defer misuse.Done(); drive(n/4, false) }()
	}
	misuse.Wait()
	stop.Store(true)
	wg.Wait()
}

// TestOtherSchemasThread: a thread of another schema is no thread to this
// schema's instruments: its class indexes mean other classes there.
func TestOtherSchemasThread(t *testing.T) {
	a := newStageFixture(t)
	b := newStageFixture(t)
	tb := b.s.NewThread(b.thread, ThreadOptions{})
	defer tb.End()
	waitOnce(a.m, tb)          // a's mutex, b's thread
	tb.StartStage(a.parse, "") // a's stage class, b's thread
	tb.EndStage()
	if n := count(t, a.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": a.mutex.Name()}); n != 1 {
		t.Errorf("a's mutex counted %d waits, want 1", n)
	}
	res, err := b.s.Query("events_waits_summary_by_thread_by_event_name", Query{Where: []string{"COUNT_STAR > 0"}})
	if err != nil || len(res.Rows) != 0 {
		t.Errorf("b's thread shows a's wait: %v %v", res.Rows, err)
	}
	if h := b.s.EventsStagesHistory(); len(h) != 0 {
		t.Errorf("b's thread shows a's stage: %+v", h)
	}
}

func TestHistorySizeBounded(t *testing.T) {
	s, err := New(WithoutEnvironment(), WithWaitsHistorySize(1<<20), WithStagesHistorySize(5000))
	if err == nil {
		t.Fatal("a history of 2^20 rows per thread accepted")
	}
	if s.cfg.waitsHistorySize != maxHistoryPerThread || s.cfg.stagesHistory != maxHistoryPerThread {
		t.Errorf("sizes %d, %d; want both bounded to %d", s.cfg.waitsHistorySize, s.cfg.stagesHistory, maxHistoryPerThread)
	}
}

// TestStageSourceCache: a class caches its last SOURCE's id; another source,
// or the class's use from another schema's thread, never shows a wrong one.
func TestStageSourceCache(t *testing.T) {
	a := newStageFixture(t)
	b := newStageFixture(t)
	tb := b.s.NewThread(b.thread, ThreadOptions{})
	defer tb.End()
	tb.StartStage(a.parse, "other.go:1") // refused: must not fill a's cache with b's ids
	ta := a.s.NewThread(a.thread, ThreadOptions{})
	defer ta.End()
	for _, src := range []string{"one.go:1", "one.go:1", "two.go:2", "one.go:1"} {
		ta.StartStage(a.parse, src)
	}
	ta.EndStage()
	h := a.s.EventsStagesHistory()
	var got []string
	for _, e := range h {
		got = append(got, e.Source)
	}
	if want := []string{"one.go:1", "one.go:1", "two.go:2", "one.go:1"}; !slices.Equal(got, want) {
		t.Errorf("sources %q, want %q", got, want)
	}
}

// One reading ends a stage and begins the next, as in MySQL; a stage that
// ends with its statement ends at the statement's end; and a statement
// ended (EndAt) before its stage began does not give the stage a negative
// time.
func TestStageSharedReadings(t *testing.T) {
	f := newStageFixture(t, WithConsumer(ConsumerEventsStatementsCurrent, true))
	req := f.s.MustRegister("statement/http/request", WithDefault(true, true))
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()
	th.StartStage(f.parse, "")
	th.StartStage(f.write, "")
	th.EndStage()
	h := f.s.EventsStagesHistory()
	if len(h) != 2 || h[0].TimerEnd != h[1].TimerStart || h[0].TimerWait == 0 && h[1].TimerWait == 0 {
		t.Errorf("stage switch: %+v; want the first's TIMER_END to be the second's TIMER_START", h)
	}
	st := f.s.StartStatement(th, req, StatementInfo{Text: "GET /"})
	th.StartStage(f.parse, "")
	st.End(StatementResult{})
	var stmtEnd uint64
	for _, e := range f.s.EventsStatementsCurrent() {
		stmtEnd = e.TimerEnd
	}
	h = f.s.EventsStagesHistory()
	if last := h[len(h)-1]; last.InProgress || last.TimerEnd != stmtEnd || stmtEnd == 0 {
		t.Errorf("the stage that ended with its statement: %+v, the statement's TIMER_END %d", last, stmtEnd)
	}
	st = f.s.StartStatement(th, req, StatementInfo{Text: "GET /"})
	start := st.Start()
	th.StartStage(f.write, "")
	st.EndAt(start, StatementResult{}) // before the stage began
	h = f.s.EventsStagesHistory()
	if last := h[len(h)-1]; last.TimerEnd < last.TimerStart || last.TimerWait > 1<<62 {
		t.Errorf("a stage whose statement EndAt ended before it began: %+v", last)
	}
}

// Settle ends the stage in progress and reports whether the thread has no
// wait, statement or transaction in progress.
func TestSettle(t *testing.T) {
	f := newStageFixture(t)
	req := f.s.MustRegister("statement/http/request", WithDefault(true, true))
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	th.StartStage(f.parse, "")
	if !th.Settle() {
		t.Error("a thread with a stage in progress did not settle")
	}
	if cur := f.s.EventsStagesCurrent(); len(cur) != 1 || cur[0].InProgress {
		t.Errorf("the stage after Settle: %+v", cur)
	}
	st := f.s.StartStatement(th, req, StatementInfo{Text: "GET /"})
	if th.Settle() {
		t.Error("a thread with a statement in progress settled")
	}
	st.End(StatementResult{})
	tx := f.s.StartTransaction(th, TransactionInfo{})
	if th.Settle() {
		t.Error("a thread with a transaction in progress settled")
	}
	tx.End(true)
	var w WaitState
	if !f.m.BeginWait(&w, th, OpLock) {
		t.Fatal("the wait did not begin")
	}
	if th.Settle() {
		t.Error("a thread with a wait in progress settled")
	}
	w.EndWait(0)
	if !th.Settle() {
		t.Error("a thread with nothing in progress did not settle")
	}
	th.End()
	if th.Settle() || (*Thread)(nil).Settle() {
		t.Error("an ended or nil thread settled")
	}
}

// TestSettledMark checks Settled: true while nothing has run on the thread
// since SettleMark, false once any event began or ended on it, memory was
// counted on it (from its goroutine or another), or it ended.
func TestSettledMark(t *testing.T) {
	f := newStageFixture(t)
	req := f.s.MustRegister("statement/http/request", WithDefault(true, true))
	mem := f.s.MustRegister("memory/test/buf", WithDefault(true, true))
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	settle := func() uint64 {
		t.Helper()
		mark, ok := th.SettleMark()
		if !ok || !th.Settled(mark) || !th.Settled(mark) {
			t.Fatalf("SettleMark: %v; Settled right after: %v", ok, th.Settled(mark))
		}
		return mark
	}
	mark := settle()
	st := f.s.StartStatement(th, req, StatementInfo{Text: "GET /"})
	if th.Settled(mark) {
		t.Error("Settled with a statement begun since")
	}
	if _, ok := th.SettleMark(); ok {
		t.Error("SettleMark settled a thread with a statement in progress")
	}
	st.End(StatementResult{})
	mark = settle()
	th.StartStage(f.parse, "")
	if th.Settled(mark) {
		t.Error("Settled with a stage begun since")
	}
	mark = settle()
	var w WaitState
	if !f.m.BeginWait(&w, th, OpLock) {
		t.Fatal("the wait did not begin")
	}
	w.EndWait(0)
	if th.Settled(mark) {
		t.Error("Settled with a wait begun and ended since")
	}
	mark = settle()
	o := f.s.MemoryAlloc(th, mem, 64)
	if th.Settled(mark) {
		t.Error("Settled with an allocation counted since")
	}
	mark = settle()
	done := make(chan struct{})
	go func() { f.s.MemoryFree(mem, 64, o); close(done) }() // a free from another goroutine
	<-done
	if th.Settled(mark) {
		t.Error("Settled with another goroutine's free counted since")
	}
	mark = settle()
	th.End()
	if th.Settled(mark) || (*Thread)(nil).Settled(0) {
		t.Error("an ended or nil thread is Settled")
	}
}
