package instrument

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

func syncSchema(t testing.TB) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowsWhere returns the rows of a table whose named columns have the given
// values, as column-name maps.
func rowsWhere(t testing.TB, s *pfscore.Schema, table string, kv ...any) []map[string]any {
	t.Helper()
	res, err := s.Select(table)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range res.Rows {
		m := map[string]any{}
		for i, c := range res.Columns {
			m[c.Name] = r[i]
		}
		ok := true
		for i := 0; i < len(kv); i += 2 {
			if m[kv[i].(string)] != kv[i+1] {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func TestMutexInstance(t *testing.T) {
	s := syncSchema(t)
	m := NewMutex("wait/synch/mutex/test/cache", WithSchema(s))
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()

	m.For(th).Lock()
	rows := rowsWhere(t, s, "mutex_instances", "NAME", "wait/synch/mutex/test/cache")
	if len(rows) != 1 || rows[0]["LOCKED_BY_THREAD_ID"] != th.ID() {
		t.Fatalf("mutex_instances while held: %v", rows)
	}
	m.Unlock()
	rows = rowsWhere(t, s, "mutex_instances", "NAME", "wait/synch/mutex/test/cache")
	if rows[0]["LOCKED_BY_THREAD_ID"] != nil {
		t.Errorf("LOCKED_BY_THREAD_ID after Unlock: %v", rows[0]["LOCKED_BY_THREAD_ID"])
	}
	if !m.TryLock() || m.TryLock() {
		t.Fatalf("TryLock semantics broken")
	}
	held := true // a critical section
	m.Unlock()
	_ = held
	st := rowsWhere(t, s, "events_waits_summary_by_instance", "EVENT_NAME", "wait/synch/mutex/test/cache")
	if len(st) != 1 || st[0]["COUNT_STAR"] != uint64(3) { // lock, try_lock ok, try_lock failed
		t.Errorf("by_instance: %v", st)
	}
	// SOURCE is where the mutex was made.
	ev := s.EventsWaitsCurrent()
	if len(ev) != 1 || ev[0].Source == "" || ev[0].Source[:len("sync_test.go")] != "sync_test.go" {
		t.Errorf("SOURCE = %+v", ev)
	}
}

func TestMutexExcludes(t *testing.T) {
	s := syncSchema(t)
	m := NewMutex("wait/synch/mutex/test/counter", WithSchema(s))
	n := 0
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := NewThread("thread/test/worker", WithSchema(s))
			defer th.End()
			for range 1000 {
				if g%2 == 0 {
					m.For(th).Lock()
				} else {
					m.Lock()
				}
				n++
				m.Unlock()
			}
		}()
	}
	wg.Wait()
	if n != 4000 {
		t.Fatalf("mutual exclusion broken: %d", n)
	}
	if c := rowsWhere(t, s, "events_waits_summary_global_by_event_name", "EVENT_NAME", "wait/synch/mutex/test/counter")[0]["COUNT_STAR"]; c != uint64(4000) {
		t.Errorf("COUNT_STAR = %v, want 4000 (the mutex serializes its statistics)", c)
	}
}

func TestRWMutexInstance(t *testing.T) {
	s := syncSchema(t)
	rw := NewRWMutex("wait/synch/rwlock/test/table", WithSchema(s))
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()
	rw.RLock()
	rw.For(th).RLock()
	rows := rowsWhere(t, s, "rwlock_instances", "NAME", "wait/synch/rwlock/test/table")
	if len(rows) != 1 || rows[0]["READ_LOCKED_BY_COUNT"] != uint64(2) || rows[0]["WRITE_LOCKED_BY_THREAD_ID"] != nil {
		t.Fatalf("rwlock_instances with two readers: %v", rows)
	}
	if rw.TryLock() {
		t.Fatal("TryLock succeeded under readers")
	}
	rw.RUnlock()
	rw.RUnlock()
	rw.For(th).Lock()
	n := 1 // a critical section
	rows = rowsWhere(t, s, "rwlock_instances", "NAME", "wait/synch/rwlock/test/table")
	if rows[0]["WRITE_LOCKED_BY_THREAD_ID"] != th.ID() || rows[0]["READ_LOCKED_BY_COUNT"] != uint64(0) {
		t.Fatalf("rwlock_instances with a writer: %v", rows)
	}
	rw.Unlock()
	_ = n
	var ops []pfscore.Operation
	for _, e := range s.EventsWaitsHistory() {
		ops = append(ops, e.Operation)
	}
	if len(ops) != 2 || ops[0] != pfscore.OpReadLock || ops[1] != pfscore.OpWriteLock {
		t.Errorf("history operations: %v", ops)
	}
	if c := rowsWhere(t, s, "events_waits_summary_by_instance", "EVENT_NAME", "wait/synch/rwlock/test/table")[0]["COUNT_STAR"]; c != uint64(4) {
		t.Errorf("by_instance COUNT_STAR %v, want 4 (rlock, rlock, try_write_lock, write_lock)", c)
	}
	l := rw.RLocker()
	l.Lock()
	n++
	l.Unlock()
	if n != 2 {
		t.Fatal(n)
	}
}

func TestCondWait(t *testing.T) {
	s := syncSchema(t)
	mu := NewMutex("wait/synch/mutex/test/queue", WithSchema(s))
	c := NewCond("wait/synch/cond/test/queue_ready", mu, WithSchema(s))
	th := NewThread("thread/test/consumer", WithSchema(s))
	defer th.End()
	ready := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.For(th).Lock()
		for !ready {
			c.For(th).Wait()
		}
		mu.Unlock()
	}()
	time.Sleep(10 * time.Millisecond) // let the consumer wait; correctness does not depend on it
	mu.Lock()
	ready = true
	c.Broadcast()
	mu.Unlock()
	<-done
	rows := rowsWhere(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID(), "EVENT_NAME", "wait/synch/cond/test/queue_ready")
	if len(rows) != 1 || rows[0]["COUNT_STAR"].(uint64) < 1 {
		t.Errorf("cond waits of the thread: %v", rows)
	}
	if len(rowsWhere(t, s, "cond_instances", "NAME", "wait/synch/cond/test/queue_ready")) != 1 {
		t.Errorf("cond_instances lacks the cond")
	}
}

func TestIdle(t *testing.T) {
	s := syncSchema(t)
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()
	iw := StartIdle(th)
	iw.End()
	iw.End() // twice is harmless
	none := StartIdle(nil)
	none.End()
	rows := rowsWhere(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID(), "EVENT_NAME", "idle")
	if len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(1) {
		t.Errorf("idle: %v", rows)
	}
}

func TestUninstrumented(t *testing.T) {
	n := 0
	var zero Mutex // the zero value is a plain mutex
	zero.Lock()
	n++
	zero.Unlock()
	bad := NewMutex("not/a/valid name")
	bad.Lock()
	n++
	bad.Unlock()
	wrongKind := NewMutex("wait/synch/rwlock/test/x", WithSchema(syncSchema(t)))
	wrongKind.Lock()
	n++
	wrongKind.Unlock()
	var rw RWMutex
	rw.RLock()
	n++
	rw.RUnlock()
	if n != 4 {
		t.Fatal(n)
	}
	if NewThread("bad name") != nil {
		t.Errorf("a bad thread name gives a thread")
	}
}

func TestSyncZeroAllocs(t *testing.T) {
	s := syncSchema(t)
	m := NewMutex("wait/synch/mutex/test/alloc", WithSchema(s))
	rw := NewRWMutex("wait/synch/rwlock/test/alloc", WithSchema(s))
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()
	n := 0 // the critical sections' work
	for name, f := range map[string]func(){
		"Mutex": func() {
			m.Lock()
			n++
			m.Unlock()
		},
		"Mutex.For": func() {
			h := m.For(th)
			h.Lock()
			n++
			h.Unlock()
		},
		"RWMutex.RLock": func() {
			h := rw.For(th)
			h.RLock()
			n++
			h.RUnlock()
		},
		"RWMutex.Lock": func() {
			h := rw.For(th)
			h.Lock()
			n++
			h.Unlock()
		},
		"idle": func() { iw := StartIdle(th); iw.End() },
	} {
		f() // the first use grows the thread's statistics
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, a)
		}
	}
}

