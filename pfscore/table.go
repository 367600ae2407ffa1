package pfscore

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
)

// Virtual tables: every performance_schema table otelpfs has is a Table of
// the Schema, with MySQL's name and columns, read as a snapshot of rows
// copied out of the live records (validated with the optimistic protocol),
// and, where MySQL allows it, truncated.
//
// Reading allocates and may take a reader-side mutex; it never blocks a
// writer. TRUNCATE never touches a record either: it is implemented on the
// reader's side, by moving a ring's visible base (history tables) or by
// recording a baseline that later reads subtract (summary tables). So the
// provider path carries no cost for it and owned cells keep one writer.

// A ColumnType says how a column's values render.
type ColumnType uint8

const (
	ColString ColumnType = iota // VARCHAR, ENUM, SET: a string
	ColUint                     // BIGINT UNSIGNED: a uint64
	ColInt                      // BIGINT: an int64
	ColPicos                    // a TIMER_* column: uint64 picoseconds
)

// A Column is a table column: its name, how its values render, and what
// they mean (see Role).
type Column struct {
	Name string
	Type ColumnType
	Role Role
	// Binary marks a string column MySQL declares with a binary collation
	// (setup_actors' and setup_objects' keys): Query compares its values
	// byte for byte, where other strings compare case-insensitively.
	Binary bool
}

// A Value is one cell: nil (NULL), uint64, int64 or string, as the column's
// type says.
type Value = any

// A Row is one row, a Value per column.
type Row []Value

// A Result is a snapshot of a table.
type Result struct {
	Table   string
	Columns []Column
	Rows    []Row
	Matched int // the rows a Query's WHERE clause matched, before its limit
}

// Errors of table access.
var (
	ErrUnknownTable       = errors.New("pfs: unknown table")
	ErrTruncateNotAllowed = errors.New("pfs: TRUNCATE not allowed on this table")
)

// tableDef describes one table.
type tableDef struct {
	name     string
	columns  []Column
	rows     func(s *Schema) []Row
	read     func(s *Schema) *Rows // the same rows, read in place (rows.go); nil: from rows
	truncate func(s *Schema)       // nil: TRUNCATE not allowed
	setup    *setupDef             // nil: no UPDATE, INSERT or DELETE (see Tables)
}

var (
	tablesMu  sync.Mutex
	tableDefs = map[string]*tableDef{}
)

// defineTable registers a table definition; table files call it from init.
func defineTable(t *tableDef) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if _, dup := tableDefs[t.name]; dup {
		panic("pfs: BUG: table defined twice: " + t.name)
	}
	tableDefs[t.name] = t
}

// defineRows defines a table whose rows are R structs (see Role for the
// tags that declare its columns): rows lists them; truncate, if not nil, is
// its TRUNCATE. It returns the definition, for its setup changes.
func defineRows[R any](name string, rows func(*Schema) []R, truncate func(*Schema)) *tableDef {
	p := planOf(reflect.TypeFor[R]())
	t := &tableDef{name: name, columns: p.cols, truncate: truncate,
		rows: func(s *Schema) []Row { return rowsOf(p, rows(s)) },
		read: func(s *Schema) *Rows { return structRows(name, p, rows(s)) }}
	defineTable(t)
	return t
}

// TableNames returns the names of every table, sorted.
func (s *Schema) TableNames() []string {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	names := make([]string, 0, len(tableDefs))
	for n := range tableDefs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupTable(name string) (*tableDef, error) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	t := tableDefs[name]
	if t == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownTable, name)
	}
	return t, nil
}

// Columns returns a table's columns.
func (s *Schema) Columns(table string) ([]Column, error) {
	t, err := lookupTable(table)
	if err != nil {
		return nil, err
	}
	return slices.Clone(t.columns), nil
}

// Select returns a snapshot of a table: SELECT * FROM table.
func (s *Schema) Select(table string) (*Result, error) {
	t, err := lookupTable(table)
	if err != nil {
		return nil, err
	}
	return s.selectTable(t), nil
}

func (s *Schema) selectTable(t *tableDef) *Result {
	s.maybeReclaim()
	s.beginRead()
	defer s.endRead()
	rows := t.rows(s)
	return &Result{Table: t.name, Columns: slices.Clone(t.columns), Rows: rows, Matched: len(rows)}
}

// Truncatable reports whether TRUNCATE TABLE is allowed on table.
func (s *Schema) Truncatable(table string) bool {
	t, err := lookupTable(table)
	return err == nil && t.truncate != nil
}

// Truncate is TRUNCATE TABLE, with MySQL's effects for each table; see the
// table's documentation in doc.go. It returns ErrUnknownTable or
// ErrTruncateNotAllowed.
func (s *Schema) Truncate(table string) error {
	t, err := lookupTable(table)
	if err != nil {
		return err
	}
	if t.truncate == nil {
		return fmt.Errorf("%w: %s", ErrTruncateNotAllowed, table)
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.beginRead()
	defer s.endRead()
	t.truncate(s)
	return nil
}

// yesNo renders a bool as MySQL's ENUM('YES','NO').
func yesNo(b bool) Value {
	if b {
		return "YES"
	}
	return "NO"
}
