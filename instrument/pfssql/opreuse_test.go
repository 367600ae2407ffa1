package pfssql_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/instrument/pfssql"
)

// The DB level's statements come from a pool: nothing of one (its error,
// message, retries, cancellation, rows) may reach the next, and a
// statement whose rows are still open must not be handed to another call.
func TestOpReuse(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	fl := &faults{}
	// WAL: the writes below commit while A's rows are open on another
	// connection.
	db := newDB(t, openWrapped(t, faultyDriver{fl}, name+"?_pragma=journal_mode(wal)", pfssql.WithSchema(s)))
	ctx := threadCtx(t, s)

	// A: rows left open, one row read, across the calls below.
	a, err := db.QueryContext(ctx, "SELECT id FROM t ORDER BY id")
	if err != nil || !a.Next() {
		t.Fatal(err)
	}
	// B: retried after driver.ErrBadConn, then succeeds.
	fl.badConn.Store(1)
	if _, err := db.ExecContext(ctx, "UPDATE t SET v = 'b' WHERE id > 100"); err != nil {
		t.Fatal(err)
	}
	// C: fails.
	if _, err := db.ExecContext(ctx, "INSERT INTO missing (x) VALUES (1)"); err == nil {
		t.Fatal("INSERT into a missing table succeeded")
	}
	// D: cancelled before it got a connection.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.ExecContext(cctx, "DELETE FROM t WHERE id > 100"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled DELETE: %v", err)
	}
	// E: succeeds, one row affected.
	if _, err := db.ExecContext(ctx, "UPDATE t SET v = 'e' WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	// F: a row.
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 2).Scan(&v); err != nil || v != "e" {
		t.Fatal(v, err)
	}
	for a.Next() {
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	for _, w := range []struct {
		text                                       string
		errors, retries, cancelled, sent, affected uint64
	}{
		{"SELECT id FROM t ORDER BY id", 0, 0, 0, 3, 0},
		{"UPDATE t SET v = 'b' WHERE id > 100", 0, 1, 0, 0, 0},
		{"INSERT INTO missing (x) VALUES (1)", 1, 0, 0, 0, 0},
		{"DELETE FROM t WHERE id > 100", 1, 0, 1, 0, 0},
		{"UPDATE t SET v = 'e' WHERE id = 2", 0, 0, 0, 0, 1},
		{"SELECT v FROM t WHERE id = ?", 0, 0, 0, 1, 0},
	} {
		r := digestRow(t, s, w.text)
		if r.CountStar != 1 || r.SumErrors != w.errors || r.CountRetries != w.retries || r.CountCancelled != w.cancelled ||
			r.SumRowsSent != w.sent || r.SumRowsAffected != w.affected {
			t.Errorf("%s: COUNT_STAR %d, SUM_ERRORS %d, COUNT_RETRIES %d, COUNT_CANCELLED %d, SUM_ROWS_SENT %d, SUM_ROWS_AFFECTED %d; want 1, %d, %d, %d, %d, %d",
				w.text, r.CountStar, r.SumErrors, r.CountRetries, r.CountCancelled, r.SumRowsSent, r.SumRowsAffected,
				w.errors, w.retries, w.cancelled, w.sent, w.affected)
		}
	}
	var msgs []string
	for _, e := range history(s) {
		if e.SQLText != "INSERT INTO missing (x) VALUES (1)" && e.SQLText != "DELETE FROM t WHERE id > 100" && (e.Errors != 0 || e.MessageText != "") {
			msgs = append(msgs, e.SQLText+": "+e.MessageText)
		}
	}
	if len(msgs) > 0 {
		t.Errorf("statements that succeeded carry an error: %q", msgs)
	}
}

// Rows that database/sql closes on a goroutine of its own when the query's
// context ends, while other calls take statements from the pool: every
// statement ends once (go test -race checks the rest).
func TestOpReuseCancelledRows(t *testing.T) {
	s := newSchema(t)
	raw, _ := openSQLite(t, s)
	db := newDB(t, raw)
	const workers, each = 4, 50
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := threadCtx(t, s)
			for i := range each {
				qctx, cancel := context.WithCancel(ctx)
				rows, err := db.QueryContext(qctx, "SELECT id FROM t ORDER BY id")
				if err != nil {
					t.Error(err)
					cancel()
					return
				}
				rows.Next()
				if i%2 == 0 {
					cancel() // database/sql closes the rows on its awaitDone goroutine
				}
				var v string
				if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != "a" {
					t.Error(v, err)
				}
				rows.Close()
				cancel()
			}
		}()
	}
	wg.Wait()
	if r := digestRow(t, s, "SELECT id FROM t ORDER BY id"); r.CountStar != workers*each {
		t.Errorf("SELECT: COUNT_STAR %d; want %d", r.CountStar, workers*each)
	}
	if r := digestRow(t, s, "SELECT v FROM t WHERE id = 1"); r.CountStar != workers*each || r.SumRowsSent != workers*each || r.SumErrors != 0 {
		t.Errorf("SELECT v: COUNT_STAR %d, SUM_ROWS_SENT %d, SUM_ERRORS %d; want %d, %d, 0", r.CountStar, r.SumRowsSent, r.SumErrors, workers*each, workers*each)
	}
}
