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

// TestNestingFourLevels: a wait in a stage in a statement in a transaction,
// each row naming the one above it.
func TestNestingFourLevels(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsTransactionsCurrent, true))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	tx := f.s.StartTransaction(th, TransactionInfo{})
	st := f.s.StartSQL(th, StatementInfo{Text: "UPDATE t SET a = 1"})
	th.StartStage(f.stage, "")
	waitOnce(f.m, th)
	trx := f.s.EventsTransactionsCurrent()
	stmts := f.s.EventsStatementsCurrent()
	stages := f.s.EventsStagesCurrent()
	waits := f.s.EventsWaitsCurrent()
	st.End(StatementResult{RowsAffected: 1})
	tx.End(true)
	if len(trx) != 1 || len(stmts) != 1 || len(stages) != 1 || len(waits) != 1 {
		t.Fatalf("rows: %d transactions, %d statements, %d stages, %d waits", len(trx), len(stmts), len(stages), len(waits))
	}
	if trx[0].NestingEventID != 0 {
		t.Errorf("the transaction nests in %d", trx[0].NestingEventID)
	}
	if s := stmts[0]; s.NestingEventID != trx[0].EventID || s.NestingEventType != NestingTransaction || s.EventName != "statement/sql/update" {
		t.Errorf("statement: %+v", s)
	}
	if s := stages[0]; s.NestingEventID != stmts[0].EventID || s.NestingEventType != NestingStatement {
		t.Errorf("stage: %+v", s)
	}
	if w := waits[0]; w.NestingEventID != stages[0].EventID || w.NestingEventType != NestingStage {
		t.Errorf("wait: %+v", w)
	}
	if h := f.s.EventsTransactionsHistory(); len(h) != 1 || h[0].Statements != 1 || h[0].State != TrxCommitted {
		t.Errorf("transaction history: %+v", h)
	}
}
