package pfssql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
	"modernc.org/sqlite"
)

// newSchema is a schema of the test's own, without the environment, with
// histories long enough for a test's statements.
func newSchema(t testing.TB) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithStatementsHistorySize(200),
		pfscore.WithTransactionsHistorySize(50))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dsn is a SQLite database file in the test's temporary directory.
func dsn(t testing.TB) string { return filepath.Join(t.TempDir(), "test.db") }

// openSQLite opens a SQLite database through pfssql.Open (the driver
// level), counting in s, with a table t(id INTEGER PRIMARY KEY, v TEXT
// NOT NULL) holding rows (1, 'a'), (2, 'b'), (3, 'c'), made through a
// plain handle so that it counts nowhere.
func openSQLite(t testing.TB, s *pfscore.Schema, opts ...pfssql.Option) (*sql.DB, string) {
	t.Helper()
	name := dsn(t)
	setupTable(t, name)
	db, err := pfssql.Open("sqlite", name, append([]pfssql.Option{pfssql.WithSchema(s)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, name
}

func setupTable(t testing.TB, name string) {
	t.Helper()
	raw, err := sql.Open("sqlite", name)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
		"INSERT INTO t (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// threadCtx returns a context carrying a new thread of s, ended with the
// test.
func threadCtx(t testing.TB, s *pfscore.Schema) context.Context {
	t.Helper()
	ctx, th := instrument.StartThread(context.Background(), "thread/test/client", instrument.WithSchema(s))
	t.Cleanup(th.End)
	return ctx
}

// digestRow returns the by-digest row of the statement text (under any
// schema name), failing the test if there is none.
func digestRow(t testing.TB, s *pfscore.Schema, text string) pfscore.DigestSummary {
	t.Helper()
	d := digest.StatementDigest(text).Hex()
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if r.Digest == d {
			return r
		}
	}
	t.Fatalf("no events_statements_summary_by_digest row for %q; rows: %v", text, digestTexts(s))
	return pfscore.DigestSummary{}
}

func digestTexts(s *pfscore.Schema) []string {
	var out []string
	for _, r := range s.EventsStatementsSummaryByDigest() {
		out = append(out, r.DigestText)
	}
	return out
}

// history returns events_statements_history, each thread's statements
// oldest first.
func history(s *pfscore.Schema) []pfscore.StatementEvent { return s.EventsStatementsHistory() }

// names lists the EVENT_NAME and SQL_TEXT of statements.
func names(evs []pfscore.StatementEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.EventName+" "+e.SQLText)
	}
	return out
}

const ms = uint64(1e9) // a millisecond in picoseconds

// sqliteDriver is modernc.org/sqlite's driver, for fakes to wrap.
var sqliteDriver = &sqlite.Driver{}

// faults is what a fakeConn does wrong: its next badConn calls to Exec,
// Query, Prepare or Begin fail with driver.ErrBadConn; with skip, its
// ExecContext and QueryContext answer driver.ErrSkip.
type faults struct {
	badConn atomic.Int32
	skip    bool
	calls   atomic.Int32 // ExecContext and QueryContext calls that reached the driver
}

func (f *faults) bad() bool {
	for {
		n := f.badConn.Load()
		if n <= 0 {
			return false
		}
		if f.badConn.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// faultyDriver opens SQLite connections behind a fakeConn with faults f.
type faultyDriver struct{ f *faults }

func (d faultyDriver) Open(name string) (driver.Conn, error) {
	c, err := sqliteDriver.Open(name)
	if err != nil {
		return nil, err
	}
	return &fakeConn{c: c, f: d.f}, nil
}

// fakeConn is a SQLite connection with ExecerContext, QueryerContext,
// ConnPrepareContext and ConnBeginTx, and faults.
type fakeConn struct {
	c driver.Conn
	f *faults
}

func (c *fakeConn) Prepare(q string) (driver.Stmt, error) { return c.c.Prepare(q) }
func (c *fakeConn) Close() error                          { return c.c.Close() }
func (c *fakeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *fakeConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if c.f.skip {
		return nil, driver.ErrSkip
	}
	c.f.calls.Add(1)
	if c.f.bad() {
		return nil, driver.ErrBadConn
	}
	return c.c.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c *fakeConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if c.f.skip {
		return nil, driver.ErrSkip
	}
	c.f.calls.Add(1)
	if c.f.bad() {
		return nil, driver.ErrBadConn
	}
	return c.c.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c *fakeConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if c.f.bad() {
		return nil, driver.ErrBadConn
	}
	return c.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *fakeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.f.bad() {
		return nil, driver.ErrBadConn
	}
	return c.c.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// minimalDriver opens SQLite connections that have nothing but
// driver.Conn (and driver.Pinger with ping), whose statements have nothing
// but driver.Stmt: database/sql's every fallback.
type minimalDriver struct{ ping bool }

func (d minimalDriver) Open(name string) (driver.Conn, error) {
	c, err := sqliteDriver.Open(name)
	if err != nil {
		return nil, err
	}
	if d.ping {
		return &pingConn{minimalConn{c}}, nil
	}
	return &minimalConn{c}, nil
}

type minimalConn struct{ c driver.Conn }

func (c *minimalConn) Prepare(q string) (driver.Stmt, error) {
	s, err := c.c.Prepare(q)
	if err != nil {
		return nil, err
	}
	return minimalStmt{s}, nil
}
func (c *minimalConn) Close() error { return c.c.Close() }

//lint:ignore SA1019 a minimal driver has only the deprecated Begin
func (c *minimalConn) Begin() (driver.Tx, error) { return c.c.Begin() }

type pingConn struct{ minimalConn }

func (c *pingConn) Ping(context.Context) error { return nil }

type minimalStmt struct{ s driver.Stmt }

func (s minimalStmt) Close() error  { return s.s.Close() }
func (s minimalStmt) NumInput() int { return s.s.NumInput() }

//lint:ignore SA1019 a minimal statement has only the deprecated methods
func (s minimalStmt) Exec(args []driver.Value) (driver.Result, error) { return s.s.Exec(args) }

//lint:ignore SA1019 a minimal statement has only the deprecated methods
func (s minimalStmt) Query(args []driver.Value) (driver.Rows, error) { return s.s.Query(args) }

// openWrapped opens name through pfssql.Wrap(d): sql.OpenDB of the wrapped
// driver's connector.
func openWrapped(t testing.TB, d driver.Driver, name string, opts ...pfssql.Option) *sql.DB {
	t.Helper()
	c, err := pfssql.Wrap(d, opts...).(driver.DriverContext).OpenConnector(name)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

// newDB is the DB level of db.
func newDB(t testing.TB, db *sql.DB) *pfssql.DB {
	t.Helper()
	pdb, err := pfssql.NewDB(db)
	if err != nil {
		t.Fatal(err)
	}
	return pdb
}

// point is an argument type database/sql cannot convert by itself; a
// checkerConn's CheckNamedValue turns it into text.
type point struct{ X, Y int }

// checkerDriver opens SQLite connections behind a checkerConn.
type checkerDriver struct{ checked *atomic.Int32 }

func (d checkerDriver) Open(name string) (driver.Conn, error) {
	c, err := faultyDriver{&faults{}}.Open(name)
	if err != nil {
		return nil, err
	}
	return &checkerConn{c.(*fakeConn), d.checked}, nil
}

// checkerConn is a fakeConn with driver.NamedValueChecker, whose statements
// (SQLite's) have none: database/sql then asks the connection.
type checkerConn struct {
	*fakeConn
	checked *atomic.Int32
}

func (c *checkerConn) CheckNamedValue(nv *driver.NamedValue) error {
	if p, ok := nv.Value.(point); ok {
		c.checked.Add(1)
		nv.Value = fmt.Sprintf("%d,%d", p.X, p.Y)
		return nil
	}
	return driver.ErrSkip
}
