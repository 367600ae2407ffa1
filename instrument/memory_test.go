package instrument

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// memSchema returns a schema with the memory classes matching on (a LIKE
// pattern; "" for none) enabled from the start.
func memSchema(t testing.TB, on string, opts ...pfscore.Option) *pfscore.Schema {
	t.Helper()
	base := []pfscore.Option{pfscore.WithoutEnvironment()}
	if on != "" {
		base = append(base, pfscore.WithInstrument(on+"=ON"))
	}
	s, err := pfscore.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// setMemory is UPDATE setup_instruments SET ENABLED=on WHERE NAME LIKE pattern.
func setMemory(t testing.TB, s *pfscore.Schema, pattern string, on bool) {
	t.Helper()
	if n, err := s.UpdateInstruments(pattern, &on, nil); err != nil || n == 0 {
		t.Fatalf("UpdateInstruments(%q) = %d, %v", pattern, n, err)
	}
}

// globalMem returns the memory_summary_global_by_event_name row of name.
func globalMem(t testing.TB, s *pfscore.Schema, name string) pfscore.MemoryStats {
	t.Helper()
	for _, r := range s.MemorySummaryGlobalByEventName() {
		if r.EventName == name {
			return r.MemoryStats
		}
	}
	t.Fatalf("memory_summary_global_by_event_name has no %s", name)
	return pfscore.MemoryStats{}
}

// threadMem returns the memory_summary_by_thread_by_event_name row of th
// and name, and whether there is one.
func threadMem(s *pfscore.Schema, th *Thread, name string) (pfscore.MemoryStats, bool) {
	for _, r := range s.MemorySummaryByThreadByEventName() {
		if r.ThreadID == th.ID() && r.EventName == name {
			return r.MemoryStats, true
		}
	}
	return pfscore.MemoryStats{}, false
}

// accountMem returns the memory_summary_by_account_by_event_name row of
// user@host and name.
func accountMem(t testing.TB, s *pfscore.Schema, user, host, name string) pfscore.MemoryStats {
	t.Helper()
	for _, r := range s.MemorySummaryByAccountByEventName() {
		if r.User == user && r.Host == host && r.EventName == name {
			return r.MemoryStats
		}
	}
	t.Fatalf("memory_summary_by_account_by_event_name has no %s@%s %s", user, host, name)
	return pfscore.MemoryStats{}
}

// raceBuild reports whether the test binary was built with -race.
func raceBuild() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

func TestMemoryClassCounts(t *testing.T) {
	const name = "memory/test/blocks"
	s := memSchema(t, "memory/test/%")
	in := WithSchema(s)
	c := NewMemoryClass(name, in, WithDocumentation("test blocks"))
	if c.Name() != name {
		t.Fatalf("Name() = %q", c.Name())
	}
	ctx, th := StartThread(context.Background(), "thread/test/worker", in, WithUser("u"), WithHost("h"))

	a := c.Alloc(ctx, 100)
	b := c.Alloc(ctx, 50)
	if !a.Counted() || a.Size() != 100 {
		t.Fatalf("a = %+v", a)
	}
	a.Free()            // 50 bytes in 1 block
	a.Free()            // a second Free counts nothing
	b.Realloc(ctx, 200) // +200 (250 at the peak), -50
	if b.Size() != 200 || !b.Counted() {
		t.Fatalf("b after Realloc = %+v", b)
	}

	want := pfscore.MemoryStats{
		CountAlloc: 3, CountFree: 2, SumNumberOfBytesAlloc: 350, SumNumberOfBytesFree: 150,
		LowCountUsed: 0, CurrentCountUsed: 1, HighCountUsed: 2,
		LowNumberOfBytesUsed: 0, CurrentNumberOfBytesUsed: 200, HighNumberOfBytesUsed: 250,
	}
	if got, ok := threadMem(s, th, name); !ok || got != want {
		t.Errorf("by thread:\n got %+v\nwant %+v", got, want)
	}
	if got := globalMem(t, s, name); got != want {
		t.Errorf("global:\n got %+v\nwant %+v", got, want)
	}
	if got := accountMem(t, s, "u", "h", name); got != want {
		t.Errorf("by account:\n got %+v\nwant %+v", got, want)
	}

	// The thread ends holding b: the global row still has it; its free,
	// after the end, counts globally and takes the global CURRENT to 0.
	th.End()
	if _, ok := threadMem(s, th, name); ok {
		t.Errorf("an ended thread keeps its by_thread row")
	}
	g := globalMem(t, s, name)
	if g.CurrentCountUsed != 1 || g.CurrentNumberOfBytesUsed != 200 || g.HighNumberOfBytesUsed < 250 {
		t.Errorf("global after the thread's end: %+v", g)
	}
	b.Free()
	g = globalMem(t, s, name)
	if g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 || g.HighNumberOfBytesUsed < 250 ||
		g.SumNumberOfBytesAlloc != g.SumNumberOfBytesFree || g.CountAlloc != g.CountFree || g.CountAlloc < 3 {
		t.Errorf("global after the last free: %+v", g)
	}
	if a := accountMem(t, s, "u", "h", name); a.CurrentNumberOfBytesUsed != 0 || a.CountAlloc != 3 ||
		a.SumNumberOfBytesAlloc != 350 || a.HighNumberOfBytesUsed < 200 {
		t.Errorf("by account after the thread's end: %+v", a)
	}
}

// Without a thread, an allocation counts in the global row only.
func TestMemoryNoThread(t *testing.T) {
	const name = "memory/test/global"
	s := memSchema(t, name)
	c := NewMemoryClass(name, WithSchema(s))
	th := NewThread("thread/test/bystander", WithSchema(s))
	defer th.End()
	m := c.Alloc(context.Background(), 64)
	n := c.AllocOn(nil, 32)
	if g := globalMem(t, s, name); g.CountAlloc != 2 || g.CurrentNumberOfBytesUsed != 96 || g.HighNumberOfBytesUsed != 96 {
		t.Errorf("global: %+v", g)
	}
	if r, ok := threadMem(s, th, name); !ok || r != (pfscore.MemoryStats{}) {
		t.Errorf("a bystander thread's row: %+v, %v", r, ok)
	}
	m.Free()
	n.Free()
	if g := globalMem(t, s, name); g.CountFree != 2 || g.CurrentNumberOfBytesUsed != 0 || g.LowNumberOfBytesUsed != 0 {
		t.Errorf("global after the frees: %+v", g)
	}
}

// A free counts exactly when its allocation counted, whatever the class's
// switch says when it is freed.
func TestMemorySwitchedBetween(t *testing.T) {
	const name = "memory/test/switched"
	s := memSchema(t, "")
	c := NewMemoryClass(name, WithSchema(s))
	ctx, th := StartThread(context.Background(), "thread/test/worker", WithSchema(s))
	defer th.End()

	off := c.Alloc(ctx, 10) // the class is off by default
	if off.Counted() || off.Size() != 10 {
		t.Fatalf("an allocation of a class off: %+v", off)
	}
	if g := globalMem(t, s, name); g != (pfscore.MemoryStats{}) {
		t.Fatalf("a class off counted: %+v", g)
	}
	setMemory(t, s, name, true)
	off.Free() // counts nothing: its allocation did not count
	if g := globalMem(t, s, name); g != (pfscore.MemoryStats{}) {
		t.Errorf("the free of an uncounted allocation counted: %+v", g)
	}

	on := c.Alloc(ctx, 30)
	grown := c.Alloc(ctx, 5)
	setMemory(t, s, name, false)
	grown.Realloc(ctx, 7) // the new block does not count, the old one's free does
	if grown.Counted() || grown.Size() != 7 {
		t.Errorf("a reallocation while off: %+v", grown)
	}
	on.Free() // counts: its allocation did
	want := pfscore.MemoryStats{CountAlloc: 2, CountFree: 2, SumNumberOfBytesAlloc: 35, SumNumberOfBytesFree: 35,
		HighCountUsed: 2, HighNumberOfBytesUsed: 35}
	if r, ok := threadMem(s, th, name); !ok || r != want {
		t.Errorf("by thread:\n got %+v\nwant %+v", r, want)
	}

	// An allocation that did not count, reallocated while on: the new block
	// counts, the old one's free does not.
	setMemory(t, s, name, true)
	grown.Realloc(ctx, 9)
	if !grown.Counted() {
		t.Errorf("a reallocation while on did not count")
	}
	if g := globalMem(t, s, name); g.CountAlloc != 3 || g.CountFree != 2 || g.CurrentNumberOfBytesUsed != 9 {
		t.Errorf("global after the reallocation: %+v", g)
	}
	grown.Realloc(ctx, 0) // frees
	if g := globalMem(t, s, name); g.CountFree != 3 || g.CurrentNumberOfBytesUsed != 0 || grown.Size() != 0 || grown.Counted() {
		t.Errorf("Realloc to 0: %+v, %+v", g, grown)
	}
	grown.Realloc(ctx, 4) // a freed Memory keeps its class: allocated again
	if g := globalMem(t, s, name); g.CountAlloc != 4 || g.CurrentNumberOfBytesUsed != 4 {
		t.Errorf("Realloc of a freed Memory: %+v", g)
	}
	grown.Free()

	// A thread that is not instrumented counts globally.
	th.SetInstrumented(false)
	m := c.Alloc(ctx, 1000)
	if r, _ := threadMem(s, th, name); r.CountAlloc != 4 {
		t.Errorf("an uninstrumented thread counted: %+v", r)
	}
	m.Free()
	if g := globalMem(t, s, name); g.CountAlloc != 5 || g.CountFree != 5 || g.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("global after an uninstrumented thread's pair: %+v", g)
	}
}

