package pfscore

// Adversarial review reproducers for 6a0f801 / c922103. Run with
//
//	go test -count=1 -run Review ./pfscore/
//	go test -count=1 -run Review -race ./pfscore/

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type rvStat struct{ cnt, sum, mn, avg, mx uint64 }

func rvRow(r map[string]Value) rvStat {
	return rvStat{r["COUNT_STAR"].(uint64), r["SUM_TIMER_WAIT"].(uint64),
		r["MIN_TIMER_WAIT"].(uint64), r["AVG_TIMER_WAIT"].(uint64), r["MAX_TIMER_WAIT"].(uint64)}
}

func (v rvStat) consistent() bool {
	if v.cnt == 0 {
		return v.sum == 0 && v.mn == 0 && v.mx == 0
	}
	return v.mn <= v.avg && v.avg <= v.mx && v.mx <= v.sum
}

func rvOne(t *testing.T, s *Schema, table string, where map[string]Value) rvStat {
	t.Helper()
	rows := findRows(t, s, table, where)
	if len(rows) != 1 {
		t.Fatalf("%s where %v: %d rows", table, where, len(rows))
	}
	return rvRow(rows[0])
}

// longWait ends a wait of m on th that lasted about d.
func rvLongWait(m *SyncInstance, th *Thread, d time.Duration) {
	var w WaitState
	if m.BeginWait(&w, th, OpLock) {
		time.Sleep(d)
		w.EndWait(-1)
	}
}

// F1. TRUNCATE accounts removes an idle account row; a later thread of the
// same user@host makes a new row with the same baseline key. The by_account
// baseline of the old row (taken by an earlier TRUNCATE of by_account) is
// subtracted from the new row: COUNT under-reports and SUM_TIMER_WAIT
// wraps around (new Sum < old baseline Sum).
func TestReviewActorBaselineReusedAfterTruncateAccounts(t *testing.T) {
	const byAcct = "events_waits_summary_by_account_by_event_name"
	f := newFixture(t)
	th1 := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h1"})
	for range 3 {
		rvLongWait(f.m, th1, 2*time.Millisecond)
	}
	if err := f.s.Truncate(byAcct); err != nil {
		t.Fatal(err)
	}
	th1.End()
	if err := f.s.Truncate("accounts"); err != nil { // alice@h1 has no connection: removed
		t.Fatal(err)
	}
	th2 := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h1"})
	defer th2.End()
	for range 4 {
		waitOnce(f.m, th2) // short waits
	}
	v := rvOne(t, f.s, byAcct, map[string]Value{"USER": "alice", "HOST": "h1", "EVENT_NAME": f.mutex.Name()})
	t.Logf("by_account alice@h1 after 4 new short waits: %+v", v)
	if v.cnt != 4 || !v.consistent() || v.sum > uint64(time.Second)*1000 {
		t.Errorf("new account row inherits the removed row's baseline: %+v (want COUNT 4, small SUM)", v)
	}
}

// F1b. Same with TRUNCATE users and the by_user summary.
func TestReviewUserBaselineReusedAfterTruncateUsers(t *testing.T) {
	const byUser = "events_waits_summary_by_user_by_event_name"
	f := newFixture(t)
	th1 := f.s.NewThread(f.thread, ThreadOptions{User: "bob"}) // user only: rolls up into the user row
	for range 3 {
		rvLongWait(f.m, th1, 2*time.Millisecond)
	}
	if err := f.s.Truncate(byUser); err != nil {
		t.Fatal(err)
	}
	th1.End()
	if err := f.s.Truncate("users"); err != nil {
		t.Fatal(err)
	}
	th2 := f.s.NewThread(f.thread, ThreadOptions{User: "bob"})
	defer th2.End()
	for range 4 {
		waitOnce(f.m, th2)
	}
	v := rvOne(t, f.s, byUser, map[string]Value{"USER": "bob", "EVENT_NAME": f.mutex.Name()})
	t.Logf("by_user bob after 4 new short waits: %+v", v)
	if v.cnt != 4 || !v.consistent() || v.sum > uint64(time.Second)*1000 {
		t.Errorf("new user row inherits the removed row's baseline: %+v (want COUNT 4, small SUM)", v)
	}
}

