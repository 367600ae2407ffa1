package pfscore_test

// Reproducers of concurrency defects found by review, through the public
// API only:
//
//	A  a summary Select panics while classes register
//	B  the global summary's cumulative rows go down while threads end
//	C  readers reach a thread's recycled storage through a stale handle
//	D  two goroutines driving one Thread tear its rows
//
// and the helpers the other concurrency tests of this package share
// (monotone_test.go, torn_test.go): a start-gated, time-bounded group of
// goroutines, and wait rows normalized from either EventsWaits* or Select.

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// hxNew returns a schema that ignores the OTELPFS_* environment.
func hxNew(t testing.TB, opts ...pfscore.Option) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hxWaitConsumers switches on events_waits_current, _history and
// _history_long, which are off by default.
func hxWaitConsumers() []pfscore.Option {
	return []pfscore.Option{
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true),
	}
}

// hxBudget is how long a concurrency test runs when nothing fails.
func hxBudget(long time.Duration) time.Duration {
	if testing.Short() {
		return 300 * time.Millisecond
	}
	return long
}

// hxIters bounds a loop by count as well as by time.
func hxIters(n int) int {
	if testing.Short() {
		return max(n/8, 1)
	}
	return n
}

// hxRun is a group of goroutines held at a start gate, released together by
// Begin, and stopped by the time budget, by Stop, or by the first failures.
// No goroutine outlives the test: Wait joins them, and a cleanup stops and
// joins them if the test returns early.
type hxRun struct {
	t        *testing.T
	d        time.Duration
	gate     chan struct{}
	gateOnce sync.Once
	wg       sync.WaitGroup
	stop     atomic.Bool
	timer    *time.Timer
	errs     atomic.Int32
	reads    atomic.Uint64 // hxReadSummary's reads, to alternate Select and ReadRows
}

const hxMaxErrors = 6

func hxStart(t *testing.T, d time.Duration) *hxRun {
	r := &hxRun{t: t, d: d, gate: make(chan struct{})}
	t.Cleanup(func() {
		r.Stop()
		r.open()
		r.wg.Wait()
		if r.timer != nil {
			r.timer.Stop()
		}
	})
	return r
}

func (r *hxRun) open() { r.gateOnce.Do(func() { close(r.gate) }) }

// Go starts f behind the gate.
func (r *hxRun) Go(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-r.gate
		f()
	}()
}

// Begin opens the gate and starts the clock.
func (r *hxRun) Begin() {
	r.timer = time.AfterFunc(r.d, r.Stop)
	r.open()
}

// On reports whether the goroutines should go on.
func (r *hxRun) On() bool { return !r.stop.Load() }

// Stop tells every goroutine to finish.
func (r *hxRun) Stop() { r.stop.Store(true) }

// Wait joins the goroutines.
func (r *hxRun) Wait() { r.wg.Wait() }

// Fail reports a violation; after a few, the run stops.
func (r *hxRun) Fail(format string, args ...any) {
	r.t.Helper()
	if n := r.errs.Add(1); n <= hxMaxErrors {
		r.t.Errorf(format, args...)
	}
	if r.errs.Load() >= hxMaxErrors {
		r.Stop()
	}
}

// Failed reports whether Fail was called.
func (r *hxRun) Failed() bool { return r.errs.Load() > 0 }

// hxEvent is a row of events_waits_current, _history or _history_long,
// read through EventsWaits* or through Select. Zero is NULL for the
// nullable columns.
type hxEvent struct {
	thread, id, end   uint64 // THREAD_ID, EVENT_ID, END_EVENT_ID
	name, object, op  string // EVENT_NAME, OBJECT_NAME, OPERATION
	start, stop       uint64 // TIMER_START, TIMER_END
	nesting           uint64 // NESTING_EVENT_ID
	bytes             int64  // NUMBER_OF_BYTES
	hasBytes, running bool   // NUMBER_OF_BYTES not NULL; END_EVENT_ID NULL
}

func (e hxEvent) String() string {
	b := "NULL"
	if e.hasBytes {
		b = fmt.Sprint(e.bytes)
	}
	end := "NULL"
	if !e.running {
		end = fmt.Sprint(e.end)
	}
	return fmt.Sprintf("{THREAD_ID %d EVENT_ID %d END_EVENT_ID %s %s OBJECT_NAME %q OPERATION %s NUMBER_OF_BYTES %s TIMER_START %d TIMER_END %d NESTING_EVENT_ID %d}",
		e.thread, e.id, end, e.name, e.object, e.op, b, e.start, e.stop, e.nesting)
}

