package pfssql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
)

// querier is what *sql.DB (the driver level) and *pfssql.DB (the DB level)
// have alike.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// bothLevels runs f on a fresh schema and SQLite database at the driver
// level and at the DB level.
func bothLevels(t *testing.T, f func(t *testing.T, s *pfscore.Schema, q querier)) {
	t.Run("driver", func(t *testing.T) {
		s := newSchema(t)
		db, _ := openSQLite(t, s)
		f(t, s, db)
	})
	t.Run("db", func(t *testing.T) {
		s := newSchema(t)
		db, _ := openSQLite(t, s)
		f(t, s, newDB(t, db))
	})
}

func TestDigestSharedByLiterals(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		ctx := threadCtx(t, s)
		for _, stmt := range []string{
			"INSERT INTO t (id, v) VALUES (10, 'x')",
			"INSERT INTO t (id, v) VALUES (11, 'y')",
		} {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		var v string
		for _, id := range []int{1, 2} {
			if err := q.QueryRowContext(ctx, "SELECT v FROM t WHERE id = "+string(rune('0'+id))).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		ins := digestRow(t, s, "INSERT INTO t (id, v) VALUES (10, 'x')")
		if ins.CountStar != 2 || ins.SumRowsAffected != 2 || ins.SumErrors != 0 || ins.SchemaName != "main" {
			t.Errorf("INSERT digest row: COUNT_STAR %d, SUM_ROWS_AFFECTED %d, SUM_ERRORS %d, SCHEMA_NAME %q; want 2, 2, 0, main",
				ins.CountStar, ins.SumRowsAffected, ins.SumErrors, ins.SchemaName)
		}
		sel := digestRow(t, s, "SELECT v FROM t WHERE id = 1")
		if sel.CountStar != 2 || sel.SumRowsSent != 2 {
			t.Errorf("SELECT digest row: COUNT_STAR %d, SUM_ROWS_SENT %d; want 2, 2", sel.CountStar, sel.SumRowsSent)
		}
		if sel.SumDriverTime == 0 || sel.SumDriverTime > sel.SumTimerWait {
			t.Errorf("SELECT digest row: SUM_DRIVER_TIME %d of SUM_TIMER_WAIT %d", sel.SumDriverTime, sel.SumTimerWait)
		}
		// One event per call, whichever level began it.
		h := history(s)
		want := []string{
			"statement/sql/insert INSERT INTO t (id, v) VALUES (10, 'x')",
			"statement/sql/insert INSERT INTO t (id, v) VALUES (11, 'y')",
			"statement/sql/select SELECT v FROM t WHERE id = 1",
			"statement/sql/select SELECT v FROM t WHERE id = 2",
		}
		if got := names(h); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, e := range h {
			if e.NestingEventLevel != 0 || e.InProgress {
				t.Errorf("%s: level %d, in progress %v", e.SQLText, e.NestingEventLevel, e.InProgress)
			}
		}
	})
}

func TestRowsSentAndAffected(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		ctx := threadCtx(t, s)
		if _, err := q.ExecContext(ctx, "UPDATE t SET v = 'z' WHERE id <= ?", 2); err != nil {
			t.Fatal(err)
		}
		rows, err := q.QueryContext(ctx, "SELECT id FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil || n != 3 {
			t.Fatalf("%d rows, %v", n, err)
		}
		// Only the first row read, then closed.
		rows, err = q.QueryContext(ctx, "SELECT id FROM t WHERE id > 0")
		if err != nil {
			t.Fatal(err)
		}
		rows.Next()
		rows.Close()

		h := history(s)
		if len(h) != 3 {
			t.Fatalf("events_statements_history: %q", names(h))
		}
		if h[0].RowsAffected != 2 || h[0].RowsSent != 0 {
			t.Errorf("UPDATE: ROWS_AFFECTED %d, ROWS_SENT %d; want 2, 0", h[0].RowsAffected, h[0].RowsSent)
		}
		if h[1].RowsSent != 3 || h[1].RowsAffected != 0 {
			t.Errorf("SELECT all: ROWS_SENT %d, ROWS_AFFECTED %d; want 3, 0", h[1].RowsSent, h[1].RowsAffected)
		}
		if h[2].RowsSent != 1 || h[2].Errors != 0 {
			t.Errorf("SELECT closed early: ROWS_SENT %d, ERRORS %d; want 1, 0", h[2].RowsSent, h[2].Errors)
		}
	})
}

