package pfssql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/instrument/pfssql"
)

// review22b: adversarial tests of the DB level's pooled ops (perf14).

// Many goroutines, each on its thread, mix through the DB level: a Stmt
// shared by all (rows cut short by cancellation half the time, closed by
// database/sql's awaitDone goroutine), QueryRow, a failing Exec, a
// transaction, a Stmt.QueryRow. Every statement must end once and carry
// only its own outcome.
func TestReview22bConcurrentMix(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	db := newDB(t, openWrapped(t, faultyDriver{&faults{}}, name+"?_pragma=journal_mode(wal)&_pragma=busy_timeout(5000)", pfssql.WithSchema(s)))
	db.SetMaxOpenConns(5) // 4 held by open rows, 1 contended
	ctx := context.Background()
	const sel = "SELECT id FROM t ORDER BY id"
	st, err := db.PrepareContext(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const rowq = "SELECT v FROM t WHERE id = ?"
	st2, err := db.PrepareContext(ctx, rowq)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	const workers, each = 4, 30
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tctx := threadCtx(t, s)
			for i := range each {
				qctx, cancel := context.WithCancel(tctx)
				rows, err := st.QueryContext(qctx)
				if err != nil {
					t.Error(err)
					cancel()
					return
				}
				if !rows.Next() {
					t.Error("no row", rows.Err())
				}
				if i%2 == 0 {
					cancel()
				}
				if _, err := db.ExecContext(tctx, "INSERT INTO missing (x) VALUES (1)"); err == nil {
					t.Error("insert into missing table succeeded")
				}
				var v string
				if err := db.QueryRowContext(tctx, "SELECT v FROM t WHERE 1 = 1 AND id = 1").Scan(&v); err != nil || v != "a" {
					t.Error(v, err)
				}
				if err := st2.QueryRowContext(tctx, 2).Scan(&v); err != nil || v != "b" {
					t.Error(v, err)
				}
				if i%2 == 1 {
					for rows.Next() {
					}
				}
				rows.Close()
				cancel()
				if i%5 == 0 {
					tx, err := db.BeginTx(tctx, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if err := tx.Rollback(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	n := uint64(workers * each)
	if r := digestRow(t, s, sel); r.CountStar != n || r.CountCancelled != n/2 || r.SumErrors != n/2 || r.SumRowsSent != n/2*1+n/2*3 {
		t.Errorf("%s: COUNT_STAR %d COUNT_CANCELLED %d SUM_ERRORS %d SUM_ROWS_SENT %d; want %d %d %d %d", sel, r.CountStar, r.CountCancelled, r.SumErrors, r.SumRowsSent, n, n/2, n/2, n/2*4)
	}
	if r := digestRow(t, s, "INSERT INTO missing (x) VALUES (1)"); r.CountStar != n || r.SumErrors != n || r.CountCancelled != 0 {
		t.Errorf("INSERT: COUNT_STAR %d SUM_ERRORS %d COUNT_CANCELLED %d; want %d %d 0", r.CountStar, r.SumErrors, r.CountCancelled, n, n)
	}
	for _, q := range []string{"SELECT v FROM t WHERE 1 = 1 AND id = 1", rowq} {
		if r := digestRow(t, s, q); r.CountStar != n || r.SumErrors != 0 || r.CountCancelled != 0 || r.SumRowsSent != n || r.CountRetries != 0 {
			t.Errorf("%s: COUNT_STAR %d SUM_ERRORS %d COUNT_CANCELLED %d SUM_ROWS_SENT %d COUNT_RETRIES %d; want %d 0 0 %d 0", q, r.CountStar, r.SumErrors, r.CountCancelled, r.SumRowsSent, r.CountRetries, n, n)
		}
	}
	if r := digestRow(t, s, "START TRANSACTION"); r.CountStar != n/5 || r.SumErrors != 0 {
		t.Errorf("START TRANSACTION: COUNT_STAR %d SUM_ERRORS %d; want %d 0", r.CountStar, r.SumErrors, n/5)
	}
	var bad []string
	for _, e := range history(s) {
		switch {
		case e.SQLText == "INSERT INTO missing (x) VALUES (1)":
			if e.Errors != 1 || !strings.Contains(e.MessageText, "missing") {
				bad = append(bad, e.SQLText+": "+e.MessageText)
			}
		case e.SQLText == sel:
		default:
			if e.Errors != 0 || e.MessageText != "" || e.RowsAffected != 0 {
				bad = append(bad, e.SQLText+": "+e.MessageText)
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("statements carrying another's outcome: %q", bad)
	}
}

// The DB level on a driver whose connections have no ConnBeginTx and no
// ConnPrepareContext (database/sql then calls Begin and Prepare without a
// context): a BeginTx must still be one START TRANSACTION statement, and
// an Exec one statement, not the DB level's plus one the driver level
// begins because it cannot find the op.
func TestReview22bMinimalDriverDBLevel(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	db := newDB(t, openWrapped(t, minimalDriver{}, name, pfssql.WithSchema(s)))
	ctx := threadCtx(t, s)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (70, 'x')"); err != nil {
		t.Fatal(err)
	}
	if r := digestRow(t, s, "START TRANSACTION"); r.CountStar != 1 {
		t.Errorf("one DB.BeginTx: START TRANSACTION COUNT_STAR %d, want 1", r.CountStar)
	}
	var prep []string
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if strings.HasPrefix(r.DigestText, "PREPARE") {
			prep = append(prep, r.DigestText)
		}
	}
	if len(prep) != 0 {
		t.Errorf("DB.ExecContext on a connection without ExecerContext/ConnPrepareContext: extra prepare statements %q (doc: a prepare database/sql makes on its own behalf is part of the statement that caused it)", prep)
	}
}

// propagateGoroutines counts the goroutines the context package started
// to carry a parent's cancellation to a child (for a parent of a type it
// does not know). It counts them by their stacks, not by
// runtime.NumGoroutine, which other tests' goroutines and database/sql's
// own (exiting awaitDone goroutines of the rows just closed) move.
func propagateGoroutines() int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	// The profile begins with a "goroutine profile: total N" line, then
	// the stacks, largest count first: drop the line, or the first record
	// (the cancellation goroutines, when they are the most) goes uncounted.
	_, recs, _ := strings.Cut(b.String(), "\n")
	n := 0
	for _, rec := range strings.Split(recs, "\n\n") {
		if !strings.Contains(rec, "context.(*cancelCtx).propagateCancel") {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(rec, "%d @", &k); err == nil {
			n += k
		}
	}
	return n
}

// Rows held open through the DB level: database/sql derives
// context.WithCancel from the per-call context (Rows' awaitDone); that
// must start no more goroutines than on the caller's context itself.
// (The first version of this test counted runtime.NumGoroutine and failed
// once in a full run of the packages: 36 against 21.)
func TestReview22bNoPropagateCancelGoroutines(t *testing.T) {
	s := newSchema(t)
	raw, _ := openSQLite(t, s)
	db := newDB(t, raw)
	raw.SetMaxOpenConns(100)
	const n = 20
	measure := func(q func(ctx context.Context) (*sql.Rows, error)) int {
		ctx, cancel := context.WithCancel(threadCtx(t, s))
		defer cancel()
		before := propagateGoroutines()
		var open []*sql.Rows
		for range n {
			r, err := q(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Next() {
				t.Fatal("no row")
			}
			open = append(open, r)
		}
		d := propagateGoroutines() - before
		for _, r := range open {
			r.Close()
		}
		return d
	}
	base := measure(func(ctx context.Context) (*sql.Rows, error) { return raw.QueryContext(ctx, "SELECT id FROM t") })
	dbl := measure(func(ctx context.Context) (*sql.Rows, error) { return db.QueryContext(ctx, "SELECT id FROM t") })
	t.Logf("cancellation goroutines with %d rows open: %d through the DB level, %d through the driver level", n, dbl, base)
	if dbl > base {
		t.Errorf("%d rows open: %d cancellation goroutines through the DB level, %d through the driver level", n, dbl, base)
	}
}

// A rows' Close racing with the cancellation that makes database/sql close
// them itself, while the same goroutine's next call reuses ops: the
// cancelled rows end once, cancelled.
func TestReview22bCloseRacesCancel(t *testing.T) {
	s := newSchema(t)
	raw, _ := openSQLite(t, s)
	db := newDB(t, raw)
	ctx := threadCtx(t, s)
	const n = 100
	for range n {
		qctx, cancel := context.WithCancel(ctx)
		rows, err := db.QueryContext(qctx, "SELECT id FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		rows.Next()
		done := make(chan struct{})
		go func() { cancel(); close(done) }()
		rows.Close()
		<-done
		if _, err := db.ExecContext(ctx, "UPDATE t SET v = 'a' WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
	}
	if r := digestRow(t, s, "SELECT id FROM t ORDER BY id"); r.CountStar != n || r.SumRowsSent != n {
		t.Errorf("SELECT: COUNT_STAR %d SUM_ROWS_SENT %d; want %d %d", r.CountStar, r.SumRowsSent, n, n)
	}
	if r := digestRow(t, s, "UPDATE t SET v = 'a' WHERE id = 1"); r.CountStar != n || r.SumErrors != 0 || r.CountCancelled != 0 || r.SumRowsAffected != n {
		t.Errorf("UPDATE: COUNT_STAR %d SUM_ERRORS %d COUNT_CANCELLED %d SUM_ROWS_AFFECTED %d; want %d 0 0 %d", r.CountStar, r.SumErrors, r.CountCancelled, r.SumRowsAffected, n, n)
	}
}

// ErrBadConn on every attempt of a DB-level Stmt's query, then a clean
// one: the retries, error and message stay with the first.
func TestReview22bBadConnThenClean(t *testing.T) {
	s := newSchema(t)
	name := dsn(t)
	setupTable(t, name)
	fl := &faults{}
	db := newDB(t, openWrapped(t, faultyDriver{fl}, name, pfssql.WithSchema(s)))
	ctx := threadCtx(t, s)
	fl.badConn.Store(3)
	if _, err := db.QueryContext(ctx, "SELECT id, v FROM t WHERE id = 99"); err == nil {
		t.Fatal("no error")
	}
	for range 3 {
		rows, err := db.QueryContext(ctx, "SELECT id FROM t WHERE id = 1")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		rows.Close()
	}
	if r := digestRow(t, s, "SELECT id FROM t WHERE id = 1"); r.CountStar != 3 || r.SumErrors != 0 || r.CountRetries != 0 || r.SumRowsSent != 3 {
		t.Errorf("clean SELECT: COUNT_STAR %d SUM_ERRORS %d COUNT_RETRIES %d SUM_ROWS_SENT %d", r.CountStar, r.SumErrors, r.CountRetries, r.SumRowsSent)
	}
	r := digestRow(t, s, "SELECT id, v FROM t WHERE id = 99")
	if r.CountStar != 1 || r.SumErrors != 1 || r.CountRetries != 2 {
		t.Errorf("bad SELECT: COUNT_STAR %d SUM_ERRORS %d COUNT_RETRIES %d; want 1 1 2", r.CountStar, r.SumErrors, r.CountRetries)
	}
	_ = errors.New
}