func hxFromWaits(es []pfscore.WaitEvent) []hxEvent {
	out := make([]hxEvent, len(es))
	for i, e := range es {
		out[i] = hxEvent{thread: e.ThreadID, id: e.EventID, end: e.EndEventID, name: e.EventName,
			object: e.ObjectName, op: e.Operation.String(), start: e.TimerStart, stop: e.TimerEnd,
			nesting: e.NestingEventID, bytes: e.NumberOfBytes, hasBytes: e.HasBytes, running: e.InProgress}
	}
	return out
}

// hxSelectWaits reads a wait events table with Select.
func hxSelectWaits(r *hxRun, s *pfscore.Schema, table string) []hxEvent {
	res, err := s.Select(table)
	if err != nil {
		r.Fail("Select(%s): %v", table, err)
		return nil
	}
	col := map[string]int{}
	for i, c := range res.Columns {
		col[c.Name] = i
	}
	u := func(row pfscore.Row, name string) uint64 {
		v, _ := row[col[name]].(uint64)
		return v
	}
	str := func(row pfscore.Row, name string) string {
		v, _ := row[col[name]].(string)
		return v
	}
	out := make([]hxEvent, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) != len(res.Columns) {
			r.Fail("%s: a row of %d values for %d columns", table, len(row), len(res.Columns))
			continue
		}
		e := hxEvent{thread: u(row, "THREAD_ID"), id: u(row, "EVENT_ID"), end: u(row, "END_EVENT_ID"),
			name: str(row, "EVENT_NAME"), object: str(row, "OBJECT_NAME"), op: str(row, "OPERATION"),
			start: u(row, "TIMER_START"), stop: u(row, "TIMER_END"), nesting: u(row, "NESTING_EVENT_ID"),
			running: row[col["END_EVENT_ID"]] == nil}
		if b, ok := row[col["NUMBER_OF_BYTES"]].(int64); ok {
			e.bytes, e.hasBytes = b, true
		}
		out = append(out, e)
	}
	return out
}

// hxHistorySize is events_waits_history's rows per thread, where a test
// sets it.
const hxHistorySize = 10

// hxWaitTables are the three wait event tables.
var hxWaitTables = []string{"events_waits_current", "events_waits_history", "events_waits_history_long"}

// hxReadWaits reads table i of hxWaitTables, through EventsWaits* if api,
// else through Select.
func hxReadWaits(r *hxRun, s *pfscore.Schema, i int, api bool) []hxEvent {
	if !api {
		return hxSelectWaits(r, s, hxWaitTables[i])
	}
	switch i {
	case 0:
		return hxFromWaits(s.EventsWaitsCurrent())
	case 1:
		return hxFromWaits(s.EventsWaitsHistory())
	}
	return hxFromWaits(s.EventsWaitsHistoryLong())
}

// hxSummary reads a summary table as rows keyed by their key columns (see
// hxIsMeasure), with the measure columns by name.
type hxSummaryRow struct {
	key  string
	vals map[string]uint64
}

// hxIsMeasure reports whether a summary column is a statistic rather than
// part of the row's key: COUNT_*, SUM_*, MIN_*, AVG_*, MAX_*, and
// memory_summary's LOW_*, CURRENT_* and HIGH_*.
func hxIsMeasure(col string) bool {
	for _, p := range []string{"COUNT_", "SUM_", "MIN_", "AVG_", "MAX_", "LOW_", "CURRENT_", "HIGH_"} {
		if strings.HasPrefix(col, p) {
			return true
		}
	}
	return false
}

// hxReadRows reads table with ReadRows and returns its cells as a Result,
// failing r where a typed accessor disagrees with the cell's Value.
func hxReadRows(r *hxRun, s *pfscore.Schema, table string) (*pfscore.Result, error) {
	rows, err := s.ReadRows(table)
	if err != nil {
		return nil, err
	}
	res := &pfscore.Result{Table: table, Columns: rows.Columns(), Rows: make([]pfscore.Row, rows.Len())}
	for i := range res.Rows {
		v := rows.Row(i)
		row := make(pfscore.Row, len(res.Columns))
		for col := range row {
			row[col] = v.Value(col)
			u, uok := v.Uint(col)
			n, iok := v.Int(col)
			if x, ok := row[col].(uint64); ok != uok || x != u {
				r.Fail("%s: Uint(%d) = %d, %v; Value %#v", table, col, u, uok, row[col])
			}
			if x, ok := row[col].(int64); ok != iok || x != n {
				r.Fail("%s: Int(%d) = %d, %v; Value %#v", table, col, n, iok, row[col])
			}
			if !v.Is(col, row[col]) || v.Null(col) != (row[col] == nil) {
				r.Fail("%s: Is or Null of column %d disagree with Value %#v", table, col, row[col])
			}
		}
		res.Rows[i] = row
	}
	return res, nil
}