func TestErrors(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		ctx := threadCtx(t, s)
		if _, err := q.ExecContext(ctx, "SELEC oops FROM t"); err == nil {
			t.Fatal("bad SQL: no error")
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (1, 'dup')"); err == nil {
			t.Fatal("duplicate key: no error")
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (2, 'dup')"); err == nil {
			t.Fatal("duplicate key: no error")
		}
		if _, err := q.QueryContext(ctx, "SELECT nosuch FROM t"); err == nil {
			t.Fatal("unknown column: no error")
		}
		h := history(s)
		if len(h) != 4 {
			t.Fatalf("events_statements_history: %q", names(h))
		}
		for i, want := range []string{"syntax error", "UNIQUE constraint failed", "UNIQUE constraint failed", "no such column"} {
			if h[i].Errors != 1 || !strings.Contains(h[i].MessageText, want) {
				t.Errorf("%s: ERRORS %d, MESSAGE_TEXT %q; want 1, …%s…", h[i].SQLText, h[i].Errors, h[i].MessageText, want)
			}
		}
		if r := digestRow(t, s, "INSERT INTO t (id, v) VALUES (1, 'dup')"); r.SumErrors != 2 || r.CountStar != 2 || r.CountCancelled != 0 {
			t.Errorf("INSERT digest row: SUM_ERRORS %d of %d, COUNT_CANCELLED %d; want 2 of 2, 0", r.SumErrors, r.CountStar, r.CountCancelled)
		}
	})
}

// endless is a query SQLite runs until it is interrupted.
const endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

func TestCancelled(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		ctx := threadCtx(t, s)
		tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		var n int64
		if err := q.QueryRowContext(tctx, endless).Scan(&n); err == nil {
			t.Fatal("endless query: no error")
		}
		r := digestRow(t, s, endless)
		if r.CountStar != 1 || r.CountCancelled != 1 || r.SumErrors != 1 {
			t.Errorf("digest row: COUNT_STAR %d, COUNT_CANCELLED %d, SUM_ERRORS %d; want 1, 1, 1", r.CountStar, r.CountCancelled, r.SumErrors)
		}

		// Rows closed while the context is done were cut short.
		cctx, cancel2 := context.WithCancel(ctx)
		rows, err := q.QueryContext(cctx, "SELECT id FROM t")
		if err != nil {
			t.Fatal(err)
		}
		rows.Next()
		cancel2()
		rows.Close()
		r = digestRow(t, s, "SELECT id FROM t")
		if r.CountStar != 1 || r.CountCancelled != 1 || r.SumRowsSent != 1 {
			t.Errorf("rows cut short: COUNT_STAR %d, COUNT_CANCELLED %d, SUM_ROWS_SENT %d; want 1, 1, 1", r.CountStar, r.CountCancelled, r.SumRowsSent)
		}
	})
}

// A context done before the call never reaches the driver: only the DB
// level sees the statement.
func TestCancelledBeforeConnection(t *testing.T) {
	s := newSchema(t)
	db, _ := openSQLite(t, s)
	ctx, cancel := context.WithCancel(threadCtx(t, s))
	cancel()
	const q = "SELECT v FROM t WHERE id = 1"
	if _, err := db.ExecContext(ctx, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("driver level: %v", err)
	}
	if rows := s.EventsStatementsSummaryByDigest(); len(rows) != 0 {
		t.Fatalf("driver level counted %v", digestTexts(s))
	}
	if _, err := newDB(t, db).ExecContext(ctx, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("DB level: %v", err)
	}
	r := digestRow(t, s, q)
	if r.CountStar != 1 || r.CountCancelled != 1 || r.SumErrors != 1 || r.SumDriverTime != 0 {
		t.Errorf("digest row: COUNT_STAR %d, COUNT_CANCELLED %d, SUM_ERRORS %d, SUM_DRIVER_TIME %d; want 1, 1, 1, 0",
			r.CountStar, r.CountCancelled, r.SumErrors, r.SumDriverTime)
	}
}

// faultyLevels runs f at both levels on a SQLite database behind a
// faultyDriver.
func faultyLevels(t *testing.T, f func(t *testing.T, s *pfscore.Schema, q querier, fl *faults)) {
	for _, level := range []string{"driver", "db"} {
		t.Run(level, func(t *testing.T) {
			s := newSchema(t)
			name := dsn(t)
			setupTable(t, name)
			fl := &faults{}
			db := openWrapped(t, faultyDriver{fl}, name, pfssql.WithSchema(s))
			var q querier = db
			if level == "db" {
				q = newDB(t, db)
			}
			f(t, s, q, fl)
		})
	}
}

