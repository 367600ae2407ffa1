package pfssql_test

import (
	"context"
	"database/sql/driver"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
)

// retryConnector's connections fail their first call (any of them, shared)
// with driver.ErrBadConn; database/sql's retry, on a new connection, then
// takes pause inside the driver before it succeeds.
type retryConnector struct {
	bad   *atomic.Int32
	pause time.Duration
}

func (c retryConnector) Connect(context.Context) (driver.Conn, error) {
	return &retryConn{c: c}, nil
}
func (c retryConnector) Driver() driver.Driver { return memDriver{} }

type retryConn struct {
	c    retryConnector
	rows memRows
}

func (c *retryConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *retryConn) Close() error                        { return nil }
func (c *retryConn) Begin() (driver.Tx, error)           { return memTx{}, nil }

func (c *retryConn) attempt() error {
	if c.c.bad.Add(-1) >= 0 {
		return driver.ErrBadConn
	}
	time.Sleep(c.c.pause)
	return nil
}

func (c *retryConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	if err := c.attempt(); err != nil {
		return nil, err
	}
	return driver.RowsAffected(1), nil
}

func (c *retryConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	if err := c.attempt(); err != nil {
		return nil, err
	}
	c.rows.n = 0
	return &c.rows, nil
}

// A statement of the driver level whose first attempt failed with
// driver.ErrBadConn waits in the stash with the attempt's end (run.end);
// the retry takes it with that end still set, and the statement then ends
// at the failed attempt's end rather than at the retry's: TIMER_END is
// before the retry ran, and SUM_DRIVER_TIME (both attempts) exceeds
// SUM_TIMER_WAIT. Since ed9dbd3 the first attempt's driver time starts at
// TIMER_START exactly, so any retry with a nonzero driver time shows it;
// the pause only makes that certain on a coarse clock. Not a timing
// threshold: DRIVER_TIME <= TIMER_WAIT is an invariant.
func TestReview25RetriedStatementEndsAtRetry(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t testing.TB, ctx context.Context, q rowQuerier)
		text string
	}{
		{"exec", memExec, "UPDATE t SET n = n + 1 WHERE id = ?"},
		{"query", memQuery, "SELECT n FROM t WHERE id = ?"},
	} {
		for _, level := range []string{"driver", "db"} {
			t.Run(c.name+"/"+level, func(t *testing.T) {
				s := allConsumers(t)
				bad := new(atomic.Int32)
				db := pfssql.OpenDB(retryConnector{bad: bad, pause: 2 * time.Millisecond}, pfssql.WithSchema(s))
				defer db.Close()
				var q rowQuerier = db
				if level == "db" {
					q = newDB(t, db)
				}
				ctx, th := instrument.StartThread(context.Background(), "thread/test/client", instrument.WithSchema(s))
				defer th.End()
				bad.Store(1)
				c.run(t, ctx, q)
				r := digestRow(t, s, c.text)
				if r.CountStar != 1 || r.CountRetries != 1 {
					t.Fatalf("COUNT_STAR %d, COUNT_RETRIES %d; want 1, 1", r.CountStar, r.CountRetries)
				}
				if r.SumDriverTime > r.SumTimerWait {
					t.Errorf("retried %s: SUM_DRIVER_TIME %d > SUM_TIMER_WAIT %d: the statement ended at the failed attempt's end",
						c.name, r.SumDriverTime, r.SumTimerWait)
				}
				if r.SumTimerWait < uint64(2*time.Millisecond/time.Nanosecond)*1000 {
					t.Errorf("retried %s: SUM_TIMER_WAIT %d ps, less than the retry's pause inside it", c.name, r.SumTimerWait)
				}
				if r.SumDriverTime+r.SumPoolTime+r.SumFetchTime > r.SumTimerWait {
					t.Errorf("retried %s: SUM_DRIVER_TIME %d + SUM_POOL_TIME %d + SUM_FETCH_TIME %d > SUM_TIMER_WAIT %d",
						c.name, r.SumDriverTime, r.SumPoolTime, r.SumFetchTime, r.SumTimerWait)
				}
			})
		}
	}
}