// A free from another goroutine counts on the allocating thread while it is
// idle, and globally once it has ended.
func TestMemoryFreeElsewhere(t *testing.T) {
	const name = "memory/test/handed"
	s := memSchema(t, name)
	c := NewMemoryClass(name, WithSchema(s))
	ctx, th := StartThread(context.Background(), "thread/test/producer", WithSchema(s))
	a := c.Alloc(ctx, 40)
	b := c.Alloc(ctx, 60)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Free() // the owner thread is idle: counts on it
	}()
	<-done
	if r, ok := threadMem(s, th, name); !ok || r.CountFree != 1 || r.CurrentNumberOfBytesUsed != 60 || r.HighNumberOfBytesUsed != 100 {
		t.Errorf("by thread after a free elsewhere: %+v, %v", r, ok)
	}
	th.End()
	done = make(chan struct{})
	go func() {
		defer close(done)
		b.Free() // after the thread's end: counts globally
	}()
	<-done
	if g := globalMem(t, s, name); g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 ||
		g.SumNumberOfBytesAlloc != g.SumNumberOfBytesFree || g.HighNumberOfBytesUsed != 100 {
		t.Errorf("global: %+v", g)
	}
}

func TestMemoryBadName(t *testing.T) {
	errs := collectErrors(t)
	s := memSchema(t, "memory/%")
	for _, name := range []string{"memory/test", "wait/synch/mutex/test/m", "memory/bad name/x"} {
		c := NewMemoryClass(name, WithSchema(s))
		if c.Name() != "" {
			t.Errorf("NewMemoryClass(%q).Name() = %q", name, c.Name())
		}
		m := c.Alloc(context.Background(), 8)
		if m.Counted() || m.Size() != 8 {
			t.Errorf("NewMemoryClass(%q) counted: %+v", name, m)
		}
		m.Realloc(context.Background(), 16)
		if m.Counted() || m.Size() != 16 {
			t.Errorf("NewMemoryClass(%q): a reallocation counted: %+v", name, m)
		}
		m.Free()
		got := errs()
		var re *RegisterError
		if len(got) != 1 || !errors.As(got[0], &re) || re.Constructor != "NewMemoryClass" || re.Name != name ||
			!errors.Is(got[0], pfscore.ErrBadInstrumentName) {
			t.Errorf("NewMemoryClass(%q) reported %v", name, got)
		}
	}
	if n := instrumentErrors(t, s); n != 3 {
		t.Errorf("Performance_schema_instrument_errors = %d, want 3", n)
	}
	// The pool's and the cache's constructors report under their own names.
	NewBufferPool("memory/x", WithSchema(s))
	NewCache[int, int]("memory/y", 10, nil, WithSchema(s))
	got := errs()
	var p, q *RegisterError
	if len(got) != 2 || !errors.As(got[0], &p) || !errors.As(got[1], &q) || p.Constructor != "NewBufferPool" || q.Constructor != "NewCache" {
		t.Errorf("NewBufferPool and NewCache reported %v", got)
	}
	// The zero Memory and a nil class do nothing.
	var zero Memory
	zero.Free()
	zero.Realloc(context.Background(), 3)
	var nilClass *MemoryClass
	if m := nilClass.Alloc(context.Background(), 5); m.Counted() || nilClass.Name() != "" {
		t.Errorf("a nil class counted")
	}
}

