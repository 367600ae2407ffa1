//lint:file-ignore SA1019 database/sql still uses the deprecated driver interfaces a driver may have, and so does the wrapper that mirrors them.

package pfssql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/otelpfs/otelpfs/instrument"
)

//go:generate go run gen_combos.go

// conn wraps a driver's connection. Its exported methods are driver.Conn's;
// connOpt, the same struct, has the optional interfaces' methods, and
// comboConn puts the wrapper in the type (combos.go) that has exactly the
// optional interfaces the wrapped connection has. database/sql uses a
// connection from one goroutine at a time, so the fields need no lock.
type conn struct {
	c   driver.Conn
	cfg *config

	// The wrapped connection's optional interfaces, nil where it has none.
	execer     driver.ExecerContext
	execerOld  driver.Execer // when it has no ExecerContext
	queryer    driver.QueryerContext
	queryerOld driver.Queryer // when it has no QueryerContext
	preparer   driver.ConnPrepareContext
	beginner   driver.ConnBeginTx
	resetter   driver.SessionResetter
	validator  driver.Validator
	checker    driver.NamedValueChecker
	pinger     driver.Pinger

	// A statement whose ExecContext or QueryContext the driver answered
	// with driver.ErrSkip: database/sql prepares the same text next and
	// executes that, which goes on as this statement.
	pending     run
	pendingText string
	pendingKind kind
	hasPending  bool

	// inTx is set while a transaction begun on the connection is open:
	// database/sql retries none of its statements, so none waits for a
	// retry. database/sql serializes the connection's calls, the Tx's
	// included.
	inTx bool
}

// connOpt is conn with the methods of the optional interfaces.
type connOpt conn

// The bits of a connection's interfaces, in gen_combos.go's order.
const (
	hasExecer = 1 << iota
	hasQueryer
	hasPreparer
	hasBeginner
	hasResetter
	hasValidator
	hasChecker
	hasPinger
)

// wrapConn wraps c in the conn type that has c's optional interfaces. A
// deprecated driver.Execer or driver.Queryer counts as ExecerContext or
// QueryerContext: database/sql uses either the same way.
func wrapConn(c driver.Conn, cfg *config) driver.Conn {
	if c == nil {
		return nil
	}
	base := conn{c: c, cfg: cfg}
	var mask uint
	if x, ok := c.(driver.ExecerContext); ok {
		base.execer, mask = x, mask|hasExecer
	} else if x, ok := c.(driver.Execer); ok {
		base.execerOld, mask = x, mask|hasExecer
	}
	if x, ok := c.(driver.QueryerContext); ok {
		base.queryer, mask = x, mask|hasQueryer
	} else if x, ok := c.(driver.Queryer); ok {
		base.queryerOld, mask = x, mask|hasQueryer
	}
	// The context forms of Prepare and Begin always: without them
	// database/sql calls Prepare and Begin, which carry no context, and the
	// DB level's statement (found through the context) would not see them.
	// prepare and begin fall back to the driver's as database/sql does.
	mask |= hasPreparer | hasBeginner
	if x, ok := c.(driver.ConnPrepareContext); ok {
		base.preparer = x
	}
	if x, ok := c.(driver.ConnBeginTx); ok {
		base.beginner = x
	}
	if x, ok := c.(driver.SessionResetter); ok {
		base.resetter, mask = x, mask|hasResetter
	}
	if x, ok := c.(driver.Validator); ok {
		base.validator, mask = x, mask|hasValidator
	}
	if x, ok := c.(driver.NamedValueChecker); ok {
		base.checker, mask = x, mask|hasChecker
	}
	if x, ok := c.(driver.Pinger); ok {
		base.pinger, mask = x, mask|hasPinger
	}
	return comboConn(base, mask)
}

func (c *conn) base() *conn { return c }

// UnwrapConn returns the driver's connection a pfssql connection wraps
// (what sql.Conn.Raw passes to its function), or c itself.
func UnwrapConn(c driver.Conn) driver.Conn {
	if w, ok := c.(interface{ base() *conn }); ok {
		return w.base().c
	}
	return c
}

// Prepare is driver.Conn's: database/sql calls it when the connection has
// no ConnPrepareContext.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.prepare(context.Background(), query)
}

// Begin is driver.Conn's: database/sql calls it when the connection has no
// ConnBeginTx.
func (c *conn) Begin() (driver.Tx, error) {
	return c.begin(context.Background(), driver.TxOptions{})
}

// Close closes the connection.
func (c *conn) Close() error {
	c.dropPending()
	return c.c.Close()
}

func (c *connOpt) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return (*conn)(c).exec(ctx, query, args)
}

