package pfscore

import (
	"github.com/otelpfs/otelpfs/hwclock"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// review23b: adversarial tests of enterFree (a free from any goroutine
// waits out the thread's write section) and of the clock reading a stage
// shares with the next stage or with its statement.

// PASSES (also under -race, GOMAXPROCS 1 too). Threads that record events
// and allocate in a loop, other goroutines freeing their memory at once,
// threads ending with frees in flight and their storage going to new
// threads, TRUNCATE of the memory tables meanwhile: nothing hangs, no
// thread row ever shows COUNT_FREE > COUNT_ALLOC or a negative CURRENT,
// and once everything is freed the global row's CURRENT is 0.
func TestReview23bForeignFreesStress(t *testing.T) {
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		r23bForeignFrees(t)
		runtime.GOMAXPROCS(old)
	}
}

func r23bForeignFrees(t *testing.T) {
	f := newStageFixture(t)
	mem := f.s.MustRegister("memory/test/r23b", WithDefault(true, false))
	const workers, rounds, allocs = 3, 6, 300
	type freed struct {
		o    MemoryOwner
		size uint64
	}
	ch := make(chan freed, 64)
	var stop atomic.Bool
	var bad atomic.Value
	var frees, readers sync.WaitGroup
	for range 2 {
		frees.Go(func() {
			for x := range ch {
				f.s.MemoryFree(mem, x.size, x.o)
			}
		})
	}
	readers.Go(func() {
		for !stop.Load() {
			if err := f.s.Truncate("memory_summary_global_by_event_name"); err != nil {
				bad.Store(err.Error())
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	})
	readers.Go(func() {
		for !stop.Load() {
			for _, r := range f.s.MemorySummaryByThreadByEventName() {
				if r.EventName == mem.Name() && (r.CountFree > r.CountAlloc || r.CurrentCountUsed < 0 || r.CurrentNumberOfBytesUsed < 0) {
					bad.Store("thread row " + r.EventName + ": free > alloc or negative CURRENT")
				}
			}
			runtime.Gosched()
		}
	})
	var work sync.WaitGroup
	for w := range workers {
		work.Go(func() {
			for range rounds {
				th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
				for i := range allocs {
					th.StartStage(f.parse, "")
					size := uint64(1 + (w*allocs+i)%97)
					o := f.s.MemoryAlloc(th, mem, size)
					waitOnce(f.m, th)
					ch <- freed{o, size}
				}
				th.End() // frees still in flight land on the account
			}
		})
	}
	done := make(chan struct{})
	go func() {
		work.Wait()
		close(ch)
		frees.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		stop.Store(true)
		t.Fatal("workers and frees did not finish: a free or an End spins")
	}
	stop.Store(true)
	readers.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	found := false
	for _, r := range f.s.MemorySummaryGlobalByEventName() {
		found = found || r.EventName == mem.Name()
		if r.EventName == mem.Name() && (r.CurrentCountUsed != 0 || r.CurrentNumberOfBytesUsed != 0) {
			t.Errorf("global row after every free: %+v", r.MemoryStats)
		}
	}
	if !found {
		t.Error("no global row for the class")
	}
	for _, r := range f.s.MemorySummaryByAccountByEventName() {
		if r.EventName == mem.Name() && (r.CurrentCountUsed != 0 || r.CurrentNumberOfBytesUsed != 0 || r.CountFree > r.CountAlloc) {
			t.Errorf("account row after every free: %+v", r.MemoryStats)
		}
	}
}

// PASSES. Stages and statements on different timers, changed while events
// are in progress (setup_timers at run time): the reading a stage shares
// with its statement's end or the next stage's begin is taken only on the
// stage's own timer, so no stage row has TIMER_END < TIMER_START or a huge
// TIMER_WAIT, and a stage that ends with its statement on the same timer
// ends exactly at the statement's end.
func TestReview23bStageReadingsAcrossTimers(t *testing.T) {
	f := newStageFixture(t, WithConsumer(ConsumerEventsStatementsCurrent, true),
		WithConsumer(ConsumerEventsStatementsHistory, true), WithStagesHistorySize(100))
	req := f.s.MustRegister("statement/http/request", WithDefault(true, true))
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()
	timers := []hwclock.Timer{hwclock.Cycle, hwclock.Nanosecond, hwclock.Microsecond, hwclock.Millisecond}
	for i := range 40 {
		f.s.SetupTimers().SetTimer(hwclock.ClassStatement, timers[i%4])
		f.s.SetupTimers().SetTimer(hwclock.ClassStage, timers[(i/4)%4])
		st := f.s.StartStatement(th, req, StatementInfo{Text: "GET /"})
		th.StartStage(f.parse, "")
		f.s.SetupTimers().SetTimer(hwclock.ClassStage, timers[(i+1)%4])
		th.StartStage(f.write, "")
		f.s.SetupTimers().SetTimer(hwclock.ClassStatement, timers[(i+2)%4])
		st.End(StatementResult{})
	}
	h := f.s.EventsStagesHistory()
	if len(h) < 40 {
		t.Fatalf("%d stage history rows", len(h))
	}
	for _, e := range h {
		if e.TimerEnd < e.TimerStart || e.TimerWait != e.TimerEnd-e.TimerStart || e.TimerWait > uint64(time.Second)*1000 {
			t.Errorf("stage row %+v", e)
		}
	}
}