// The same name gives the same class: the rows add up.
func TestMemoryClassShared(t *testing.T) {
	const name = "memory/test/shared"
	s := memSchema(t, name)
	c1 := NewMemoryClass(name, WithSchema(s))
	c2 := NewMemoryClass(name, WithSchema(s))
	m1, m2 := c1.AllocOn(nil, 1), c2.AllocOn(nil, 2)
	if g := globalMem(t, s, name); g.CurrentCountUsed != 2 || g.CurrentNumberOfBytesUsed != 3 {
		t.Errorf("global: %+v", g)
	}
	m1.Free()
	m2.Free()
}

func TestMemoryAllocs(t *testing.T) {
	const name = "memory/test/allocs"
	s := memSchema(t, name)
	c := NewMemoryClass(name, WithSchema(s))
	ctx, th := StartThread(context.Background(), "thread/test/allocs", WithSchema(s))
	defer th.End()
	off := NewMemoryClass("memory/other/off", WithSchema(s))
	for what, f := range map[string]func(){
		"AllocOn+Free": func() { m := c.AllocOn(th, 256); m.Free() },
		"Alloc+Realloc+Free": func() {
			m := c.Alloc(ctx, 256)
			m.Realloc(ctx, 512)
			m.Free()
		},
		"off": func() { m := off.Alloc(ctx, 256); m.Free() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations, want 0", what, n)
		}
	}
	if r, _ := threadMem(s, th, name); r.CurrentNumberOfBytesUsed != 0 || r.CountAlloc != r.CountFree || r.CountAlloc < 303 {
		t.Errorf("by thread: %+v", r)
	}
}

