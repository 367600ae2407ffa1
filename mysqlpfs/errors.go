package mysqlpfs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/pfscore"
)

// MySQL's error numbers the server answers with, besides those the engine
// gives (ER_NO_SUCH_TABLE 1146, ER_BAD_DB_ERROR 1049, ER_BAD_FIELD_ERROR
// 1054, ER_PARSE_ERROR 1064, ...) and ER_ACCESS_DENIED_ERROR (1045) for a
// bad user or password.
const (
	// ErTableAccessDenied is ER_TABLEACCESS_DENIED_ERROR: a statement
	// MySQL refuses on the table ("UPDATE command denied to user ..."),
	// or any change while the server only reads.
	ErTableAccessDenied = 1142
	// ErWrongPerfschemaUsage is ER_WRONG_PERFSCHEMA_USAGE: an UPDATE of a
	// column MySQL does not let change (setup_instruments.NAME).
	ErWrongPerfschemaUsage = 1683
	// ErDupEntry is ER_DUP_ENTRY: an INSERT of a row setup_actors or
	// setup_objects already has.
	ErDupEntry = mysql.ERDupEntry
	// ErRecordFileFull is ER_RECORD_FILE_FULL: setup_actors or
	// setup_objects is full.
	ErRecordFileFull = mysql.ERRecordFileFull
	// ErWarnDataTruncated is WARN_DATA_TRUNCATED, which strict mode makes
	// an error: a value a column does not take (ENABLED = 'MAYBE', an
	// unknown TIMER_NAME).
	ErWarnDataTruncated = mysql.ERWarnDataTruncated
	// ErQueryTimeout is ER_QUERY_TIMEOUT: the statement ran longer than
	// WithQueryTimeout allows.
	ErQueryTimeout = mysql.ERQueryTimeout
	// ErTooBigSelect is ER_TOO_BIG_SELECT: the result has more rows than
	// WithRowLimit allows.
	ErTooBigSelect = mysql.ERTooBigSelect
	// ErQueryInterrupted is ER_QUERY_INTERRUPTED: the statements running
	// grew the heap past WithQueryMemoryLimit, and were cancelled.
	ErQueryInterrupted = mysql.ERQueryInterrupted
)

// denied returns ER_TABLEACCESS_DENIED_ERROR for command (UPDATE, INSERT,
// DELETE, DROP) on table, with why appended when the refusal is the
// server's read-only mode rather than MySQL's rule.
func denied(ctx *sql.Context, command, table, why string) error {
	user, host := "", ""
	if ctx != nil && ctx.Session != nil {
		c := ctx.Session.Client()
		user, host = c.User, c.Address
	}
	msg := fmt.Sprintf("%s command denied to user '%s'@'%s' for table '%s'", command, user, host, table)
	if why != "" {
		msg += " (" + why + ")"
	}
	return mysql.NewSQLError(ErTableAccessDenied, mysql.SSClientError, "%s", msg)
}

// readOnlyWhy says why a change was refused on a table MySQL would change.
const readOnlyWhy = "this service serves performance_schema read-only; it allows changes with mysqlpfs.WithSetupChanges"

// wrongUsage returns ER_WRONG_PERFSCHEMA_USAGE, with what was wrong.
func wrongUsage(detail string) error {
	return mysql.NewSQLError(ErWrongPerfschemaUsage, mysql.SSUnknownSQLState, "Invalid performance_schema usage: %s", detail)
}

// changeError maps an error of pfscore's Update, Insert, Delete or
// Truncate on table to MySQL's.
func changeError(ctx *sql.Context, command, table string, err error) error {
	var se *mysql.SQLError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return err
	case errors.Is(err, pfscore.ErrUnknownTable):
		return sql.ErrTableNotFound.New(table)
	case errors.Is(err, pfscore.ErrNotUpdatable):
		return wrongUsage(trimPfs(err))
	case errors.Is(err, pfscore.ErrNotInsertable), errors.Is(err, pfscore.ErrTruncateNotAllowed):
		return denied(ctx, command, table, "")
	case errors.Is(err, pfscore.ErrDuplicateRow):
		return mysql.NewSQLError(ErDupEntry, mysql.SSDupKey, "Duplicate entry for key '%s.PRIMARY': %s", table, trimPfs(err))
	case errors.Is(err, pfscore.ErrTableFull):
		return mysql.NewSQLError(ErRecordFileFull, mysql.SSUnknownSQLState, "The table '%s' is full", table)
	case errors.Is(err, pfscore.ErrBadValue), errors.Is(err, pfscore.ErrBadPattern), errors.Is(err, hwclock.ErrUnknownTimer):
		return mysql.NewSQLError(ErWarnDataTruncated, mysql.SSUnknownSQLState, "Data truncated: %s", trimPfs(err))
	}
	return mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%s %s: %s", command, table, trimPfs(err))
}

// trimPfs drops the "pfs: " prefix of the engine's messages.
func trimPfs(err error) string { return strings.TrimPrefix(err.Error(), "pfs: ") }
