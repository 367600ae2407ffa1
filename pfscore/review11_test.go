package pfscore

// Regression tests from the fresh-eyes review of stages (issue 11): each
// was a reproducer of a defect since fixed, or of a property that held.
// Comments describe what each reproduced when it was written.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Review 11: stage events.

func r11Count(t *testing.T, s *Schema, table string, where map[string]Value) uint64 {
	t.Helper()
	rows := findRows(t, s, table, where)
	if len(rows) == 0 {
		return 0
	}
	if len(rows) != 1 {
		t.Fatalf("%s where %v: %d rows", table, where, len(rows))
	}
	return rows[0]["COUNT_STAR"].(uint64)
}

// END_EVENT_ID of a stage is the last event id allocated while it ran;
// waits after it nest in nothing.
func TestReview11EndEventIDAndNesting(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	waitOnce(f.m, th)
	waitOnce(f.m, th)
	th.StartStage(f.write, "") // ends parse
	waitOnce(f.m, th)
	th.EndStage()
	waitOnce(f.m, th)
	h := f.s.EventsStagesHistory()
	if len(h) != 2 {
		t.Fatalf("history: %+v", h)
	}
	// ids: parse 1, w 2, w 3, write 4, w 5, w 6
	if h[0].EventID != 1 || h[0].EndEventID != 3 || h[1].EventID != 4 || h[1].EndEventID != 5 {
		t.Errorf("stage ids: %+v", h)
	}
	wh := f.s.EventsWaitsHistory()
	want := []struct {
		id, nest uint64
		typ      NestingType
	}{{2, 1, NestingStage}, {3, 1, NestingStage}, {5, 4, NestingStage}, {6, 0, NestingNone}}
	if len(wh) != len(want) {
		t.Fatalf("waits history: %+v", wh)
	}
	for i, w := range want {
		if wh[i].EventID != w.id || wh[i].NestingEventID != w.nest || wh[i].NestingEventType != w.typ {
			t.Errorf("wait %d: got id %d nest %d %v, want %+v", i, wh[i].EventID, wh[i].NestingEventID, wh[i].NestingEventType, w)
		}
	}
}

// A class disabled (or its TIMED cleared) between StartStage and EndStage:
// the stage ends as it started, timed and counted, and goes to history.
func TestReview11ClassDisabledMidStage(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	off := false
	if _, err := f.s.UpdateInstruments(f.parse.Name(), &off, &off); err != nil {
		t.Fatal(err)
	}
	th.EndStage()
	h := f.s.EventsStagesHistory()
	if len(h) != 1 || !h[0].Timed || h[0].InProgress {
		t.Errorf("history: %+v", h)
	}
	if n := r11Count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.parse.Name()}); n != 1 {
		t.Errorf("count %d, want 1", n)
	}
	rows := findRows(t, f.s, "events_stages_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.parse.Name()})
	if len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(1) || rows[0]["SUM_TIMER_WAIT"] == uint64(0) {
		t.Errorf("global: %v", rows)
	}
	// Thread INSTRUMENTED=NO mid-stage, and consumer off mid-stage: the
	// stage still ends as it began.
	on := true
	f.s.UpdateInstruments(f.parse.Name(), &on, &on)
	th.StartStage(f.parse, "")
	th.SetInstrumented(false)
	f.s.SetConsumer(ConsumerEventsStagesHistory, false)
	th.EndStage()
	if h := f.s.EventsStagesHistory(); len(h) != 2 {
		t.Errorf("history after a stage whose consumer went off mid-stage: %d rows, want 2", len(h))
	}
}