// TestSyncVariants drives the variants the other tests do not: Init on a
// value, the …Ctx methods, TryRLock, WithDocumentation and WithSource.
func TestSyncVariants(t *testing.T) {
	s := syncSchema(t)
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()
	ctx := ContextWithThread(context.Background(), th)

	var box struct {
		mu Mutex
		rw RWMutex
		n  int
	}
	box.mu.Init("wait/synch/mutex/test/boxed", WithSchema(s), WithDocumentation("a mutex in a struct"), WithSource("box.go:7"))
	box.rw.Init("wait/synch/rwlock/test/boxed", WithSchema(s))
	box.mu.LockCtx(ctx)
	box.n++
	box.mu.Unlock()
	box.rw.LockCtx(ctx)
	box.n++
	box.rw.Unlock()
	box.rw.RLockCtx(ctx)
	box.n++
	box.rw.RUnlock()
	if !box.rw.TryRLock() {
		t.Fatal("TryRLock failed on a free rwlock")
	}
	box.n++
	box.rw.RUnlock()
	box.rw.Lock()
	box.n++
	box.rw.Unlock()

	byName := map[string]uint64{}
	for _, r := range rowsWhere(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID()) {
		byName[r["EVENT_NAME"].(string)] = r["COUNT_STAR"].(uint64)
	}
	if byName["wait/synch/mutex/test/boxed"] != 1 || byName["wait/synch/rwlock/test/boxed"] != 2 {
		t.Errorf("thread's waits by name: %v (want the mutex once, the rwlock twice: the others had no thread)", byName)
	}
	if c := rowsWhere(t, s, "events_waits_summary_by_instance", "EVENT_NAME", "wait/synch/rwlock/test/boxed")[0]["COUNT_STAR"]; c != uint64(4) {
		t.Errorf("rwlock by_instance COUNT_STAR %v, want 4", c)
	}
	doc := rowsWhere(t, s, "setup_instruments", "NAME", "wait/synch/mutex/test/boxed")
	if len(doc) != 1 || doc[0]["DOCUMENTATION"] != "a mutex in a struct" {
		t.Errorf("setup_instruments row: %v", doc)
	}
	var src string
	for _, e := range s.EventsWaitsHistory() {
		if e.EventName == "wait/synch/mutex/test/boxed" {
			src = e.Source
		}
	}
	if src != "box.go:7" {
		t.Errorf("SOURCE = %q, want the WithSource value", src)
	}

	// Cond.WaitCtx, with the condition already met after one signal.
	c := NewCond("wait/synch/cond/test/boxed", &box.mu, WithSchema(s))
	done := make(chan struct{})
	go func() {
		defer close(done)
		box.mu.Lock()
		for box.n < 6 {
			c.Wait()
		}
		box.mu.Unlock()
	}()
	box.mu.Lock()
	box.n++
	c.Broadcast()
	box.mu.Unlock()
	<-done
	box.mu.Lock()
	c.Signal() // nobody waits: harmless
	box.mu.Unlock()
}

