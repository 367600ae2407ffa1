package mysqlpfs

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	vtlog "github.com/dolthub/vitess/go/vt/log"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// The engine logs on logrus's standard logger, the service's log, in
// two ways. Its protocol layer logs through vitess's log functions, which
// the engine points at logrus: every failed login, every handshake a
// stranger botches, every statement that fails to prepare, every read of
// a connection closed under it. The last are dropped (Close closes the
// clients' connections, and a client hanging up is no news); the rest are
// rate-limited below (engineLogBurst lines, then one every
// engineLogEvery, and a count of those left out), so a client cannot
// fill the service's log. Its handler logs with logrus directly when a
// database cannot be selected and a statement cannot be prepared: the
// server does both itself (limitHandler.ComInitDB and ComPrepare),
// without a log line, the client getting its error.
const (
	engineLogBurst = 10
	engineLogEvery = 6 * time.Second
)

// A logLimiter is a token bucket of log lines.
type logLimiter struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// allow tells whether a line may be logged now, and how many were left
// out since the last that was.
func (l *logLimiter) allow() (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.last.IsZero() {
		l.tokens = engineLogBurst
	} else {
		l.tokens = min(engineLogBurst, l.tokens+float64(now.Sub(l.last))/float64(engineLogEvery))
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

var engineLog logLimiter

// closedConn reports whether a log line's arguments hold the error of a
// read or write on a connection that was closed: Server.Close closes the
// clients' connections under their readers, which the protocol layer
// reports as errors, and a client that hangs up mid-packet is no news to
// the service either.
func closedConn(args []any) bool {
	for _, a := range args {
		err, ok := a.(error)
		if !ok {
			continue
		}
		// vitess wraps errors without Unwrap: the text tells as well.
		if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
			strings.Contains(err.Error(), net.ErrClosed.Error()) {
			return true
		}
	}
	return false
}

func init() {
	// The engine's own init has pointed vitess's log at logrus; this
	// package's init runs after it.
	warn := vtlog.Warningf
	limit := func(f func(...any)) func(...any) {
		return func(args ...any) {
			if ok, n := engineLog.allow(); ok {
				if n > 0 {
					warn("mysqlpfs: %d lines of the SQL engine's log left out", n)
				}
				f(args...)
			}
		}
	}
	limitf := func(f func(string, ...any)) func(string, ...any) {
		return func(format string, args ...any) {
			if closedConn(args) {
				return // Close closed it, or the client went away: no news
			}
			if ok, n := engineLog.allow(); ok {
				if n > 0 {
					warn("mysqlpfs: %d lines of the SQL engine's log left out", n)
				}
				f(format, args...)
			}
		}
	}
	vtlog.Info, vtlog.Infof = limit(vtlog.Info), limitf(vtlog.Infof)
	vtlog.Warning, vtlog.Warningf = limit(vtlog.Warning), limitf(vtlog.Warningf)
	vtlog.Error, vtlog.Errorf = limit(vtlog.Error), limitf(vtlog.Errorf)
}

// prepare is the engine's ComPrepare (server.Handler's), without its log
// line for a statement that fails.
func (h *limitHandler) prepare(ctx context.Context, c *mysql.Conn, query string) ([]*querypb.Field, error) {
	sqlCtx, err := h.sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return nil, err
	}
	sqlCtx, err = sqlCtx.ProcessList.BeginOperation(sqlCtx)
	if err != nil {
		return nil, err
	}
	defer sqlCtx.ProcessList.EndOperation(sqlCtx)
	if err := sql.SessionCommandBegin(sqlCtx.Session); err != nil {
		return nil, err
	}
	defer sql.SessionCommandEnd(sqlCtx.Session)
	var analyzed sql.Node
	if analyzer.PreparedStmtDisabled {
		analyzed, err = h.engine.AnalyzeQuery(sqlCtx, query)
	} else {
		analyzed, err = h.engine.PrepareQuery(sqlCtx, query)
	}
	if err != nil {
		return nil, sql.CastSQLError(err)
	}
	// No fields: the statement returns no rows.
	switch analyzed.(type) {
	case *plan.InsertInto, *plan.Update, *plan.UpdateJoin, *plan.DeleteFrom:
		return nil, nil
	}
	if types.IsOkResultSchema(analyzed.Schema()) {
		return nil, nil
	}
	return schemaToFields(sqlCtx, analyzed.Schema()), nil
}

// schemaToFields is the engine's (server's, unexported).
func schemaToFields(ctx *sql.Context, s sql.Schema) []*querypb.Field {
	charSetResults := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(s))
	for i, c := range s {
		charset := uint32(sql.Collation_Default.CharacterSet())
		if collatedType, ok := c.Type.(sql.TypeWithCollation); ok {
			charset = uint32(collatedType.Collation().CharacterSet())
		}

		// Binary types always use a binary collation, but non-binary types must
		// respect character_set_results if it is set.
		if types.IsBinaryType(c.Type) {
			charset = uint32(sql.Collation_binary)
		} else if charSetResults != sql.CharacterSet_Unspecified {
			charset = uint32(charSetResults)
		}

		var flags querypb.MySqlFlag
		if !c.Nullable {
			flags = flags | querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if c.AutoIncrement {
			flags = flags | querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if c.PrimaryKey {
			flags = flags | querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(c.Type) {
			flags = flags | querypb.MySqlFlag_UNSIGNED_FLAG
		}

		fields[i] = &querypb.Field{
			Name:         c.Name,
			OrgName:      c.Name,
			Table:        c.Source,
			OrgTable:     c.Source,
			Database:     c.DatabaseSource,
			Type:         c.Type.Type(),
			Charset:      charset,
			ColumnLength: c.Type.MaxTextResponseByteLength(ctx),
			Flags:        uint32(flags),
		}

		if types.IsDecimal(c.Type) {
			decimalType := c.Type.(sql.DecimalType)
			fields[i].Decimals = uint32(decimalType.Scale())
		} else if types.IsDatetimeType(c.Type) {
			dtType := c.Type.(sql.DatetimeType)
			fields[i].Decimals = uint32(dtType.Precision())
		}
	}

	return fields
}
