package pfscore

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/hwclock"
)

// waitOnce records one lock wait on m by t.
func waitOnce(m *SyncInstance, t *Thread) {
	var w WaitState
	if m.BeginWait(&w, t, OpLock) {
		w.EndWait(-1)
	}
}

// selectMap returns a table's rows as maps from column name to value.
func selectMap(t testing.TB, s *Schema, table string) []map[string]Value {
	t.Helper()
	res, err := s.Select(table)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]Value
	for _, r := range res.Rows {
		if len(r) != len(res.Columns) {
			t.Fatalf("%s: row has %d values for %d columns", table, len(r), len(res.Columns))
		}
		m := map[string]Value{}
		for i, c := range res.Columns {
			m[c.Name] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// findRow returns the rows of table whose columns equal the given values.
func findRows(t testing.TB, s *Schema, table string, where map[string]Value) []map[string]Value {
	t.Helper()
	var out []map[string]Value
	for _, r := range selectMap(t, s, table) {
		ok := true
		for k, v := range where {
			if r[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func count(t testing.TB, s *Schema, table string, where map[string]Value) uint64 {
	t.Helper()
	rows := findRows(t, s, table, where)
	if len(rows) != 1 {
		t.Fatalf("%s where %v: %d rows, want 1", table, where, len(rows))
	}
	return rows[0]["COUNT_STAR"].(uint64)
}

type fixture struct {
	s      *Schema
	mutex  *Class
	thread *Class
	m      *SyncInstance
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	s := newTestSchema(t, append([]Option{WithConsumer(ConsumerEventsWaitsCurrent, true),
		WithConsumer(ConsumerEventsWaitsHistory, true), WithConsumer(ConsumerEventsWaitsHistoryLong, true)}, opts...)...)
	f := &fixture{s: s, mutex: s.MustRegister("wait/synch/mutex/test/m"), thread: s.MustRegister("thread/test/worker")}
	f.m = s.NewSyncInstance(f.mutex, "test.go:1")
	return f
}

func TestWaitEventRecorded(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	waitOnce(f.m, th)
	waitOnce(f.m, th)

	cur := f.s.EventsWaitsCurrent()
	if len(cur) != 1 {
		t.Fatalf("events_waits_current: %d rows, want 1: %+v", len(cur), cur)
	}
	e := cur[0]
	if e.ThreadID != th.ID() || e.EventName != "wait/synch/mutex/test/m" || e.Operation != OpLock ||
		e.EventID != 2 || e.EndEventID != 2 || e.InProgress || e.Source != "test.go:1" || e.TimerEnd < e.TimerStart ||
		e.TimerStart == 0 || e.TimerWait != e.TimerEnd-e.TimerStart || e.ObjectInstanceBegin == 0 {
		t.Errorf("current row = %+v", e)
	}
	if h := f.s.EventsWaitsHistory(); len(h) != 2 || h[0].EventID != 1 || h[1].EventID != 2 {
		t.Errorf("history = %+v", h)
	}
	if h := f.s.EventsWaitsHistoryLong(); len(h) != 2 {
		t.Errorf("history_long: %d rows", len(h))
	}
	name := "wait/synch/mutex/test/m"
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": name}); n != 2 {
		t.Errorf("global COUNT_STAR = %d", n)
	}
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": name}); n != 2 {
		t.Errorf("by_thread COUNT_STAR = %d", n)
	}
	if n := count(t, f.s, "events_waits_summary_by_instance", map[string]Value{"EVENT_NAME": name}); n != 2 {
		t.Errorf("by_instance COUNT_STAR = %d", n)
	}
	for _, tc := range []struct {
		table string
		where map[string]Value
	}{
		{"events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "alice", "HOST": "web1", "EVENT_NAME": name}},
		{"events_waits_summary_by_user_by_event_name", map[string]Value{"USER": "alice", "EVENT_NAME": name}},
		{"events_waits_summary_by_host_by_event_name", map[string]Value{"HOST": "web1", "EVENT_NAME": name}},
	} {
		if n := count(t, f.s, tc.table, tc.where); n != 2 {
			t.Errorf("%s: COUNT_STAR = %d with the thread live", tc.table, n)
		}
	}
	// Without a thread: instance and global only.
	waitOnce(f.m, nil)
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": name}); n != 3 {
		t.Errorf("global COUNT_STAR = %d after a thread-less wait", n)
	}
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": name}); n != 2 {
		t.Errorf("a thread-less wait counted for the thread")
	}
}

// TestConsumerHierarchy switches each level off in turn: what is below it
// freezes, what is above keeps counting.
func TestConsumerHierarchy(t *testing.T) {
	name := "wait/synch/mutex/test/m"
	type counts struct{ global, thread, current, history, long int }
	for _, tc := range []struct {
		off  Consumer
		want counts // what one more event adds
	}{
		{ConsumerEventsWaitsHistoryLong, counts{1, 1, 1, 1, 0}},
		{ConsumerEventsWaitsHistory, counts{1, 1, 1, 0, 1}},
		{ConsumerEventsWaitsCurrent, counts{1, 1, 0, 0, 0}},
		{ConsumerThreadInstrumentation, counts{1, 0, 0, 0, 0}},
		{ConsumerGlobalInstrumentation, counts{0, 0, 0, 0, 0}},
	} {
		t.Run(tc.off.String(), func(t *testing.T) {
			f := newFixture(t)
			th := f.s.NewThread(f.thread, ThreadOptions{})
			waitOnce(f.m, th)
			snap := func() counts {
				var c counts
				c.global = int(count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": name}))
				c.thread = int(count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": name}))
				for _, e := range f.s.EventsWaitsCurrent() {
					c.current = int(e.EventID)
				}
				c.history = len(f.s.EventsWaitsHistory())
				c.long = len(f.s.EventsWaitsHistoryLong())
				return c
			}
			before := snap()
			f.s.SetConsumer(tc.off, false)
			waitOnce(f.m, th)
			after := snap()
			got := counts{after.global - before.global, after.thread - before.thread,
				after.current - before.current, after.history - before.history, after.long - before.long}
			if got != tc.want {
				t.Errorf("with %s off, one event added %+v, want %+v", tc.off, got, tc.want)
			}
		})
	}
}

// TestToggleMidEvent: an event that started enabled ends enabled, and one
// that started disabled is never half-recorded.
func TestToggleMidEvent(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	no, yes := false, true
	var w WaitState
	if !f.m.BeginWait(&w, th, OpLock) {
		t.Fatal("class off at start")
	}
	f.s.UpdateInstruments("wait/synch/%", &no, &no)
	w.EndWait(-1)
	e := f.s.EventsWaitsCurrent()
	if len(e) != 1 || e[0].InProgress || e[0].TimerStart == 0 || e[0].TimerEnd == 0 {
		t.Errorf("event begun enabled and timed must end so: %+v", e)
	}
	if f.m.BeginWait(&w, th, OpLock) {
		t.Fatal("BeginWait on a disabled class")
	}
	f.s.UpdateInstruments("wait/synch/%", &yes, nil) // enabled, not timed
	if !f.m.BeginWait(&w, th, OpLock) {
		t.Fatal("re-enabled class off")
	}
	w.EndWait(-1)
	e = f.s.EventsWaitsCurrent()
	if len(e) != 1 || e[0].EventID != 2 || e[0].TimerStart != 0 || e[0].TimerWait != 0 {
		t.Errorf("an untimed event has NULL timers: %+v", e)
	}
	row := findRows(t, f.s, "events_waits_current", nil)[0]
	if row["TIMER_START"] != nil || row["TIMER_WAIT"] != nil {
		t.Errorf("untimed row renders timers: %v", row)
	}
}

func TestSetupActorsFiltering(t *testing.T) {
	f := newFixture(t)
	no := false
	if err := f.s.insertSetupActor(SetupActorsRow{User: "batch", Host: "%", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.insertSetupActor(SetupActorsRow{User: "quiet", Host: "%", Enabled: true, History: false}); err != nil {
		t.Fatal(err)
	}
	batch := f.s.NewThread(f.thread, ThreadOptions{User: "batch", Host: "h"})
	quiet := f.s.NewThread(f.thread, ThreadOptions{User: "quiet", Host: "h"})
	web := f.s.NewThread(f.thread, ThreadOptions{User: "web", Host: "h"})
	for _, th := range []*Thread{batch, quiet, web} {
		waitOnce(f.m, th)
	}
	if batch.Instrumented() || !quiet.Instrumented() || quiet.History() || !web.History() {
		t.Errorf("INSTRUMENTED/HISTORY: batch %v/%v quiet %v/%v web %v/%v", batch.Instrumented(), batch.History(),
			quiet.Instrumented(), quiet.History(), web.Instrumented(), web.History())
	}
	byThread := map[uint64]int{}
	for _, e := range f.s.EventsWaitsCurrent() {
		byThread[e.ThreadID]++
	}
	if byThread[batch.ID()] != 0 || byThread[quiet.ID()] != 1 || byThread[web.ID()] != 1 {
		t.Errorf("current rows by thread: %v", byThread)
	}
	hist := map[uint64]int{}
	for _, e := range f.s.EventsWaitsHistory() {
		hist[e.ThreadID]++
	}
	if hist[quiet.ID()] != 0 || hist[web.ID()] != 1 {
		t.Errorf("history rows by thread: %v", hist)
	}
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "wait/synch/mutex/test/m"}); n != 3 {
		t.Errorf("every wait counts globally: %d", n)
	}
	// The threads table shows it; a running thread can be switched.
	rows := findRows(t, f.s, "threads", map[string]Value{"THREAD_ID": batch.ID()})
	if len(rows) != 1 || rows[0]["INSTRUMENTED"] != "NO" || rows[0]["TYPE"] != "FOREGROUND" || rows[0]["PROCESSLIST_USER"] != "batch" {
		t.Errorf("threads row: %v", rows)
	}
	web.SetInstrumented(false)
	waitOnce(f.m, web)
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": web.ID(), "EVENT_NAME": "wait/synch/mutex/test/m"}); n != 1 {
		t.Errorf("a thread switched off still counted: %d", n)
	}
	_ = no
}

// TestHistoryRetention follows event-history-tables.txt: thread A produces
// an event now and then, thread B a hundred times as many. events_waits_history
// keeps each thread's last 10, so A's stay; history_long keeps the last N of
// the whole process, so A's drop out of it.
func TestHistoryRetention(t *testing.T) {
	f := newFixture(t, WithWaitsHistoryLongSize(100))
	a := f.s.NewThread(f.thread, ThreadOptions{})
	b := f.s.NewThread(f.thread, ThreadOptions{})
	for sec := range 5 { // five "seconds": A once, B a hundred times
		waitOnce(f.m, a)
		for range 100 {
			waitOnce(f.m, b)
		}
		_ = sec
	}
	var ha, hb []WaitEvent
	for _, e := range f.s.EventsWaitsHistory() {
		switch e.ThreadID {
		case a.ID():
			ha = append(ha, e)
		case b.ID():
			hb = append(hb, e)
		}
	}
	if len(ha) != 5 || len(hb) != 10 {
		t.Fatalf("history: A %d rows (want all 5), B %d rows (want its last 10)", len(ha), len(hb))
	}
	for i, e := range hb {
		if want := uint64(491 + i); e.EventID != want {
			t.Errorf("B history row %d: EVENT_ID %d, want %d (oldest first)", i, e.EventID, want)
		}
	}
	long := f.s.EventsWaitsHistoryLong()
	if len(long) != 100 {
		t.Fatalf("history_long: %d rows, want 100", len(long))
	}
	for _, e := range long {
		if e.ThreadID == a.ID() && e.EventID < 5 {
			t.Errorf("A's event %d should have expired from history_long", e.EventID)
		}
	}
}

func TestThreadEndRollsUp(t *testing.T) {
	f := newFixture(t)
	name := "wait/synch/mutex/test/m"
	t1 := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	t2 := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web2"})
	t3 := f.s.NewThread(f.thread, ThreadOptions{User: "bob"}) // no host: no account
	for i, th := range []*Thread{t1, t2, t3} {
		for range i + 1 {
			waitOnce(f.m, th)
		}
	}
	acct := findRows(t, f.s, "accounts", map[string]Value{"USER": "alice", "HOST": "web1"})
	if len(acct) != 1 || acct[0]["CURRENT_CONNECTIONS"] != int64(1) || acct[0]["TOTAL_CONNECTIONS"] != uint64(1) {
		t.Errorf("accounts row: %v", acct)
	}
	t1.End()
	t2.End()
	t3.End()
	if rows := findRows(t, f.s, "threads", nil); len(rows) != 0 {
		t.Errorf("ended threads still listed: %v", rows)
	}
	for _, tc := range []struct {
		table string
		where map[string]Value
		want  uint64
	}{
		{"events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "alice", "HOST": "web1", "EVENT_NAME": name}, 1},
		{"events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "alice", "HOST": "web2", "EVENT_NAME": name}, 2},
		{"events_waits_summary_by_user_by_event_name", map[string]Value{"USER": "alice", "EVENT_NAME": name}, 3},
		{"events_waits_summary_by_user_by_event_name", map[string]Value{"USER": "bob", "EVENT_NAME": name}, 3},
		{"events_waits_summary_by_host_by_event_name", map[string]Value{"HOST": "web2", "EVENT_NAME": name}, 2},
		{"events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": name}, 6},
	} {
		if n := count(t, f.s, tc.table, tc.where); n != tc.want {
			t.Errorf("%s %v after the threads ended: %d, want %d", tc.table, tc.where, n, tc.want)
		}
	}
	acct = findRows(t, f.s, "accounts", map[string]Value{"USER": "alice", "HOST": "web1"})
	if len(acct) != 1 || acct[0]["CURRENT_CONNECTIONS"] != int64(0) {
		t.Errorf("accounts row after End: %v", acct)
	}
	// Idle waits have no instance: ended threads carry them to the global row.
	idle := f.s.NewThread(f.thread, ThreadOptions{})
	var w WaitState
	if !f.s.BeginIdle(&w, idle) {
		t.Fatal("idle off")
	}
	w.EndWait(-1)
	idle.End()
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "idle"}); n != 1 {
		t.Errorf("idle after its thread ended: %d", n)
	}
}

func TestTruncate(t *testing.T) {
	f := newFixture(t)
	name := "wait/synch/mutex/test/m"
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	for range 3 {
		waitOnce(f.m, th)
	}
	global := map[string]Value{"EVENT_NAME": name}
	byThread := map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": name}
	byUser := map[string]Value{"USER": "u", "EVENT_NAME": name}

	// By thread: the thread's rows restart; higher levels keep the counts.
	if err := f.s.Truncate("events_waits_summary_by_thread_by_event_name"); err != nil {
		t.Fatal(err)
	}
	row := findRows(t, f.s, "events_waits_summary_by_thread_by_event_name", byThread)[0]
	if row["COUNT_STAR"] != uint64(0) || row["SUM_TIMER_WAIT"] != uint64(0) || row["MAX_TIMER_WAIT"] != uint64(0) {
		t.Errorf("by_thread after TRUNCATE: %v", row)
	}
	if n := count(t, f.s, "events_waits_summary_by_user_by_event_name", byUser); n != 3 {
		t.Errorf("by_user after truncating by_thread: %d, want 3", n)
	}
	waitOnce(f.m, th)
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", byThread); n != 1 {
		t.Errorf("by_thread counts again from 0: %d", n)
	}

	// Global: resets everything beneath.
	if err := f.s.Truncate("events_waits_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table string
		where map[string]Value
	}{
		{"events_waits_summary_global_by_event_name", global},
		{"events_waits_summary_by_instance", global},
		{"events_waits_summary_by_thread_by_event_name", byThread},
		{"events_waits_summary_by_user_by_event_name", byUser},
	} {
		if n := count(t, f.s, tc.table, tc.where); n != 0 {
			t.Errorf("%s after TRUNCATE global: %d", tc.table, n)
		}
	}
	waitOnce(f.m, th)
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", global); n != 1 {
		t.Errorf("global after truncate + 1 event: %d", n)
	}

	// Events: current and history empty until the next event.
	for _, table := range []string{"events_waits_current", "events_waits_history", "events_waits_history_long"} {
		if err := f.s.Truncate(table); err != nil {
			t.Fatal(err)
		}
		if rows := findRows(t, f.s, table, nil); len(rows) != 0 {
			t.Errorf("%s after TRUNCATE: %d rows", table, len(rows))
		}
	}
	waitOnce(f.m, th)
	for _, table := range []string{"events_waits_current", "events_waits_history", "events_waits_history_long"} {
		if rows := findRows(t, f.s, table, nil); len(rows) != 1 {
			t.Errorf("%s after one more event: %d rows", table, len(rows))
		}
	}

	// Not truncatable; unknown.
	if err := f.s.Truncate("mutex_instances"); err == nil {
		t.Errorf("TRUNCATE mutex_instances allowed")
	}
	if err := f.s.Truncate("nosuch"); err == nil {
		t.Errorf("TRUNCATE nosuch allowed")
	}

	// An actor summary loses the rows of actors without connections, until
	// they connect again.
	byAcct := map[string]Value{"USER": "u", "HOST": "h", "EVENT_NAME": name}
	idle := f.s.NewThread(f.thread, ThreadOptions{User: "idle", Host: "h"})
	waitOnce(f.m, idle)
	idle.End()
	if err := f.s.Truncate("events_waits_summary_by_account_by_event_name"); err != nil {
		t.Fatal(err)
	}
	if rows := findRows(t, f.s, "events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "idle"}); len(rows) != 0 {
		t.Errorf("by_account keeps a row without connections after TRUNCATE: %v", rows)
	}
	if rows := findRows(t, f.s, "events_waits_summary_by_account_by_event_name", byAcct); len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(0) {
		t.Errorf("by_account row of a connected account after TRUNCATE: %v", rows)
	}
	back := f.s.NewThread(f.thread, ThreadOptions{User: "idle", Host: "h"})
	waitOnce(f.m, back)
	if n := count(t, f.s, "events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "idle", "HOST": "h", "EVENT_NAME": name}); n != 1 {
		t.Errorf("a reconnected account's row: COUNT_STAR %d, want 1 (from the truncation on)", n)
	}
	back.End()

	// accounts: a row without connections goes, its statistics stay in by_user.
	th.End()
	if err := f.s.Truncate("accounts"); err != nil {
		t.Fatal(err)
	}
	if rows := findRows(t, f.s, "accounts", nil); len(rows) != 0 {
		t.Errorf("accounts after TRUNCATE: %v", rows)
	}
}

func TestLostCounters(t *testing.T) {
	s := newTestSchema(t, WithMaxThreads(1), WithMaxInstances(KindMutex, 1), WithMaxClasses(5))
	tc := s.MustRegister("thread/test/t")
	mc := s.MustRegister("wait/synch/mutex/test/m")
	if s.NewThread(tc, ThreadOptions{}) == nil {
		t.Fatal("first thread lost")
	}
	// Containers grow a page at a time: fill the page, then one more.
	var extra int
	for s.NewThread(tc, ThreadOptions{}) != nil {
		extra++
	}
	for s.NewSyncInstance(mc, "") != nil {
	}
	s.MustRegister("wait/synch/mutex/test/a")
	if _, err := s.Register("wait/synch/mutex/test/b"); err == nil {
		t.Fatal("class past the maximum registered")
	}
	status := map[string]uint64{}
	for _, v := range s.Status() {
		status[v.Name] = v.Value
	}
	for _, name := range []string{"Performance_schema_thread_instances_lost", "Performance_schema_mutex_instances_lost", "Performance_schema_classes_lost"} {
		if status[name] != 1 {
			t.Errorf("%s = %d, want 1 (status %v)", name, status[name], status)
		}
	}
	if rows := findRows(t, s, "global_status", map[string]Value{"VARIABLE_NAME": "Performance_schema_classes_lost"}); len(rows) != 1 || rows[0]["VARIABLE_VALUE"] != uint64(1) {
		t.Errorf("global_status row: %v", rows)
	}
	// A lost thread or instance is nil, and nil works.
	var nilThread *Thread
	nilThread.End()
	if nilThread.ID() != 0 || nilThread.Instrumented() {
		t.Errorf("nil thread")
	}
	_ = extra
}

// TestTablesConcurrentSafe runs writers (threads starting, waiting, ending;
// instances made and destroyed; setup changes) while readers select every
// table. Under -race it checks that every concurrently read field is a cell;
// every returned wait row must satisfy start <= end and END_EVENT_ID >= EVENT_ID.
func TestTablesConcurrentSafe(t *testing.T) {
	f := newFixture(t, WithWaitsHistoryLongSize(64))
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	var start sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	// f.m is one mutex the three writers share: its lock waits end with it
	// held, which serializes their statistics (owned cells, one writer at a
	// time: see SyncInstance.BeginWait). held stands for it.
	var held sync.Mutex
	var okWaits atomic.Int64
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			for i := range rounds {
				th := f.s.NewThread(f.thread, ThreadOptions{User: fmt.Sprint("u", g), Host: "h"})
				m := f.s.NewSyncInstance(f.mutex, "")
				for range 5 {
					held.Lock()
					var w WaitState
					if f.m.BeginWait(&w, th, OpLock) {
						okWaits.Add(1)
						w.EndWait(-1)
					}
					held.Unlock()
					if m != nil {
						waitOnce(m, th)
					}
				}
				if i%7 == 0 {
					var w WaitState
					if f.s.BeginIdle(&w, th) {
						w.EndWait(-1)
					}
				}
				m.Destroy()
				th.End()
			}
		}()
	}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // setup changes, until the writers are done
		defer readers.Done()
		start.Wait()
		on, off := true, false
		for !stop.Load() {
			f.s.UpdateInstruments("wait/%", &off, nil)
			f.s.UpdateInstruments("wait/%", &on, nil)
			f.s.SetConsumer(ConsumerEventsWaitsHistory, false)
			f.s.SetConsumer(ConsumerEventsWaitsHistory, true)
		}
	}()
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			start.Wait()
			for !stop.Load() {
				for _, name := range f.s.TableNames() {
					if name == "performance_timers" {
						continue // recalibrates: slow, and covered elsewhere
					}
					res, err := f.s.Select(name)
					if err != nil {
						t.Error(err)
						return
					}
					for _, r := range res.Rows {
						if len(r) != len(res.Columns) {
							t.Errorf("%s: ragged row", name)
							return
						}
					}
				}
				all := append(f.s.EventsWaitsHistory(), f.s.EventsWaitsHistoryLong()...)
				for _, e := range append(all, f.s.EventsWaitsCurrent()...) {
					if e.TimerEnd < e.TimerStart || (!e.InProgress && e.EndEventID < e.EventID) {
						t.Errorf("inconsistent row: %+v", e)
						return
					}
				}
			}
		}()
	}
	start.Done()
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	// Every wait on f.m that began is counted, once: the setup goroutine
	// turns the class off and on all along, so how many begin is up to the
	// scheduler (on a loaded machine, none at all: the writers can run
	// their rounds between an "off" and the next "on"), but the count must
	// match it exactly.
	if got, want := count(t, f.s, "events_waits_summary_by_instance", map[string]Value{"EVENT_NAME": "wait/synch/mutex/test/m", "OBJECT_INSTANCE_BEGIN": f.m.id}), uint64(okWaits.Load()); got != want {
		t.Errorf("f.m counted %d waits; %d began", got, want)
	}
}