func hxReadSummary(r *hxRun, s *pfscore.Schema, table string) []hxSummaryRow {
	var res *pfscore.Result
	var err error
	if r.reads.Add(1)%2 == 0 {
		// Every other read in place (ReadRows), its cells as Values: the
		// checks hold for both reads, and across them.
		res, err = hxReadRows(r, s, table)
	} else {
		res, err = s.Select(table)
	}
	if err != nil {
		r.Fail("Select(%s): %v", table, err)
		return nil
	}
	out := make([]hxSummaryRow, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) != len(res.Columns) {
			r.Fail("%s: a row of %d values for %d columns", table, len(row), len(res.Columns))
			continue
		}
		var key strings.Builder
		vals := make(map[string]uint64, len(row))
		for i, c := range res.Columns {
			if !hxIsMeasure(c.Name) {
				if c.Role == pfscore.RoleDimension { // not DIGEST_TEXT, LAST_SEEN, QUANTILE_95, ...
					fmt.Fprintf(&key, "%s=%v ", c.Name, row[i])
				}
				continue
			}
			switch v := row[i].(type) {
			case uint64:
				vals[c.Name] = v
			case int64:
				vals[c.Name] = uint64(v)
				// A memory row's LOW may be negative but in the global
				// table: it is a lower estimate, and memory an account's
				// thread allocated may be freed by another account's.
				lowOK := strings.HasPrefix(table, "memory_summary_by_") && strings.HasPrefix(c.Name, "LOW_")
				if v < 0 && !lowOK {
					r.Fail("%s %s: %s = %d < 0", table, key.String(), c.Name, v)
				}
			case nil:
			default:
				r.Fail("%s %s: %s has a %T", table, key.String(), c.Name, v)
			}
		}
		out = append(out, hxSummaryRow{key: strings.TrimSpace(key.String()), vals: vals})
	}
	return out
}

