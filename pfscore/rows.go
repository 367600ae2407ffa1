package pfscore

import (
	"fmt"
	"slices"
	"unsafe"
)

// Typed reads. Schema.ReadRows reads a table as Select does (the same
// snapshot, under the same locks), but leaves each cell where the read put
// it, in the engine's row structs, rather than making a Value of it: a
// reader that wants numbers and strings, as the OpenTelemetry bridge's
// producer does for every summary row at every collection, loads them from
// there, and the read makes no Row and boxes no cell. For the 9,760 rows of
// a by_thread summary that is about 2 MB of cells and boxes less per read.
//
// A Rows never changes once made: the structs it reads are the read's own
// copies, which nothing else holds, so its methods are safe for concurrent
// use and a RowView stays valid as long as its Rows.

// Rows is a table snapshot: a Schema's rows read in place (ReadRows), or a
// Result's (RowsOf). Row(i).Value(col) is the Value Select would have put
// in row i, column col; the typed accessors (Uint, Int, String, Null, Is)
// load it without making that Value.
type Rows struct {
	table string
	cols  []Column
	n     int
	// A row read in place is up to two structs (a summary's dimensions,
	// then its statistics), parts[k] the first row's and the distance
	// from one row's to the next; cells says, by column, which part and
	// which field of its plan holds it.
	parts [2]rowPart
	cells []cellRef
	vals  []Row // RowsOf: the Values themselves
}

type rowPart struct {
	first  unsafe.Pointer
	stride uintptr
}

type cellRef struct {
	part uint8
	f    *fieldPlan
}

// A RowView is one row of a Rows.
type RowView struct {
	rows *Rows
	i    int
}

// Table returns the name of the table read.
func (r *Rows) Table() string { return r.table }

// Columns returns the table's columns; the caller must not modify them.
func (r *Rows) Columns() []Column { return r.cols }

// Len returns the number of rows.
func (r *Rows) Len() int { return r.n }

// Row returns row i, 0 <= i < Len().
func (r *Rows) Row(i int) RowView {
	if uint(i) >= uint(r.n) {
		panic(fmt.Sprintf("pfs: Rows.Row(%d) of %d rows", i, r.n))
	}
	return RowView{r, i}
}

// RowsOf returns the rows of res as a Rows, for code that reads a
// Schema's tables with ReadRows and any other Tables with Query.
func RowsOf(res *Result) *Rows {
	return &Rows{table: res.Table, cols: res.Columns, n: len(res.Rows), vals: res.Rows}
}

// newRows returns the rows of a read in place: n rows of plans' columns,
// part k of row 0 at firsts[k], of row i stride[k]*i bytes further. The
// structs must stay unchanged: the Rows holds them from now on.
func newRows(table string, cols []Column, n int, plans []*rowPlan, parts []rowPart) *Rows {
	r := &Rows{table: table, cols: slices.Clone(cols), n: n}
	copy(r.parts[:], parts)
	for k, p := range plans {
		for j := range p.fields {
			r.cells = append(r.cells, cellRef{uint8(k), &p.fields[j]})
		}
	}
	if len(r.cells) != len(cols) {
		panic(fmt.Sprintf("pfs: BUG: %s: %d fields for %d columns", table, len(r.cells), len(cols)))
	}
	return r
}

// structRows returns rows, whose type p describes, as the Rows of table.
func structRows[R any](table string, p *rowPlan, rows []R) *Rows {
	var part rowPart
	if len(rows) > 0 {
		part = rowPart{unsafe.Pointer(&rows[0]), unsafe.Sizeof(rows[0])}
	}
	return newRows(table, p.cols, len(rows), []*rowPlan{p}, []rowPart{part})
}

// field returns the plan of col's field and a pointer to it in the row,
// or null true if the plan says the cell is NULL whatever the field holds
// (an always-NULL column, or one whose valid field says so).
func (v RowView) field(col int) (f *fieldPlan, p unsafe.Pointer, null bool) {
	c := v.rows.cells[col]
	part := &v.rows.parts[c.part]
	base := unsafe.Add(part.first, uintptr(v.i)*part.stride)
	f = c.f
	if f.index == nil || f.hasV && *(*bool)(unsafe.Add(base, f.valid)) == f.neg {
		return f, nil, true
	}
	return f, unsafe.Add(base, f.offset), false
}