func TestBuiltinMemory(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	rows := findRows(t, f.s, "memory_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "memory/performance_schema/mutex_container"})
	if len(rows) != 1 || rows[0]["CURRENT_COUNT_USED"] != int64(1) || rows[0]["CURRENT_NUMBER_OF_BYTES_USED"].(int64) < 256*128 {
		t.Errorf("mutex container memory: %v", rows)
	}
	rows = findRows(t, f.s, "memory_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "memory/performance_schema/file_container"})
	if len(rows) != 1 || rows[0]["CURRENT_COUNT_USED"] != int64(0) {
		t.Errorf("an unused container holds memory: %v", rows)
	}
}

// TestReclaimAfterLoad: a burst of instances takes pages; once they are
// destroyed and the pages stay empty past the idle time, reads give the
// memory back (keeping one empty page, the container's hysteresis).
func TestReclaimAfterLoad(t *testing.T) {
	f := newFixture(t, WithReclaimIdle(time.Millisecond))
	var ms []*SyncInstance
	for range 3 * 256 {
		ms = append(ms, f.s.NewSyncInstance(f.mutex, ""))
	}
	if p := f.s.mutexes.Pages(); p < 3 {
		t.Fatalf("%d pages for 768 mutexes", p)
	}
	for _, m := range ms {
		m.Destroy()
	}
	f.m.Destroy()
	deadline := time.Now().Add(5 * time.Second)
	for f.s.mutexes.Pages() > 1 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		f.s.Select("mutex_instances") // reads drive reclamation
	}
	if p := f.s.mutexes.Pages(); p > 1 {
		t.Errorf("%d pages still held after the load went away", p)
	}
	if m := f.s.NewSyncInstance(f.mutex, ""); m == nil {
		t.Errorf("allocation after reclamation failed")
	}
}

// TestThreadRecycled: an ended thread's memory serves the next one, which
// starts clean: no current row, no history, zero statistics of its own.
func TestThreadRecycled(t *testing.T) {
	f := newFixture(t)
	name := "wait/synch/mutex/test/m"
	var ids []uint64
	for round := range 50 { // sync.Pool may drop an object; many rounds make reuse certain
		th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
		ids = append(ids, th.ID())
		if cur := f.s.EventsWaitsCurrent(); len(cur) != 0 {
			t.Fatalf("round %d: a new thread shows current rows %+v", round, cur)
		}
		if h := f.s.EventsWaitsHistory(); len(h) != 0 {
			t.Fatalf("round %d: a new thread shows history %+v", round, h)
		}
		if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": name}); n != 0 {
			t.Fatalf("round %d: a new thread starts with COUNT_STAR %d", round, n)
		}
		for range round%3 + 1 {
			waitOnce(f.m, th)
		}
		for _, e := range f.s.EventsWaitsHistory() {
			if e.ThreadID != th.ID() || e.EventID > uint64(round%3+1) {
				t.Fatalf("round %d: history row of another life: %+v", round, e)
			}
		}
		th.End()
	}
	seen := map[uint64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("THREAD_ID %d reused", id)
		}
		seen[id] = true
	}
	// The ended threads' waits are all in the account.
	if n := count(t, f.s, "events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "u", "HOST": "h", "EVENT_NAME": name}); n != 99 { // 16 x (1+2+3) + 1 + 2
		t.Errorf("account COUNT_STAR %d, want 99", n)
	}
}