// hxProcs raises GOMAXPROCS to at least n for the rest of the test.
func hxProcs(t *testing.T, n int) {
	if old := runtime.GOMAXPROCS(0); old < n {
		runtime.GOMAXPROCS(n)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
}

// hxIdleWait records one idle wait of th.
func hxIdleWait(s *pfscore.Schema, th *pfscore.Thread) {
	var w pfscore.WaitState
	if s.BeginIdle(&w, th) {
		w.EndWait(-1)
	}
}

// hxSyncWait records one wait of op on m by th.
func hxSyncWait(m *pfscore.SyncInstance, th *pfscore.Thread, op pfscore.Operation) {
	var w pfscore.WaitState
	if m.BeginWait(&w, th, op) {
		w.EndWait(-1)
	}
}

// hxIOWait records one I/O wait of op on f by th, moving bytes.
func hxIOWait(f *pfscore.IOInstance, th *pfscore.Thread, op pfscore.Operation, bytes int64) {
	var w pfscore.WaitState
	if f.BeginWait(&w, th, op) {
		w.EndWait(bytes)
	}
}

// TestSummarySelectWhileRegisteringConcurrentSafe (defect A): the
// global, by_account, by_user and by_host wait summaries must not panic
// while classes register, whether by Register or on a class's first
// instance and wait. A panic kills the test binary: nothing recovers it.
func TestSummarySelectWhileRegisteringConcurrentSafe(t *testing.T) {
	for _, table := range []string{
		"events_waits_summary_global_by_event_name",
		"events_waits_summary_by_account_by_event_name",
		"events_waits_summary_by_user_by_event_name",
		"events_waits_summary_by_host_by_event_name",
	} {
		t.Run(strings.TrimPrefix(table, "events_waits_summary_"), func(t *testing.T) { hxSelectWhileRegistering(t, table) })
	}
}

func hxSelectWhileRegistering(t *testing.T, table string) {
	const maxClasses = 1 << 13
	s := hxNew(t, pfscore.WithMaxClasses(maxClasses))
	tc := s.MustRegister("thread/hx/actor")
	// Threads with a user and a host, so that the actor summaries have rows;
	// thread i is driven only by waiter i below.
	var threads []*pfscore.Thread
	for i := range 4 {
		th := s.NewThread(tc, pfscore.ThreadOptions{User: fmt.Sprint("user", i%2), Host: fmt.Sprint("host", i%3)})
		if th == nil {
			t.Fatal("NewThread returned nil")
		}
		threads = append(threads, th)
	}
	t.Cleanup(func() {
		for _, th := range threads {
			th.End()
		}
	})
	limit := int64(hxIters(maxClasses - 64))
	kinds := []string{"wait/synch/mutex", "wait/synch/rwlock", "wait/synch/cond", "wait/io/file", "wait/io/socket"}
	r := hxStart(t, hxBudget(500*time.Millisecond))
	var next, selects atomic.Int64
	for g := range 2 { // registrars
		r.Go(func() {
			for r.On() {
				n := next.Add(1)
				if n > limit {
					return
				}
				if _, err := s.Register(fmt.Sprintf("%s/hxa/r%d_%d", kinds[n%int64(len(kinds))], g, n)); err != nil {
					r.Fail("Register: %v", err)
					return
				}
			}
		})
	}
	for i, th := range threads { // lazy registration: a new class, its first instance and a wait on it
		r.Go(func() {
			for r.On() {
				n := next.Add(1)
				if n > limit {
					return
				}
				op := pfscore.OpLock
				name := fmt.Sprintf("wait/synch/mutex/hxa/lazy%d_%d", i, n)
				if n%2 == 0 {
					op, name = pfscore.OpWait, fmt.Sprintf("wait/synch/cond/hxa/lazy%d_%d", i, n)
				}
				c, err := s.Register(name)
				if err != nil {
					r.Fail("Register: %v", err)
					return
				}
				m := s.NewSyncInstance(c, "hardening_test.go:1")
				hxSyncWait(m, th, op)
				m.Destroy()
			}
		})
	}
	for range 3 {
		r.Go(func() {
			for r.On() && next.Load() <= limit {
				if _, err := s.Select(table); err != nil {
					r.Fail("Select(%s): %v", table, err)
					return
				}
				selects.Add(1)
			}
		})
	}
	r.Begin()
	r.Wait()
	t.Logf("%d classes registered, %d selects", len(s.Classes()), selects.Load())
}

// TestGlobalSummaryMonotoneWhileThreadsEndConcurrentSafe (defect B): no
// row of events_waits_summary_global_by_event_name may go down while
// threads that did idle waits end, with or without an account: the idle row
// adds the live threads to the roll-up of the ended ones, and a thread that
// ends during the read must count once. Most threads did their waits before
// the reads start, so a double count is not hidden by new waits; a few more
// threads start, wait and end during the reads.
func TestGlobalSummaryMonotoneWhileThreadsEndConcurrentSafe(t *testing.T) {
	// Rounds of a fresh schema, until the budget is spent: a round lasts as
	// long as its preloaded threads take to end.
	budget := hxBudget(time.Second)
	start := time.Now()
	for round := 0; round == 0 || time.Since(start) < budget && !t.Failed(); round++ {
		hxGlobalWhileThreadsEnd(t, budget-time.Since(start))
	}
}

func hxGlobalWhileThreadsEnd(t *testing.T, budget time.Duration) {
	s := hxNew(t)
	tc := s.MustRegister("thread/hx/idler")
	for i := range 300 { // wider reads
		s.MustRegister(fmt.Sprintf("wait/synch/mutex/hxb/c%d", i))
	}
	opts := []pfscore.ThreadOptions{{}, {User: "alice", Host: "web1"}, {User: "bob"}, {Host: "web2"}, {User: "carol", Host: "web2"}}
	const idles = 100
	preloaded := hxIters(1000)
	ending := make(chan *pfscore.Thread, preloaded)
	for i := range preloaded {
		th := s.NewThread(tc, opts[i%len(opts)])
		if th == nil {
			t.Fatal("NewThread returned nil")
		}
		for range idles {
			hxIdleWait(s, th)
		}
		ending <- th // hands the thread over to an ender
	}
	close(ending)
	t.Cleanup(func() {
		for th := range ending {
			th.End()
		}
	})
	r := hxStart(t, max(budget, time.Millisecond))
	var enders sync.WaitGroup
	for range 2 {
		enders.Add(1)
		r.Go(func() {
			defer enders.Done()
			for th := range ending {
				th.End()
				if !r.On() {
					return
				}
			}
		})
	}
	r.Go(func() { // threads that start, wait and end during the reads
		for n := 0; r.On(); n++ {
			th := s.NewThread(tc, opts[n%len(opts)])
			hxIdleWait(s, th)
			th.End()
		}
	})
	var reads atomic.Int64
	r.Go(func() {
		defer r.Stop()
		done := make(chan struct{})
		go func() { enders.Wait(); close(done) }()
		type stat struct{ count, sum uint64 }
		prev := map[string]stat{}
		for i := 0; i < hxIters(1_000_000) && r.On(); i++ {
			select {
			case <-done:
				return
			default:
			}
			res, err := s.Select("events_waits_summary_global_by_event_name")
			if err != nil {
				r.Fail("Select: %v", err)
				return
			}
			cur := make(map[string]stat, len(prev))
			for _, row := range res.Rows { // EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT, ...
				name, st := row[0].(string), stat{row[1].(uint64), row[2].(uint64)}
				cur[name] = st
				if p, ok := prev[name]; ok && (st.count < p.count || st.sum < p.sum) {
					r.Fail("global summary %s went down: COUNT_STAR %d -> %d, SUM_TIMER_WAIT %d -> %d",
						name, p.count, st.count, p.sum, st.sum)
				}
			}
			prev = cur
			reads.Add(1)
		}
	})
	r.Begin()
	r.Wait()
	t.Logf("a round of %d reads", reads.Load())
}

// TestStaleThreadHandlesConcurrentSafe (defect C): threads end and new ones
// take their storage while events_waits_summary_by_thread_by_event_name,
// events_waits_current and events_waits_history are read. Thread X only
// ever waits on class X mod 5, so:
//
//   - a by_thread row (X, class) with COUNT_STAR > 0 has X's class;
//   - a by_thread row never goes down between two reads;
//   - an event row of THREAD_ID X names X's class;
//   - an event appears at most once in a read of a table,
//     events_waits_current has at most one row per thread (no nesting), and
//     events_waits_history at most its size, oldest first.
func TestStaleThreadHandlesConcurrentSafe(t *testing.T) {
	t.Run("by_thread", func(t *testing.T) { hxStaleHandles(t, -1) })
	t.Run("current", func(t *testing.T) { hxStaleHandles(t, 0) })
	t.Run("history", func(t *testing.T) { hxStaleHandles(t, 1) })
}

// hxStaleHandles runs the writers of TestStaleThreadHandlesConcurrentSafe
// with readers of events_waits_summary_by_thread_by_event_name (table -1)
// or of hxWaitTables[table].
func hxStaleHandles(t *testing.T, table int) {
	// Idle bystander threads fill the threads container, but for a few
	// slots that the writers' threads take, so a read of a per-thread table
	// scans many bystanders between two writers' threads while writers end
	// threads and start new ones that take the old storage. The bystanders
	// have no events.
	//
	// by_thread: 6 writers start a thread after ending the last, in every
	// other slot; its stale reads show at once as a row with another
	// thread's class or counts that go down.
	//
	// current, history: a stale handle shows rows only under the THREAD_ID
	// of the thread that has the storage now, so it shows only as that
	// thread's rows read twice: through the stale handle, and through the
	// new thread's own handle, which the read must have listed too. One
	// writer starts a thread before ending the last, among three free
	// slots spread over the container: a thread's storage then goes to a
	// thread in a later slot one time in three, with a wide span of
	// bystanders between the two.
	pages, free := 16, func(i int) bool { return i%2 == 1 }
	writers, startFirst := 6, false
	if table >= 0 {
		pages = 4
		free = func(i int) bool { return i%(pages*256/3) == 100 }
		writers, startFirst = 1, true
		hxProcs(t, 8) // the reader is often preempted mid-scan
	}
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithMaxThreads(pages*256), pfscore.WithWaitsHistorySize(hxHistorySize))...)
	tc := s.MustRegister("thread/hx/worker")
	var bystanders []*pfscore.Thread
	for i := range pages * 256 {
		th := s.NewThread(tc, pfscore.ThreadOptions{})
		if th == nil {
			t.Fatalf("NewThread %d returned nil", i)
		}
		bystanders = append(bystanders, th)
	}
	for i, th := range bystanders {
		if free(i) {
			th.End()
		}
	}
	t.Cleanup(func() {
		for _, th := range bystanders {
			th.End() // again for the ended ones: a no-op
		}
	})
	// Thread X waits on class X mod len(classes) only, whichever writer
	// drives it: a writer has an instance of every class.
	var classes []*pfscore.Class
	for i := range 5 {
		classes = append(classes, s.MustRegister(fmt.Sprintf("wait/synch/mutex/hxc/c%d", i)))
	}
	var owner sync.Map // THREAD_ID -> the name of its class
	r := hxStart(t, hxBudget(time.Second))
	for g := range writers {
		var insts []*pfscore.SyncInstance
		for _, c := range classes {
			m := s.NewSyncInstance(c, "hardening_test.go:2")
			t.Cleanup(m.Destroy)
			insts = append(insts, m)
		}
		r.Go(func() {
			var last *pfscore.Thread
			defer func() { last.End() }()
			for n := 0; r.On(); n++ {
				if !startFirst {
					last.End()
				}
				th := s.NewThread(tc, pfscore.ThreadOptions{})
				if th == nil {
					r.Fail("NewThread returned nil: the threads container is full")
					return
				}
				if startFirst {
					last.End()
				}
				last = th
				c := th.ID() % uint64(len(classes))
				owner.Store(th.ID(), classes[c].Name()) // before its first event
				waits := 1 + (n*7+g)%40
				if startFirst {
					waits = 100 + n%4*100
				}
				for range waits {
					hxSyncWait(insts[c], th, pfscore.OpLock)
				}
			}
		})
	}
	classOf := func(id uint64) string {
		if v, ok := owner.Load(id); ok {
			return v.(string)
		}
		return ""
	}
	var reads atomic.Int64
	if table < 0 {
		for range 2 {
			r.Go(func() {
				prev := map[string]uint64{}
				for i := 0; i < hxIters(1_000_000) && r.On(); i++ {
					res, err := s.Select("events_waits_summary_by_thread_by_event_name")
					if err != nil {
						r.Fail("Select: %v", err)
						return
					}
					cur := make(map[string]uint64, len(prev))
					for _, row := range res.Rows { // THREAD_ID, EVENT_NAME, COUNT_STAR, ...
						id, name, n := row[0].(uint64), row[1].(string), row[2].(uint64)
						key := fmt.Sprint(id, "/", name)
						cur[key] = n
						if n > 0 && name != classOf(id) {
							r.Fail("by_thread row THREAD_ID %d EVENT_NAME %s has COUNT_STAR %d, but thread %d only waits on %s",
								id, name, n, id, classOf(id))
						}
						if p, ok := prev[key]; ok && n < p {
							r.Fail("by_thread row THREAD_ID %d EVENT_NAME %s went down: COUNT_STAR %d -> %d", id, name, p, n)
						}
					}
					prev = cur
					reads.Add(1)
				}
			})
		}
	}
	for _, api := range []bool{true, false} {
		if table < 0 {
			break
		}
		r.Go(func() {
			name := hxWaitTables[table]
			for n := 0; n < hxIters(1_000_000) && r.On(); n++ {
				rows := hxReadWaits(r, s, table, api)
				seen := map[[2]uint64]bool{}
				perThread := map[uint64]int{}
				last := map[uint64]uint64{}
				for _, e := range rows {
					if want := classOf(e.thread); e.name != want {
						r.Fail("%s (api %v): row of thread %d names %s, but the thread only waits on %s: %v",
							name, api, e.thread, e.name, want, e)
					}
					k := [2]uint64{e.thread, e.id}
					if seen[k] {
						r.Fail("%s (api %v): THREAD_ID %d EVENT_ID %d twice in one read", name, api, e.thread, e.id)
					}
					seen[k] = true
					perThread[e.thread]++
					if table == 0 && perThread[e.thread] > 1 {
						r.Fail("events_waits_current (api %v): %d rows for thread %d, which never nests waits",
							api, perThread[e.thread], e.thread)
					}
					if table == 1 && perThread[e.thread] == hxHistorySize+1 {
						r.Fail("events_waits_history (api %v): more than %d rows for thread %d", api, hxHistorySize, e.thread)
					}
					if p, ok := last[e.thread]; ok && table == 1 && e.id <= p {
						r.Fail("events_waits_history (api %v): thread %d's EVENT_ID %d after %d: a history is oldest first",
							api, e.thread, e.id, p)
					}
					last[e.thread] = e.id
				}
				reads.Add(1)
			}
		})
	}
	r.Begin()
	r.Wait()
	t.Logf("%d reads", reads.Load())
}