func TestThreadClass(t *testing.T) {
	s := syncSchema(t)
	requests := NewThreadClass("thread/test/request", WithSchema(s))
	th := requests.Start("alice", "10.0.0.7")
	if th == nil {
		t.Fatal("Start returned nil")
	}
	rows := rowsWhere(t, s, "threads", "THREAD_ID", th.ID())
	if len(rows) != 1 || rows[0]["NAME"] != "thread/test/request" || rows[0]["PROCESSLIST_USER"] != "alice" || rows[0]["PROCESSLIST_HOST"] != "10.0.0.7" {
		t.Errorf("threads row: %v", rows)
	}
	th.End()
	if NewThreadClass("not a name", WithSchema(s)).Start("u", "h") != nil {
		t.Errorf("an invalid thread class started a thread")
	}
	var none *ThreadClass
	if none.Start("u", "h") != nil {
		t.Errorf("a nil ThreadClass started a thread")
	}
}

// TestTryLockCountsExactly: failed TryLocks end their waits without holding
// the mutex, concurrently with the holder; none of their counts is lost.
func TestTryLockCountsExactly(t *testing.T) {
	s := syncSchema(t)
	m := NewMutex("wait/synch/mutex/test/try", WithSchema(s))
	m.Lock() // held throughout: every TryLock fails
	const g, n = 4, 20000
	var wg sync.WaitGroup
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if m.TryLock() {
					t.Error("TryLock acquired a held mutex")
					return
				}
			}
		}()
	}
	wg.Wait()
	m.Unlock()
	rows := rowsWhere(t, s, "events_waits_summary_global_by_event_name", "EVENT_NAME", "wait/synch/mutex/test/try")
	if got := rows[0]["COUNT_STAR"]; got != uint64(g*n+1) {
		t.Errorf("COUNT_STAR = %v, want %d", got, g*n+1)
	}
}