// TestNestedWaits: a wait begun inside another nests under it
// (NESTING_EVENT_ID/TYPE); events_waits_current shows every level in
// progress; past the stack's depth waits still count but are not events.
func TestNestedWaits(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	var ws [waitStackDepth + 1]WaitState
	for i := range ws {
		if !f.m.BeginWait(&ws[i], th, OpLock) {
			t.Fatal("class off")
		}
	}
	cur := f.s.EventsWaitsCurrent()
	if len(cur) != waitStackDepth {
		t.Fatalf("%d current rows with %d waits nested (stack %d): %+v", len(cur), len(ws), waitStackDepth, cur)
	}
	for i, e := range cur {
		if !e.InProgress || e.EventID != uint64(i+1) {
			t.Errorf("level %d: %+v", i, e)
		}
		if i == 0 && (e.NestingEventID != 0 || e.NestingEventType != NestingNone) {
			t.Errorf("top level nests under %d %v", e.NestingEventID, e.NestingEventType)
		}
		if i > 0 && (e.NestingEventID != uint64(i) || e.NestingEventType != NestingWait) {
			t.Errorf("level %d nests under %d %v, want %d WAIT", i, e.NestingEventID, e.NestingEventType, i)
		}
	}
	for i := len(ws) - 1; i >= 0; i-- {
		ws[i].EndWait(-1)
	}
	cur = f.s.EventsWaitsCurrent()
	if len(cur) != 1 || cur[0].InProgress || cur[0].EventID != 1 || cur[0].EndEventID != uint64(waitStackDepth) {
		t.Errorf("after all ended, current = %+v (want the outer wait, ending after the %d nested events)", cur, waitStackDepth-1)
	}
	if h := f.s.EventsWaitsHistory(); len(h) != waitStackDepth {
		t.Errorf("history: %d rows, want %d (the lost level is not an event)", len(h), waitStackDepth)
	}
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": "wait/synch/mutex/test/m"}); n != uint64(len(ws)) {
		t.Errorf("by_thread COUNT_STAR %d, want %d: the lost level still counts", n, len(ws))
	}
	lost := map[string]uint64{}
	for _, v := range f.s.Status() {
		lost[v.Name] = v.Value
	}
	if lost["Performance_schema_nested_wait_lost"] != 1 {
		t.Errorf("nested_wait_lost = %d, want 1", lost["Performance_schema_nested_wait_lost"])
	}
	// The stack works again at depth 0.
	waitOnce(f.m, th)
	if cur := f.s.EventsWaitsCurrent(); len(cur) != 1 || cur[0].EventID != waitStackDepth+1 {
		t.Errorf("next wait: %+v", cur)
	}
}