// TestSharedThreadRowsNotTornConcurrentSafe (defect D): goroutines misuse
// one Thread at once. Counts may be lost, but what the engine promises
// still holds: no row is torn, and -race reports nothing. Writer A only
// reads file A, writer B only writes file B, each with a byte count of its
// own residue mod 4, so a row that mixes their events shows it; each writer
// runs in three goroutines, so that two goroutines drive the thread at once
// as often as possible.
func TestSharedThreadRowsNotTornConcurrentSafe(t *testing.T) {
	// Two readers only, so that the two writers mostly run in parallel.
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithWaitsHistoryLongSize(1024))...)
	tc := s.MustRegister("thread/hx/shared")
	th := s.NewThread(tc, pfscore.ThreadOptions{User: "alice", Host: "web1"})
	type writer = hxSharedWriter
	ws := []*writer{
		{class: "wait/io/file/hxd/a", path: "/hxd/a.dat", op: pfscore.OpFileRead, residue: 1},
		{class: "wait/io/file/hxd/b", path: "/hxd/b.dat", op: pfscore.OpFileWrite, residue: 2},
	}
	byClass := map[string]*writer{}
	for _, w := range ws {
		w.f = s.FileInstance(s.MustRegister(w.class), w.path, "hardening_test.go:3")
		byClass[w.class] = w
	}
	r := hxStart(t, hxBudget(2*time.Second))
	t.Cleanup(th.End) // r.Wait below joins the writers before cleanups run
	// Three goroutines per writer, and more Ps than this machine may have
	// CPUs, so that two of them often run at once even on a loaded machine.
	hxProcs(t, 8)
	for _, w := range append(append(ws, ws...), ws...) {
		r.Go(func() {
			for k := int64(0); r.On(); k++ {
				hxIOWait(w.f, th, w.op, 4*k+w.residue)
			}
		})
	}
	var reads atomic.Int64
	for g := range 2 {
		r.Go(func() {
			for n := 0; n < hxIters(1_000_000) && r.On(); n++ {
				i, api := n%len(hxWaitTables), (n/len(hxWaitTables)+g)%2 == 0
				for _, e := range hxReadWaits(r, s, i, api) {
					if msg := hxSharedRowProblem(e, th.ID(), byClass[e.name]); msg != "" {
						r.Fail("%s (api %v): %s: %v", hxWaitTables[i], api, msg, e)
					}
				}
				reads.Add(1)
			}
		})
	}
	r.Begin()
	r.Wait()
	t.Logf("%d reads", reads.Load())
}

