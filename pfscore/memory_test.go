package pfscore_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

const mb = 1 << 20

// memRows finds the rows of class name in the five memory tables.
type memRows struct {
	t    *testing.T
	s    *pfscore.Schema
	name string
}

func (m memRows) global() pfscore.MemoryStats {
	m.t.Helper()
	for _, r := range m.s.MemorySummaryGlobalByEventName() {
		if r.EventName == m.name {
			return r.MemoryStats
		}
	}
	m.t.Fatalf("no global row for %s", m.name)
	return pfscore.MemoryStats{}
}

func (m memRows) thread(id uint64) pfscore.MemoryStats {
	m.t.Helper()
	for _, r := range m.s.MemorySummaryByThreadByEventName() {
		if r.EventName == m.name && r.ThreadID == id {
			return r.MemoryStats
		}
	}
	m.t.Fatalf("no row for thread %d and %s", id, m.name)
	return pfscore.MemoryStats{}
}

func (m memRows) account(user, host string) pfscore.MemoryStats {
	m.t.Helper()
	for _, r := range m.s.MemorySummaryByAccountByEventName() {
		if r.EventName == m.name && r.User == user && r.Host == host {
			return r.MemoryStats
		}
	}
	m.t.Fatalf("no row for account %s@%s and %s", user, host, m.name)
	return pfscore.MemoryStats{}
}

func (m memRows) user(user string) pfscore.MemoryStats {
	m.t.Helper()
	for _, r := range m.s.MemorySummaryByUserByEventName() {
		if r.EventName == m.name && r.User == user {
			return r.MemoryStats
		}
	}
	m.t.Fatalf("no row for user %s and %s", user, m.name)
	return pfscore.MemoryStats{}
}

func (m memRows) host(host string) pfscore.MemoryStats {
	m.t.Helper()
	for _, r := range m.s.MemorySummaryByHostByEventName() {
		if r.EventName == m.name && r.Host == host {
			return r.MemoryStats
		}
	}
	m.t.Fatalf("no row for host %s and %s", host, m.name)
	return pfscore.MemoryStats{}
}

// memSchema returns a schema with memory class name registered and on.
func memSchema(t *testing.T, name string) (*pfscore.Schema, *pfscore.Class, memRows) {
	s := hxNew(t)
	c := s.MustRegister(name, pfscore.WithDefault(true, false))
	return s, c, memRows{t, s, name}
}

func wantMem(t *testing.T, what string, got, want pfscore.MemoryStats) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// A memory class is off by default, as most of MySQL's: nothing counts.
func TestMemoryClassOffByDefault(t *testing.T) {
	s := hxNew(t)
	c := s.MustRegister("memory/test/off")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{})
	defer th.End()
	o := s.MemoryAlloc(th, c, 100)
	if o.Counted() {
		t.Fatal("an allocation of a class off counted")
	}
	s.MemoryFree(c, 100, o)
	wantMem(t, "global", memRows{t, s, "memory/test/off"}.global(), pfscore.MemoryStats{})
}

// The per-thread update rules, by hand: allocations raise CURRENT and HIGH,
// frees lower CURRENT and LOW, a reallocation is an allocation of the new
// size and a free of the old; the global row sums the thread.
func TestMemoryThreadRules(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/buf")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{})
	defer th.End()
	a := s.MemoryAlloc(th, c, 100)
	b := s.MemoryAlloc(th, c, 50)
	s.MemoryFree(c, 100, a)
	b = s.MemoryRealloc(th, c, 50, 80, b)
	want := pfscore.MemoryStats{CountAlloc: 3, CountFree: 2, SumNumberOfBytesAlloc: 230, SumNumberOfBytesFree: 150,
		LowCountUsed: 0, CurrentCountUsed: 1, HighCountUsed: 2,
		LowNumberOfBytesUsed: 0, CurrentNumberOfBytesUsed: 80, HighNumberOfBytesUsed: 150}
	wantMem(t, "thread", rows.thread(th.ID()), want)
	wantMem(t, "global", rows.global(), want)
	s.MemoryFree(c, 80, b)
	got := rows.thread(th.ID())
	if got.CurrentCountUsed != 0 || got.CurrentNumberOfBytesUsed != 0 || got.HighNumberOfBytesUsed != 150 {
		t.Errorf("after every free: %+v", got)
	}
}

