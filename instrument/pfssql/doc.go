// Package pfssql instruments database/sql: every statement a service runs
// through a wrapped driver is a statement event of otelpfs, and every
// transaction a transaction event, as MySQL's performance_schema records
// them, with the digest, the rows, the error and where the time went.
//
// # Two levels
//
// The driver level wraps a driver.Driver (Wrap) or a driver.Connector
// (WrapConnector), or opens a *sql.DB on one (Open, OpenDB):
//
//	db, err := pfssql.Open("sqlite", dsn, pfssql.WithSchema(s))
//
// Open does not register anything with database/sql: it finds the driver
// registered under driverName, wraps it, and opens the database with
// sql.OpenDB on a connector of the wrapped driver. A wrapped driver can
// also be registered under a name of one's own with sql.Register.
//
// The DB level, NewDB, wraps a *sql.DB so opened, for the one thing the
// driver level cannot see: the wait for a pooled connection, which
// database/sql keeps from its drivers. Its QueryContext, ExecContext,
// QueryRowContext, BeginTx and PrepareContext (and the Stmt it returns)
// begin the statement before database/sql takes a connection and hand it
// down to the driver level inside the context of the call (one allocation),
// so the driver level adds its time, rows and errors to that statement
// instead of beginning another. A service adopts either: the driver level
// alone (SUM_POOL_TIME stays 0), or the DB level over it.
//
// # Statements
//
// A statement's class is statement/sql/<command> from its text, its
// DIGEST and DIGEST_TEXT come from the text (computed once per distinct
// text), and its thread is the one the call's context carries
// (instrument.ThreadFromContext), so statements nest in whatever that
// thread has in progress: a request's statement, a transaction. Without a
// thread, a statement counts in the global and by-digest summaries only.
// CURRENT_SCHEMA is WithCurrentSchema's, or the database name the DSN
// gives for the drivers whose DSN the package reads.
//
// A query's statement ends when its rows are closed, by the application,
// by database/sql at the end of the rows or when the query's context is
// done; an Exec's when the driver returns. ROWS_SENT counts the rows
// the application read (Next calls that returned a row), ROWS_AFFECTED
// the driver's RowsAffected (0 when it has none). A failed call counts in
// SUM_ERRORS and gives the row its MESSAGE_TEXT; one whose context was done
// also counts in COUNT_CANCELLED, and so do rows closed before their end
// because the context was done.
//
// Client times, on the statement's timer: SUM_DRIVER_TIME is the time
// inside the driver's calls (the Exec or Query, each Next, the rows'
// Close; each Next timed on the cycle timer, cheaper to read row after
// row, when the statement's timer is CYCLE or NANOSECOND); SUM_FETCH_TIME is the rest of the time the rows were open, from
// the query's return to their Close, which is the application's between
// Next calls; SUM_POOL_TIME, at the DB level, is the wait for a connection
// before the driver's first call, and before each retry.
//
// database/sql falls back to a prepare and an execution when a driver
// answers Exec or Query with driver.ErrSkip; the wrapper keeps the
// statement open across the three calls, so the fallback is one statement.
// When a driver answers driver.ErrBadConn, database/sql retries on another
// connection: the retry goes on as the same statement and counts in
// COUNT_RETRIES. At the DB level the statement itself carries that; at the
// driver level the failed attempt's statement waits in a small table until
// the same thread (or, without one, any caller) runs the same text again,
// which database/sql does at once. A *sql.Tx's statement, which
// database/sql does not retry, ends with its error at once. One that is not
// retried after database/sql's last attempt ends with its error, at the
// time that attempt ended, when its thread next begins a statement through
// the wrapper, or when any statement begins through the wrapper after its
// thread ended or a second passed, or when sixteen others wait and a new
// one needs its place.
//
// Prepare is a statement of its own, statement/com/Prepare, whose text is
// PREPARE and the prepared text's DIGEST_TEXT (so it holds none of the
// text's literals): each prepared text has a by-digest row for its
// prepares, apart from the row of its executions, which are statements of
// the prepared text's class. A prepare database/sql makes on its own
// behalf (the ErrSkip fallback, or a *sql.Stmt preparing again on another
// connection under the DB level) is part of the statement that caused it.
//
// # Transactions
//
// A Begin is a statement, START TRANSACTION (statement/sql/begin), as when
// a client sends it as SQL, and once the driver has begun the transaction
// a transaction event starts, nested in that statement, with ACCESS_MODE
// and ISOLATION_LEVEL from the driver.TxOptions (sql.IsolationLevel maps
// one to one onto pfscore.IsolationLevel). Statements of the transaction
// nest in it, since they run on the same thread. Commit and Rollback are
// statements COMMIT and ROLLBACK (statement/sql/commit, rollback) on the
// thread the Begin's context carried (driver.Tx's methods take no
// context); the transaction ends inside them, COMMITTED if the commit
// succeeded and ROLLED BACK otherwise. Statements with autocommit have no
// transaction event.
//
// # Optional interfaces
//
// database/sql changes what it does by type assertions on the driver's
// values, so a wrapped connection has exactly the optional interfaces of
// the connection it wraps: ExecerContext, QueryerContext,
// SessionResetter, Validator, NamedValueChecker and Pinger (combos.go has
// a type for each set; a deprecated Execer or Queryer is offered as
// ExecerContext or QueryerContext, which database/sql uses the same way).
// ConnPrepareContext and ConnBeginTx it always has, doing what
// database/sql does for a connection without them (Prepare or Begin, the
// same refusals of non-default transaction options, a result refused once
// the context is done): database/sql's context-free calls would hide the
// caller's thread and the DB level's statement from the wrapper. A wrapped
// prepared statement has exactly the wrapped one's NamedValueChecker and
// ColumnConverter, which decide argument conversion, and always has
// StmtExecContext and StmtQueryContext, doing what database/sql does for a
// statement without them. Wrapped rows have every optional interface of
// driver.Rows, answering what database/sql assumes of rows without one
// where the wrapped rows lack it. The wrapped driver always has
// DriverContext (a connector opening connections with the driver's Open,
// as database/sql's own does). UnwrapConn returns the driver's own
// connection inside sql.Conn.Raw.
//
// # Cost
//
// A statement on the hot path allocates nothing: the rows wrapper comes
// from a sync.Pool, the statement is a value inside it, and the digest and
// class come from pfscore's statement cache. The DB level adds one
// allocation per call, its context (24 bytes: the caller's context and a
// pointer to the statement's state, which comes from a sync.Pool too).
// database/sql may keep that context past the call, so it is never
// reused.
package pfssql