// F2. MIN/MAX words keep 48 bits of picoseconds: 2^48 ps is 281 s, not "78
// hours" (stat.go). A wait longer than ~4.7 minutes (an idle connection, a
// Cond wait, a socket recv) saturates MIN/MAX at 281.47 s: one 600 s idle
// wait shows MIN 281 s (and, before e3008a3, MAX 281 s < AVG); two waits of
// 600 s and 900 s show MAX = AVG = 750 s.
func TestReviewExtremesSaturateAt281Seconds(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	idle := func(secs uint64) {
		var w WaitState
		if !f.s.BeginIdle(&w, th) {
			t.Fatal("idle off")
		}
		w.start -= secs * 1e12 // the idle wait began secs seconds ago
		w.EndWait(-1)
	}
	idle(600)
	v := rvOne(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": "idle"})
	t.Logf("one 600 s idle wait: %+v", v)
	if v.mn < 600*1e12 || v.mx < 600*1e12 {
		t.Errorf("one 600 s idle wait: MIN %.2f s, MAX %.2f s", float64(v.mn)/1e12, float64(v.mx)/1e12)
	}
	idle(900)
	v = rvOne(t, f.s, "events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "idle"})
	t.Logf("idle waits of 600 s and 900 s: %+v", v)
	if v.mx < 900*1e12 {
		t.Errorf("idle waits of 600 s and 900 s: MAX %.2f s", float64(v.mx)/1e12)
	}
}

// F3. Baseline keys of actor rows: they were once strings in which the
// class name followed the host after a '/', so a host containing '/' made
// (host "h", class "wait/synch/mutex/x/idle") and
// (host "h/wait/synch/mutex/x", class "idle") one key: one row got the
// other's baseline. Keys are typed now (rowKey); this keeps them apart.
func TestReviewActorBaselineKeyCollision(t *testing.T) {
	const byHost = "events_waits_summary_by_host_by_event_name"
	f := newFixture(t)
	mx := f.s.MustRegister("wait/synch/mutex/x/idle")
	m := f.s.NewSyncInstance(mx, "review_test.go:1")
	a := f.s.NewThread(f.thread, ThreadOptions{Host: "h"})
	defer a.End()
	b := f.s.NewThread(f.thread, ThreadOptions{Host: "h/wait/synch/mutex/x"})
	defer b.End()
	for range 5 {
		waitOnce(m, a) // host h: 5 mutex waits of wait/synch/mutex/x/idle
	}
	var w WaitState
	if f.s.BeginIdle(&w, b) { // host h/wait/synch/mutex/x: 1 idle wait
		w.EndWait(-1)
	}
	if err := f.s.Truncate(byHost); err != nil {
		t.Fatal(err)
	}
	va := rvOne(t, f.s, byHost, map[string]Value{"HOST": "h", "EVENT_NAME": mx.Name()})
	vb := rvOne(t, f.s, byHost, map[string]Value{"HOST": "h/wait/synch/mutex/x", "EVENT_NAME": "idle"})
	if va.cnt != 0 || vb.cnt != 0 {
		t.Errorf("right after TRUNCATE: host h %s = %+v, host h/... idle = %+v; want both 0 (baseline keys collide)",
			mx.Name(), va, vb)
	}
}

// F4. Status() says "in name order".
func TestReviewStatusInNameOrder(t *testing.T) {
	f := newFixture(t)
	st := f.s.Status()
	if !sort.SliceIsSorted(st, func(i, j int) bool { return st[i].Name < st[j].Name }) {
		var names []string
		for _, v := range st {
			names = append(names, v.Name)
		}
		t.Errorf("Status() not in name order: %v", names)
	}
}

// F5. A writer that loaded the epoch tag before a TRUNCATE and writes its
// extremes after it (EndWait preempted between its tag load and the CAS;
// actorsDisconnect loads the tag before blocking on row mutexes) replaces a
// newer epoch's MIN/MAX word with an old-epoch one: the extremes of events
// that ended after the TRUNCATE are forgotten. Here the one long wait after
// the TRUNCATE disappears from MAX.
func TestReviewStaleEpochWriterErasesNewExtremes(t *testing.T) {
	const byInst = "events_waits_summary_by_instance"
	f := newFixture(t)
	rw := f.s.MustRegister("wait/synch/rwlock/test/rw")
	m := f.s.NewSyncInstance(rw, "review_test.go:2")
	stale := f.s.epochOf(truncSync) // writer A loads its tag ...
	if err := f.s.Truncate(byInst); err != nil {
		t.Fatal(err)
	}
	var w WaitState // B: a 5 ms read-lock wait after the TRUNCATE
	if m.BeginWait(&w, nil, OpReadLock) {
		time.Sleep(5 * time.Millisecond)
		w.EndWait(-1)
	}
	m.rec.Value.shared.aggregate(stale, true, 1000) // ... A ends now, with the old tag
	if m.BeginWait(&w, nil, OpReadLock) {           // C: a short wait
		w.EndWait(-1)
	}
	v := rvOne(t, f.s, byInst, map[string]Value{"EVENT_NAME": rw.Name()})
	t.Logf("after TRUNCATE: 5 ms wait, stale 1 ns write, short wait: %+v", v)
	// The wait is timed on the cycle counter, whose calibration may put a
	// 5 ms sleep a little under 5 ms (4.9995 ms in a CI run): the stale
	// write would leave 1 ns.
	if v.mx < uint64(4*time.Millisecond)*1000 {
		t.Errorf("MAX_TIMER_WAIT %d ps lost the 5 ms wait that ended after the TRUNCATE", v.mx)
	}
}

// F6 (table). The same through Select: after a TRUNCATE of by_instance,
// new instances have no baseline and the table's epoch is current, so
// their rows are shown raw. Writers create an rwlock instance and end a
// first read-lock wait on it while a reader checks every row.
func TestReviewTornRowsAfterTruncateTable(t *testing.T) {
	const byInst = "events_waits_summary_by_instance"
	f := newFixture(t)
	rw := f.s.MustRegister("wait/synch/rwlock/test/torn")
	if err := f.s.Truncate(byInst); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m := f.s.NewSyncInstance(rw, "review_test.go:3")
				for range 3 {
					var w WaitState
					if m.BeginWait(&w, nil, OpReadLock) {
						w.EndWait(-1)
					}
				}
				m.Destroy()
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	var bad []string
	reads := 0
	for time.Now().Before(deadline) && len(bad) == 0 {
		res, err := f.s.Select(byInst)
		if err != nil {
			t.Fatal(err)
		}
		reads++
		for _, r := range res.Rows {
			v := rvStat{r[2].(uint64), r[3].(uint64), r[4].(uint64), r[5].(uint64), r[6].(uint64)}
			if !v.consistent() {
				bad = append(bad, fmt.Sprintf("%v", r))
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d reads", reads)
	if len(bad) != 0 {
		t.Errorf("inconsistent rows after TRUNCATE: %v", bad)
	}
}

// rvWatchdog fails the test with every goroutine's stack if done is not
// closed within d (a deadlock).
func rvWatchdog(t *testing.T, d time.Duration, done <-chan struct{}) {
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			buf := make([]byte, 1<<22)
			n := runtime.Stack(buf, true)
			panic(fmt.Sprintf("review: no progress after %v (deadlock?)\n%s", d, buf[:n]))
		}
	}()
}

// S1. Stress: threads with user+host, user only, host only, none, over
// bounded actor tables; each worker goroutine uses its own mutex class, so
// a row of one worker's thread showing another worker's class is storage
// that changed owner. Threads are ended twice concurrently, used after End,
// and driven by two goroutines at once. Meanwhile every TRUNCATE that
// touches actors, and readers of every table. Checks: no deadlock, no
// storage leaking between threads (by_thread, current, history), rows
// consistent, per-row COUNT monotone between two reads with no TRUNCATE
// in between.
func TestReviewStressActorsThreadsTruncate(t *testing.T) {
	f := newFixture(t, WithAccountsSize(3), WithUsersSize(2), WithHostsSize(2))
	s := f.s
	const workers = 6
	classes := make([]*Class, workers)
	insts := make([]*SyncInstance, workers)
	for g := range workers {
		classes[g] = s.MustRegister(fmt.Sprintf("wait/synch/mutex/rv/w%d", g))
		insts[g] = s.NewSyncInstance(classes[g], "review_test.go:10")
	}
	owner := sync.Map{} // thread id -> worker
	var stop atomic.Bool
	// Per summary, a generation bumped before and after every TRUNCATE that
	// may lower its rows: its own, the tables MySQL truncates it with, and
	// the actor tables.
	const (
		sAcct   = "events_waits_summary_by_account_by_event_name"
		sUser   = "events_waits_summary_by_user_by_event_name"
		sHost   = "events_waits_summary_by_host_by_event_name"
		sGlobal = "events_waits_summary_global_by_event_name"
		sThread = "events_waits_summary_by_thread_by_event_name"
	)
	affects := map[string][]string{
		"accounts": {sAcct, sThread}, "users": {sUser, sAcct, sThread}, "hosts": {sHost, sAcct, sThread},
		sAcct: {sAcct, sThread}, sUser: {sUser, sAcct, sThread}, sHost: {sHost, sAcct, sThread},
		sGlobal: {sGlobal, sAcct, sUser, sHost, sThread}, sThread: {sThread},
	}
	gens := map[string]*atomic.Uint64{}
	for _, n := range []string{sAcct, sUser, sHost, sGlobal, sThread} {
		gens[n] = new(atomic.Uint64)
	}
	bump := func(table string) {
		for _, n := range affects[table] {
			gens[n].Add(1)
		}
	}
	var wg sync.WaitGroup
	var threadsMade atomic.Int64
	users := []string{"", "u0", "u1", "u2"}
	hosts := []string{"", "h0", "h1", "h2"}
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				th := s.NewThread(f.thread, ThreadOptions{User: users[(g+i)%4], Host: hosts[(g*7+i/3)%4]})
				if th == nil {
					continue
				}
				threadsMade.Add(1)
				owner.Store(th.ID(), g)
				for range 5 {
					waitOnce(insts[g], th)
				}
				var w WaitState
				if s.BeginIdle(&w, th) {
					w.EndWait(-1)
				}
				sw := i % 4
				if c := os.Getenv("RV_CASE"); c != "" {
					sw = int(c[0] - '0')
				}
				switch sw {
				case 0: // End twice at once
					var ew sync.WaitGroup
					ew.Add(2)
					go func() { defer ew.Done(); th.End() }()
					go func() { defer ew.Done(); th.End() }()
					ew.Wait()
				case 1: // a wait in flight across End, then used after End
					var w WaitState
					insts[g].BeginWait(&w, th, OpLock)
					th.End()
					w.EndWait(-1)
					waitOnce(insts[g], th)
				case 2: // two goroutines on one thread, then End
					var ew sync.WaitGroup
					ew.Add(1)
					go func() {
						defer ew.Done()
						for range 20 {
							waitOnce(insts[g], th)
						}
					}()
					for range 20 {
						waitOnce(insts[g], th)
					}
					ew.Wait()
					th.End()
				default:
					th.End()
				}
			}
		}()
	}
	truncs := []string{"accounts", "users", "hosts",
		"events_waits_summary_by_account_by_event_name", "events_waits_summary_by_user_by_event_name",
		"events_waits_summary_by_host_by_event_name", "events_waits_summary_global_by_event_name",
		"events_waits_summary_by_thread_by_event_name", "events_waits_current", "events_waits_history"}
	if os.Getenv("RV_NOACTORTRUNC") != "" {
		truncs = truncs[3:]
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if os.Getenv("RV_NOTRUNC") != "" {
				time.Sleep(time.Millisecond)
				continue
			}
			bump(truncs[i%len(truncs)])
			if err := s.Truncate(truncs[i%len(truncs)]); err != nil {
				t.Error(err)
			}
			bump(truncs[i%len(truncs)])
			time.Sleep(time.Millisecond)
		}
	}()
	var problems sync.Map
	report := func(k, msg string) {
		if _, loaded := problems.LoadOrStore(k, msg); !loaded {
			t.Error(msg)
		}
	}
	workerOf := func(id uint64) (int, bool) {
		g, ok := owner.Load(id)
		if !ok {
			return 0, false
		}
		return g.(int), true
	}
	classWorker := map[string]int{}
	for g, c := range classes {
		classWorker[c.Name()] = g
	}
	summaries := []string{"events_waits_summary_by_account_by_event_name", "events_waits_summary_by_user_by_event_name",
		"events_waits_summary_by_host_by_event_name", "events_waits_summary_global_by_event_name",
		"events_waits_summary_by_thread_by_event_name"}
	var reads atomic.Int64
	for rd := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := map[string]map[string]uint64{}
			prevGen := map[string]uint64{}
			for !stop.Load() {
				table := summaries[(rd+int(reads.Load()))%len(summaries)]
				g0 := gens[table].Load()
				res, err := s.Select(table)
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				stable := g0%2 == 0 && gens[table].Load() == g0
				nlead := len(res.Columns) - 5
				cur := map[string]uint64{}
				for _, r := range res.Rows {
					key := table + fmt.Sprint(r[:nlead])
					v := rvStat{r[nlead].(uint64), r[nlead+1].(uint64), r[nlead+2].(uint64), r[nlead+3].(uint64), r[nlead+4].(uint64)}
					if !v.consistent() {
						report("consistent "+table, fmt.Sprintf("%s: inconsistent row %v", table, r))
					}
					if v.sum > 1<<62 {
						report("sum "+table, fmt.Sprintf("%s: SUM wrapped: %v", table, r))
					}
					cur[key] = v.cnt
					if table == "events_waits_summary_by_thread_by_event_name" && v.cnt > 0 {
						if g, ok := workerOf(r[0].(uint64)); ok {
							if cg, isW := classWorker[r[1].(string)]; isW && cg != g {
								report("leak", fmt.Sprintf("by_thread: thread %v of worker %d counts worker %d's class: %v", r[0], g, cg, r))
							}
						}
					}
				}
				if stable {
					if p, ok := prevGen[table]; ok && p == g0 {
						for k, c := range cur {
							if pc, ok := prev[table][k]; ok && c < pc {
								report("mono "+k, fmt.Sprintf("%s decreased from %d to %d with no TRUNCATE between", k, pc, c))
							}
						}
					}
					prev[table], prevGen[table] = cur, g0
				} else {
					delete(prev, table)
					delete(prevGen, table)
				}
				for _, e := range s.EventsWaitsCurrent() {
					if g, ok := workerOf(e.ThreadID); ok {
						if cg, isW := classWorker[e.EventName]; isW && cg != g {
							report("leakcur", fmt.Sprintf("events_waits_current: thread %d of worker %d shows %s", e.ThreadID, g, e.EventName))
						}
					}
				}
				for _, e := range s.EventsWaitsHistory() {
					if g, ok := workerOf(e.ThreadID); ok {
						if cg, isW := classWorker[e.EventName]; isW && cg != g {
							report("leakhist", fmt.Sprintf("events_waits_history: thread %d of worker %d shows %s", e.ThreadID, g, e.EventName))
						}
					}
				}
				for _, table := range []string{"threads", "accounts", "users", "hosts", "global_status"} {
					if _, err := s.Select(table); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	rvWatchdog(t, 60*time.Second, done)
	time.Sleep(4 * time.Second)
	stop.Store(true)
	wg.Wait()
	close(done)
	t.Logf("%d threads, %d reads, thread_events_lost %d", threadsMade.Load(), reads.Load(), statusValue(s, "Performance_schema_thread_events_lost"))
}

// F7. A reader that loads the epoch tag (at the start of raw) before a
// concurrent TRUNCATE and the table's baseline (after raw) after it mixes
// extremes of the old epoch (events before the TRUNCATE) with counts and
// sums rebased past them: MAX > SUM. No actor tables involved: one mutex,
// long and short waits, TRUNCATE of by_instance in a loop, readers of
// by_instance and global.
func TestReviewReaderRacesTruncate(t *testing.T) {
	f := newFixture(t)
	s := f.s
	th := s.NewThread(f.thread, ThreadOptions{})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if i%8 == 0 {
				rvLongWait(f.m, th, 200*time.Microsecond)
			} else {
				waitOnce(f.m, th)
			}
		}
		th.End()
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			for _, n := range []string{"events_waits_summary_by_instance", "events_waits_summary_by_thread_by_event_name"} {
				if err := s.Truncate(n); err != nil {
					t.Error(err)
				}
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	var bad []string
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && len(bad) < 3 {
		for _, tc := range []struct {
			table string
			where map[string]Value
		}{
			{"events_waits_summary_by_instance", map[string]Value{"EVENT_NAME": f.mutex.Name()}},
			{"events_waits_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.mutex.Name()}},
			{"events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.mutex.Name()}},
		} {
			for _, r := range findRows(t, s, tc.table, tc.where) {
				if v := rvRow(r); !v.consistent() {
					bad = append(bad, fmt.Sprintf("%s %+v", tc.table, v))
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if len(bad) != 0 {
		t.Errorf("rows read concurrently with TRUNCATE: %v", bad)
	}
}

// F8. Two goroutines on one Thread (a misuse the engine "survives") end
// their waits out of LIFO order; endWaitEvent sets depth = w.level, so the
// depth ratchets up (to 3) and stays up after the misuse ends: for the rest
// of the thread's life events_waits_current shows three stale ended events
// and never the thread's latest wait (it lives at level 3, past depth), and
// every new wait nests under a stale event. (The interleaving below is what
// two goroutines produce; one goroutine replays it deterministically.)
func TestReviewMisuseRatchetsWaitDepth(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	for range 4 { // G1 begins, G2 begins, G1 ends, G2 ends
		var w1, w2 WaitState
		f.m.BeginWait(&w1, th, OpLock)
		f.m.BeginWait(&w2, th, OpLock)
		w1.EndWait(-1)
		w2.EndWait(-1)
	}
	t.Logf("depth after the overlaps: %d", th.depthCell.Load())
	for range 5 { // correct use from now on
		waitOnce(f.m, th)
	}
	cur := f.s.EventsWaitsCurrent()
	if len(cur) != 1 || cur[0].NestingEventID != 0 {
		t.Errorf("after the misuse ended and 5 correct waits: depth %d, events_waits_current has %d rows (want 1, not nested):", th.depthCell.Load(), len(cur))
		for _, e := range cur {
			t.Logf("  EVENT_ID %d END_EVENT_ID %d NESTING_EVENT_ID %d", e.EventID, e.EndEventID, e.NestingEventID)
		}
	}
}