// A free counts exactly when its allocation did, whatever the class's
// ENABLED says by then (MySQL's rule).
func TestMemoryFreeFollowsAlloc(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/flags")
	off, on := false, true
	set := func(b *bool) {
		if _, err := s.UpdateInstruments("memory/test/flags", b, nil); err != nil {
			t.Fatal(err)
		}
	}
	set(&off)
	uncounted := s.MemoryAlloc(nil, c, 10)
	set(&on)
	s.MemoryFree(c, 10, uncounted) // not counted: its allocation was not
	counted := s.MemoryAlloc(nil, c, 20)
	set(&off)
	s.MemoryFree(c, 20, counted) // counted: its allocation was
	wantMem(t, "global", rows.global(), pfscore.MemoryStats{CountAlloc: 1, CountFree: 1,
		SumNumberOfBytesAlloc: 20, SumNumberOfBytesFree: 20, HighCountUsed: 1, HighNumberOfBytesUsed: 20})
}

// The reference's example: two threads of one account, one using 1-2 MB and
// the other 10-12 MB since the TRUNCATE, give the account (and the global
// row) 11-14 MB: the worst-case sums.
func TestMemoryAccountExample(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/example")
	tc := s.MustRegister("thread/test/t")
	t1 := s.NewThread(tc, pfscore.ThreadOptions{User: "app", Host: "web1"})
	t2 := s.NewThread(tc, pfscore.ThreadOptions{User: "app", Host: "web1"})
	defer t1.End()
	defer t2.End()
	base1 := s.MemoryAlloc(t1, c, 1*mb)
	base2 := s.MemoryAlloc(t2, c, 10*mb)
	if err := s.Truncate("memory_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	peak1 := s.MemoryAlloc(t1, c, 1*mb)
	s.MemoryFree(c, 1*mb, peak1)
	peak2 := s.MemoryAlloc(t2, c, 2*mb)
	s.MemoryFree(c, 2*mb, peak2)

	r1 := rows.thread(t1.ID())
	if r1.LowNumberOfBytesUsed != 1*mb || r1.HighNumberOfBytesUsed != 2*mb {
		t.Errorf("thread 1 used %d-%d bytes, want 1-2 MB", r1.LowNumberOfBytesUsed, r1.HighNumberOfBytesUsed)
	}
	for what, r := range map[string]pfscore.MemoryStats{"account": rows.account("app", "web1"), "user": rows.user("app"),
		"host": rows.host("web1"), "global": rows.global()} {
		if r.LowNumberOfBytesUsed != 11*mb || r.CurrentNumberOfBytesUsed != 11*mb || r.HighNumberOfBytesUsed != 14*mb {
			t.Errorf("%s used %d-%d bytes (now %d), want 11-14 MB (now 11 MB)", what,
				r.LowNumberOfBytesUsed/mb, r.HighNumberOfBytesUsed/mb, r.CurrentNumberOfBytesUsed/mb)
		}
	}
	// TRUNCATE: counts reduced by the same value, LOW and HIGH back to
	// CURRENT, CURRENT kept.
	if err := s.Truncate("memory_summary_by_thread_by_event_name"); err != nil {
		t.Fatal(err)
	}
	wantMem(t, "thread 1 after TRUNCATE", rows.thread(t1.ID()), pfscore.MemoryStats{CountAlloc: 1, CountFree: 0,
		SumNumberOfBytesAlloc: 1 * mb, LowCountUsed: 1, CurrentCountUsed: 1, HighCountUsed: 1,
		LowNumberOfBytesUsed: 1 * mb, CurrentNumberOfBytesUsed: 1 * mb, HighNumberOfBytesUsed: 1 * mb})
	g := rows.global()
	if g.CountAlloc != 2 || g.CountFree != 0 || g.LowNumberOfBytesUsed != 11*mb || g.HighNumberOfBytesUsed != 11*mb {
		t.Errorf("global after TRUNCATE: %+v", g)
	}
	s.MemoryFree(c, 1*mb, base1)
	s.MemoryFree(c, 10*mb, base2)
}

// A thread's memory moves to its account when it ends, memory it left
// allocated included, and the later free of that memory, from another
// goroutine, counts there: the account's and the global CURRENT go back to
// zero, and no count goes down.
func TestMemoryThreadEnd(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/end")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{User: "app", Host: "web1"})
	freed := s.MemoryAlloc(th, c, 100)
	kept := s.MemoryAlloc(th, c, 300)
	s.MemoryFree(c, 100, freed)
	before := rows.account("app", "web1")
	th.End()
	after := rows.account("app", "web1")
	wantMem(t, "account after the thread's end", after, before)
	var wg sync.WaitGroup
	wg.Go(func() { s.MemoryFree(c, 300, kept) })
	wg.Wait()
	a := rows.account("app", "web1")
	if a.CountAlloc != 2 || a.CountFree != 2 || a.CurrentNumberOfBytesUsed != 0 || a.HighNumberOfBytesUsed != 400 {
		t.Errorf("account after the free: %+v", a)
	}
	g := rows.global()
	if g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 || g.CountFree != 2 {
		t.Errorf("global after the free: %+v", g)
	}
}

// A free from another goroutine while the thread lives counts on the
// thread; an allocation without a thread counts on the global row only.
func TestMemoryOtherGoroutineAndNoThread(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/moves")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{})
	defer th.End()
	o := s.MemoryAlloc(th, c, 64)
	var wg sync.WaitGroup
	wg.Go(func() { s.MemoryFree(c, 64, o) })
	wg.Wait()
	r := rows.thread(th.ID())
	if r.CountFree != 1 || r.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("thread after another goroutine's free: %+v", r)
	}
	g := s.MemoryAlloc(nil, c, 32)
	if r := rows.thread(th.ID()); r.CountAlloc != 1 {
		t.Errorf("an allocation without a thread counted on one: %+v", r)
	}
	if r := rows.global(); r.CountAlloc != 2 || r.CurrentNumberOfBytesUsed != 32 {
		t.Errorf("global: %+v", r)
	}
	s.MemoryFree(c, 32, g)
}

