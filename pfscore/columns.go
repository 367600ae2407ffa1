package pfscore

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Typed rows: a table's columns are the tagged fields of its row struct, in
// order. A field's tag names its column and gives the column's role:
//
//	EventName string `pfs:"EVENT_NAME,dim"`
//	CountStar uint64 `pfs:"COUNT_STAR,counter"`
//	MinTimerWait uint64 `pfs:"MIN_TIMER_WAIT,min,ps"`
//	ObjectName string `pfs:"OBJECT_NAME,text,null"`
//
// The first element is the column's name; the second its role (see Role);
// then options:
//
//	ps        picoseconds (implied by the timer, time and duration roles)
//	null      the field's zero value is NULL
//	bin       strings compare byte for byte (a binary collation, see
//	          Column.Binary)
//	valid=F   NULL unless bool field F of the row is true (valid=!F: false)
//	uint, int, string
//	          the column's type, for a field of type struct{} (named _):
//	          a column MySQL has and otelpfs never fills, always NULL
//
// Embedded structs without a tag contribute their fields in place, so a
// summary row is its dimensions followed by its statistics. A field's Go
// type gives the column type: a string, a bool (rendered YES or NO, as
// MySQL's ENUM('YES','NO')) or a type with a String method is ColString, an
// unsigned integer ColUint (ColPicos with ps), a signed one ColInt; a
// pointer is NULL when nil.

// A Role says what a column means to a reader that knows no table in
// particular: a metrics exporter makes dimensions attributes, counters and
// timers cumulative sums, gauges gauges; the HTTP handler's JSON carries it
// for remote readers.
type Role uint8

const (
	RoleDimension Role = iota + 1 // identifies a summary or instance row: EVENT_NAME, USER, OBJECT_INSTANCE_BEGIN
	RoleCounter                   // a cumulative count: COUNT_STAR, SUM_NUMBER_OF_BYTES_READ, TOTAL_CONNECTIONS
	RoleTimer                     // a cumulative time in picoseconds: SUM_TIMER_WAIT
	RoleGauge                     // a current value: CURRENT_CONNECTIONS, OPEN_COUNT
	RoleLowWater                  // the lowest a gauge was since the last TRUNCATE: LOW_COUNT_USED
	RoleHighWater                 // the highest: HIGH_NUMBER_OF_BYTES_USED
	RoleMin                       // the least of the events summarized: MIN_TIMER_WAIT
	RoleAvg                       // their mean: AVG_TIMER_WAIT
	RoleMax                       // the greatest: MAX_TIMER_WAIT
	RoleTimestamp                 // a point in time, picoseconds on the event's timer: TIMER_START
	RoleDuration                  // one event's time, picoseconds: TIMER_WAIT of an event
	RoleID                        // an identifier linking rows: EVENT_ID, NESTING_EVENT_ID, THREAD_ID of an event
	RoleAttribute                 // a property of the row: ENABLED, OPERATION, STATE
	RoleText                      // free text: DOCUMENTATION, SOURCE, OBJECT_NAME of an event
	numRoles
)

var roleNames = [numRoles]string{"",
	"dim", "counter", "timer", "gauge", "low", "high", "min", "avg", "max",
	"time", "duration", "id", "attr", "text"}