func (c *connOpt) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return (*conn)(c).query(ctx, query, args)
}

func (c *connOpt) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return (*conn)(c).prepare(ctx, query)
}

func (c *connOpt) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return (*conn)(c).begin(ctx, opts)
}

func (c *connOpt) ResetSession(ctx context.Context) error { return c.resetter.ResetSession(ctx) }
func (c *connOpt) IsValid() bool                          { return c.validator.IsValid() }
func (c *connOpt) Ping(ctx context.Context) error         { return c.pinger.Ping(ctx) }

func (c *connOpt) CheckNamedValue(nv *driver.NamedValue) error {
	return c.checker.CheckNamedValue(nv)
}

// open returns the statement a driver call of kind k on text works for:
// the DB level's (o), a statement database/sql retries after
// driver.ErrBadConn, or a new one begun in local.
//
// It returns the statement's clock as the driver call begins: the reading
// the op took arriving, or the new statement's start, or else a fresh one.
func (c *conn) open(ctx context.Context, k kind, text string, local *run) (*run, *op, uint64) {
	if o := opOf(ctx); o != nil {
		return &o.run, o, o.arrive()
	}
	c.dropPending()
	if !c.cfg.retry.take(ctx, k, text, local) {
		local.st = instrument.StartSQL(ctx, c.cfg.schema, c.cfg.schemaName, text)
		return local, nil, local.st.Start()
	}
	return local, nil, local.st.Now()
}

// hold keeps the statement of a call the driver answered with
// driver.ErrSkip for the prepare that follows.
func (c *conn) hold(k kind, text string, r *run) {
	c.pending, c.pendingText, c.pendingKind, c.hasPending = *r, text, k, true
}

// errNotExecuted ends a statement database/sql gave up between its
// prepare and its execution (its arguments did not convert, say).
var errNotExecuted = errors.New("pfssql: statement prepared but not executed")

// dropPending ends a held statement no prepare took.
func (c *conn) dropPending() {
	if c.hasPending {
		c.pending.fail(context.Background(), errNotExecuted)
		c.pending.finish()
		c.pending, c.pendingText, c.hasPending = run{}, "", false
	}
}

func (c *conn) exec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	var local run
	r, o, t0 := c.open(ctx, kExec, query, &local)
	var res driver.Result
	var err error
	if c.execer != nil {
		res, err = c.execer.ExecContext(ctx, query, args)
	} else {
		res, err = execLegacy(ctx, c.execerOld, query, args)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err == driver.ErrSkip {
		if o == nil {
			c.hold(kExec, query, r)
		}
		return nil, err
	}
	if err != nil {
		r.fail(ctx, err)
	} else {
		r.affected = rowsAffected(res)
	}
	c.cfg.settle(ctx, kExec, query, r, o, err, t1, c.inTx)
	return res, err
}