// HISTORY=NO (threads, setup_threads, setup_actors) keeps stages out of
// history and history_long, but not out of current or the summaries.
func TestReview11HistoryNo(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	th.SetHistory(false)
	th.StartStage(f.parse, "")
	th.EndStage()
	if h, l := f.s.EventsStagesHistory(), f.s.EventsStagesHistoryLong(); len(h)+len(l) != 0 {
		t.Errorf("HISTORY=NO: history %+v long %+v", h, l)
	}
	if c := f.s.EventsStagesCurrent(); len(c) != 1 {
		t.Errorf("current: %+v", c)
	}
	th.End()

	no := false
	if _, err := f.s.UpdateThreads(f.thread.Name(), nil, &no); err != nil {
		t.Fatal(err)
	}
	th2 := f.s.NewThread(f.thread, ThreadOptions{})
	defer th2.End()
	th2.StartStage(f.parse, "")
	th2.EndStage()
	if h, l := f.s.EventsStagesHistory(), f.s.EventsStagesHistoryLong(); len(h)+len(l) != 0 {
		t.Errorf("setup_threads HISTORY=NO: history %+v long %+v", h, l)
	}
	if n := r11Count(t, f.s, "events_stages_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.parse.Name()}); n != 2 {
		t.Errorf("global count %d, want 2", n)
	}
}

// A stale handle (ended, storage reused by a new thread) writes nothing
// into the new thread's stage row, history or statistics.
func TestReview11StaleHandle(t *testing.T) {
	f := newStageFixture(t)
	old := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	old.StartStage(f.parse, "")
	old.End()
	nw := f.s.NewThread(f.thread, ThreadOptions{User: "v", Host: "h"})
	defer nw.End()
	if nw.threadCore != old.threadCore {
		t.Skip("storage not reused")
	}
	nw.StartStage(f.write, "new")
	old.StartStage(f.parse, "stale")
	old.SetStageProgress(7, 9)
	old.EndStage()
	cur := f.s.EventsStagesCurrent()
	if len(cur) != 1 || cur[0].ThreadID != nw.ID() || cur[0].EventName != f.write.Name() || cur[0].HasProgress || !cur[0].InProgress {
		t.Errorf("current: %+v", cur)
	}
	if n := r11Count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": nw.ID(), "EVENT_NAME": f.parse.Name()}); n != 0 {
		t.Errorf("stale stage counted in the new thread: %d", n)
	}
	if n := r11Count(t, f.s, "events_stages_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": f.parse.Name()}); n != 1 {
		t.Errorf("old thread's stage: %d, want 1", n)
	}
	if h := f.s.EventsStagesHistory(); len(h) != 0 {
		t.Errorf("history of the new thread: %+v", h)
	}
}

// Concurrent: one goroutine drives stages on a Thread that another ends;
// new threads take the storage and run their own stages. Each new thread's
// by_thread counts must equal the stages it ran; the old threads' counts
// are whatever they were, and the global total must equal the sum.
func TestReview11StaleHandleConcurrent(t *testing.T) {
	f := newStageFixture(t)
	const rounds = 200
	var stale atomic.Uint64
	for r := 0; r < rounds; r++ {
		old := f.s.NewThread(f.thread, ThreadOptions{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				old.StartStage(f.parse, "")
				old.SetStageProgress(1<<40, 1<<40)
				waitOnce(f.m, old)
			}
			old.EndStage()
		}()
		old.End()
		nw := f.s.NewThread(f.thread, ThreadOptions{})
		for i := 0; i < 50; i++ {
			nw.StartStage(f.write, "")
			if e := f.s.EventsStagesCurrent(); len(e) > 0 {
				for _, x := range e {
					if x.ThreadID == nw.ID() && (x.EventName != f.write.Name() || x.HasProgress) {
						t.Errorf("new thread's row: %+v", x)
					}
				}
			}
		}
		nw.EndStage()
		n := r11Count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": nw.ID(), "EVENT_NAME": f.write.Name()})
		p := r11Count(t, f.s, "events_stages_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": nw.ID(), "EVENT_NAME": f.parse.Name()})
		wg.Wait()
		if n != 50 || p != 0 {
			t.Fatalf("round %d: new thread counts write %d parse %d, want 50, 0", r, n, p)
		}
		for _, h := range f.s.EventsStagesHistory() {
			if h.ThreadID != nw.ID() || h.EventName != f.write.Name() || h.HasProgress {
				t.Fatalf("round %d: new thread's history has %+v", r, h)
			}
		}
		nw.End()
		if old.threadCore == nw.threadCore {
			stale.Add(1)
		}
	}
	t.Logf("storage reused in %d rounds", stale.Load())
}