// TRUNCATE accounts removes an account without connections: its memory
// moves to its user and host, and the free of memory its ended thread left
// counts there.
func TestMemoryAccountRemoved(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/acct")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{User: "app", Host: "web1"})
	o := s.MemoryAlloc(th, c, 500)
	th.End()
	if err := s.Truncate("accounts"); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.MemorySummaryByAccountByEventName() {
		if r.User == "app" {
			t.Fatalf("account still shown: %+v", r)
		}
	}
	if u, h := rows.user("app"), rows.host("web1"); u.CurrentNumberOfBytesUsed != 500 || h.CurrentNumberOfBytesUsed != 500 {
		t.Errorf("user %+v, host %+v: want 500 bytes in use each", u, h)
	}
	s.MemoryFree(c, 500, o)
	if u, h, g := rows.user("app"), rows.host("web1"), rows.global(); u.CurrentNumberOfBytesUsed != 0 || h.CurrentNumberOfBytesUsed != 0 || g.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("after the free: user %+v, host %+v, global %+v", u, h, g)
	}
}

// The built-in rows are there: the schema's own storage and the Go
// runtime's memory, whose heap objects have the runtime's counts.
func TestMemoryBuiltinRows(t *testing.T) {
	s := hxNew(t)
	names := map[string]pfscore.MemoryStats{}
	for _, r := range s.MemorySummaryGlobalByEventName() {
		names[r.EventName] = r.MemoryStats
	}
	for _, n := range []string{"memory/go/heap_objects", "memory/go/stacks", "memory/go/gc_metadata", "memory/go/other",
		"memory/performance_schema/events_statements_summary_by_digest"} {
		r, ok := names[n]
		if !ok {
			t.Errorf("no row %s", n)
			continue
		}
		if r.CurrentNumberOfBytesUsed <= 0 || r.HighNumberOfBytesUsed < r.CurrentNumberOfBytesUsed || r.LowNumberOfBytesUsed > r.CurrentNumberOfBytesUsed {
			t.Errorf("%s: %+v", n, r)
		}
	}
	if h := names["memory/go/heap_objects"]; h.CountAlloc == 0 || h.CountAlloc < h.CountFree {
		t.Errorf("heap objects: %+v", h)
	}
}