// TestRWReadersCountAcrossToggle: a reader that locked while the class was
// off must not be uncounted when it unlocks with the class on.
func TestRWReadersCountAcrossToggle(t *testing.T) {
	s := syncSchema(t)
	rw := NewRWMutex("wait/synch/rwlock/test/toggle", WithSchema(s))
	off, on := false, true
	s.UpdateInstruments("wait/synch/rwlock/test/toggle", &off, nil)
	rw.RLock()
	s.UpdateInstruments("wait/synch/rwlock/test/toggle", &on, nil)
	rw.RUnlock()
	rw.RLock()
	rows := rowsWhere(t, s, "rwlock_instances", "NAME", "wait/synch/rwlock/test/toggle")
	if got := rows[0]["READ_LOCKED_BY_COUNT"]; got != uint64(1) {
		t.Errorf("READ_LOCKED_BY_COUNT = %v with one reader, want 1", got)
	}
	rw.RUnlock()
}

// TestEndTwice: a second End of a thread, after its storage went to a new
// thread, must leave the new thread alone; waits given the ended handle are
// no thread's.
func TestEndTwice(t *testing.T) {
	s := syncSchema(t)
	tc := NewThreadClass("thread/test/worker", WithSchema(s))
	m := NewMutex("wait/synch/mutex/test/stale", WithSchema(s))
	for i := range 50 {
		a := tc.Start("u", "h")
		a.End()
		b := tc.Start("u", "h") // likely a's storage, from the pool
		a.End()
		m.For(a).Lock() // a stale handle
		m.Unlock()
		if len(rowsWhere(t, s, "threads", "THREAD_ID", b.ID())) != 1 {
			t.Fatalf("round %d: a second End of a ended another thread", i)
		}
		if rows := rowsWhere(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", b.ID(),
			"EVENT_NAME", "wait/synch/mutex/test/stale"); len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(0) {
			t.Fatalf("round %d: a stale handle's wait went to another thread: %v", i, rows)
		}
		b.End()
	}
}

func TestBoundRWMutexTry(t *testing.T) {
	s := syncSchema(t)
	rw := NewRWMutex("wait/synch/rwlock/test/try", WithSchema(s))
	th := NewThread("thread/test/worker", WithSchema(s))
	defer th.End()
	h := rw.For(th)
	if !h.TryRLock() {
		t.Fatal("TryRLock on a free rwlock failed")
	}
	if h.TryLock() {
		t.Fatal("TryLock under a reader succeeded")
	}
	h.RUnlock()
	if !h.TryLock() {
		t.Fatal("TryLock on a free rwlock failed")
	}
	if rows := rowsWhere(t, s, "rwlock_instances", "NAME", "wait/synch/rwlock/test/try"); rows[0]["WRITE_LOCKED_BY_THREAD_ID"] != th.ID() {
		t.Errorf("WRITE_LOCKED_BY_THREAD_ID = %v", rows[0]["WRITE_LOCKED_BY_THREAD_ID"])
	}
	h.Unlock()
	rows := rowsWhere(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID(), "EVENT_NAME", "wait/synch/rwlock/test/try")
	if len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(3) {
		t.Errorf("the thread's try waits: %v", rows)
	}
}