// TRUNCATE accounts: ended threads' stages stay in by_user, by_host and
// global; the account row goes; a new thread counts from zero in by_account.
func TestReview11TruncateAccounts(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h1"})
	th.StartStage(f.parse, "")
	th.StartStage(f.parse, "")
	th.End()
	live := f.s.NewThread(f.thread, ThreadOptions{User: "bob", Host: "h1"})
	defer live.End()
	live.StartStage(f.parse, "")
	live.EndStage()
	if err := f.s.Truncate("accounts"); err != nil {
		t.Fatal(err)
	}
	check := func(table string, where map[string]Value, want uint64) {
		t.Helper()
		where["EVENT_NAME"] = f.parse.Name()
		if n := r11Count(t, f.s, table, where); n != want {
			t.Errorf("%s %v: %d, want %d", table, where, n, want)
		}
	}
	check("events_stages_summary_by_user_by_event_name", map[string]Value{"USER": "alice"}, 2)
	check("events_stages_summary_by_host_by_event_name", map[string]Value{"HOST": "h1"}, 3)
	check("events_stages_summary_global_by_event_name", map[string]Value{}, 3)
	check("events_stages_summary_by_account_by_event_name", map[string]Value{"USER": "alice", "HOST": "h1"}, 0)
	check("events_stages_summary_by_account_by_event_name", map[string]Value{"USER": "bob", "HOST": "h1"}, 0)
	th2 := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h1"})
	th2.StartStage(f.parse, "")
	th2.End()
	check("events_stages_summary_by_account_by_event_name", map[string]Value{"USER": "alice", "HOST": "h1"}, 1)
	check("events_stages_summary_by_user_by_event_name", map[string]Value{"USER": "alice"}, 3)
	check("events_stages_summary_global_by_event_name", map[string]Value{}, 4)
	if err := f.s.Truncate("users"); err != nil {
		t.Fatal(err)
	}
	check("events_stages_summary_by_host_by_event_name", map[string]Value{"HOST": "h1"}, 4)
	check("events_stages_summary_global_by_event_name", map[string]Value{}, 4)
	if err := f.s.Truncate("hosts"); err != nil {
		t.Fatal(err)
	}
	check("events_stages_summary_global_by_event_name", map[string]Value{}, 4)
	// The waits summaries are not touched by the stages' counts.
	if n := r11Count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.parse.Name()}); n != 0 {
		t.Errorf("stage in waits global: %d", n)
	}
}

// TRUNCATE of the stage global summary while a stage is in progress: the
// stage, ending after, counts once in every table.
func TestReview11TruncateMidStage(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "a", Host: "h"})
	th.StartStage(f.parse, "")
	th.StartStage(f.parse, "")
	if err := f.s.Truncate("events_stages_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	th.End() // ends the second stage
	for table, where := range map[string]map[string]Value{
		"events_stages_summary_global_by_event_name":     {},
		"events_stages_summary_by_account_by_event_name": {"USER": "a", "HOST": "h"},
		"events_stages_summary_by_user_by_event_name":    {"USER": "a"},
		"events_stages_summary_by_host_by_event_name":    {"HOST": "h"},
	} {
		where["EVENT_NAME"] = f.parse.Name()
		if n := r11Count(t, f.s, table, where); n != 1 {
			t.Errorf("%s: %d, want 1", table, n)
		}
	}
}