// memRowKey identifies a row of one of the five memory tables across reads.
type memRowKey struct {
	table     string
	thread    uint64
	user      string
	host      string
	eventName string
}

// memChecker checks the rows of the memory tables read in turn: each row's
// invariants, and that no cumulative column of a row goes down between
// reads (the test does no TRUNCATE).
type memChecker struct {
	prev map[memRowKey]pfscore.MemoryStats
	rows int
}

func (c *memChecker) check(k memRowKey, st pfscore.MemoryStats) error {
	c.rows++
	if st.CurrentCountUsed != int64(st.CountAlloc-st.CountFree) {
		return fmt.Errorf("%+v: CURRENT_COUNT_USED != COUNT_ALLOC - COUNT_FREE: %+v", k, st)
	}
	if st.CurrentNumberOfBytesUsed != int64(st.SumNumberOfBytesAlloc-st.SumNumberOfBytesFree) {
		return fmt.Errorf("%+v: CURRENT_NUMBER_OF_BYTES_USED != SUM_NUMBER_OF_BYTES_ALLOC - SUM_NUMBER_OF_BYTES_FREE: %+v", k, st)
	}
	if st.LowCountUsed > st.CurrentCountUsed || st.CurrentCountUsed > st.HighCountUsed {
		return fmt.Errorf("%+v: not LOW <= CURRENT <= HIGH (count): %+v", k, st)
	}
	if st.LowNumberOfBytesUsed > st.CurrentNumberOfBytesUsed || st.CurrentNumberOfBytesUsed > st.HighNumberOfBytesUsed {
		return fmt.Errorf("%+v: not LOW <= CURRENT <= HIGH (bytes): %+v", k, st)
	}
	if p, ok := c.prev[k]; ok && (st.CountAlloc < p.CountAlloc || st.CountFree < p.CountFree ||
		st.SumNumberOfBytesAlloc < p.SumNumberOfBytesAlloc || st.SumNumberOfBytesFree < p.SumNumberOfBytesFree) {
		return fmt.Errorf("%+v: a cumulative column went down:\n was %+v\n now %+v", k, p, st)
	}
	c.prev[k] = st
	return nil
}