// TestActorSummaryMonotonic: while threads end, an account's COUNT_STAR
// never goes down between two reads (a thread is counted live or rolled
// up, never neither).
func TestActorSummaryMonotonic(t *testing.T) {
	f := newFixture(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
			for range 10 {
				waitOnce(f.m, th)
			}
			th.End()
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	reads := 3000
	if testing.Short() {
		reads = 300
	}
	var last uint64
	for i := range reads {
		for _, r := range findRows(t, f.s, "events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": "wait/synch/mutex/test/m"}) {
			n := r["COUNT_STAR"].(uint64)
			if n < last {
				t.Fatalf("read %d: COUNT_STAR went down from %d to %d", i, last, n)
			}
			last = n
		}
	}
}

func TestMaxClassesZero(t *testing.T) {
	s := newTestSchema(t, WithMaxClasses(0)) // must not panic: the built-in classes still fit
	if _, err := s.Register("wait/synch/mutex/test/m"); err == nil {
		t.Errorf("a class registered past a maximum of 1")
	}
}

// TestInProgressEndNotBeforeStart: a reader whose clock read comes out
// before an in-progress row's TIMER_START (an unserialized RDTSC racing the
// load of the start: CI's TestWaitRowsNotTornConcurrentSafe saw TIMER_END 57
// ns before TIMER_START) shows the event as just begun, not as a wait that
// wrapped around 2^64.
func TestInProgressEndNotBeforeStart(t *testing.T) {
	for tm := range hwclock.Timer(hwclock.NumTimers) {
		now := tm.Now()
		if got := inProgressEnd(tm, now+1e12); got != now+1e12 {
			t.Errorf("%v: start a second ahead of now: TIMER_END %d, want TIMER_START %d", tm, got, now+1e12)
		}
		if got := inProgressEnd(tm, 1); got < max(now, 1) {
			t.Errorf("%v: start long ago: TIMER_END %d, want now (at least %d)", tm, got, now)
		}
	}
}

// TestAddStatus: a status variable another package adds reads live, in name
// order with the built-in ones, and through the global_status table; a
// duplicate or empty name is refused.
func TestAddStatus(t *testing.T) {
	s := newTestSchema(t)
	var n atomic.Uint64
	if err := s.AddStatus("Performance_schema_export_spans_lost", n.Load); err != nil {
		t.Fatal(err)
	}
	n.Store(7)
	rows := s.Status()
	if !slices.IsSortedFunc(rows, func(a, b StatusVariable) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("global_status not in name order: %v", rows)
	}
	var got []map[string]Value
	for _, r := range selectMap(t, s, "global_status") {
		if r["VARIABLE_NAME"] == "Performance_schema_export_spans_lost" {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0]["VARIABLE_VALUE"] != Value(uint64(7)) {
		t.Errorf("global_status rows for the added variable: %v, want one with 7", got)
	}
	for _, name := range []string{"Performance_schema_export_spans_lost", "Performance_schema_users_lost", ""} {
		if err := s.AddStatus(name, n.Load); err == nil {
			t.Errorf("AddStatus(%q) accepted", name)
		}
	}
}
