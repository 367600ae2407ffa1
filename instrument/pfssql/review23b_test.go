package pfssql_test

import (
	"context"
	"database/sql/driver"
	"io"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
)

// slowConnector's rows take busy wall time inside Next (a driver reading a
// row off the network), so that nearly all of a query's time is the
// driver's.
type slowConnector struct{ busy time.Duration }

func (c slowConnector) Connect(context.Context) (driver.Conn, error) {
	return &slowConn{busy: c.busy}, nil
}
func (c slowConnector) Driver() driver.Driver { return memDriver{} }

type slowConn struct{ busy time.Duration }

func (c *slowConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *slowConn) Close() error                        { return nil }
func (c *slowConn) Begin() (driver.Tx, error)           { return memTx{}, nil }
func (c *slowConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &slowRows{busy: c.busy}, nil
}

type slowRows struct {
	busy time.Duration
	n    int
}

func (r *slowRows) Columns() []string { return memColumns }
func (r *slowRows) Close() error      { return nil }
func (r *slowRows) Next(dest []driver.Value) error {
	if r.n > 0 {
		return io.EOF
	}
	r.n++
	for t0 := time.Now(); time.Since(t0) < r.busy; {
	}
	dest[0] = int64(1)
	return nil
}

// Failed on 13afea2; fixed: Next is timed on the cycle timer only when the
// statement's timer is CYCLE or NANOSECOND, and Close keeps the Next calls'
// sum within the time the rows were open. Medium-low severity.
// SUM_DRIVER_TIME is part of the statement's time: the driver's calls are
// inside the statement. With the statement on a timer other than CYCLE
// (setup_timers: statement = MILLISECOND here), rows' Next is still timed on
// the cycle timer, and a statement that the statement timer saw as 0 ms
// (no millisecond boundary crossed) gets a DRIVER_TIME of ~300 µs:
// SUM_DRIVER_TIME > SUM_TIMER_WAIT. (With the statement's own timer, the
// Next intervals lie within [TIMER_START, TIMER_END] and their sum cannot
// exceed TIMER_WAIT.)
func TestReview23bDriverTimeWithinTimerWaitOnStatementTimer(t *testing.T) {
	for try := 0; try < 40; try++ {
		s := allConsumers(t)
		s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Millisecond)
		db := pfssql.OpenDB(slowConnector{busy: 300 * time.Microsecond}, pfssql.WithSchema(s))
		ctx, th := instrument.StartThread(context.Background(), "thread/test/client", instrument.WithSchema(s))
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT n FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		th.End()
		db.Close()
		r := digestRow(t, s, "SELECT n FROM t")
		if r.SumDriverTime > r.SumTimerWait || r.SumDriverTime+r.SumFetchTime > r.SumTimerWait {
			t.Fatalf("try %d: SUM_DRIVER_TIME %d + SUM_FETCH_TIME %d > SUM_TIMER_WAIT %d (statement timer MILLISECOND)",
				try, r.SumDriverTime, r.SumFetchTime, r.SumTimerWait)
		}
	}
}
