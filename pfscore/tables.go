package pfscore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Tables is a schema as its adapters see it: the HTTP handler (package
// exporter), the pfs command, and whatever else reads the tables or
// changes the setup, depend on this and not on *Schema. It is the catalog,
// SELECT (Query), TRUNCATE, and the changes MySQL allows on its setup
// tables as UPDATE, INSERT and DELETE. *Schema implements it.
type Tables interface {
	// Catalog lists every table, in name order. (A remote implementation
	// may fail to; a *Schema never does.)
	Catalog() ([]TableInfo, error)
	// Query returns a snapshot of a table, filtered, ordered and limited.
	Query(table string, q Query) (*Result, error)
	// Truncate is TRUNCATE TABLE.
	Truncate(table string) error
	// Update is UPDATE table SET set WHERE where: set maps column names to
	// values, where is a Query's WHERE clause. It returns the rows matched.
	Update(table string, where []string, set map[string]Value) (int, error)
	// Insert is INSERT INTO table: values maps column names to values;
	// columns not given take MySQL's defaults.
	Insert(table string, values map[string]Value) error
	// Delete is DELETE FROM table WHERE where, returning the rows deleted.
	Delete(table string, where []string) (int, error)
}

var _ Tables = (*Schema)(nil)

// TableInfo describes a table of the catalog.
type TableInfo struct {
	Name        string
	Columns     []Column
	Truncatable bool     // TRUNCATE TABLE is allowed
	Updatable   []string // the columns UPDATE may set
	Insertable  bool     // INSERT and DELETE are allowed
}

// Errors of setup changes, besides ErrUnknownTable, ErrBadQuery and those
// of the setup methods (ErrDuplicateRow, ErrTableFull, ErrBadValue, ...).
var (
	// ErrNotUpdatable is MySQL's "Invalid performance_schema usage" for an
	// UPDATE of a table or column it does not allow.
	ErrNotUpdatable = errors.New("pfs: column not updatable")
	// ErrNotInsertable is the same for INSERT and DELETE.
	ErrNotInsertable = errors.New("pfs: INSERT and DELETE not allowed on this table")
)

// A setupDef is how a setup table takes changes.
type setupDef struct {
	// columns are those UPDATE may set; update applies set (keys in
	// upper case, values checked against columns) to rows, the table's rows
	// the WHERE clause matched.
	columns []string
	update  func(s *Schema, rows []Row, set map[string]Value) error
	// insert and remove, if not nil, allow INSERT and DELETE.
	insert func(s *Schema, values map[string]Value) error
	remove func(s *Schema, rows []Row)
}

// Catalog lists every table, in name order. Its error is always nil.
func (s *Schema) Catalog() ([]TableInfo, error) {
	var out []TableInfo
	for _, name := range s.TableNames() {
		t, err := lookupTable(name)
		if err != nil {
			continue
		}
		info := TableInfo{Name: name, Columns: slices.Clone(t.columns), Truncatable: t.truncate != nil}
		if t.setup != nil {
			info.Updatable = slices.Clone(t.setup.columns)
			info.Insertable = t.setup.insert != nil
		}
		out = append(out, info)
	}
	return out, nil
}

// Update is UPDATE table SET set WHERE where, for the tables and columns
// MySQL allows: ENABLED and TIMED of setup_instruments and setup_objects,
// ENABLED of setup_consumers, ENABLED and HISTORY of setup_threads and
// setup_actors, TIMER_NAME of setup_timers, INSTRUMENTED and HISTORY of
// threads. A flag takes "YES" or "NO" (see ParseFlag) or a bool. It returns
// the number of rows the WHERE clause matched.
func (s *Schema) Update(table string, where []string, set map[string]Value) (int, error) {
	t, err := lookupTable(table)
	if err != nil {
		return 0, err
	}
	if t.setup == nil || t.setup.update == nil {
		return 0, fmt.Errorf("%w: %s", ErrNotUpdatable, table)
	}
	norm, err := t.checkColumns(set, t.setup.columns, ErrNotUpdatable)
	if err != nil {
		return 0, err
	}
	if len(norm) == 0 {
		return 0, fmt.Errorf("%w: UPDATE %s sets nothing", ErrBadValue, table)
	}
	res, err := s.Query(table, Query{Where: where})
	if err != nil {
		return 0, err
	}
	if err := t.setup.update(s, res.Rows, norm); err != nil {
		return 0, err
	}
	return len(res.Rows), nil
}

// Insert is INSERT INTO table, allowed on setup_actors and setup_objects.
// A column not in values takes MySQL's default.
func (s *Schema) Insert(table string, values map[string]Value) error {
	t, err := lookupTable(table)
	if err != nil {
		return err
	}
	if t.setup == nil || t.setup.insert == nil {
		return fmt.Errorf("%w: %s", ErrNotInsertable, table)
	}
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.Name
	}
	norm, err := t.checkColumns(values, names, ErrBadValue)
	if err != nil {
		return err
	}
	return t.setup.insert(s, norm)
}

