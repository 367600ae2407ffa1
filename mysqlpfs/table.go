package mysqlpfs

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A table is one pfscore table as the engine sees it: its columns with
// MySQL's types, its rows read through pfscore.Tables.Query at each scan,
// and, for the statements MySQL allows on it, the changes mapped to
// pfscore.Tables' Update, Insert, Delete and Truncate. Every table has
// every write method, so that each refusal is this package's, with
// MySQL's error, rather than the engine's generic one.
type table struct {
	src     pfscore.Tables
	info    pfscore.TableInfo
	schema  sql.Schema
	keys    []int // the dimension columns: they name a row in a WHERE
	changes bool  // the server allows changes (WithSetupChanges)
}

var (
	_ sql.Table             = (*table)(nil)
	_ sql.UpdatableTable    = (*table)(nil)
	_ sql.InsertableTable   = (*table)(nil)
	_ sql.DeletableTable    = (*table)(nil)
	_ sql.TruncateableTable = (*table)(nil)
)

// Column types. Strings compare as MySQL's performance_schema compares
// them: case-insensitively, but byte for byte where pfscore's column is
// Binary (setup_actors' and setup_objects' keys). Free text is LONGTEXT,
// other strings VARCHAR(1024); numbers are BIGINT (UNSIGNED), a TIMER_*
// column BIGINT UNSIGNED picoseconds.
var (
	varcharCI = types.MustCreateString(sqltypes.VarChar, 1024, sql.Collation_utf8mb4_0900_ai_ci)
	varcharCS = types.MustCreateString(sqltypes.VarChar, 1024, sql.Collation_utf8mb4_bin)
	longText  = types.MustCreateString(sqltypes.Text, types.LongTextBlobMax, sql.Collation_utf8mb4_0900_ai_ci)
)

// longColumns are string columns that hold statements, whatever their role.
var longColumns = map[string]bool{"SQL_TEXT": true, "DIGEST_TEXT": true, "QUERY_SAMPLE_TEXT": true, "PROCESSLIST_INFO": true}

func newTable(src pfscore.Tables, info pfscore.TableInfo, changes bool) *table {
	t := &table{src: src, info: info, changes: changes}
	for i, c := range info.Columns {
		col := &sql.Column{
			Name:           c.Name,
			Source:         info.Name,
			DatabaseSource: PerformanceSchema,
			Nullable:       true,
			Comment:        c.Role.String(),
		}
		switch c.Type {
		case pfscore.ColUint, pfscore.ColPicos:
			col.Type = types.Uint64
		case pfscore.ColInt:
			col.Type = types.Int64
		default:
			switch {
			case c.Binary:
				col.Type = varcharCS
			case c.Role == pfscore.RoleText || longColumns[c.Name]:
				col.Type = longText
			default:
				col.Type = varcharCI
			}
		}
		if c.Role == pfscore.RoleDimension {
			t.keys = append(t.keys, i)
		}
		t.schema = append(t.schema, col)
	}
	return t
}

func (t *table) Name() string               { return t.info.Name }
func (t *table) String() string             { return PerformanceSchema + "." + t.info.Name }
func (t *table) Schema() sql.Schema         { return t.schema }
func (t *table) Collation() sql.CollationID { return sql.Collation_utf8mb4_0900_ai_ci }
func (t *table) Comment() string            { return "otelpfs " + t.info.Name }
func (t *table) writable(upd bool) bool {
	return upd && len(t.info.Updatable) > 0 || !upd && t.info.Insertable
}
func (t *table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(partition{}), nil
}

// PartitionRows reads a snapshot of the table: every row, as
// pfscore.Tables.Query returns it; the engine filters, orders, groups
// and joins.
func (t *table) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := t.src.Query(t.info.Name, pfscore.Query{})
	if err != nil {
		return nil, fmt.Errorf("mysqlpfs: reading %s: %w", t.info.Name, err)
	}
	if len(res.Columns) != len(t.schema) {
		return nil, fmt.Errorf("mysqlpfs: %s has %d columns, its schema %d: the tables changed under the server", t.info.Name, len(res.Columns), len(t.schema))
	}
	return &rowIter{rows: res.Rows}, nil
}

// A partition is a table's only partition.
type partition struct{}

func (partition) Key() []byte { return nil }

// A rowIter returns a snapshot's rows. The values are pfscore's (nil,
// uint64, int64 or string), which are the engine's for the column types
// above, so the rows are passed on without a copy.
type rowIter struct {
	rows []pfscore.Row
	i    int
}

func (it *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.i&1023 == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if it.i >= len(it.rows) {
		return nil, io.EOF
	}
	r := it.rows[it.i]
	it.i++
	return sql.Row(r), nil
}

func (it *rowIter) Close(*sql.Context) error { return nil }

// Changes. The engine calls Update, Insert or Delete once per row the
// statement touches, and Close at the end: a refused statement is refused
// at its first row, or, if it touched none, at Close, so that it fails
// whether or not its WHERE matched, as MySQL's privilege check does.

func (t *table) Updater(*sql.Context) sql.RowUpdater   { return &editor{t: t, cmd: "UPDATE"} }
func (t *table) Inserter(*sql.Context) sql.RowInserter { return &editor{t: t, cmd: "INSERT"} }
func (t *table) Deleter(*sql.Context) sql.RowDeleter   { return &editor{t: t, cmd: "DELETE"} }

