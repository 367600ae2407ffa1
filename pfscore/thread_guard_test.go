package pfscore

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Regression tests for the thread guard (a stale handle, two goroutines on
// one Thread), bounded actor tables, and extremes after TRUNCATE.

func statusValue(s *Schema, name string) uint64 {
	for _, v := range s.Status() {
		if v.Name == name {
			return v.Value
		}
	}
	panic("no status variable " + name)
}

// TestStaleThreadInFlight (defect D): an event begins on thread X; X ends
// (from another goroutine) and its storage goes to a new thread Y; X's
// event then ends. It must write nothing into Y's storage.
func TestStaleThreadInFlight(t *testing.T) {
	f := newFixture(t)
	x := f.s.NewThread(f.thread, ThreadOptions{})
	var w WaitState
	if !f.m.BeginWait(&w, x, OpLock) {
		t.Fatal("class off")
	}
	done := make(chan struct{})
	go func() { x.End(); close(done) }()
	<-done
	y := f.s.NewThread(f.thread, ThreadOptions{})
	if y.threadCore != x.threadCore {
		t.Fatal("Y did not take X's storage; the test needs it to")
	}
	w.EndWait(-1)

	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name",
		map[string]Value{"THREAD_ID": y.ID(), "EVENT_NAME": f.mutex.Name()}); n != 0 {
		t.Errorf("Y's by_thread row counts X's event: %d", n)
	}
	for _, e := range f.s.EventsWaitsCurrent() {
		if e.ThreadID == y.ID() || e.ThreadID == x.ID() {
			t.Errorf("events_waits_current row after the stale end: %+v", e)
		}
	}
	if len(f.s.EventsWaitsHistory()) != 0 {
		t.Errorf("history rows after the stale end: %+v", f.s.EventsWaitsHistory())
	}
	if n := statusValue(f.s, "Performance_schema_thread_events_lost"); n != 1 {
		t.Errorf("Performance_schema_thread_events_lost = %d, want 1", n)
	}
	// The instance still counts the event.
	if n := count(t, f.s, "events_waits_summary_by_instance", map[string]Value{"EVENT_NAME": f.mutex.Name()}); n != 1 {
		t.Errorf("by_instance = %d, want 1", n)
	}
	y.End()
}

// TestStaleThreadNoRecycleWhileReading: storage of an ended thread is not
// reused while a reader is active, so a reader never sees rows change owner.
func TestStaleThreadNoRecycleWhileReading(t *testing.T) {
	f := newFixture(t)
	x := f.s.NewThread(f.thread, ThreadOptions{})
	x.End()
	f.s.beginRead()
	y := f.s.NewThread(f.thread, ThreadOptions{})
	f.s.endRead()
	if y.threadCore == x.threadCore {
		t.Error("storage reused while a reader was active")
	}
	z := f.s.NewThread(f.thread, ThreadOptions{})
	if z.threadCore != x.threadCore {
		t.Error("storage not reused once no reader is active")
	}
	y.End()
	z.End()
}

// TestThreadSharedByTwoGoroutines (defect D): two goroutines drive one
// Thread at once. Rows must never be torn, -race must stay quiet, and the
// events that overlap are counted in Performance_schema_thread_events_lost.
func TestThreadSharedByTwoGoroutines(t *testing.T) {
	f := newFixture(t)
	file := f.s.MustRegister("wait/io/file/test/shared")
	io := f.s.FileInstance(file, "/tmp/shared", "test.go:1")
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				var w WaitState
				op := OpFileRead
				if g == 1 {
					op = OpFileWrite
				}
				if io.BeginWait(&w, th, op) {
					w.EndWait(int64(g*1_000_000 + i))
				}
			}
		}()
	}
	var reads int
	var rw sync.WaitGroup
	rw.Add(1)
	go func() {
		defer rw.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows := append(f.s.EventsWaitsCurrent(), f.s.EventsWaitsHistory()...)
			rows = append(rows, f.s.EventsWaitsHistoryLong()...)
			for _, e := range rows {
				checkSharedRow(t, e)
			}
			reads++
		}
	}()
	wg.Wait()
	close(stop)
	rw.Wait()
	for _, e := range append(f.s.EventsWaitsHistory(), f.s.EventsWaitsHistoryLong()...) {
		checkSharedRow(t, e)
	}
	lost := statusValue(f.s, "Performance_schema_thread_events_lost")
	counted := count(t, f.s, "events_waits_summary_by_thread_by_event_name",
		map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": file.Name()})
	if counted > uint64(2*n) || counted+lost < uint64(2*n) {
		t.Errorf("by_thread %d and lost %d for %d events", counted, lost, 2*n)
	}
	t.Logf("%d reads; %d events lost to the overlap", reads, lost)
}

