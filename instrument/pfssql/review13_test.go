package pfssql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
)

// review13Count returns COUNT_STAR and SUM_ERRORS of text's by-digest row, 0 if
// there is none.
func review13Count(s *pfscore.Schema, text string) (count, errs uint64) {
	d := digest.StatementDigest(text).Hex()
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if r.Digest == d {
			return r.CountStar, r.SumErrors
		}
	}
	return 0, 0
}

// Defect: at the driver level, a statement whose last attempt failed with
// driver.ErrBadConn waits in the retry stash until "its thread next begins
// a statement through the wrapper". A stashed entry with a thread never
// ages out (only thread-less ones do, after stashAge), so when the request
// thread ends right after the failure (the usual case: the handler returns
// the error), the statement is never ended: it is missing from the
// by-digest summary (and from the thread's history) forever, and its stash
// slot is leaked; after 16 such requests the stash is full and every later
// ErrBadConn retry is counted as two statements instead of one with
// COUNT_RETRIES.
//
// Expected: a failed statement is counted (COUNT_STAR 1, SUM_ERRORS 1)
// once database/sql has given up, at the latest when its thread ends, and
// ended threads do not pin stash slots.
func TestReview13BadConnStatementLostWhenThreadEnds(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	fl := &faults{}
	db := openWrapped(t, faultyDriver{fl}, name, pfssql.WithSchema(s))

	const text = "UPDATE t SET v = 'lost'"
	for i := range 20 {
		ctx, th := instrument.StartThread(context.Background(), "thread/test/request", instrument.WithSchema(s))
		fl.badConn.Store(3) // every attempt database/sql makes fails
		if _, err := db.ExecContext(ctx, text); !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("request %d: %v", i, err)
		}
		th.End() // the request is over
	}
	// Plenty of unrelated work afterwards, without and with threads.
	for range 3 {
		if _, err := db.ExecContext(context.Background(), "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		ctx := threadCtx(t, s)
		if _, err := db.ExecContext(ctx, "SELECT 2"); err != nil {
			t.Fatal(err)
		}
	}
	if n, e := review13Count(s, text); n != 20 || e != 20 {
		t.Errorf("%q: COUNT_STAR %d, SUM_ERRORS %d; want 20, 20 (one failed statement per request)", text, n, e)
	}

	// The leaked slots: a single ErrBadConn, retried successfully by
	// database/sql, must still be one statement with COUNT_RETRIES 1.
	const retried = "INSERT INTO t (id, v) VALUES (99, 'x')"
	ctx := threadCtx(t, s)
	fl.badConn.Store(1)
	if _, err := db.ExecContext(ctx, retried); err != nil {
		t.Fatal(err)
	}
	if n, _ := review13Count(s, retried); n != 1 {
		t.Errorf("%q after the stash filled up: COUNT_STAR %d; want 1 (one statement, retried)", retried, n)
	}
}

// Defect: in a transaction, database/sql does not retry a statement that
// failed with driver.ErrBadConn, and the application rolls back. The
// ROLLBACK is begun by tx.end with instrument.StartSQL directly, which
// does not consult the stash, so the failed statement is still pending
// when the thread ends and is never counted.
//
// Expected: the failed statement counts (COUNT_STAR 1, SUM_ERRORS 1) and
// appears in the thread's history before the ROLLBACK, inside the
// transaction.
func TestReview13BadConnInTxLostAfterRollback(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	fl := &faults{}
	db := openWrapped(t, faultyDriver{fl}, name, pfssql.WithSchema(s))

	ctx, th := instrument.StartThread(context.Background(), "thread/test/request", instrument.WithSchema(s))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const text = "DELETE FROM t WHERE id = 1"
	fl.badConn.Store(1)
	if _, err := tx.ExecContext(ctx, text); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("tx exec: %v", err)
	}
	_ = tx.Rollback()
	var hist []string
	for _, e := range history(s) {
		hist = append(hist, e.SQLText)
	}
	th.End()
	if n, e := review13Count(s, text); n != 1 || e != 1 {
		t.Errorf("%q: COUNT_STAR %d, SUM_ERRORS %d; want 1, 1; history %q", text, n, e, hist)
	}
}

// Defect: two result sets open at once on one thread (legal database/sql
// usage: a merge of two ordered queries) are closed in the order they were
// opened. The wrapper begins each query's statement at the query and ends
// it at Close, so the second one is NESTED in the first (it is not: they
// are siblings), and closing the first abandons the second: its row is
// dropped from events_statements_history and its End counts a lost event.
//
// Expected: both SELECTs appear in the thread's history, as on the raw
// driver both queries simply ran. (Fixed in the engine: a statement that
// ends while statements above it are open ends in place, and leaves the
// stack with them. The second query still nests in the first, which was in
// progress, its rows open, when the second began: the engine cannot tell
// two result sets from a query run while iterating another's rows.)
func TestReview13OverlappingRowsClosedInOpenOrder(t *testing.T) {
	s := newSchema(t)
	db, _ := openSQLite(t, s)
	db.SetMaxOpenConns(4)
	ctx := threadCtx(t, s)

	const qa, qb = "SELECT id FROM t ORDER BY id", "SELECT v FROM t ORDER BY v"
	a, err := db.QueryContext(ctx, qa)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.QueryContext(ctx, qb)
	if err != nil {
		t.Fatal(err)
	}
	for a.Next() && b.Next() {
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]pfscore.StatementEvent{}
	for _, e := range history(s) {
		got[e.SQLText] = e
	}
	for _, q := range []string{qa, qb} {
		if _, ok := got[q]; !ok {
			t.Errorf("%q missing from events_statements_history: %q", q, names(history(s)))
		}
	}
	if ea, eb := got[qa], got[qb]; eb.NestingEventID != ea.EventID || eb.NestingEventLevel != 1 {
		t.Errorf("%q nests at level %d in %d, want level 1 in %q's %d", qb, eb.NestingEventLevel, eb.NestingEventID, qa, ea.EventID)
	}
}