// Value returns the cell in column col, as Select's row would hold it.
func (v RowView) Value(col int) Value {
	if v.rows.vals != nil {
		return v.rows.vals[v.i][col]
	}
	f, p, null := v.field(col)
	if null {
		return nil
	}
	x, zero := f.conv(p, nil)
	if f.null && zero {
		return nil
	}
	return x
}

// Null reports whether the cell in column col is NULL.
func (v RowView) Null(col int) bool {
	if v.rows.vals != nil {
		return v.rows.vals[v.i][col] == nil
	}
	f, p, null := v.field(col)
	if null {
		return true
	}
	switch f.kind {
	case cellUint:
		return f.null && loadUint(p, f.size) == 0
	case cellInt:
		return f.null && loadInt(p, f.size) == 0
	case cellString:
		return f.null && *(*string)(p) == ""
	}
	x, zero := f.conv(p, nil) // a pointer is NULL when nil
	return x == nil || f.null && zero
}

// Uint returns the cell in column col if it is a uint64 (a ColUint or
// ColPicos column's value); false if it is NULL or of another type.
func (v RowView) Uint(col int) (uint64, bool) {
	if v.rows.vals != nil {
		u, ok := v.rows.vals[v.i][col].(uint64)
		return u, ok
	}
	f, p, null := v.field(col)
	if null {
		return 0, false
	}
	if f.kind == cellUint {
		u := loadUint(p, f.size)
		return u, u != 0 || !f.null
	}
	x, zero := f.conv(p, nil)
	if f.null && zero {
		return 0, false
	}
	u, ok := x.(uint64)
	return u, ok
}

// Int returns the cell in column col if it is an int64 (a ColInt
// column's value); false if it is NULL or of another type.
func (v RowView) Int(col int) (int64, bool) {
	if v.rows.vals != nil {
		i, ok := v.rows.vals[v.i][col].(int64)
		return i, ok
	}
	f, p, null := v.field(col)
	if null {
		return 0, false
	}
	if f.kind == cellInt {
		i := loadInt(p, f.size)
		return i, i != 0 || !f.null
	}
	x, zero := f.conv(p, nil)
	if f.null && zero {
		return 0, false
	}
	i, ok := x.(int64)
	return i, ok
}

// String returns the cell in column col if it is a string; false if it
// is NULL or of another type.
func (v RowView) String(col int) (string, bool) {
	if v.rows.vals != nil {
		s, ok := v.rows.vals[v.i][col].(string)
		return s, ok
	}
	f, p, null := v.field(col)
	if null {
		return "", false
	}
	if f.kind == cellString {
		s := *(*string)(p)
		return s, s != "" || !f.null
	}
	x, zero := f.conv(p, nil)
	if f.null && zero {
		return "", false
	}
	s, ok := x.(string)
	return s, ok
}

// Is reports whether the cell in column col equals x (Value(col) == x),
// without making the cell's Value.
func (v RowView) Is(col int, x Value) bool {
	switch x := x.(type) {
	case nil:
		return v.Null(col)
	case uint64:
		u, ok := v.Uint(col)
		return ok && u == x
	case int64:
		i, ok := v.Int(col)
		return ok && i == x
	case string:
		s, ok := v.String(col)
		return ok && s == x
	}
	return false // a cell is never of another type
}

func loadUint(p unsafe.Pointer, size uintptr) uint64 {
	switch size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

func loadInt(p unsafe.Pointer, size uintptr) int64 {
	switch size {
	case 1:
		return int64(*(*int8)(p))
	case 2:
		return int64(*(*int16)(p))
	case 4:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

// ReadRows returns a snapshot of table, the rows Select returns, read in
// place (see Rows). It returns ErrUnknownTable.
func (s *Schema) ReadRows(table string) (*Rows, error) {
	t, err := lookupTable(table)
	if err != nil {
		return nil, err
	}
	if t.read == nil {
		return RowsOf(s.selectTable(t)), nil
	}
	s.maybeReclaim()
	s.beginRead()
	defer s.endRead()
	return t.read(s), nil
}
