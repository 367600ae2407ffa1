package pfscore

import "testing"

func TestTransactionEvents(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsTransactionsHistoryLong, true))
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()

	// A request statement begins a transaction; its SQL nests in the
	// request, and the transaction in the request too.
	req := f.s.StartStatement(th, f.req, StatementInfo{Text: "POST /orders", Normalized: true})
	tx := f.s.StartTransaction(th, TransactionInfo{Isolation: IsolationRepeatableRead, Source: "db.go:1"})
	cur := f.s.EventsTransactionsCurrent()
	if len(cur) != 1 || cur[0].State != TrxActive || !cur[0].InProgress || cur[0].AccessMode != ReadWrite ||
		cur[0].IsolationLevel != IsolationRepeatableRead || cur[0].Autocommit || cur[0].NestingEventType != NestingStatement {
		t.Fatalf("events_transactions_current: %+v", cur)
	}
	trxID := cur[0].EventID
	for range 2 {
		f.run(th, f.sel, "SELECT 1", StatementResult{})
	}
	tx.Savepoint()
	tx.RollbackToSavepoint()
	tx.End(true)
	req.End(StatementResult{})

	// A statement outside any statement nests in the transaction.
	tx = f.s.StartTransaction(th, TransactionInfo{ReadOnly: true})
	f.run(th, f.sel, "SELECT 2", StatementResult{})
	stmts := f.s.EventsStatementsHistory()
	last := stmts[len(stmts)-1]
	tx.End(false)
	hist := f.s.EventsTransactionsHistory()
	if len(hist) != 2 || hist[0].EventID != trxID || hist[0].State != TrxCommitted || hist[0].Statements != 0 ||
		hist[0].NumberOfSavepoints != 1 || hist[0].NumberOfRollbackTo != 1 || hist[0].Source != "db.go:1" ||
		hist[1].State != TrxRolledBack || hist[1].AccessMode != ReadOnly || hist[1].Statements != 1 ||
		hist[1].TimerWait != hist[1].TimerEnd-hist[1].TimerStart {
		t.Errorf("events_transactions_history: %+v", hist)
	}
	if last.NestingEventID != hist[1].EventID || last.NestingEventType != NestingTransaction || last.NestingEventLevel != 0 {
		t.Errorf("a statement in a transaction: %+v", last)
	}
	if long := f.s.EventsTransactionsHistoryLong(); len(long) != 2 {
		t.Errorf("events_transactions_history_long: %+v", long)
	}
	for table, where := range map[string]map[string]Value{
		"events_transactions_summary_global_by_event_name":     {"EVENT_NAME": "transaction"},
		"events_transactions_summary_by_thread_by_event_name":  {"THREAD_ID": th.ID(), "EVENT_NAME": "transaction"},
		"events_transactions_summary_by_account_by_event_name": {"USER": "alice", "HOST": "web1", "EVENT_NAME": "transaction"},
		"events_transactions_summary_by_user_by_event_name":    {"USER": "alice", "EVENT_NAME": "transaction"},
		"events_transactions_summary_by_host_by_event_name":    {"HOST": "web1", "EVENT_NAME": "transaction"},
	} {
		rows := findRows(t, f.s, table, where)
		if len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(2) || rows[0]["COUNT_READ_WRITE"] != uint64(1) || rows[0]["COUNT_READ_ONLY"] != uint64(1) {
			t.Errorf("%s: %v", table, rows)
		}
	}
	// One transaction at a time: a second counts, without a row.
	tx = f.s.StartTransaction(th, TransactionInfo{})
	tx2 := f.s.StartTransaction(th, TransactionInfo{})
	tx2.End(true)
	tx.End(true)
	if n := count(t, f.s, "events_transactions_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "transaction"}); n != 4 {
		t.Errorf("COUNT_STAR %d, want 4", n)
	}
	if h := f.s.EventsTransactionsHistory(); len(h) != 3 {
		t.Errorf("history after a nested transaction: %+v", h)
	}
}

// TestTransactionsSurviveThreadEnd checks the roll-ups: a thread's
// transactions stay in every summary after it ends.
func TestTransactionsSurviveThreadEnd(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "bob", Host: "h"})
	tx := f.s.StartTransaction(th, TransactionInfo{ReadOnly: true})
	tx.End(true)
	th.End()
	tx = f.s.StartTransaction(nil, TransactionInfo{})
	tx.End(true)
	for table, want := range map[string]uint64{
		"events_transactions_summary_global_by_event_name":     2,
		"events_transactions_summary_by_account_by_event_name": 1,
		"events_transactions_summary_by_user_by_event_name":    1,
	} {
		var got uint64
		for _, r := range findRows(t, f.s, table, map[string]Value{"EVENT_NAME": "transaction"}) {
			got += r["COUNT_STAR"].(uint64)
		}
		if got != want {
			t.Errorf("%s: COUNT_STAR %d, want %d", table, got, want)
		}
	}
}