// String returns the role's tag name: dim, counter, timer, gauge, low, high,
// min, avg, max, time, duration, id, attr or text.
func (r Role) String() string {
	if r > 0 && r < numRoles {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// ParseRole returns the role named name (see Role.String).
func ParseRole(name string) (Role, error) {
	for r := Role(1); r < numRoles; r++ {
		if roleNames[r] == name {
			return r, nil
		}
	}
	return 0, fmt.Errorf("pfs: unknown column role %q", name)
}

// Cumulative reports whether the role's values only grow between two
// TRUNCATEs: counters and timers.
func (r Role) Cumulative() bool { return r == RoleCounter || r == RoleTimer }

// A rowPlan turns a row struct into a Row: one field plan per column.
type rowPlan struct {
	typ    reflect.Type
	cols   []Column
	fields []fieldPlan
}

// A fieldPlan is how one column's value comes out of the struct. Fields are
// read at their offsets in the row (embedded structs are inline, so a
// field's offset is the sum along its index path): a summary read renders
// tens of thousands of cells, and reflect.Value.FieldByIndex per cell cost
// more than the rest of the read.
type fieldPlan struct {
	index  []int                                      // the field, as reflect.Value.FieldByIndex takes it; nil: always NULL
	offset uintptr                                    // its offset in the row
	valid  uintptr                                    // the offset of the bool field that says the column is not NULL
	hasV   bool                                       // there is such a field
	neg    bool                                       // valid=!F
	null   bool                                       // the zero value is NULL
	conv   func(unsafe.Pointer, *boxer) (Value, bool) // the value, and whether it is the zero value
	// kind and size say how a typed read (Rows) loads the field without
	// making a Value: an unsigned or signed integer of size bytes, a
	// string, or anything else (bool, Stringer, pointer), which goes
	// through conv.
	kind cellKind
	size uintptr
}

// A cellKind is how a field's value is stored, for typed reads.
type cellKind uint8

const (
	cellOther cellKind = iota // through conv: bool, Stringer, pointer
	cellUint
	cellInt
	cellString
)

// cellKindOf returns how a field of type t is loaded by a typed read; it
// follows converter's cases, so the two always agree on a field.
func cellKindOf(t reflect.Type) cellKind {
	if t.Kind() == reflect.Pointer || t.Kind() != reflect.String && t.Implements(stringerType) {
		return cellOther
	}
	switch t.Kind() {
	case reflect.String:
		return cellString
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cellUint
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cellInt
	}
	return cellOther
}

// planOf returns the plan of row struct type t, or panics: plans are made
// for the engine's own types, when their tables are defined.
func planOf(t reflect.Type) *rowPlan {
	p, err := makePlan(t)
	if err != nil {
		panic("pfs: BUG: " + err.Error())
	}
	return p
}

func makePlan(t reflect.Type) (*rowPlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("row type %v is not a struct", t)
	}
	p := &rowPlan{typ: t}
	if err := walkTagged(t, nil, p.add); err != nil {
		return nil, fmt.Errorf("row type %v: %w", t, err)
	}
	seen := map[string]bool{}
	for _, c := range p.cols {
		if seen[c.Name] {
			return nil, fmt.Errorf("row type %v: column %s twice", t, c.Name)
		}
		seen[c.Name] = true
	}
	return p, nil
}

var stringerType = reflect.TypeFor[fmt.Stringer]()

// walkTagged calls fn, in order, for each field of struct t (at index path
// prefix in the row) that has a pfs tag; an untagged embedded struct
// contributes its fields in place. fn gets the struct that declares the
// field, the field's index path in the row, and the tag.
func walkTagged(t reflect.Type, prefix []int, fn func(owner reflect.Type, index []int, f reflect.StructField, tag string) error) error {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		tag, ok := f.Tag.Lookup("pfs")
		if !ok {
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				if err := walkTagged(f.Type, index, fn); err != nil {
					return err
				}
			case f.Anonymous && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				return fmt.Errorf("embedded %v: embed the struct, not a pointer to it", f.Type)
			}
			continue
		}
		if err := fn(t, index, f, tag); err != nil {
			return err
		}
	}
	return nil
}

func (p *rowPlan) add(owner reflect.Type, index []int, f reflect.StructField, tag string) error {
	col, fp, validName, err := parseTag(f, tag)
	if err != nil {
		return err
	}
	if f.Type == reflect.TypeFor[struct{}]() {
		fp.index = nil
	} else {
		fp.index = index
		fp.offset = offsetOf(p.typ, index)
		conv, typ, err := converter(f.Type, col.Type == ColPicos)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		fp.conv, col.Type = conv, typ
		fp.kind, fp.size = cellKindOf(f.Type), f.Type.Size()
	}
	if validName != "" {
		vf, ok := owner.FieldByName(validName)
		if !ok || vf.Type.Kind() != reflect.Bool {
			return fmt.Errorf("field %s: valid=%s is not a bool field", f.Name, validName)
		}
		prefix := index[:len(index)-1]
		fp.valid, fp.hasV = offsetOf(p.typ, append(append([]int(nil), prefix...), vf.Index...)), true
	}
	p.cols = append(p.cols, col)
	p.fields = append(p.fields, fp)
	return nil
}

// parseTag parses a pfs tag (see the top of this file).
func parseTag(f reflect.StructField, tag string) (Column, fieldPlan, string, error) {
	var fp fieldPlan
	parts := strings.Split(tag, ",")
	if len(parts) < 2 || parts[0] == "" {
		return Column{}, fp, "", fmt.Errorf("field %s: tag %q: want NAME,role[,options]", f.Name, tag)
	}
	role, err := ParseRole(parts[1])
	if err != nil {
		return Column{}, fp, "", fmt.Errorf("field %s: %w", f.Name, err)
	}
	col := Column{Name: parts[0], Role: role, Type: ColString}
	if role == RoleTimer || role == RoleTimestamp || role == RoleDuration {
		col.Type = ColPicos
	}
	var valid string
	explicit := false
	for _, o := range parts[2:] {
		switch {
		case o == "ps":
			col.Type = ColPicos
		case o == "null":
			fp.null = true
		case o == "bin":
			col.Binary = true
		case strings.HasPrefix(o, "valid="):
			valid = strings.TrimPrefix(o, "valid=")
			if strings.HasPrefix(valid, "!") {
				valid, fp.neg = valid[1:], true
			}
		case o == "uint" || o == "int" || o == "string":
			col.Type, explicit = map[string]ColumnType{"uint": ColUint, "int": ColInt, "string": ColString}[o], true
		default:
			return Column{}, fp, "", fmt.Errorf("field %s: unknown tag option %q", f.Name, o)
		}
	}
	if f.Type == reflect.TypeFor[struct{}]() && !explicit && col.Type != ColPicos {
		return Column{}, fp, "", fmt.Errorf("field %s: an always-NULL column needs its type (uint, int, string or ps)", f.Name)
	}
	return col, fp, valid, nil
}

