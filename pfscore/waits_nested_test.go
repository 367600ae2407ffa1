package pfscore_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// splitWaits is what EventsWaitsHistoryLongNested should return for rows:
// the ended waits outside any event by key, the others whole.
func splitWaits(rows []pfscore.WaitEvent) (nested []pfscore.WaitEvent, outer []pfscore.EventKey) {
	for _, e := range rows {
		if e.NestingEventID == 0 && !e.InProgress {
			outer = append(outer, pfscore.EventKey{ThreadID: e.ThreadID, EventID: e.EventID})
		} else {
			nested = append(nested, e)
		}
	}
	return nested, outer
}

// TestWaitsHistoryLongNested: on a schema nothing writes to,
// EventsWaitsHistoryLongNested is EventsWaitsHistoryLong split in two,
// each part in ring order, and appends to the slices it is given.
func TestWaitsHistoryLongNested(t *testing.T) {
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))...)
	th := s.NewThread(s.MustRegister("thread/nested/worker"), pfscore.ThreadOptions{})
	defer th.End()
	cond := s.NewSyncInstance(s.MustRegister("wait/synch/cond/nested/c"), "nested_test.go:1")
	mutex := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/nested/m"), "nested_test.go:2")
	lock := func() {
		var w pfscore.WaitState
		if mutex.BeginWait(&w, th, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}
	for i := range 20 {
		switch i % 3 {
		case 0:
			lock() // outside any event
		case 1:
			var w pfscore.WaitState // a wait in a wait
			if cond.BeginWait(&w, th, pfscore.OpWait) {
				lock()
				w.EndWait(-1)
			}
		case 2:
			st := s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT 1"}) // a wait in a statement
			lock()
			st.End(pfscore.StatementResult{})
		}
	}
	all := s.EventsWaitsHistoryLong()
	wantNested, wantOuter := splitWaits(all)
	if len(wantNested) == 0 || len(wantOuter) == 0 {
		t.Fatalf("%d nested and %d outer waits: the test needs both", len(wantNested), len(wantOuter))
	}
	prefixRow := pfscore.WaitEvent{EventName: "before"}
	prefixKey := pfscore.EventKey{ThreadID: 1 << 40}
	nested, outer := s.EventsWaitsHistoryLongNested([]pfscore.WaitEvent{prefixRow}, []pfscore.EventKey{prefixKey})
	if !slices.Equal(nested, append([]pfscore.WaitEvent{prefixRow}, wantNested...)) {
		t.Errorf("nested rows:\n got %+v\nwant %+v", nested, wantNested)
	}
	if !slices.Equal(outer, append([]pfscore.EventKey{prefixKey}, wantOuter...)) {
		t.Errorf("outer keys:\n got %+v\nwant %+v", outer, wantOuter)
	}
}

// TestWaitsHistoryLongNestedConcurrentSafe reads the ring with
// EventsWaitsHistoryLongNested while threads write waits in and outside
// statements into it, wrapping it many times: every row it decodes nests
// in an event and is whole (its NUMBER_OF_BYTES is its thread's id, its
// nesting statement one of the thread's), every key it returns is of a
// writer's wait outside any event, and a thread's ids rise in each part
// (each thread's waits end in the order they begin).
func TestWaitsHistoryLongNestedConcurrentSafe(t *testing.T) {
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithWaitsHistoryLongSize(256))...)
	tc := s.MustRegister("thread/nested/writer")
	mutex := s.MustRegister("wait/synch/mutex/nested/w")
	r := hxStart(t, hxBudget(time.Second))
	const writers = 3
	var ids [writers]atomic.Uint64
	var waits atomic.Int64
	for g := range writers {
		r.Go(func() {
			th := s.NewThread(tc, pfscore.ThreadOptions{})
			defer th.End()
			ids[g].Store(th.ID())
			m := s.NewSyncInstance(mutex, "nested_test.go:3")
			defer m.Destroy()
			for n := 0; n < hxIters(5_000_000) && r.On(); n++ {
				var st pfscore.Statement
				if n%2 == 0 {
					st = s.StartSQL(th, pfscore.StatementInfo{Text: "SELECT 1"})
				}
				var w pfscore.WaitState
				if m.BeginWait(&w, th, pfscore.OpLock) {
					w.EndWait(int64(th.ID()))
				}
				if n%2 == 0 {
					st.End(pfscore.StatementResult{})
				}
				waits.Add(1)
			}
		})
	}
	var reads, seen atomic.Int64
	r.Go(func() {
		writer := func(th uint64) bool {
			for g := range writers {
				if ids[g].Load() == th {
					return true
				}
			}
			return false
		}
		var nested []pfscore.WaitEvent
		var outer []pfscore.EventKey
		for n := 0; n < hxIters(10_000_000) && r.On(); n++ {
			nested, outer = s.EventsWaitsHistoryLongNested(nested[:0], outer[:0])
			last := map[uint64]uint64{}
			for _, e := range nested {
				switch {
				case e.InProgress:
					r.Fail("an in-progress row in history_long: %+v", e)
				case e.NestingEventID == 0 || e.NestingEventType != pfscore.NestingStatement:
					r.Fail("a decoded wait outside any statement: %+v", e)
				case !e.HasBytes || uint64(e.NumberOfBytes) != e.ThreadID || !writer(e.ThreadID):
					r.Fail("a torn or foreign row: %+v", e)
				case e.NestingEventID >= e.EventID:
					r.Fail("nested in a later event: %+v", e)
				case e.EventID <= last[e.ThreadID]:
					r.Fail("thread %d: wait %d after wait %d", e.ThreadID, e.EventID, last[e.ThreadID])
				}
				last[e.ThreadID] = e.EventID
			}
			clear(last)
			for _, k := range outer {
				if !writer(k.ThreadID) || k.EventID == 0 {
					r.Fail("a key of no writer's wait: %+v", k)
				}
				if k.EventID <= last[k.ThreadID] {
					r.Fail("thread %d: wait %d after wait %d", k.ThreadID, k.EventID, last[k.ThreadID])
				}
				last[k.ThreadID] = k.EventID
			}
			seen.Add(int64(len(nested) + len(outer)))
			reads.Add(1)
		}
	})
	r.Begin()
	r.Wait()
	if reads.Load() == 0 || seen.Load() == 0 {
		t.Fatalf("%d reads saw %d rows", reads.Load(), seen.Load())
	}
	t.Logf("%d waits, %d reads of %d rows", waits.Load(), reads.Load(), seen.Load())
}
