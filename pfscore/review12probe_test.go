package pfscore

import (
	"fmt"
	"sync"
	"testing"
)

func TestProbeDigestDuplicatesConcurrentSafe(t *testing.T) {
	for round := range 50 {
		f := newStmtFixture(t, WithDigestsSize(8), WithStatementCacheSize(0))
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					f.run(nil, f.sel, fmt.Sprintf("SELECT c%d FROM t", (i+g)%6), StatementResult{})
				}
			}()
		}
		wg.Wait()
		seen := map[string]int{}
		var total uint64
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			seen[r.SchemaName+"/"+r.Digest]++
			total += r.CountStar
			if r.Digest == "" {
				t.Errorf("round %d: NULL row with room: %+v", round, r)
			}
		}
		for k, n := range seen {
			if n > 1 {
				t.Errorf("round %d: duplicate %s", round, k)
			}
		}
		if total != 1600 || len(seen) != 6 {
			t.Errorf("round %d: total %d rows %d", round, total, len(seen))
		}
	}
}

func TestProbeStaleStatementAfterRecycle(t *testing.T) {
	f := newStmtFixture(t)
	a := f.s.NewThread(f.thread, ThreadOptions{User: "a", Host: "h"})
	st := f.s.StartStatement(a, f.sel, StatementInfo{Text: "SELECT 1", Schema: "old"})
	tx := f.s.StartTransaction(a, TransactionInfo{})
	a.End()
	b := f.s.NewThread(f.thread, ThreadOptions{User: "b", Host: "h"})
	defer b.End()
	if a.threadCore != b.threadCore {
		t.Logf("storage not recycled")
	}
	bs := f.s.StartStatement(b, f.req, StatementInfo{Text: "GET /b", Normalized: true, Schema: "new"})
	st.SetText("DROP TABLE x", false)
	st.End(StatementResult{RowsSent: 99})
	tx.Savepoint()
	tx.End(true)
	cur := f.s.EventsStatementsCurrent()
	if len(cur) != 1 || cur[0].SQLText != "GET /b" || cur[0].ThreadID != b.ID() {
		t.Errorf("current: %+v", cur)
	}
	bs.End(StatementResult{})
	if n := r11Count(t, f.s, "events_statements_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": b.ID(), "EVENT_NAME": f.sel.Name()}); n != 0 {
		t.Errorf("stale statement counted in new thread: %d", n)
	}
	if h := f.s.EventsStatementsHistory(); len(h) != 1 || h[0].ThreadID != b.ID() {
		t.Errorf("history %+v", h)
	}
	if x := f.s.EventsTransactionsCurrent(); len(x) != 0 {
		t.Errorf("trx current %+v", x)
	}
}

// ghost row
func TestProbeGhostStatementRow(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	a := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
	b := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT ghost"})
	a.End(StatementResult{})
	b.End(StatementResult{})
	c := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3"})
	f.s.SetConsumer(ConsumerEventsStatementsCurrent, false)
	d := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 4"})
	f.s.SetConsumer(ConsumerEventsStatementsCurrent, true)
	for _, e := range f.s.EventsStatementsCurrent() {
		if e.SQLText == "SELECT ghost" {
			t.Errorf("ghost: %+v", e)
		}
	}
	d.End(StatementResult{})
	c.End(StatementResult{})
}

func TestProbeTruncateAccountsRollup(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	f.run(th, f.sel, "SELECT 1", StatementResult{RowsSent: 7, PoolTime: 5})
	tx := f.s.StartTransaction(th, TransactionInfo{ReadOnly: true})
	tx.End(true)
	th.End()
	get := func(table string, where map[string]Value) map[string]Value {
		return r12Row(t, f.s, table, where)
	}
	u1 := get("events_statements_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": f.sel.Name()})
	h1 := get("events_statements_summary_by_host_by_event_name", map[string]Value{"HOST": "h", "EVENT_NAME": f.sel.Name()})
	x1 := get("events_transactions_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": "transaction"})
	if err := f.s.Truncate("accounts"); err != nil {
		t.Fatal(err)
	}
	u2 := get("events_statements_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": f.sel.Name()})
	h2 := get("events_statements_summary_by_host_by_event_name", map[string]Value{"HOST": "h", "EVENT_NAME": f.sel.Name()})
	x2 := get("events_transactions_summary_by_user_by_event_name", map[string]Value{"USER": "u", "EVENT_NAME": "transaction"})
	t.Logf("%v\n%v", u1, u2)
	for _, k := range []string{"COUNT_STAR", "SUM_ROWS_SENT", "SUM_POOL_TIME"} {
		if u1[k] != u2[k] || h1[k] != h2[k] {
			t.Errorf("%s: user %v->%v host %v->%v", k, u1[k], u2[k], h1[k], h2[k])
		}
	}
	if x1["COUNT_READ_ONLY"] != x2["COUNT_READ_ONLY"] || x2["COUNT_READ_ONLY"] != uint64(1) {
		t.Errorf("trx %v %v", x1, x2)
	}
}

func TestProbeHistBuckets(t *testing.T) {
	for i := 1; i < histBuckets; i++ {
		if histBucket(histBounds[i]) != i || histBucket(histBounds[i]-1) != i-1 {
			t.Fatalf("bucket %d", i)
		}
	}
	if histBucket(^uint64(0)) != 449 || histBucket(0) != 0 {
		t.Fatal("ends")
	}
}