// offsetOf returns the offset in row type t of the field at index, a path
// through embedded (not pointer) structs.
func offsetOf(t reflect.Type, index []int) uintptr {
	var off uintptr
	for _, i := range index {
		f := t.Field(i)
		off += f.Offset
		t = f.Type
	}
	return off
}

// converter returns how a field of type t, at a pointer to it, becomes a
// Value (and whether it is t's zero value), and the column type that
// makes.
func converter(t reflect.Type, picos bool) (func(unsafe.Pointer, *boxer) (Value, bool), ColumnType, error) {
	if t.Kind() == reflect.Pointer {
		elem, typ, err := converter(t.Elem(), picos)
		if err != nil {
			return nil, 0, err
		}
		return func(p unsafe.Pointer, b *boxer) (Value, bool) {
			e := *(*unsafe.Pointer)(p)
			if e == nil {
				return nil, true
			}
			v, _ := elem(e, b)
			return v, false
		}, typ, nil
	}
	if t.Kind() != reflect.String && t.Implements(stringerType) {
		return func(p unsafe.Pointer, _ *boxer) (Value, bool) {
			v := reflect.NewAt(t, p).Elem()
			return v.Interface().(fmt.Stringer).String(), v.IsZero()
		}, ColString, nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(p unsafe.Pointer, b *boxer) (Value, bool) { s := *(*string)(p); return b.string(s), s == "" }, ColString, nil
	case reflect.Bool:
		return func(p unsafe.Pointer, _ *boxer) (Value, bool) { b := *(*bool)(p); return yesNo(b), !b }, ColString, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		typ := ColUint
		if picos {
			typ = ColPicos
		}
		load := unsignedLoader(t.Size())
		return func(p unsafe.Pointer, b *boxer) (Value, bool) { u := load(p); return b.uint(u), u == 0 }, typ, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if picos {
			return nil, 0, fmt.Errorf("a picosecond column must be unsigned, not %v", t)
		}
		load := signedLoader(t.Size())
		return func(p unsafe.Pointer, b *boxer) (Value, bool) { i := load(p); return b.int(i), i == 0 }, ColInt, nil
	}
	return nil, 0, fmt.Errorf("type %v has no column type", t)
}

func unsignedLoader(size uintptr) func(unsafe.Pointer) uint64 {
	switch size {
	case 1:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint8)(p)) }
	case 2:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(p)) }
	case 4:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint32)(p)) }
	}
	return func(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
}

func signedLoader(size uintptr) func(unsafe.Pointer) int64 {
	switch size {
	case 1:
		return func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }
	case 2:
		return func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }
	case 4:
		return func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }
	}
	return func(p unsafe.Pointer) int64 { return *(*int64)(p) }
}

// appendRow appends the columns of the row at p, a pointer to a value of
// the plan's type, to row; b boxes them (nil: Go's own conversions).
func (p *rowPlan) appendRow(row Row, base unsafe.Pointer, b *boxer) Row {
	for i := range p.fields {
		f := &p.fields[i]
		if f.index == nil || f.hasV && *(*bool)(unsafe.Add(base, f.valid)) == f.neg {
			row = append(row, nil)
			continue
		}
		v, zero := f.conv(unsafe.Add(base, f.offset), b)
		if f.null && zero {
			v = nil
		}
		row = append(row, v)
	}
	return row
}

// rowsOf renders rows of struct type R with plan p.
func rowsOf[R any](p *rowPlan, rows []R) []Row {
	if len(rows) > 0 && reflect.TypeFor[R]() != p.typ {
		panic(fmt.Sprintf("pfs: BUG: rows of %v rendered with the plan of %v", reflect.TypeFor[R](), p.typ))
	}
	out := make([]Row, len(rows))
	cells := make(Row, len(rows)*len(p.cols)) // one allocation for every row's cells
	var b boxer
	for i := range rows {
		out[i] = p.appendRow(cells[:0:len(p.cols)], unsafe.Pointer(&rows[i]), &b)
		cells = cells[len(p.cols):]
	}
	return out
}