func TestBadConnRetry(t *testing.T) {
	faultyLevels(t, func(t *testing.T, s *pfscore.Schema, q querier, fl *faults) {
		ctx := threadCtx(t, s)
		check := func(text string, retries, errs uint64) {
			t.Helper()
			r := digestRow(t, s, text)
			if r.CountStar != 1 || r.CountRetries != retries || r.SumErrors != errs {
				t.Errorf("%s: COUNT_STAR %d, COUNT_RETRIES %d, SUM_ERRORS %d; want 1, %d, %d", text, r.CountStar, r.CountRetries, r.SumErrors, retries, errs)
			}
		}
		fl.badConn.Store(1)
		if _, err := q.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (?, 'r')", 20); err != nil {
			t.Fatal(err)
		}
		check("INSERT INTO t (id, v) VALUES (?, 'r')", 1, 0)

		fl.badConn.Store(1)
		var v string
		if err := q.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 20).Scan(&v); err != nil || v != "r" {
			t.Fatal(v, err)
		}
		check("SELECT v FROM t WHERE id = ?", 1, 0)

		// Without a thread too.
		fl.badConn.Store(1)
		if _, err := q.ExecContext(context.Background(), "DELETE FROM t WHERE id = 20"); err != nil {
			t.Fatal(err)
		}
		check("DELETE FROM t WHERE id = 20", 1, 0)

		fl.badConn.Store(1)
		tx, err := q.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		check("START TRANSACTION", 1, 0)

		// Every attempt fails: database/sql tries three times, and
		// gives up with the error.
		fl.badConn.Store(3)
		if _, err := q.ExecContext(ctx, "UPDATE t SET v = 'q'"); !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("three bad connections: %v", err)
		}
		if _, err := q.ExecContext(ctx, "SELECT 1"); err != nil { // ends what the driver level kept for a retry
			t.Fatal(err)
		}
		check("UPDATE t SET v = 'q'", 2, 1)
		// The thread's: the DELETE without a thread is not in its history.
		if got := len(history(s)); got != 6 {
			t.Errorf("%d statements in history: %q", got, names(history(s)))
		}
	})
}

// A driver that answers ExecContext and QueryContext with driver.ErrSkip
// makes database/sql prepare and execute: still one statement.
func TestErrSkipIsOneStatement(t *testing.T) {
	faultyLevels(t, func(t *testing.T, s *pfscore.Schema, q querier, fl *faults) {
		fl.skip = true
		ctx := threadCtx(t, s)
		if _, err := q.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (?, ?)", 30, "s"); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := q.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 30).Scan(&v); err != nil || v != "s" {
			t.Fatal(v, err)
		}
		want := []string{
			"statement/sql/insert INSERT INTO t (id, v) VALUES (?, ?)",
			"statement/sql/select SELECT v FROM t WHERE id = ?",
		}
		h := history(s)
		if got := names(h); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if h[0].RowsAffected != 1 || h[1].RowsSent != 1 || h[0].Errors+h[1].Errors != 0 {
			t.Errorf("ROWS_AFFECTED %d, ROWS_SENT %d, ERRORS %d+%d", h[0].RowsAffected, h[1].RowsSent, h[0].Errors, h[1].Errors)
		}
	})
}