// History rings after TRUNCATE: only the rows since, oldest first.
func TestReview11HistoryAfterTruncate(t *testing.T) {
	f := newStageFixture(t, WithStagesHistorySize(3), WithStagesHistoryLongSize(4))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	for i := 0; i < 5; i++ {
		th.StartStage(f.parse, "")
	}
	th.EndStage()
	if h := f.s.EventsStagesHistory(); len(h) != 3 || h[0].EventID != 3 || h[2].EventID != 5 {
		t.Errorf("history before: %+v", h)
	}
	if l := f.s.EventsStagesHistoryLong(); len(l) != 4 || l[0].EventID != 2 {
		t.Errorf("long before: %+v", l)
	}
	th.StartStage(f.write, "") // id 6, in progress at TRUNCATE
	f.s.Truncate("events_stages_history")
	f.s.Truncate("events_stages_history_long")
	th.StartStage(f.parse, "") // ends 6; 7
	th.EndStage()
	h, l := f.s.EventsStagesHistory(), f.s.EventsStagesHistoryLong()
	if len(h) != 2 || h[0].EventID != 6 || h[1].EventID != 7 {
		t.Errorf("history after: %+v", h)
	}
	if len(l) != 2 || l[0].EventID != 6 || l[1].EventID != 7 {
		t.Errorf("long after: %+v", l)
	}
}

// An idle wait nests in nothing in MySQL (pfs_start_idle_wait_v1 sets
// NESTING_EVENT_ID 0); here, begun in a stage.
func TestReview11IdleNesting(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	var w WaitState
	if f.s.BeginIdle(&w, th) {
		w.EndWait(-1)
	}
	for _, e := range f.s.EventsWaitsCurrent() {
		if e.Operation == OpIdle && e.NestingEventID != 0 {
			t.Errorf("idle wait nests in %v %d (MySQL: NULL)", e.NestingEventType, e.NestingEventID)
		}
	}
}

// Readers, TRUNCATEs and threads starting, staging and ending, under -race.
func TestReview11RaceMix(t *testing.T) {
	f := newStageFixture(t, WithStagesHistorySize(4), WithStagesHistoryLongSize(64))
	var stop atomic.Bool
	var wg sync.WaitGroup
	var started atomic.Uint64
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
				for j := 0; j < 5; j++ {
					th.StartStage(f.parse, "")
					started.Add(1)
					th.SetStageProgress(uint64(j), uint64(2*j))
					waitOnce(f.m, th)
				}
				th.End()
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			for _, e := range f.s.EventsStagesCurrent() {
				if e.HasProgress && e.WorkEstimated != 2*e.WorkCompleted {
					t.Errorf("torn: %+v", e)
				}
			}
			f.s.EventsStagesHistory()
			f.s.EventsStagesHistoryLong()
			for _, tb := range []string{"events_stages_current", "events_stages_history", "events_stages_summary_by_thread_by_event_name", "accounts", "events_stages_summary_global_by_event_name"} {
				if i%7 == 0 {
					f.s.Truncate(tb)
				}
				f.s.Select(tb)
			}
		}
	}()
	for started.Load() < 3000 {
		if t.Failed() {
			break
		}
		runtimeGosched()
	}
	stop.Store(true)
	wg.Wait()
}

func runtimeGosched() { runtime.Gosched() }