// hxSharedWriter is a writer of the shared thread.
type hxSharedWriter struct {
	class, path string
	op          pfscore.Operation
	residue     int64 // of NUMBER_OF_BYTES mod 4
	f           *pfscore.IOInstance
}

// hxSharedRowProblem returns what is wrong with a row of the shared thread,
// or "".
func hxSharedRowProblem(e hxEvent, thread uint64, w *hxSharedWriter) string {
	switch {
	case e.thread != thread:
		return "THREAD_ID is not the shared thread's"
	case w == nil:
		return "EVENT_NAME is neither writer's class"
	case e.object != w.path:
		return "OBJECT_NAME is the other writer's file"
	case e.op != w.op.String():
		return "OPERATION is the other writer's"
	case e.running && e.hasBytes:
		return "NUMBER_OF_BYTES of an event in progress"
	case !e.running && !e.hasBytes:
		return "NUMBER_OF_BYTES NULL for an ended event"
	case e.hasBytes && e.bytes%4 != w.residue:
		return "NUMBER_OF_BYTES is the other writer's"
	case !e.running && e.end < e.id:
		return "END_EVENT_ID < EVENT_ID"
	case e.start == 0:
		return "TIMER_START NULL for a timed event"
	case e.stop < e.start:
		return "TIMER_END < TIMER_START"
	case e.nesting != 0 && e.nesting >= e.id:
		return "NESTING_EVENT_ID >= EVENT_ID"
	}
	return ""
}
