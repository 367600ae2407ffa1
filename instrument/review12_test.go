package instrument_test

// Reproducers from the fresh-eyes review of statements and transactions
// (commit 08c1df8), at the level of the provider API. Each test FAILS on
// the code it was written against.

import (
	"context"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

func r12Count(t *testing.T, s *pfscore.Schema, table, where string) uint64 {
	t.Helper()
	res, err := s.Query(table, pfscore.Query{Where: []string{where}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pfscore.Scan[struct {
		CountStar uint64 `pfs:"COUNT_STAR"`
	}](res)
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, r := range rows {
		n += r.CountStar
	}
	return n
}

// Defect: instrument.Statement and instrument.Transaction are values
// ("keep it in a local variable"), and their End is documented as a no-op
// the second time, but only the variable End was called on is disarmed.
// The ordinary Go idiom of a helper that takes the statement by value and
// ends it, with the caller's own deferred End as a safety net, ends the
// same statement twice, and it counts twice in every global and
// by-digest summary (the second End is taken for a statement whose thread
// part was dropped). Likewise for transactions.
//
// Expected: one statement (transaction), one count, however many copies
// are ended; or End documented as "exactly once, on the value
// StartSQL/Start returned, never on a copy".
func TestReview12StatementEndedByValueHelperCountsTwice(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	in := instrument.WithSchema(s)
	requests := instrument.NewStatementClass("statement/http/request", in)
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", in)
	defer th.End()

	finish := func(st instrument.Statement, status int) { // by value, as one would
		st.End(instrument.StatementResult{Errors: uint64(status / 500)})
	}
	func() {
		st := requests.Start(ctx, "GET /users/{id}")
		defer st.End(instrument.StatementResult{}) // the safety net
		finish(st, 200)
	}()
	func() {
		tx := instrument.StartTransaction(ctx, s, instrument.TransactionInfo{})
		defer tx.End(false)
		commit := func(tx instrument.Transaction) { tx.End(true) }
		commit(tx)
	}()

	if n := r12Count(t, s, "events_statements_summary_global_by_event_name", "EVENT_NAME = 'statement/http/request'"); n != 1 {
		t.Errorf("one request counted %d times in events_statements_summary_global_by_event_name", n)
	}
	if n := r12Count(t, s, "events_statements_summary_by_digest", "DIGEST_TEXT = 'GET /users/{id}'"); n != 1 {
		t.Errorf("one request counted %d times in events_statements_summary_by_digest", n)
	}
	if n := r12Count(t, s, "events_transactions_summary_global_by_event_name", "EVENT_NAME = 'transaction'"); n != 1 {
		t.Errorf("one transaction counted %d times in events_transactions_summary_global_by_event_name", n)
	}
}
