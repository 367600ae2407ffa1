package mysqlpfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A limitHandler wraps the engine's protocol handler: each statement runs
// under the query timeout, its result under the row limit, and the
// engine's generic errors for what MySQL has a number for get that
// number. It offers only mysql.Handler (not the engine's extended
// handler), so every statement passes through it.
type limitHandler struct {
	inner    mysql.Handler
	timeout  time.Duration
	rowLimit int
	// The engine and its session manager, for NewConnection and
	// ConnectionClosed, which the engine's handler logs at info level on
	// logrus's standard logger, which is the service's.
	engine *sqle.Engine
	sm     *server.SessionManager
	// closing is cancelled by Server.Close: every statement's context
	// ends with it.
	closing context.Context
	// dog cancels the statements that grow the heap past the memory
	// limit, and those whose client has gone.
	dog      *watchdog
	memLimit int64
}

var _ mysql.Handler = (*limitHandler)(nil)

// errTimeout is the cause a statement's context is cancelled with when
// its time is up.
var errTimeout = errors.New("mysqlpfs: query timeout")

// errRowLimit is what the result callback returns past the row limit.
var errRowLimit = errors.New("mysqlpfs: row limit")

func (h *limitHandler) start(ctx context.Context, conn *mysql.Conn) (context.Context, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	var cancel context.CancelFunc
	if h.timeout <= 0 {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeoutCause(ctx, h.timeout, errTimeout)
	}
	stops := []func() bool{}
	if h.closing != nil {
		stops = append(stops, context.AfterFunc(h.closing, cancel))
	}
	unwatch := func() {}
	if h.dog != nil {
		var nc net.Conn
		if conn != nil {
			nc = conn.Conn
		}
		unwatch = h.dog.watch(cancelCause, nc)
	}
	return ctx, func() {
		unwatch()
		for _, stop := range stops {
			stop()
		}
		cancel()
		cancelCause(nil)
	}
}

// A counter counts one statement's result rows against the limit.
type counter struct {
	limit int
	rows  atomic.Int64
	over  atomic.Bool
}

func (c *counter) add(n int) error {
	if c.limit > 0 && c.rows.Add(int64(n)) > int64(c.limit) {
		c.over.Store(true)
		return errRowLimit
	}
	return nil
}

// finish maps the statement's error: its time ran out, its result passed
// the limit, or the engine's generic error for what MySQL numbers.
func (h *limitHandler) finish(ctx context.Context, c *counter, err error) error {
	switch {
	case err == nil:
		return nil
	case c.over.Load():
		return mysql.NewSQLError(ErTooBigSelect, mysql.SSClientError,
			"the result has more than %d rows, this server's row limit (mysqlpfs.WithRowLimit): narrow it with WHERE or LIMIT", h.rowLimit)
	case errors.Is(context.Cause(ctx), errMemory):
		return mysql.NewSQLError(ErQueryInterrupted, "70100",
			"Query execution was interrupted: the statements running grew the service's heap by more than %s (mysqlpfs.WithQueryMemoryLimit)", byteSize(h.memLimit))
	case errors.Is(context.Cause(ctx), errTimeout):
		return mysql.NewSQLError(ErQueryTimeout, mysql.SSUnknownSQLState,
			"Query execution was interrupted, maximum statement execution time exceeded (%v, mysqlpfs.WithQueryTimeout)", h.timeout)
	}
	var se *mysql.SQLError
	if errors.As(err, &se) && se.State == mysql.SSUnknownSQLState {
		if state, ok := sqlStates[se.Num]; ok {
			return mysql.NewSQLError(se.Num, state, "%s", se.Message)
		}
	}
	if errors.As(err, &se) && se.Num == mysql.ERUnknownError {
		// The engine's privilege checks: a table or statement the account
		// has no privilege for (mysql.user, CREATE TABLE: 1142), a
		// database it has none on (1044, which MySQL answers for an
		// unknown database too, before it looks).
		switch {
		case strings.HasPrefix(se.Message, "command denied to user"):
			return mysql.NewSQLError(ErTableAccessDenied, mysql.SSClientError, "%s", se.Message)
		case strings.HasPrefix(se.Message, "Access denied for user") && strings.Contains(se.Message, "to database"):
			return mysql.NewSQLError(mysql.ERDBAccessDenied, mysql.SSClientError, "%s", se.Message)
		}
	}
	return err
}