// Conservation: threads of two accounts run stages and end while readers
// watch the summaries and TRUNCATE accounts runs; the global and by_user
// counts never go down, and at the end equal the stages run.
func TestReview11Conservation(t *testing.T) {
	f := newStageFixture(t)
	const workers, threads, stages = 4, 40, 5
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			user := []string{"a", "b"}[w%2]
			for i := 0; i < threads; i++ {
				th := f.s.NewThread(f.thread, ThreadOptions{User: user, Host: "h"})
				for j := 0; j < stages; j++ {
					th.StartStage(f.parse, "")
				}
				if i%2 == 0 {
					th.EndStage()
				}
				th.End()
			}
		}(w)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lastG, lastA uint64
		for i := 0; !stop.Load(); i++ {
			g := r11Count(t, f.s, "events_stages_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.parse.Name()})
			a := r11Count(t, f.s, "events_stages_summary_by_user_by_event_name", map[string]Value{"USER": "a", "EVENT_NAME": f.parse.Name()})
			if g < lastG || a < lastA {
				t.Errorf("went down: global %d -> %d, user a %d -> %d", lastG, g, lastA, a)
			}
			lastG, lastA = g, a
			if i%5 == 0 {
				f.s.Truncate("accounts")
			}
		}
	}()
	wg.Wait()
	stop.Store(true)
	<-done
	want := uint64(workers * threads * stages)
	if g := r11Count(t, f.s, "events_stages_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.parse.Name()}); g != want {
		t.Errorf("global %d, want %d", g, want)
	}
	for _, u := range []string{"a", "b"} {
		if n := r11Count(t, f.s, "events_stages_summary_by_user_by_event_name", map[string]Value{"USER": u, "EVENT_NAME": f.parse.Name()}); n != want/2 {
			t.Errorf("user %s: %d, want %d", u, n, want/2)
		}
	}
	if n := r11Count(t, f.s, "events_stages_summary_by_host_by_event_name", map[string]Value{"HOST": "h", "EVENT_NAME": f.parse.Name()}); n != want {
		t.Errorf("host: %d, want %d", n, want)
	}
}

// TIMED switched off mid-stage, and the stage timer changed mid-stage.
func TestReview11TimedOffMidStage(t *testing.T) {
	f := newStageFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	th.StartStage(f.parse, "")
	on, off := true, false
	f.s.UpdateInstruments(f.parse.Name(), &on, &off)
	th.EndStage()
	h := f.s.EventsStagesHistory()
	if len(h) != 1 || !h[0].Timed || h[0].TimerEnd < h[0].TimerStart || h[0].TimerWait > 1e15 {
		t.Errorf("history: %+v", h)
	}
}

// A thread in one long stage that does many short waits: its stage row,
// unchanged for the whole stage, must be in events_stages_current every
// time. copyStage shares the guard word with the wait sections and gives
// up after 16 busy/changed looks with no pause.
func TestReview11StageRowVanishesUnderWaits(t *testing.T) {
	f := newStageFixture(t, WithConsumer(ConsumerEventsWaitsHistory, false), WithConsumer(ConsumerEventsWaitsHistoryLong, false))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	th.StartStage(f.parse, "")
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			waitOnce(f.m, th)
		}
	}()
	const reads = 20000
	missing := 0
	for i := 0; i < reads; i++ {
		if len(f.s.EventsStagesCurrent()) != 1 {
			missing++
		}
	}
	stop.Store(true)
	<-done
	th.End()
	if missing > 0 {
		t.Errorf("the stage in progress was missing from events_stages_current in %d of %d reads", missing, reads)
	}
}

// TRUNCATE events_stages_current while the thread does short waits: the
// hook's copyStage may fail, the row is not marked, and it shows again.
func TestReview11TruncateCurrentMissesBusyThread(t *testing.T) {
	f := newStageFixture(t, WithConsumer(ConsumerEventsWaitsHistory, false), WithConsumer(ConsumerEventsWaitsHistoryLong, false))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	var stop atomic.Bool
	done := make(chan struct{})
	var stage atomic.Bool
	go func() {
		defer close(done)
		th.StartStage(f.parse, "")
		th.EndStage()
		stage.Store(true)
		for !stop.Load() {
			waitOnce(f.m, th)
		}
	}()
	for !stage.Load() {
		runtimeGosched()
	}
	shown := 0
	for i := 0; i < 2000; i++ {
		if err := f.s.Truncate("events_stages_current"); err != nil {
			t.Fatal(err)
		}
		// Read with the thread quiet enough: retry until a stable copy.
		var row [stageWidth]uint64
		for !th.copyStage(&row) {
		}
		f.s.readMu.Lock()
		m := f.s.stageMarks[th.ID()]
		f.s.readMu.Unlock()
		if row[sEventID] > m {
			shown++
		}
	}
	stop.Store(true)
	<-done
	th.End()
	if shown > 0 {
		t.Errorf("after TRUNCATE events_stages_current, the ended stage's row stayed visible in %d of 2000 truncations", shown)
	}
}
