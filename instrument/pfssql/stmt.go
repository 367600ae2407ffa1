//lint:file-ignore SA1019 database/sql still uses the deprecated driver interfaces a driver may have, and so does the wrapper that mirrors them.

package pfssql

import (
	"context"
	"database/sql/driver"

	"github.com/otelpfs/otelpfs/instrument"
)

// stmt wraps a prepared statement. It always has StmtExecContext and
// StmtQueryContext, doing what database/sql does for a statement without
// them (so that the context, and the thread it carries, reach the
// wrapper), and exactly the NamedValueChecker and ColumnConverter the
// wrapped statement has (comboStmt), which decide how database/sql
// converts arguments. database/sql uses a statement under its
// connection's lock, so the fields need none.
type stmt struct {
	s     driver.Stmt
	c     *conn
	query string

	execer  driver.StmtExecContext
	queryer driver.StmtQueryContext
	checker driver.NamedValueChecker
	conv    driver.ColumnConverter

	// The statement of an ExecContext or QueryContext the connection
	// answered with driver.ErrSkip: its execution goes on with this one.
	pending     run
	pendingKind kind
	hasPending  bool
}

// stmtOpt is stmt with the optional interfaces' methods.
type stmtOpt stmt

// columnConverter is driver.ColumnConverter (see gen_combos.go).
type columnConverter interface {
	ColumnConverter(idx int) driver.ValueConverter
}

func wrapStmt(s driver.Stmt, c *conn, query string) driver.Stmt {
	base := stmt{s: s, c: c, query: query}
	base.execer, _ = s.(driver.StmtExecContext)
	base.queryer, _ = s.(driver.StmtQueryContext)
	var mask uint
	if x, ok := s.(driver.NamedValueChecker); ok {
		base.checker, mask = x, mask|1
	}
	if x, ok := s.(driver.ColumnConverter); ok {
		base.conv, mask = x, mask|2
	}
	return comboStmt(base, mask)
}

func (s *stmt) base() *stmt { return s }

// Close closes the statement; a statement database/sql gave up between
// the prepare and the execution (see conn.pending) ends with an error.
func (s *stmt) Close() error {
	if s.hasPending {
		s.pending.fail(context.Background(), errNotExecuted)
		s.pending.finish()
		s.pending, s.hasPending = run{}, false
	}
	return s.s.Close()
}

func (s *stmt) NumInput() int { return s.s.NumInput() }

// Exec and Query are driver.Stmt's; database/sql calls the Context
// methods, which every stmt has.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

func (s *stmtOpt) CheckNamedValue(nv *driver.NamedValue) error { return s.checker.CheckNamedValue(nv) }

func (s *stmtOpt) ColumnConverter(idx int) driver.ValueConverter { return s.conv.ColumnConverter(idx) }

// open is conn.open for an execution of the statement.
func (s *stmt) open(ctx context.Context, k kind, local *run) (*run, *op, uint64) {
	if o := opOf(ctx); o != nil {
		return &o.run, o, o.arrive()
	}
	if s.hasPending {
		*local = s.pending
		s.pending, s.hasPending = run{}, false
		return local, nil, local.st.Now()
	}
	cfg := s.c.cfg
	if !cfg.retry.take(ctx, k, s.query, local) {
		local.st = instrument.StartSQL(ctx, cfg.schema, cfg.schemaName, s.query)
		return local, nil, local.st.Start()
	}
	return local, nil, local.st.Now()
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	var local run
	r, o, t0 := s.open(ctx, kExec, &local)
	var res driver.Result
	var err error
	if s.execer != nil {
		res, err = s.execer.ExecContext(ctx, args)
	} else {
		res, err = stmtExecLegacy(ctx, s.s, args)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err != nil {
		r.fail(ctx, err)
	} else {
		r.affected = rowsAffected(res)
	}
	s.c.cfg.settle(ctx, kExec, s.query, r, o, err, t1, s.c.inTx)
	return res, err
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	w := newRows()
	r, o, t0 := s.open(ctx, kQuery, &w.own)
	var ri driver.Rows
	var err error
	if s.queryer != nil {
		ri, err = s.queryer.QueryContext(ctx, args)
	} else {
		ri, err = stmtQueryLegacy(ctx, s.s, args)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err != nil {
		r.fail(ctx, err)
		s.c.cfg.settle(ctx, kQuery, s.query, r, o, err, t1, s.c.inTx)
		freeRows(w)
		return nil, err
	}
	return w.start(ctx, ri, r, o, t1), nil
}

// stmtExecLegacy and stmtQueryLegacy are database/sql's use of a statement
// without StmtExecContext or StmtQueryContext (ctxDriverStmtExec,
// ctxDriverStmtQuery).
func stmtExecLegacy(ctx context.Context, s driver.Stmt, args []driver.NamedValue) (driver.Result, error) {
	dargs, err := namedValueToValue(args)
	if err != nil {
		return nil, err
	}
	select {
	default:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Exec(dargs)
}

func stmtQueryLegacy(ctx context.Context, s driver.Stmt, args []driver.NamedValue) (driver.Rows, error) {
	dargs, err := namedValueToValue(args)
	if err != nil {
		return nil, err
	}
	select {
	default:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Query(dargs)
}

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	named := make([]driver.NamedValue, len(args))
	for i, v := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return named
}