// sqlStates are MySQL's SQLSTATEs for error numbers the engine sends with
// the generic HY000.
var sqlStates = map[int]string{
	mysql.ERNoSuchTable:    "42S02",
	mysql.ERBadFieldError:  mysql.SSBadFieldError,
	mysql.ERParseError:     mysql.SSClientError,
	mysql.ERBadDb:          "42000",
	mysql.ERDBAccessDenied: mysql.SSClientError,
}

func (h *limitHandler) ComQuery(ctx context.Context, conn *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	query = quoteDollarIdents(query)
	ctx, cancel := h.start(ctx, conn)
	defer cancel()
	c := &counter{limit: h.rowLimit}
	err := h.inner.ComQuery(ctx, conn, query, func(res *sqltypes.Result, more bool) error {
		if err := c.add(len(res.Rows)); err != nil {
			return err
		}
		return callback(res, more)
	})
	return h.finish(ctx, c, err)
}

func (h *limitHandler) ComMultiQuery(ctx context.Context, conn *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	query = quoteDollarIdents(query)
	ctx, cancel := h.start(ctx, conn)
	defer cancel()
	c := &counter{limit: h.rowLimit}
	rest, err := h.inner.ComMultiQuery(ctx, conn, query, func(res *sqltypes.Result, more bool) error {
		if err := c.add(len(res.Rows)); err != nil {
			return err
		}
		return callback(res, more)
	})
	return rest, h.finish(ctx, c, err)
}

func (h *limitHandler) ComPrepare(ctx context.Context, conn *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	query = quoteDollarIdents(query)
	if prepare != nil {
		prepare.PrepareStmt = quoteDollarIdents(prepare.PrepareStmt)
	}
	ctx, cancel := h.start(ctx, conn)
	defer cancel()
	fields, err := h.prepare(ctx, conn, query)
	return fields, h.finish(ctx, &counter{}, err)
}

func (h *limitHandler) ComStmtExecute(ctx context.Context, conn *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	ctx, cancel := h.start(ctx, conn)
	defer cancel()
	c := &counter{limit: h.rowLimit}
	err := h.inner.ComStmtExecute(ctx, conn, prepare, func(res *sqltypes.Result) error {
		if err := c.add(len(res.Rows)); err != nil {
			return err
		}
		return callback(res)
	})
	return h.finish(ctx, c, err)
}

// NewConnection is the engine's, but for its log line.
func (h *limitHandler) NewConnection(c *mysql.Conn) {
	h.sm.AddConn(c)
	c.DisableClientMultiStatements = false
}

// ConnectionClosed is the engine's, but for its log lines: the session
// ends, and the named locks (GET_LOCK) and table locks it held are
// released.
func (h *limitHandler) ConnectionClosed(c *mysql.Conn) {
	defer h.sm.RemoveConn(c)
	defer h.engine.CloseSession(c.ConnectionID)
	if ctx, err := h.sm.NewContextWithQuery(context.Background(), c, ""); err == nil {
		h.engine.LS.ReleaseAll(ctx)
		h.engine.Analyzer.Catalog.UnlockTables(ctx, c.ConnectionID)
	}
}
func (h *limitHandler) ConnectionAborted(c *mysql.Conn, reason string) error {
	return h.inner.ConnectionAborted(c, reason)
}

// ComInitDB is the engine's, but for its log line for a database that
// cannot be selected.
func (h *limitHandler) ComInitDB(c *mysql.Conn, schemaName string) error {
	if err := h.sm.SetDB(context.Background(), c, schemaName); err != nil {
		err = sql.CastSQLError(err)
		return h.finish(context.Background(), &counter{}, err)
	}
	return nil
}
func (h *limitHandler) WarningCount(c *mysql.Conn) uint16      { return h.inner.WarningCount(c) }
func (h *limitHandler) ComResetConnection(c *mysql.Conn) error { return h.inner.ComResetConnection(c) }
func (h *limitHandler) ParserOptionsForConnection(c *mysql.Conn) (sqlparser.ParserOptions, error) {
	return h.inner.ParserOptionsForConnection(c)
}

func (h *limitHandler) String() string {
	return fmt.Sprintf("mysqlpfs handler (timeout %v, row limit %d)", h.timeout, h.rowLimit)
}

// byteSize is n bytes for a message: in MiB when it is a whole number of
// them.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