// Truncate is TRUNCATE TABLE; the engine also calls it for a DELETE
// without WHERE, which MySQL allows only on setup_actors and
// setup_objects, so the statement's text decides which command to check.
func (t *table) Truncate(ctx *sql.Context) (int, error) {
	if !statementIs(ctx.Query(), "TRUNCATE") {
		if err := t.check(ctx, "DELETE"); err != nil {
			return 0, err
		}
		res, err := t.src.Query(t.info.Name, pfscore.Query{})
		if err != nil {
			return 0, changeError(ctx, "DELETE", t.info.Name, err)
		}
		return len(res.Rows), changeError(ctx, "DELETE", t.info.Name, t.src.Truncate(t.info.Name))
	}
	if !t.info.Truncatable {
		return 0, denied(ctx, "DROP", t.info.Name, "")
	}
	if !t.changes {
		return 0, denied(ctx, "DROP", t.info.Name, readOnlyWhy)
	}
	return 0, changeError(ctx, "DROP", t.info.Name, t.src.Truncate(t.info.Name))
}

// check returns the refusal of command (UPDATE, INSERT or DELETE) on the
// table, or nil.
func (t *table) check(ctx *sql.Context, command string) error {
	if !t.writable(command == "UPDATE") {
		return denied(ctx, command, t.info.Name, "")
	}
	if !t.changes {
		return denied(ctx, command, t.info.Name, readOnlyWhy)
	}
	return nil
}

// statementIs reports whether query's first keyword, after blanks and
// comments, is keyword.
func statementIs(query, keyword string) bool {
	q := query
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return false
			}
			q = q[2+end+2:]
		case strings.HasPrefix(q, "#"), strings.HasPrefix(q, "-- "):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return false
			}
			q = q[end+1:]
		default:
			return len(q) >= len(keyword) && strings.EqualFold(q[:len(keyword)], keyword) &&
				(len(q) == len(keyword) || !isWordByte(q[len(keyword)]))
		}
	}
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// An editor applies one statement's rows.
type editor struct {
	t    *table
	cmd  string // UPDATE, INSERT or DELETE
	rows int    // rows seen
}

func (e *editor) StatementBegin(*sql.Context)              {}
func (e *editor) DiscardChanges(*sql.Context, error) error { return nil }
func (e *editor) StatementComplete(*sql.Context) error     { return nil }
func (e *editor) Close(ctx *sql.Context) error {
	if e.rows == 0 {
		return e.t.check(ctx, e.cmd)
	}
	return nil
}

// where returns the conditions that name row: its dimension columns.
func (e *editor) where(row sql.Row) []string {
	var where []string
	for _, i := range e.t.keys {
		name := e.t.info.Columns[i].Name
		switch v := row[i].(type) {
		case nil:
			where = append(where, name+" IS NULL")
		case string:
			where = append(where, name+" = "+pfscore.QuoteString(v))
		default:
			where = append(where, fmt.Sprintf("%s = %v", name, v))
		}
	}
	return where
}

func (e *editor) Update(ctx *sql.Context, old, new sql.Row) error {
	e.rows++
	if err := e.t.check(ctx, "UPDATE"); err != nil {
		return err
	}
	set := map[string]pfscore.Value{}
	for i, c := range e.t.info.Columns {
		if i >= len(old) || i >= len(new) || sameValue(old[i], new[i]) {
			continue
		}
		if !slices.Contains(e.t.info.Updatable, c.Name) {
			return wrongUsage(fmt.Sprintf("%s.%s cannot be changed (UPDATE may set %s)", e.t.info.Name, c.Name, strings.Join(e.t.info.Updatable, ", ")))
		}
		v, err := cellValue(c, new[i])
		if err != nil {
			return err
		}
		set[c.Name] = v
	}
	if len(set) == 0 {
		return nil
	}
	_, err := e.t.src.Update(e.t.info.Name, e.where(old), set)
	return changeError(ctx, "UPDATE", e.t.info.Name, err)
}

func (e *editor) Insert(ctx *sql.Context, row sql.Row) error {
	e.rows++
	if err := e.t.check(ctx, "INSERT"); err != nil {
		return err
	}
	values := map[string]pfscore.Value{}
	for i, c := range e.t.info.Columns {
		if i >= len(row) || row[i] == nil {
			continue // MySQL's default
		}
		v, err := cellValue(c, row[i])
		if err != nil {
			return err
		}
		values[c.Name] = v
	}
	return changeError(ctx, "INSERT", e.t.info.Name, e.t.src.Insert(e.t.info.Name, values))
}

func (e *editor) Delete(ctx *sql.Context, row sql.Row) error {
	e.rows++
	if err := e.t.check(ctx, "DELETE"); err != nil {
		return err
	}
	_, err := e.t.src.Delete(e.t.info.Name, e.where(row))
	return changeError(ctx, "DELETE", e.t.info.Name, err)
}

// cellValue converts a value the engine computed for column c to a
// pfscore.Value: a string, uint64, int64 or nil.
func cellValue(c pfscore.Column, v any) (pfscore.Value, error) {
	switch x := v.(type) {
	case nil, string, uint64, int64:
		return x, nil
	case []byte:
		return string(x), nil
	case int8, int16, int32, int, uint8, uint16, uint32, uint, bool, float32, float64:
		if c.Type == pfscore.ColString {
			return fmt.Sprint(x), nil
		}
	}
	if c.Type == pfscore.ColString {
		if s, ok := v.(fmt.Stringer); ok {
			return s.String(), nil
		}
	}
	return nil, changeError(nil, "UPDATE", "", fmt.Errorf("%w: %s = %v (%T)", pfscore.ErrBadValue, c.Name, v, v))
}

// sameValue reports whether two cells are equal.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if ab, ok := a.([]byte); ok {
		a = string(ab)
	}
	if bb, ok := b.([]byte); ok {
		b = string(bb)
	}
	if !reflect.TypeOf(a).Comparable() || !reflect.TypeOf(b).Comparable() {
		return reflect.DeepEqual(a, b)
	}
	return a == b
}