func TestTransactions(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		ctx := threadCtx(t, s)
		for _, commit := range []bool{true, false} {
			tx, err := q.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (40, 'tx')"); err != nil {
				t.Fatal(err)
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.ExecContext(ctx, "DELETE FROM t WHERE id = 40"); err != nil {
				t.Fatal(err)
			}
		}
		trx := s.EventsTransactionsHistory()
		if len(trx) != 2 {
			t.Fatalf("events_transactions_history: %+v", trx)
		}
		h := history(s)
		want := []string{
			"statement/sql/begin START TRANSACTION",
			"statement/sql/insert INSERT INTO t (id, v) VALUES (40, 'tx')",
			"statement/sql/commit COMMIT",
			"statement/sql/delete DELETE FROM t WHERE id = 40",
			"statement/sql/begin START TRANSACTION",
			"statement/sql/insert INSERT INTO t (id, v) VALUES (40, 'tx')",
			"statement/sql/rollback ROLLBACK",
			"statement/sql/delete DELETE FROM t WHERE id = 40",
		}
		if got := names(h); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i, x := range trx {
			state := pfscore.TrxCommitted
			if i == 1 {
				state = pfscore.TrxRolledBack
			}
			begin, ins, end, after := h[4*i], h[4*i+1], h[4*i+2], h[4*i+3]
			if x.State != state || x.IsolationLevel != pfscore.IsolationSerializable || x.AccessMode != pfscore.ReadWrite || x.Autocommit {
				t.Errorf("transaction %d: STATE %v, ISOLATION_LEVEL %v, ACCESS_MODE %v, AUTOCOMMIT %v", i, x.State, x.IsolationLevel, x.AccessMode, x.Autocommit)
			}
			if x.NestingEventID != begin.EventID || x.NestingEventType != pfscore.NestingStatement {
				t.Errorf("transaction %d nests in %d (%v), want the BEGIN statement %d", i, x.NestingEventID, x.NestingEventType, begin.EventID)
			}
			for _, e := range []pfscore.StatementEvent{ins, end} {
				if e.NestingEventID != x.EventID || e.NestingEventType != pfscore.NestingTransaction {
					t.Errorf("%s nests in %d (%v), want the transaction %d", e.SQLText, e.NestingEventID, e.NestingEventType, x.EventID)
				}
			}
			if after.NestingEventID != 0 {
				t.Errorf("%s after the transaction nests in %d", after.SQLText, after.NestingEventID)
			}
			if x.Statements != 2 {
				t.Errorf("transaction %d: STATEMENTS %d, want 2 (the INSERT and the %s)", i, x.Statements, end.SQLText)
			}
		}
		// The rolled back INSERT left nothing: the DELETE after it found no row.
		if h[3].RowsAffected != 1 || h[7].RowsAffected != 0 {
			t.Errorf("DELETE after COMMIT: %d rows; after ROLLBACK: %d", h[3].RowsAffected, h[7].RowsAffected)
		}
	})
}

func TestReadOnlyTransaction(t *testing.T) {
	s := newSchema(t)
	db, _ := openSQLite(t, s)
	ctx := threadCtx(t, s)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	trx := s.EventsTransactionsHistory()
	if len(trx) != 1 || trx[0].AccessMode != pfscore.ReadOnly || trx[0].IsolationLevel != pfscore.IsolationDefault || trx[0].State != pfscore.TrxCommitted {
		t.Fatalf("events_transactions_history: %+v", trx)
	}
	if h := history(s); len(h) != 2 || h[0].SQLText != "START TRANSACTION READ ONLY" {
		t.Fatalf("events_statements_history: %q", names(h))
	}
}

