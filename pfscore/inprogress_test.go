package pfscore

import (
	"runtime"
	"sync"

	"github.com/otelpfs/otelpfs/rings"
	"sync/atomic"
	"testing"
)

// TestEventsInProgressOrHistory checks the invariant EventsInProgress
// documents, which the bridge's span reader counts on: an event with an
// EVENT_ID is in progress in its current row or in its _history_long
// table, never in neither. Writers run transactions holding a statement
// holding a stage holding a wait; a reader reads the events in progress,
// then the _history_long tables, which are large enough never to wrap. An
// id at or below the highest one the previous read found began before this
// read, so on each thread whose current rows this read could read, it must
// be in one or the other. A thread whose rows could not be copied, not
// reported as unread, fails this about one run in five; ending a current
// row before its history row exists fails it only when a writer is
// descheduled in between, rarely (exporter's TestTracesConcurrentSafe lost
// a span about one run in thirty under -race that way).
func TestEventsInProgressOrHistory(t *testing.T) {
	f := newStmtFixture(t,
		WithConsumer(ConsumerEventsStagesHistoryLong, true),
		WithConsumer(ConsumerEventsTransactionsCurrent, true),
		WithConsumer(ConsumerEventsTransactionsHistoryLong, true),
		WithWaitsHistoryLongSize(1<<13), WithStagesHistoryLongSize(1<<13),
		WithStatementsHistoryLongSize(1<<13), WithTransactionsHistoryLongSize(1<<13))
	writers, loops := 8, 1000 // at most 1<<13 events of each kind
	const perRead = 20        // each writer's loops per read, at most
	var reads atomic.Int64
	if testing.Short() {
		loops = 200
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			for i := range loops {
				for i/perRead > int(reads.Load()) { // keep pace with the reader
					runtime.Gosched()
				}
				tx := f.s.StartTransaction(th, TransactionInfo{})
				st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
				th.StartStage(f.stage, "")
				waitOnce(f.m, th)
				th.EndStage()
				st.End(StatementResult{})
				tx.End(true)
			}
		}()
	}
	go func() { wg.Wait(); done.Store(true) }()

	skipped := 0
	prevHi := map[uint64]uint64{} // thread: the highest id the previous read found
	var words []uint64
	for ; !done.Load(); reads.Add(1) {
		progress, unread := f.s.EventsInProgress()
		ids := map[uint64]map[uint64]bool{}
		add := func(th, id uint64) {
			if ids[th] == nil {
				ids[th] = map[uint64]bool{}
			}
			ids[th][id] = true
		}
		for _, k := range progress {
			add(k.ThreadID, k.EventID)
		}
		// The rings' raw words: decoding whole rows would make each read
		// slower, and reads fewer.
		for _, r := range []struct {
			ring       *rings.Global
			thread, id int
		}{
			{f.s.trxLong, xThreadID, xEventID}, {f.s.stmtsLong, qThreadID, qEventID},
			{f.s.stagesLong, sThreadID, sEventID}, {f.s.waitsLong, wThreadID, wEventID},
		} {
			words = r.ring.AppendRows(words[:0])
			for w := r.ring.Width(); len(words) >= w; words = words[w:] {
				add(words[r.thread], words[r.id])
			}
		}
		bad := map[uint64]bool{}
		for _, th := range unread {
			bad[th] = true
		}
		skipped += len(unread)
		for th, set := range ids {
			if hi := prevHi[th]; !bad[th] {
				for id := uint64(1); id <= hi; id++ {
					if !set[id] {
						t.Fatalf("read %d: thread %d: event %d neither in progress nor in history (highest before %d)", reads.Load(), th, id, hi)
					}
				}
			}
			for id := range set {
				prevHi[th] = max(prevHi[th], id)
			}
		}
	}
	t.Logf("%d reads, %d threads unread", reads.Load(), skipped)
}