// Delete is DELETE FROM table WHERE where, allowed on setup_actors and
// setup_objects. It returns the number of rows deleted.
func (s *Schema) Delete(table string, where []string) (int, error) {
	t, err := lookupTable(table)
	if err != nil {
		return 0, err
	}
	if t.setup == nil || t.setup.remove == nil {
		return 0, fmt.Errorf("%w: %s", ErrNotInsertable, table)
	}
	res, err := s.Query(table, Query{Where: where})
	if err != nil {
		return 0, err
	}
	t.setup.remove(s, res.Rows)
	return len(res.Rows), nil
}

// checkColumns returns values keyed by upper-case column name, refusing a
// column that is not in allowed with errNot.
func (t *tableDef) checkColumns(values map[string]Value, allowed []string, errNot error) (map[string]Value, error) {
	out := make(map[string]Value, len(values))
	for k, v := range values {
		name := strings.ToUpper(strings.TrimSpace(k))
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: %s named twice", ErrBadValue, name)
		}
		if !slices.Contains(allowed, name) {
			if t.column(name) < 0 {
				return nil, fmt.Errorf("%w: %s has no column %s", ErrBadValue, t.name, k)
			}
			return nil, fmt.Errorf("%w: %s.%s", errNot, t.name, name)
		}
		out[name] = v
	}
	return out, nil
}

// column returns the index of the named column, or -1.
func (t *tableDef) column(name string) int {
	for i, c := range t.columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// ParseFlag parses a YES/NO value as MySQL's ENUM('YES','NO') setup columns
// and its ON/OFF options take it: YES, ON, TRUE, Y or 1 for true, NO, OFF,
// FALSE, N or 0 for false, in any case.
func ParseFlag(v string) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "YES", "ON", "TRUE", "Y", "1":
		return true, nil
	case "NO", "OFF", "FALSE", "N", "0":
		return false, nil
	}
	return false, fmt.Errorf("%w %q: want YES or NO", ErrBadValue, v)
}

// flagOf returns the flag column col of set: nil if absent, else its
// value, a bool or a string for ParseFlag.
func flagOf(set map[string]Value, col string) (*bool, error) {
	v, ok := set[col]
	if !ok {
		return nil, nil
	}
	var b bool
	switch x := v.(type) {
	case bool:
		b = x
	case string:
		var err error
		if b, err = ParseFlag(x); err != nil {
			return nil, fmt.Errorf("%s: %w", col, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s = %v: want YES or NO", ErrBadValue, col, v)
	}
	return &b, nil
}

// stringOf returns the string column col of set, or def if absent.
func stringOf(set map[string]Value, col, def string) (string, error) {
	v, ok := set[col]
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s = %v: want a string", ErrBadValue, col, v)
	}
	return s, nil
}
