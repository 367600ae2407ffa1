package pfssql

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"
	"sync"

	"github.com/otelpfs/otelpfs/hwclock"
)

// rows wraps a driver's result set and ends its statement when it is
// closed. It has every optional interface of driver.Rows: where the
// wrapped rows lack one, it answers what database/sql assumes of rows
// without it (ColumnTypeScanType: any; the others: not known; no next
// result set), so database/sql behaves the same.
//
// A rows is taken from a pool when the query begins and put back at Close:
// database/sql calls a driver's Rows from one goroutine at a time and
// never after Close.
type rows struct {
	rows   driver.Rows
	r      *run // &own, or the DB level's statement
	own    run
	o      *op             // the DB level's statement, which w holds (op.own) until Close
	ctx    context.Context // the query's, for Cancelled
	opened uint64          // ps: when the query returned
	next   uint64          // ps inside Next (raw cycles while cycle is set: see Close)
	cycle  bool            // Next is timed on the cycle counter (see Next)
	eof    bool
}

var rowsPool = sync.Pool{New: func() any { return new(rows) }}

func newRows() *rows { return rowsPool.Get().(*rows) }

func freeRows(w *rows) {
	*w = rows{}
	rowsPool.Put(w)
}

// start makes w the rows of ri, for the statement r, at now.
func (w *rows) start(ctx context.Context, ri driver.Rows, r *run, o *op, now uint64) *rows {
	w.rows, w.r, w.o, w.ctx, w.opened = ri, r, o, ctx, now
	if tm := r.st.Timer(); r.st.Timed() && (tm == hwclock.Cycle || tm == hwclock.Nanosecond) {
		w.cycle = true
	}
	if o != nil {
		o.own()
	}
	return w
}

func (w *rows) Columns() []string { return w.rows.Columns() }

// Next times the driver's Next on the cycle timer, the wait events', when
// the statement's timer is as fine (CYCLE or NANOSECOND): it is read twice
// a row, and costs a fraction of a NANOSECOND reading (a duration in
// picoseconds is one whatever timer measured it; Close keeps the sum
// within the statement's own time). On a coarser timer, on the statement's.
func (w *rows) Next(dest []driver.Value) error {
	r := w.r
	var err error
	if w.cycle {
		c0 := hwclock.Cycles()
		err = w.rows.Next(dest)
		w.next += hwclock.Cycles() - c0 // raw: Close converts the sum
	} else {
		t0 := r.st.Now()
		err = w.rows.Next(dest)
		w.next += r.st.Now() - t0
	}
	switch err {
	case nil:
		r.sent++
	case io.EOF:
		w.eof = true
	default:
		r.fail(w.ctx, err)
	}
	return err
}

// Close closes the rows and ends the statement: the time from the query's
// return to now is FetchTime but for the Next calls', which is DriverTime
// as the Close call's is. Rows closed before their end while the query's
// context is done were cut short by it: Cancelled.
//
// On the cycle counter (w.cycle) the Close call is timed as the Next calls
// are, and the statement's clock is read once, after it: the call began
// that long before, but not before the query returned.
func (w *rows) Close() error {
	r := w.r
	var t0, t1 uint64
	var err error
	if w.cycle {
		c0 := hwclock.Cycles()
		err = w.rows.Close()
		closing := (hwclock.Cycles() - c0) * hwclock.Cycle.Factor()
		t1 = r.st.Now()
		t0 = t1
		if t1 >= w.opened {
			t0 = t1 - min(closing, t1-w.opened)
		}
		w.next *= hwclock.Cycle.Factor() // the raw cycles Next summed, in ps
	} else {
		t0 = r.st.Now()
		err = w.rows.Close()
		t1 = r.st.Now()
	}
	if t0 >= w.opened {
		// The Next calls happened between the query's return and now, on
		// this timer; on the cycle timer their sum may exceed that by the
		// two calibrations' difference.
		w.next = min(w.next, t0-w.opened)
	}
	r.driver += w.next + (t1 - t0)
	if busy := w.opened + w.next; t0 > busy {
		r.fetch += t0 - busy
	}
	if err != nil {
		r.fail(w.ctx, err)
	} else if !w.eof && w.ctx != nil {
		if cerr := w.ctx.Err(); cerr != nil {
			r.fail(w.ctx, cerr)
		}
	}
	r.finishAt(t1)
	if w.o != nil {
		w.o.release() // r is w.o's: not used past this
	}
	freeRows(w)
	return err
}

func (w *rows) HasNextResultSet() bool {
	if x, ok := w.rows.(driver.RowsNextResultSet); ok {
		return x.HasNextResultSet()
	}
	return false
}

func (w *rows) NextResultSet() error {
	if x, ok := w.rows.(driver.RowsNextResultSet); ok {
		w.eof = false
		return x.NextResultSet()
	}
	return io.EOF
}

var anyType = reflect.TypeFor[any]()

func (w *rows) ColumnTypeScanType(index int) reflect.Type {
	if x, ok := w.rows.(driver.RowsColumnTypeScanType); ok {
		return x.ColumnTypeScanType(index)
	}
	return anyType
}

func (w *rows) ColumnTypeDatabaseTypeName(index int) string {
	if x, ok := w.rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return x.ColumnTypeDatabaseTypeName(index)
	}
	return ""
}

func (w *rows) ColumnTypeLength(index int) (int64, bool) {
	if x, ok := w.rows.(driver.RowsColumnTypeLength); ok {
		return x.ColumnTypeLength(index)
	}
	return 0, false
}

func (w *rows) ColumnTypeNullable(index int) (nullable, ok bool) {
	if x, ok := w.rows.(driver.RowsColumnTypeNullable); ok {
		return x.ColumnTypeNullable(index)
	}
	return false, false
}

func (w *rows) ColumnTypePrecisionScale(index int) (precision, scale int64, ok bool) {
	if x, ok := w.rows.(driver.RowsColumnTypePrecisionScale); ok {
		return x.ColumnTypePrecisionScale(index)
	}
	return 0, 0, false
}