func (c *conn) query(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	w := newRows()
	r, o, t0 := c.open(ctx, kQuery, query, &w.own)
	var ri driver.Rows
	var err error
	if c.queryer != nil {
		ri, err = c.queryer.QueryContext(ctx, query, args)
	} else {
		ri, err = queryLegacy(ctx, c.queryerOld, query, args)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err != nil {
		if err == driver.ErrSkip {
			if o == nil {
				c.hold(kQuery, query, r)
			}
		} else {
			r.fail(ctx, err)
			c.cfg.settle(ctx, kQuery, query, r, o, err, t1, c.inTx)
		}
		freeRows(w)
		return nil, err
	}
	return w.start(ctx, ri, r, o, t1), nil
}

// prepare prepares query: a statement/com/Prepare statement of its own
// (see config.prepareText), unless it is the prepare database/sql makes
// after driver.ErrSkip, or the DB level's call, whose statement it goes
// on.
func (c *conn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	var local run
	var r *run
	o := opOf(ctx)
	k := kPrepare
	var t0 uint64 // the clock as the driver call begins (see open)
	switch {
	case o != nil:
		t0 = o.arrive()
		r = &o.run
	case c.hasPending && c.pendingText == query:
		local, k = c.pending, c.pendingKind
		c.pending, c.pendingText, c.hasPending = run{}, "", false
		r = &local
	default:
		c.dropPending()
		if !c.cfg.retry.take(ctx, kPrepare, query, &local) {
			local.st = c.cfg.prepare.Start(ctx, c.cfg.prepareText(query))
			t0 = local.st.Start()
		}
		r = &local
	}
	if t0 == 0 {
		t0 = r.st.Now()
	}
	var si driver.Stmt
	var err error
	if c.preparer != nil {
		si, err = c.preparer.PrepareContext(ctx, query)
	} else {
		si, err = prepareNoContext(ctx, c.c, query)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err != nil {
		r.fail(ctx, err)
		c.cfg.settle(ctx, k, query, r, o, err, t1, c.inTx)
		return nil, err
	}
	s := wrapStmt(si, c, query)
	switch {
	case o != nil:
	case k != kPrepare: // the statement goes on in the prepared statement's execution
		st := s.(interface{ base() *stmt }).base()
		st.pending, st.pendingKind, st.hasPending = local, k, true
	default:
		r.finish()
	}
	return s, nil
}

// Transactions: BEGIN, COMMIT and ROLLBACK are statements (statement/sql/
// begin, commit, rollback), as when a client sends them as SQL, and the
// transaction is an event from the driver's successful Begin to its Commit
// or Rollback, nested in the BEGIN statement.
const (
	textBegin         = "START TRANSACTION"
	textBeginReadOnly = "START TRANSACTION READ ONLY"
	textCommit        = "COMMIT"
	textRollback      = "ROLLBACK"
)

func (c *conn) begin(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	text := textBegin
	if opts.ReadOnly {
		text = textBeginReadOnly
	}
	var local run
	r, o, t0 := c.open(ctx, kBegin, text, &local)
	var ti driver.Tx
	var err error
	if c.beginner != nil {
		ti, err = c.beginner.BeginTx(ctx, opts)
	} else {
		ti, err = beginNoContext(ctx, c.c, opts)
	}
	t1 := r.st.Now()
	r.driver += t1 - t0
	if err != nil {
		r.fail(ctx, err)
		c.cfg.settle(ctx, kBegin, text, r, o, err, t1, false)
		return nil, err
	}
	t := &tx{tx: ti, cfg: c.cfg, ctx: ctx, c: c}
	c.inTx = true
	t.trx = instrument.StartTransaction(ctx, c.cfg.schema, instrument.TransactionInfo{
		ReadOnly:  opts.ReadOnly,
		Isolation: isolation(opts.Isolation),
	})
	c.cfg.settle(ctx, kBegin, text, r, o, nil, t1, false)
	return t, nil
}

// rowsAffected is RowsAffected of res, or 0 if the driver cannot tell.
func rowsAffected(res driver.Result) uint64 {
	if res == nil {
		return 0
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return uint64(n)
	}
	return 0
}

// execLegacy and queryLegacy are database/sql's use of a deprecated
// driver.Execer or driver.Queryer (ctxDriverExec, ctxDriverQuery).
func execLegacy(ctx context.Context, e driver.Execer, query string, args []driver.NamedValue) (driver.Result, error) {
	dargs, err := namedValueToValue(args)
	if err != nil {
		return nil, err
	}
	select {
	default:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.Exec(query, dargs)
}

func queryLegacy(ctx context.Context, q driver.Queryer, query string, args []driver.NamedValue) (driver.Rows, error) {
	dargs, err := namedValueToValue(args)
	if err != nil {
		return nil, err
	}
	select {
	default:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return q.Query(query, dargs)
}

// namedValueToValue is database/sql's: a deprecated interface takes no
// names.
func namedValueToValue(named []driver.NamedValue) ([]driver.Value, error) {
	dargs := make([]driver.Value, len(named))
	for n, param := range named {
		if len(param.Name) > 0 {
			return nil, errors.New("sql: driver does not support the use of Named Parameters")
		}
		dargs[n] = param.Value
	}
	return dargs, nil
}

// prepareNoContext is PrepareContext for a driver connection without it,
// as database/sql does it: Prepare, and a statement prepared after ctx was
// done is closed and refused.
func prepareNoContext(ctx context.Context, c driver.Conn, query string) (driver.Stmt, error) {
	si, err := c.Prepare(query)
	if err == nil {
		select {
		case <-ctx.Done():
			si.Close()
			return nil, ctx.Err()
		default:
		}
	}
	return si, err
}

// Errors database/sql gives for transaction options a driver without
// BeginTx cannot honour (its own texts).
var (
	errNoIsolation = errors.New("sql: driver does not support non-default isolation level")
	errNoReadOnly  = errors.New("sql: driver does not support read-only transactions")
)

// beginNoContext is BeginTx for a driver connection without it, as
// database/sql does it: only default options, then Begin, and a
// transaction begun after ctx was done is rolled back and refused.
func beginNoContext(ctx context.Context, c driver.Conn, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) {
		return nil, errNoIsolation
	}
	if opts.ReadOnly {
		return nil, errNoReadOnly
	}
	ti, err := c.Begin() // the driver has nothing else
	if err == nil {
		select {
		case <-ctx.Done():
			ti.Rollback()
			return nil, ctx.Err()
		default:
		}
	}
	return ti, err
}