func TestPrepared(t *testing.T) {
	type stmt interface {
		ExecContext(ctx context.Context, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, args ...any) *sql.Row
		Close() error
	}
	for _, level := range []string{"driver", "db"} {
		t.Run(level, func(t *testing.T) {
			s := newSchema(t)
			db, _ := openSQLite(t, s)
			ctx := threadCtx(t, s)
			const ins = "INSERT INTO t (id, v) VALUES (?, ?)"
			var st, sel stmt
			var err error
			if level == "db" {
				pdb := newDB(t, db)
				st, err = pdb.PrepareContext(ctx, ins)
				if err == nil {
					sel, err = pdb.PrepareContext(ctx, "SELECT v FROM t WHERE id = ?")
				}
			} else {
				st, err = db.PrepareContext(ctx, ins)
				if err == nil {
					sel, err = db.PrepareContext(ctx, "SELECT v FROM t WHERE id = ?")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for id := 50; id < 52; id++ {
				if _, err := st.ExecContext(ctx, id, "p"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.ExecContext(ctx, 50, "dup"); err == nil {
				t.Fatal("duplicate key: no error")
			}
			var v string
			if err := sel.QueryRowContext(ctx, 51).Scan(&v); err != nil || v != "p" {
				t.Fatal(v, err)
			}
			st.Close()
			sel.Close()
			want := []string{
				"statement/com/Prepare PREPARE " + digest.StatementDigestText(ins),
				"statement/com/Prepare PREPARE " + digest.StatementDigestText("SELECT v FROM t WHERE id = ?"),
				"statement/sql/insert " + ins,
				"statement/sql/insert " + ins,
				"statement/sql/insert " + ins,
				"statement/sql/select SELECT v FROM t WHERE id = ?",
			}
			h := history(s)
			if got := names(h); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if h[0].Digest == "" || h[0].Digest == digest.StatementDigest(ins).Hex() || h[0].Timed && h[0].TimerWait == 0 {
				t.Errorf("Prepare: DIGEST %q, TIMER_WAIT %d", h[0].Digest, h[0].TimerWait)
			}
			r := digestRow(t, s, ins)
			if r.CountStar != 3 || r.SumRowsAffected != 2 || r.SumErrors != 1 {
				t.Errorf("INSERT digest row: COUNT_STAR %d, SUM_ROWS_AFFECTED %d, SUM_ERRORS %d; want 3, 2, 1", r.CountStar, r.SumRowsAffected, r.SumErrors)
			}
			if r := digestRow(t, s, "SELECT v FROM t WHERE id = ?"); r.CountStar != 1 || r.SumRowsSent != 1 {
				t.Errorf("SELECT digest row: COUNT_STAR %d, SUM_ROWS_SENT %d", r.CountStar, r.SumRowsSent)
			}
		})
	}
}

// With one connection held elsewhere, a query waits for it: the DB level
// counts the wait as SUM_POOL_TIME, the driver level cannot see it.
func TestPoolTime(t *testing.T) {
	const hold = 60 * time.Millisecond
	for _, level := range []string{"driver", "db"} {
		t.Run(level, func(t *testing.T) {
			s := newSchema(t)
			db, _ := openSQLite(t, s)
			db.SetMaxOpenConns(1)
			var q querier = db
			if level == "db" {
				q = newDB(t, db)
			}
			ctx := threadCtx(t, s)
			c, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(hold)
				c.Close()
			}()
			start := time.Now()
			var v string
			if err := q.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 3").Scan(&v); err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			r := digestRow(t, s, "SELECT v FROM t WHERE id = 3")
			if level == "driver" {
				if r.SumPoolTime != 0 {
					t.Errorf("driver level: SUM_POOL_TIME %d", r.SumPoolTime)
				}
				return
			}
			if r.SumPoolTime < uint64(hold/2/time.Millisecond)*ms || r.SumPoolTime > uint64(elapsed.Nanoseconds())*1000 {
				t.Errorf("SUM_POOL_TIME %.1f ms; held %v, query took %v", float64(r.SumPoolTime)/float64(ms), hold, elapsed)
			}
			if r.SumPoolTime+r.SumDriverTime+r.SumFetchTime > r.SumTimerWait {
				t.Errorf("pool %d + driver %d + fetch %d > SUM_TIMER_WAIT %d", r.SumPoolTime, r.SumDriverTime, r.SumFetchTime, r.SumTimerWait)
			}
		})
	}
}

// The application's time between Next calls is SUM_FETCH_TIME.
func TestFetchTime(t *testing.T) {
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		const pause = 15 * time.Millisecond
		ctx := threadCtx(t, s)
		rows, err := q.QueryContext(ctx, "SELECT id FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
			time.Sleep(pause)
		}
		if rows.Err() != nil || n != 3 {
			t.Fatal(n, rows.Err())
		}
		r := digestRow(t, s, "SELECT id FROM t ORDER BY id")
		if min := 3 * uint64(pause/time.Millisecond) * ms; r.SumFetchTime < min {
			t.Errorf("SUM_FETCH_TIME %.1f ms, want at least %v", float64(r.SumFetchTime)/float64(ms), 3*pause)
		}
		if r.SumDriverTime >= r.SumFetchTime || r.SumDriverTime+r.SumFetchTime > r.SumTimerWait {
			t.Errorf("SUM_DRIVER_TIME %d, SUM_FETCH_TIME %d, SUM_TIMER_WAIT %d", r.SumDriverTime, r.SumFetchTime, r.SumTimerWait)
		}
	})
}

func TestCurrentSchema(t *testing.T) {
	s := newSchema(t)
	db, _ := openSQLite(t, s, pfssql.WithCurrentSchema("app"))
	if _, err := db.ExecContext(threadCtx(t, s), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if r := digestRow(t, s, "SELECT 1"); r.SchemaName != "app" {
		t.Errorf("SCHEMA_NAME %q, want app", r.SchemaName)
	}
	if h := history(s); len(h) != 1 || h[0].CurrentSchema != "app" {
		t.Errorf("events_statements_history: %+v", h)
	}
}

func TestNewDBNeedsAWrappedDriver(t *testing.T) {
	db, err := sql.Open("sqlite", dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := pfssql.NewDB(db); !errors.Is(err, pfssql.ErrNotWrapped) {
		t.Fatalf("NewDB of a plain database: %v", err)
	}
}

// The wrapped connection answers the optional interfaces as the driver's.
func TestOptionalInterfacesOfSQLite(t *testing.T) {
	s := newSchema(t)
	db, _ := openSQLite(t, s)
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		inner := pfssql.UnwrapConn(dc.(driver.Conn))
		if inner == dc {
			t.Fatal("UnwrapConn returned the wrapper")
		}
		if got, want := optionalInterfaces(dc), optionalInterfaces(inner); got != want {
			t.Errorf("wrapped connection has %s; the driver's has %s", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func optionalInterfaces(c any) string {
	var out []string
	add := func(name string, ok bool) {
		if ok {
			out = append(out, name)
		}
	}
	_, ok := c.(driver.ExecerContext)
	add("ExecerContext", ok)
	_, ok = c.(driver.QueryerContext)
	add("QueryerContext", ok)
	_, ok = c.(driver.ConnPrepareContext)
	add("ConnPrepareContext", ok)
	_, ok = c.(driver.ConnBeginTx)
	add("ConnBeginTx", ok)
	_, ok = c.(driver.SessionResetter)
	add("SessionResetter", ok)
	_, ok = c.(driver.Validator)
	add("Validator", ok)
	_, ok = c.(driver.NamedValueChecker)
	add("NamedValueChecker", ok)
	_, ok = c.(driver.Pinger)
	add("Pinger", ok)
	return "[" + strings.Join(out, " ") + "]"
}

// A driver with none of the optional interfaces (or only Pinger): the
// wrapper has only ConnPrepareContext and ConnBeginTx (it always has them),
// and database/sql's fallbacks (prepare and execute, Begin without options,
// the deprecated statement methods) are one statement per driver call, on
// the caller's thread.
func TestMinimalDriver(t *testing.T) {
	for _, ping := range []bool{false, true} {
		s := newSchema(t)
		name := dsn(t)
		setupTable(t, name)
		db := openWrapped(t, minimalDriver{ping: ping}, name, pfssql.WithSchema(s))
		ctx := threadCtx(t, s)
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := "[ConnPrepareContext ConnBeginTx]"
		if ping {
			want = "[ConnPrepareContext ConnBeginTx Pinger]"
		}
		c.Raw(func(dc any) error {
			if got := optionalInterfaces(dc); got != want {
				t.Errorf("wrapped minimal connection (ping %v) has %s, want %s", ping, got, want)
			}
			return nil
		})
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()

		if _, err := db.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (?, 'm')", 60); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 60).Scan(&v); err != nil || v != "m" {
			t.Fatal(v, err)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM t WHERE id = 60"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable}); err == nil || err.Error() != "sql: driver does not support non-default isolation level" {
			t.Fatalf("serializable transaction on a driver without ConnBeginTx: %v, want database/sql's refusal", err)
		}
		if _, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}); err == nil || err.Error() != "sql: driver does not support read-only transactions" {
			t.Fatalf("read-only transaction on a driver without ConnBeginTx: %v, want database/sql's refusal", err)
		}
		got := names(history(s))
		// Without an Execer or Queryer database/sql prepares each
		// statement, then executes it: two driver calls, two statements,
		// as with a driver that has ConnPrepareContext. The read-only
		// BEGIN is refused, as database/sql refuses it.
		want2 := []string{
			"statement/com/Prepare PREPARE INSERT INTO `t` ( `id` , `v` ) VALUES (...)",
			"statement/sql/insert INSERT INTO t (id, v) VALUES (?, 'm')",
			"statement/com/Prepare PREPARE SELECT `v` FROM `t` WHERE `id` = ?",
			"statement/sql/select SELECT v FROM t WHERE id = ?",
			"statement/sql/begin START TRANSACTION",
			"statement/com/Prepare PREPARE DELETE FROM `t` WHERE `id` = ?",
			"statement/sql/delete DELETE FROM t WHERE id = 60",
			"statement/sql/commit COMMIT",
			"statement/sql/begin START TRANSACTION",
			"statement/sql/begin START TRANSACTION READ ONLY",
		}
		if strings.Join(got, "\n") != strings.Join(want2, "\n") {
			t.Errorf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
		}
		if r := digestRow(t, s, "START TRANSACTION"); r.CountStar != 2 || r.SumErrors != 1 { // the serializable one refused
			t.Errorf("START TRANSACTION: COUNT_STAR %d, SUM_ERRORS %d", r.CountStar, r.SumErrors)
		}
		if r := digestRow(t, s, "COMMIT"); r.CountStar != 1 {
			t.Errorf("COMMIT: COUNT_STAR %d", r.CountStar)
		}
	}
}

// Statements from many goroutines, each with its thread, at both levels.
func TestStatementsConcurrentSafe(t *testing.T) {
	const workers, each = 4, 40
	bothLevels(t, func(t *testing.T, s *pfscore.Schema, q querier) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := threadCtx(t, s)
				for i := range each {
					var v string
					if err := q.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 1+(w+i)%3).Scan(&v); err != nil {
						t.Error(err)
						return
					}
					if i%10 == 0 {
						tx, err := q.BeginTx(ctx, nil)
						if err != nil {
							t.Error(err)
							return
						}
						tx.Rollback()
					}
				}
			}()
		}
		go func() { // a reader meanwhile
			for range 20 {
				s.EventsStatementsCurrent()
				s.EventsStatementsSummaryByDigest()
				time.Sleep(time.Millisecond)
			}
		}()
		wg.Wait()
		if r := digestRow(t, s, "SELECT v FROM t WHERE id = ?"); r.CountStar != workers*each || r.SumRowsSent != workers*each || r.SumErrors != 0 {
			t.Errorf("COUNT_STAR %d, SUM_ROWS_SENT %d, SUM_ERRORS %d; want %d, %d, 0", r.CountStar, r.SumRowsSent, r.SumErrors, workers*each, workers*each)
		}
	})
}