// checkSharedRow checks a row of TestThreadSharedByTwoGoroutines: the
// goroutine that wrote it read (g 0) or wrote (g 1), and its bytes say which.
func checkSharedRow(t *testing.T, e WaitEvent) {
	t.Helper()
	if e.InProgress {
		return
	}
	g := e.NumberOfBytes / 1_000_000
	want := OpFileRead
	if g == 1 {
		want = OpFileWrite
	}
	if !e.HasBytes || e.Operation != want || e.EndEventID < e.EventID || e.TimerEnd < e.TimerStart {
		t.Errorf("torn row: %+v", e)
	}
}

// TestActorTablesBounded (defect E): accounts, users and hosts keep at most
// their configured rows, and count what they could not keep.
func TestActorTablesBounded(t *testing.T) {
	f := newFixture(t, WithAccountsSize(2), WithUsersSize(3), WithHostsSize(1))
	var ths []*Thread
	for i := range 4 {
		th := f.s.NewThread(f.thread, ThreadOptions{User: fmt.Sprintf("u%d", i), Host: fmt.Sprintf("h%d", i)})
		waitOnce(f.m, th)
		ths = append(ths, th)
	}
	for table, want := range map[string]int{"accounts": 2, "users": 3, "hosts": 1} {
		if rows := selectMap(t, f.s, table); len(rows) != want {
			t.Errorf("%s: %d rows, want %d", table, len(rows), want)
		}
	}
	for name, want := range map[string]uint64{"Performance_schema_accounts_lost": 2,
		"Performance_schema_users_lost": 1, "Performance_schema_hosts_lost": 3} {
		if n := statusValue(f.s, name); n != want {
			t.Errorf("%s = %d, want %d", name, n, want)
		}
	}
	for _, th := range ths {
		th.End()
	}
	// u2 has a user row but no account: its thread rolled up into the user.
	if n := count(t, f.s, "events_waits_summary_by_user_by_event_name",
		map[string]Value{"USER": "u2", "EVENT_NAME": f.mutex.Name()}); n != 1 {
		t.Errorf("by_user u2 = %d, want 1", n)
	}
	// u0 rolled up into its account, which its user row adds.
	if n := count(t, f.s, "events_waits_summary_by_user_by_event_name",
		map[string]Value{"USER": "u0", "EVENT_NAME": f.mutex.Name()}); n != 1 {
		t.Errorf("by_user u0 = %d, want 1", n)
	}
	if n := count(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.mutex.Name()}); n != 4 {
		t.Errorf("global = %d, want 4", n)
	}
}

// TestActorRowAddedLater: an account made while its user's table was full
// is added to the user row made later, so by_user counts it.
func TestActorRowAddedLater(t *testing.T) {
	f := newFixture(t, WithUsersSize(1))
	a := f.s.NewThread(f.thread, ThreadOptions{User: "a", Host: "h"})
	b := f.s.NewThread(f.thread, ThreadOptions{User: "b", Host: "h"}) // no user row
	a.End()
	// a's row goes (no connections); account b@h stays (b is connected),
	// and the summaries by user, account and thread restart.
	if err := f.s.Truncate("users"); err != nil {
		t.Fatal(err)
	}
	waitOnce(f.m, b)
	b.End()
	c := f.s.NewThread(f.thread, ThreadOptions{User: "b", Host: "h2"}) // b's row now
	defer c.End()
	if n := count(t, f.s, "events_waits_summary_by_user_by_event_name",
		map[string]Value{"USER": "b", "EVENT_NAME": f.mutex.Name()}); n != 1 {
		t.Errorf("by_user b = %d, want 1 (from account b@h)", n)
	}
}

