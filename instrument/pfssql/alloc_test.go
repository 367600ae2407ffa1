package pfssql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
)

// memConnector opens memConns: a driver with no I/O and no allocation of
// its own per query, so that a wrapper's cost is all there is to see.
type memConnector struct{}

func (memConnector) Connect(context.Context) (driver.Conn, error) { return &memConn{}, nil }
func (memConnector) Driver() driver.Driver                        { return memDriver{} }

type memDriver struct{}

func (memDriver) Open(string) (driver.Conn, error) { return &memConn{}, nil }

// memConn answers every query with one row (1) and every exec with one
// row affected; its rows are reused, since database/sql closes a
// connection's rows before its next query.
type memConn struct{ rows memRows }

func (c *memConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *memConn) Close() error                        { return nil }
func (c *memConn) Begin() (driver.Tx, error)           { return memTx{}, nil }

func (c *memConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	c.rows.n = 0
	return &c.rows, nil
}

func (c *memConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(1), nil
}

type memTx struct{}

func (memTx) Commit() error   { return nil }
func (memTx) Rollback() error { return nil }

type memRows struct{ n int }

var memColumns = []string{"n"}

func (r *memRows) Columns() []string { return memColumns }
func (r *memRows) Close() error      { return nil }
func (r *memRows) Next(dest []driver.Value) error {
	if r.n > 0 {
		return io.EOF
	}
	r.n++
	dest[0] = int64(1)
	return nil
}

// allConsumers is a schema with every statement and transaction consumer
// on.
func allConsumers(t testing.TB) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerStatementsDigest, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistoryLong, true))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func memQuery(t testing.TB, ctx context.Context, q rowQuerier) {
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT n FROM t WHERE id = ?", 7).Scan(&n); err != nil || n != 1 {
		t.Fatal(n, err)
	}
}

func memExec(t testing.TB, ctx context.Context, q rowQuerier) {
	if _, err := q.ExecContext(ctx, "UPDATE t SET n = n + 1 WHERE id = ?", 7); err != nil {
		t.Fatal(err)
	}
}

// The driver level adds no allocation to a query or an exec; the DB level
// one, its context.
func TestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector mean nothing")
	}
	s := allConsumers(t)
	raw := sql.OpenDB(memConnector{})
	defer raw.Close()
	wrapped := pfssql.OpenDB(memConnector{}, pfssql.WithSchema(s))
	defer wrapped.Close()
	dbLevel := newDB(t, wrapped)
	ctx, th := instrument.StartThread(context.Background(), "thread/test/client", instrument.WithSchema(s))
	defer th.End()
	for _, op := range []struct {
		name string
		f    func(testing.TB, context.Context, rowQuerier)
	}{{"query", memQuery}, {"exec", memExec}} {
		base := testing.AllocsPerRun(200, func() { op.f(t, ctx, raw) })
		drv := testing.AllocsPerRun(200, func() { op.f(t, ctx, wrapped) })
		db := testing.AllocsPerRun(200, func() { op.f(t, ctx, dbLevel) })
		if drv > base {
			t.Errorf("%s: %v allocations through the driver level, %v without", op.name, drv, base)
		}
		if db > base+1 {
			t.Errorf("%s: %v allocations through the DB level, %v without", op.name, db, base)
		}
	}
	if h := s.EventsStatementsHistoryLong(); len(h) == 0 {
		t.Fatal("no statements counted")
	}
}

// The cost of each level over database/sql with a driver that does
// nothing: go test -bench Mem -benchmem.
func BenchmarkMem(b *testing.B) {
	s := allConsumers(b)
	raw := sql.OpenDB(memConnector{})
	defer raw.Close()
	wrapped := pfssql.OpenDB(memConnector{}, pfssql.WithSchema(s))
	defer wrapped.Close()
	dbLevel := newDB(b, wrapped)
	ctx, th := instrument.StartThread(context.Background(), "thread/test/client", instrument.WithSchema(s))
	defer th.End()
	for _, c := range []struct {
		name string
		q    rowQuerier
	}{{"Raw", raw}, {"Driver", wrapped}, {"DB", dbLevel}} {
		b.Run("Query"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				memQuery(b, ctx, c.q)
			}
		})
		b.Run("Exec"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				memExec(b, ctx, c.q)
			}
		})
	}
}