// A connection's NamedValueChecker converts the arguments of its
// statements through the wrapper, for a statement without one too.
func TestNamedValueCheckerOfTheConnection(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	var checked atomic.Int32
	db := openWrapped(t, checkerDriver{&checked}, name, pfssql.WithSchema(s))
	ctx := threadCtx(t, s)
	if _, err := db.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (70, ?)", point{1, 2}); err != nil {
		t.Fatal(err)
	}
	st, err := db.PrepareContext(ctx, "INSERT INTO t (id, v) VALUES (71, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.ExecContext(ctx, point{3, 4}); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT group_concat(v, ';') FROM t WHERE id >= 70").Scan(&v); err != nil || v != "1,2;3,4" {
		t.Fatalf("%q, %v", v, err)
	}
	if checked.Load() != 2 {
		t.Errorf("CheckNamedValue converted %d arguments, want 2", checked.Load())
	}
}

// registered is the schema of the wrapper TestRegisteredWrapper registers
// once (database/sql refuses a name twice, and -count runs tests again).
var (
	registerOnce sync.Once
	registered   *pfscore.Schema
)

// A wrapped driver registered with database/sql under a name of its own
// works as Open's, at both levels.
func TestRegisteredWrapper(t *testing.T) {
	registerOnce.Do(func() {
		registered = newSchema(t)
		sql.Register("pfssql-test-sqlite", pfssql.Wrap(sqliteDriver, pfssql.WithSchema(registered), pfssql.WithCurrentSchema("reg")))
	})
	s := registered
	if err := s.Truncate("events_statements_summary_by_digest"); err != nil {
		t.Fatal(err)
	}
	name := dsn(t)
	setupTable(t, name)
	db, err := sql.Open("pfssql-test-sqlite", name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := threadCtx(t, s)
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != "a" {
		t.Fatal(v, err)
	}
	if err := newDB(t, db).QueryRowContext(ctx, "SELECT v FROM t WHERE id = 2").Scan(&v); err != nil || v != "b" {
		t.Fatal(v, err)
	}
	if r := digestRow(t, s, "SELECT v FROM t WHERE id = 1"); r.CountStar != 2 || r.SumRowsSent != 2 || r.SchemaName != "reg" {
		t.Errorf("COUNT_STAR %d, SUM_ROWS_SENT %d, SCHEMA_NAME %q; want 2, 2, reg", r.CountStar, r.SumRowsSent, r.SchemaName)
	}
}

// A *sql.Stmt whose connection is busy prepares its text again on another:
// at the DB level, part of the execution's statement; at the driver level,
// a statement/com/Prepare of its own.
func TestStmtPreparedAgain(t *testing.T) {
	const q = "SELECT v FROM t WHERE id = ?"
	for _, level := range []string{"driver", "db"} {
		t.Run(level, func(t *testing.T) {
			s := newSchema(t)
			db, _ := openSQLite(t, s)
			db.SetMaxOpenConns(2)
			ctx := threadCtx(t, s)
			type stmt interface {
				QueryRowContext(ctx context.Context, args ...any) *sql.Row
				Close() error
			}
			var st stmt
			var err error
			if level == "db" {
				st, err = newDB(t, db).PrepareContext(ctx, q)
			} else {
				st, err = db.PrepareContext(ctx, q)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			c, err := db.Conn(context.Background()) // the one connection open: the statement's
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var v string
			if err := st.QueryRowContext(ctx, 3).Scan(&v); err != nil || v != "c" {
				t.Fatal(v, err)
			}
			prep := "statement/com/Prepare PREPARE " + digest.StatementDigestText(q)
			want := []string{prep, "statement/sql/select " + q}
			if level == "driver" {
				want = []string{prep, prep, "statement/sql/select " + q}
			}
			if got := names(history(s)); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("events_statements_history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// slowNextDriver's queries return three rows, each of whose Next takes
// pause, and rows whose Close takes closing: time inside the driver,
// after the query's return.
type slowNextDriver struct{ pause, closing time.Duration }

func (d slowNextDriver) Open(string) (driver.Conn, error) { return slowNextConn(d), nil }

type slowNextConn struct{ pause, closing time.Duration }

func (c slowNextConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("no prepare") }
func (c slowNextConn) Close() error                        { return nil }
func (c slowNextConn) Begin() (driver.Tx, error)           { return nil, errors.New("no transactions") }
func (c slowNextConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &slowNextRows{pause: c.pause, closing: c.closing}, nil
}

type slowNextRows struct {
	pause, closing time.Duration
	n              int
}

func (r *slowNextRows) Columns() []string { return []string{"id"} }
func (r *slowNextRows) Close() error      { time.Sleep(r.closing); return nil }
func (r *slowNextRows) Next(dest []driver.Value) error {
	if r.n == 3 {
		return io.EOF
	}
	time.Sleep(r.pause)
	r.n++
	dest[0] = int64(r.n)
	return nil
}

// The driver's time inside Next counts in SUM_DRIVER_TIME, in picoseconds
// (Next sums raw cycles, which Close converts).
func TestDriverTimeInNext(t *testing.T) {
	const pause = 5 * time.Millisecond
	s := newSchema(t)
	db := openWrapped(t, slowNextDriver{pause: pause}, "slow", pfssql.WithSchema(s))
	rows, err := db.QueryContext(threadCtx(t, s), "SELECT id FROM slow")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if rows.Err() != nil || n != 3 {
		t.Fatal(n, rows.Err())
	}
	r := digestRow(t, s, "SELECT id FROM slow")
	if min := 3 * uint64(pause/time.Millisecond) * ms; r.SumDriverTime < min || r.SumDriverTime > r.SumTimerWait {
		t.Errorf("SUM_DRIVER_TIME %.3f ms, want at least %v and at most SUM_TIMER_WAIT %.3f ms",
			float64(r.SumDriverTime)/float64(ms), 3*pause, float64(r.SumTimerWait)/float64(ms))
	}
}

// The driver's time inside the rows' Close counts in SUM_DRIVER_TIME (on
// the cycle counter, the statement's clock read once after it), and not in
// SUM_FETCH_TIME.
func TestDriverTimeInClose(t *testing.T) {
	const closing = 5 * time.Millisecond
	s := newSchema(t)
	db := openWrapped(t, slowNextDriver{closing: closing}, "slow", pfssql.WithSchema(s))
	rows, err := db.QueryContext(threadCtx(t, s), "SELECT id FROM slow")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	r := digestRow(t, s, "SELECT id FROM slow")
	if min := uint64(closing/time.Millisecond) * ms; r.SumDriverTime < min || r.SumDriverTime+r.SumFetchTime > r.SumTimerWait || r.SumFetchTime >= min {
		t.Errorf("SUM_DRIVER_TIME %.3f ms, SUM_FETCH_TIME %.3f ms, SUM_TIMER_WAIT %.3f ms: want the driver's %v in DRIVER, not FETCH",
			float64(r.SumDriverTime)/float64(ms), float64(r.SumFetchTime)/float64(ms), float64(r.SumTimerWait)/float64(ms), closing)
	}
}

// TestDBSystemFromDriver: a database opened through the wrapper records the
// kind of database its statements go to, by CURRENT_SCHEMA, from the
// driver (SQLite's is sqlite), or as WithDBSystem names it.
func TestDBSystemFromDriver(t *testing.T) {
	s := newSchema(t)
	openSQLite(t, s)
	if got := s.DBSystem("main"); got != "sqlite" {
		t.Errorf("SQLite's database main: db.system.name %q, want sqlite", got)
	}
	openSQLite(t, s, pfssql.WithCurrentSchema("shop"), pfssql.WithDBSystem("other_sql"))
	if got := s.DBSystem("shop"); got != "other_sql" {
		t.Errorf("WithDBSystem: %q, want other_sql", got)
	}
}