// TestTruncateResetsExtremes: after TRUNCATE, MIN and MAX cover only the
// events counted since, never one from before (MAX > SUM was the symptom).
func TestTruncateResetsExtremes(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	long := func() {
		var w WaitState
		if f.m.BeginWait(&w, th, OpLock) {
			time.Sleep(2 * time.Millisecond)
			w.EndWait(-1)
		}
	}
	long()
	tables := []struct {
		name  string
		where map[string]Value
	}{
		{"events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_instance", map[string]Value{"EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_account_by_event_name", map[string]Value{"USER": "u", "HOST": "h", "EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": f.mutex.Name()}},
		{"events_waits_summary_by_host_by_event_name", map[string]Value{"HOST": "h", "EVENT_NAME": f.mutex.Name()}},
	}
	for _, tc := range tables {
		t.Run(tc.name, func(t *testing.T) {
			long()
			if err := f.s.Truncate(tc.name); err != nil {
				t.Fatal(err)
			}
			waitOnce(f.m, th) // a short wait
			rows := findRows(t, f.s, tc.name, tc.where)
			if len(rows) != 1 {
				t.Fatalf("%d rows", len(rows))
			}
			r := rows[0]
			cnt, sum, mn, avg, mx := r["COUNT_STAR"].(uint64), r["SUM_TIMER_WAIT"].(uint64),
				r["MIN_TIMER_WAIT"].(uint64), r["AVG_TIMER_WAIT"].(uint64), r["MAX_TIMER_WAIT"].(uint64)
			if cnt != 1 || mx > sum || mn > avg || avg > mx || mx >= uint64(time.Millisecond)*1000 {
				t.Errorf("after TRUNCATE and one short wait: %v", r)
			}
			// Every other summary keeps MIN <= AVG <= MAX <= SUM.
			for _, o := range tables {
				for _, r := range findRows(t, f.s, o.name, o.where) {
					cnt, sum, mn, avg, mx := r["COUNT_STAR"].(uint64), r["SUM_TIMER_WAIT"].(uint64),
						r["MIN_TIMER_WAIT"].(uint64), r["AVG_TIMER_WAIT"].(uint64), r["MAX_TIMER_WAIT"].(uint64)
					if cnt > 0 && (mn > avg || avg > mx || mx > sum) {
						t.Errorf("%s: %v", o.name, r)
					}
				}
			}
		})
	}
}

// TestGuardWords checks the guard word's arithmetic at its edges: a section
// advances the sequence and keeps the owner, the sequence wraps without
// carrying into the owner, and storage whose generation reached its last
// value is retired rather than given out again, so an owner never repeats:
// a wait in flight when its thread ended writes nothing, even then.
func TestGuardWords(t *testing.T) {
	f := newFixture(t)
	x := f.s.NewThread(f.thread, ThreadOptions{})
	g0 := x.guard.Load()
	if g0 != x.owner || g0&genMask != g0 || g0 == 0 {
		t.Fatalf("new thread's guard = %#x, owner %#x", g0, x.owner)
	}
	g, ok := x.enter()
	if !ok || g != g0 || x.guard.Load() != g0|guardBusy {
		t.Fatalf("enter = %#x, %v; guard %#x", g, ok, x.guard.Load())
	}
	x.leave(g)
	if got := x.guard.Load(); got != g0+guardSeq {
		t.Fatalf("after one section guard = %#x, want %#x", got, g0+guardSeq)
	}

	x.guard.Store(x.owner | seqMask) // the last sequence before the wrap
	g, ok = x.enter()
	if !ok {
		t.Fatal("enter failed at the last sequence")
	}
	x.leave(g)
	if got := x.guard.Load(); got != x.owner {
		t.Fatalf("after the wrap guard = %#x, want the owner %#x with sequence 0", got, x.owner)
	}

	x.End()
	// The storage has served 2^24-2 threads more: the next one takes its
	// last generation.
	x.gen = genMask - 1<<genShift
	y := f.s.NewThread(f.thread, ThreadOptions{})
	if y.threadCore != x.threadCore || y.owner != genMask {
		t.Fatalf("Y took storage %p owner %#x; want X's %p, owner %#x", y.threadCore, y.owner, x.threadCore, uint64(genMask))
	}
	var w WaitState
	if !f.m.BeginWait(&w, y, OpLock) {
		t.Fatal("class off")
	}
	y.End() // another goroutine ends Y while its wait is in flight
	z := f.s.NewThread(f.thread, ThreadOptions{})
	defer z.End()
	if z.threadCore == y.threadCore {
		t.Fatalf("storage at its last generation was given out again (owner %#x)", z.owner)
	}
	w.EndWait(-1) // the stale event ends
	if n := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": z.ID(), "EVENT_NAME": f.mutex.Name()}); n != 0 {
		t.Errorf("Z never waited, but by_thread shows COUNT_STAR %d", n)
	}
}