// readAll reads the five memory tables once and checks every row.
func (c *memChecker) readAll(s *pfscore.Schema) error {
	var errs []error
	for _, r := range s.MemorySummaryGlobalByEventName() {
		errs = append(errs, c.check(memRowKey{table: "global", eventName: r.EventName}, r.MemoryStats))
	}
	for _, r := range s.MemorySummaryByThreadByEventName() {
		errs = append(errs, c.check(memRowKey{table: "thread", thread: r.ThreadID, eventName: r.EventName}, r.MemoryStats))
	}
	for _, r := range s.MemorySummaryByAccountByEventName() {
		errs = append(errs, c.check(memRowKey{table: "account", user: r.User, host: r.Host, eventName: r.EventName}, r.MemoryStats))
	}
	for _, r := range s.MemorySummaryByUserByEventName() {
		errs = append(errs, c.check(memRowKey{table: "user", user: r.User, eventName: r.EventName}, r.MemoryStats))
	}
	for _, r := range s.MemorySummaryByHostByEventName() {
		errs = append(errs, c.check(memRowKey{table: "host", host: r.Host, eventName: r.EventName}, r.MemoryStats))
	}
	return errors.Join(errs...)
}

// TestMemoryConcurrentSafe: goroutines, each on threads of its own that it
// starts and ends, allocate and free through a MemoryClass and a
// BufferPool; some of their memory is freed by a goroutine of another
// thread, some after its thread has ended; a switcher turns the classes off
// and on; a reader reads the five memory tables throughout and checks every
// row. At the end, with everything freed, the global rows show nothing in
// use.
func TestMemoryConcurrentSafe(t *testing.T) {
	const (
		blocks = "memory/stress/blocks"
		bufs   = "memory/stress/buffers"
	)
	workers, rounds, ops := 6, 30, 200
	if testing.Short() {
		rounds = 8
	}
	s := memSchema(t, "memory/stress/%", pfscore.WithMaxThreads(64))
	in := WithSchema(s)
	c := NewMemoryClass(blocks, in)
	pool := NewBufferPool(bufs, in)

	type held struct {
		m Memory
		b *Buffer
	}
	handoff := make(chan held, 64)
	var freers sync.WaitGroup // the goroutines that free what others hand off
	freers.Add(1)
	go func() {
		defer freers.Done()
		_, th := StartThread(context.Background(), "thread/stress/freer", in, WithUser("freer"))
		defer th.End()
		for h := range handoff {
			h.m.Free()
			pool.Put(h.b)
		}
	}()

	var stop atomic.Bool
	var aux sync.WaitGroup // the reader and the switcher
	readErr := make(chan error, 1)
	reads := 0
	aux.Add(2)
	go func() { // the reader
		defer aux.Done()
		chk := &memChecker{prev: map[memRowKey]pfscore.MemoryStats{}}
		for !stop.Load() {
			if err := chk.readAll(s); err != nil {
				readErr <- err
				return
			}
			reads++
		}
	}()
	go func() { // the switcher
		defer aux.Done()
		on := false
		for !stop.Load() {
			if _, err := s.UpdateInstruments("memory/stress/%", &on, nil); err != nil {
				panic(err)
			}
			on = !on
		}
		on = true
		s.UpdateInstruments("memory/stress/%", &on, nil)
	}()

	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			<-start
			for range rounds {
				user, host := fmt.Sprint("u", rng.IntN(3)), fmt.Sprint("h", rng.IntN(2))
				if rng.IntN(4) == 0 {
					user = "" // a background thread: no account
				}
				ctx, th := StartThread(context.Background(), "thread/stress/worker", in, WithUser(user), WithHost(host))
				var mine []held
				for range ops {
					switch r := rng.IntN(10); {
					case r < 3:
						mine = append(mine, held{m: c.Alloc(ctx, rng.IntN(4096))})
					case r < 5:
						mine = append(mine, held{b: pool.Get(ctx, rng.IntN(1<<(6+rng.IntN(16))))})
					case r < 6 && len(mine) > 0:
						i := rng.IntN(len(mine))
						if mine[i].b == nil {
							mine[i].m.Realloc(ctx, rng.IntN(8192))
						}
					case len(mine) > 0:
						i := rng.IntN(len(mine))
						h := mine[i]
						mine[i] = mine[len(mine)-1]
						mine = mine[:len(mine)-1]
						if rng.IntN(4) == 0 {
							handoff <- h // freed by another goroutine
						} else {
							h.m.Free()
							pool.Put(h.b)
						}
					}
				}
				th.End() // while still holding memory
				for _, h := range mine {
					h.m.Free() // after the thread's end
					pool.Put(h.b)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(handoff)
	freers.Wait()
	stop.Store(true)
	aux.Wait()
	select {
	case err := <-readErr:
		t.Fatal(err)
	default:
	}
	if reads == 0 {
		t.Fatal("the reader read nothing")
	}
	chk := &memChecker{prev: map[memRowKey]pfscore.MemoryStats{}}
	if err := chk.readAll(s); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{blocks, bufs} {
		g := globalMem(t, s, name)
		if g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 || g.CountAlloc == 0 {
			t.Errorf("%s after everything was freed: %+v", name, g)
		}
	}
	t.Logf("%d reads of the five tables", reads)
}

// The stress test's checker catches what it checks.
func TestMemChecker(t *testing.T) {
	k := memRowKey{table: "global", eventName: "memory/test/x"}
	ok := pfscore.MemoryStats{CountAlloc: 3, CountFree: 1, SumNumberOfBytesAlloc: 30, SumNumberOfBytesFree: 10,
		CurrentCountUsed: 2, HighCountUsed: 2, CurrentNumberOfBytesUsed: 20, HighNumberOfBytesUsed: 25}
	for what, bad := range map[string]func(*pfscore.MemoryStats){
		"count":      func(st *pfscore.MemoryStats) { st.CurrentCountUsed = 3; st.HighCountUsed = 3 },
		"bytes":      func(st *pfscore.MemoryStats) { st.CurrentNumberOfBytesUsed = 21 },
		"low":        func(st *pfscore.MemoryStats) { st.LowCountUsed = 3 },
		"high":       func(st *pfscore.MemoryStats) { st.HighNumberOfBytesUsed = 19 },
		"monotone":   func(st *pfscore.MemoryStats) { st.CountAlloc, st.CountFree = 2, 0 },
		"monotone 2": func(st *pfscore.MemoryStats) { st.SumNumberOfBytesAlloc, st.SumNumberOfBytesFree = 29, 9 },
	} {
		c := &memChecker{prev: map[memRowKey]pfscore.MemoryStats{}}
		if err := c.check(k, ok); err != nil {
			t.Fatal(err)
		}
		st := ok
		bad(&st)
		if c.check(k, st) == nil {
			t.Errorf("%s: no error for %+v", what, st)
		}
	}
}
