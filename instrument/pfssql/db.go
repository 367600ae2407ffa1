package pfssql

import (
	"context"
	"database/sql"
	"errors"

	"github.com/otelpfs/otelpfs/instrument"
)

// DB is the DB level: a *sql.DB opened through this package whose
// statements begin before database/sql takes a connection from its pool,
// so they count the wait as SUM_POOL_TIME (the driver level cannot see the
// pool). A statement is the same event the driver level would make, with
// the pool time added, and the driver level adds its driver time, rows and
// retries to it instead of beginning its own: the statement travels down in
// the context database/sql passes to the driver, at the cost of one
// allocation per call (that context; the statement's state is pooled). The
// methods of *sql.DB it does not override (Conn, Ping, Stats,
// SetMaxOpenConns, …) are *sql.DB's; statements on a *sql.Tx or *sql.Conn
// hold their connection already and are the driver level's.
type DB struct {
	*sql.DB
	cfg *config
}

// ErrNotWrapped is NewDB's error for a *sql.DB whose driver is not a
// pfssql wrapper.
var ErrNotWrapped = errors.New("pfssql: the database's driver is not a pfssql wrapper")

// NewDB returns the DB level of db, which must have been opened through
// this package: Open, OpenDB, or sql.Open or sql.OpenDB of a driver or
// connector from Wrap or WrapConnector.
func NewDB(db *sql.DB) (*DB, error) {
	d, ok := db.Driver().(*drv)
	if !ok {
		return nil, ErrNotWrapped
	}
	return &DB{DB: db, cfg: d.cfg}, nil
}

// op begins the DB level's statement of text.
func (db *DB) op(ctx context.Context, text string) *opCtx {
	return startOp(ctx, instrument.StartSQL(ctx, db.cfg.schema, db.cfg.schemaName, text))
}

// ExecContext is sql.DB.ExecContext as one statement.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	o := db.op(ctx, query)
	res, err := db.DB.ExecContext(o, query, args...)
	o.done(err)
	return res, err
}

// Exec is ExecContext with context.Background().
func (db *DB) Exec(query string, args ...any) (sql.Result, error) {
	return db.ExecContext(context.Background(), query, args...)
}

// QueryContext is sql.DB.QueryContext as one statement, which ends when
// the rows are closed.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	o := db.op(ctx, query)
	rows, err := db.DB.QueryContext(o, query, args...)
	o.done(err)
	return rows, err
}

// Query is QueryContext with context.Background().
func (db *DB) Query(query string, args ...any) (*sql.Rows, error) {
	return db.QueryContext(context.Background(), query, args...)
}

// QueryRowContext is sql.DB.QueryRowContext as one statement, which ends
// when the row is scanned.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	o := db.op(ctx, query)
	row := db.DB.QueryRowContext(o, query, args...)
	o.done(row.Err())
	return row
}

// QueryRow is QueryRowContext with context.Background().
func (db *DB) QueryRow(query string, args ...any) *sql.Row {
	return db.QueryRowContext(context.Background(), query, args...)
}

// BeginTx is sql.DB.BeginTx with its BEGIN statement's wait for a
// connection counted.
func (db *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	text := textBegin
	if opts != nil && opts.ReadOnly {
		text = textBeginReadOnly
	}
	o := db.op(ctx, text)
	tx, err := db.DB.BeginTx(o, opts)
	o.done(err)
	return tx, err
}

// Begin is BeginTx with context.Background() and the default options.
func (db *DB) Begin() (*sql.Tx, error) {
	return db.BeginTx(context.Background(), nil)
}

// PrepareContext is sql.DB.PrepareContext as a statement/com/Prepare
// statement, and returns a Stmt whose executions are statements of the DB
// level.
func (db *DB) PrepareContext(ctx context.Context, query string) (*Stmt, error) {
	o := startOp(ctx, db.cfg.prepare.Start(ctx, db.cfg.prepareText(query)))
	s, err := db.DB.PrepareContext(o, query)
	o.done(err)
	if err != nil {
		return nil, err
	}
	return &Stmt{Stmt: s, db: db, query: query}, nil
}

// Prepare is PrepareContext with context.Background().
func (db *DB) Prepare(query string) (*Stmt, error) {
	return db.PrepareContext(context.Background(), query)
}

// Stmt is a prepared statement of the DB level: each execution waits for a
// connection (and may prepare the text again on it), which it counts as
// the DB's statements do. Its *sql.Stmt can be given to sql.Tx.Stmt.
type Stmt struct {
	*sql.Stmt
	db    *DB
	query string
}

// ExecContext is sql.Stmt.ExecContext as one statement.
func (s *Stmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	o := s.db.op(ctx, s.query)
	res, err := s.Stmt.ExecContext(o, args...)
	o.done(err)
	return res, err
}

// Exec is ExecContext with context.Background().
func (s *Stmt) Exec(args ...any) (sql.Result, error) {
	return s.ExecContext(context.Background(), args...)
}

// QueryContext is sql.Stmt.QueryContext as one statement, which ends when
// the rows are closed.
func (s *Stmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	o := s.db.op(ctx, s.query)
	rows, err := s.Stmt.QueryContext(o, args...)
	o.done(err)
	return rows, err
}

// Query is QueryContext with context.Background().
func (s *Stmt) Query(args ...any) (*sql.Rows, error) {
	return s.QueryContext(context.Background(), args...)
}

// QueryRowContext is sql.Stmt.QueryRowContext as one statement.
func (s *Stmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	o := s.db.op(ctx, s.query)
	row := s.Stmt.QueryRowContext(o, args...)
	o.done(row.Err())
	return row
}

// QueryRow is QueryRowContext with context.Background().
func (s *Stmt) QueryRow(args ...any) *sql.Row {
	return s.QueryRowContext(context.Background(), args...)
}