// Threads one after another on an account, each peaking at 1 MB, leave the
// account's HIGH at 1 MB, not the sum of their peaks: a thread's new high
// water mark is carried to its account, which absorbs it in the headroom
// the threads before it left (memsum's carry), and likewise up to the host
// and the global row.
func TestMemoryCarryKeepsMarksTight(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/carry")
	tc := s.MustRegister("thread/test/t")
	for range 5 {
		th := s.NewThread(tc, pfscore.ThreadOptions{User: "app", Host: "web1"})
		o := s.MemoryAlloc(th, c, 1*mb)
		s.MemoryFree(c, 1*mb, o)
		th.End()
	}
	for what, r := range map[string]pfscore.MemoryStats{"account": rows.account("app", "web1"),
		"host": rows.host("web1"), "global": rows.global()} {
		if r.HighNumberOfBytesUsed != 1*mb || r.HighCountUsed != 1 || r.CountAlloc != 5 {
			t.Errorf("%s: %+v; want HIGH 1 block of 1 MB after 5 allocations", what, r)
		}
	}
}

// A goroutine freeing memory a thread allocated holds the thread's guard
// for a few stores; the thread's own events wait for it rather than being
// lost (review: a foreign free made the owner lose a third of its waits).
func TestMemoryForeignFreeLosesNoEvents(t *testing.T) {
	s, c, rows := memSchema(t, "memory/test/foreign")
	th := s.NewThread(s.MustRegister("thread/test/t"), pfscore.ThreadOptions{})
	defer th.End()
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/test/m"), "memory_test.go:1")
	defer m.Destroy()
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	owners := make([]pfscore.MemoryOwner, n)
	for i := range owners {
		owners[i] = s.MemoryAlloc(th, c, 8)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, o := range owners {
			s.MemoryFree(c, 8, o)
		}
	})
	for range n {
		hxSyncWait(m, th, pfscore.OpLock)
	}
	wg.Wait()
	for _, v := range s.Status() {
		if v.Name == "Performance_schema_thread_events_lost" && v.Value != 0 {
			t.Errorf("%s = %d", v.Name, v.Value)
		}
	}
	if r := rows.global(); r.CurrentCountUsed != 0 || r.CountFree != uint64(n) {
		t.Errorf("global after the frees: %+v", r)
	}
}

// A thread's end moves its memory statistics to its account while readers
// sum the threads and the accounts: within the move bracket readers
// validate, a read never misses the moved part or counts it twice, so the
// global COUNT_ALLOC of threads that end holding memory only grows.
func TestMemoryEndMovesOnceConcurrentSafe(t *testing.T) {
	s := hxNew(t)
	var classes []*pfscore.Class
	for i := range 16 {
		classes = append(classes, s.MustRegister(fmt.Sprintf("memory/test/end%d", i), pfscore.WithDefault(true, false)))
	}
	tc := s.MustRegister("thread/test/t")
	r := hxStart(t, hxBudget(time.Second))
	r.Go(func() {
		for r.On() {
			th := s.NewThread(tc, pfscore.ThreadOptions{User: "app", Host: "web1"})
			for _, c := range classes {
				s.MemoryAlloc(th, c, 64) // left allocated: the account keeps it
			}
			th.End()
		}
	})
	r.Go(func() {
		var last uint64
		for n := 0; n < hxIters(1_000_000) && r.On(); n++ {
			var sum uint64
			for _, row := range s.MemorySummaryGlobalByEventName() {
				if strings.HasPrefix(row.EventName, "memory/test/end") {
					sum += row.CountAlloc
				}
			}
			if sum < last {
				r.Fail("global COUNT_ALLOC of the ending threads' classes went down: %d -> %d", last, sum)
				return
			}
			last = sum
		}
	})
	r.Begin()
	r.Wait()
}
