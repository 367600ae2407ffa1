package pfscore

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
)

// Scan copies a table snapshot into structs, by column name: each field of R
// tagged `pfs:"NAME,..."` (the tag of the engine's row types, see Role;
// only NAME matters here) takes the column NAME. Embedded structs without a
// tag contribute their fields, so a caller can compose a row of the
// engine's parts:
//
//	type row struct {
//		pfscore.ByAccount  // USER, HOST, EVENT_NAME
//		pfscore.WaitStats  // COUNT_STAR, SUM_TIMER_WAIT, ...
//	}
//	rows, err := pfscore.Scan[row](res)
//
// A string field takes a string column, a bool one YES or NO, an integer
// one a numeric column that fits it, an enumeration (a one-byte type with a
// String method: Operation, Consumer, ObjectType, ...) the string its
// String method gives; NULL leaves the zero value (a pointer field stays
// nil). So the engine's own row types scan back: SetupInstrumentsRow,
// WaitEvent, StatusVariable. A tagged field whose column the table lacks, or whose
// type cannot hold the column's values, is an error.
func Scan[R any](res *Result) ([]R, error) {
	t := reflect.TypeFor[R]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("pfs: Scan into %v: not a struct", t)
	}
	fields, err := scanFields(t)
	if err != nil {
		return nil, fmt.Errorf("pfs: Scan into %v: %w", t, err)
	}
	for i := range fields {
		f := &fields[i]
		f.col = -1
		for j, c := range res.Columns {
			if strings.EqualFold(c.Name, f.name) {
				f.col = j
				break
			}
		}
		if f.col < 0 {
			return nil, fmt.Errorf("pfs: Scan into %v: %s has no column %s", t, res.Table, f.name)
		}
	}
	for i := range fields {
		fields[i].enum = enumValues(t.FieldByIndex(fields[i].index).Type)
	}
	out := make([]R, len(res.Rows))
	for i, row := range res.Rows {
		v := reflect.ValueOf(&out[i]).Elem()
		for _, f := range fields {
			if f.col >= len(row) {
				continue
			}
			if f.valid != nil { // a column whose NULL another field says
				v.FieldByIndex(f.valid).SetBool((row[f.col] != nil) != f.neg)
			}
			if err := setField(v.FieldByIndex(f.index), row[f.col], f.enum); err != nil {
				return nil, fmt.Errorf("pfs: Scan into %v: column %s: %w", t, f.name, err)
			}
		}
	}
	return out, nil
}

type scanField struct {
	name  string
	index []int
	col   int
	enum  map[string]uint64 // for an enumeration type: its values by String
	valid []int             // the bool field that says the column is not NULL (tag valid=F), if any
	neg   bool              // valid=!F: the field says it is NULL
}

// scanFields returns the tagged fields of row type t, exported ones only.
func scanFields(t reflect.Type) ([]scanField, error) {
	var out []scanField
	err := walkTagged(t, nil, func(owner reflect.Type, index []int, f reflect.StructField, tag string) error {
		if !f.IsExported() {
			return nil
		}
		parts := strings.Split(tag, ",")
		if parts[0] == "" {
			return fmt.Errorf("field %s: empty column name", f.Name)
		}
		sf := scanField{name: parts[0], index: index}
		for _, o := range parts[1:] {
			if v, ok := strings.CutPrefix(o, "valid="); ok {
				v, sf.neg = strings.CutPrefix(v, "!")
				vf, ok := owner.FieldByName(v)
				if !ok || vf.Type.Kind() != reflect.Bool {
					return fmt.Errorf("field %s: valid=%s is not a bool field", f.Name, v)
				}
				sf.valid = append(append([]int(nil), index[:len(index)-1]...), vf.Index...)
			}
		}
		out = append(out, sf)
		return nil
	})
	return out, err
}

// enumValues returns, for an enumeration type (a one-byte unsigned integer
// type with a String method, as Operation or Consumer), each value by the
// string a table shows for it; nil for any other type.
func enumValues(t reflect.Type) map[string]uint64 {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Uint8 || !t.Implements(stringerType) {
		return nil
	}
	m := make(map[string]uint64, 256)
	for i := 255; i >= 0; i-- { // the least value wins a shared name
		m[reflect.ValueOf(uint8(i)).Convert(t).Interface().(fmt.Stringer).String()] = uint64(i)
	}
	return m
}

// textUnmarshaler returns f's address as an encoding.TextUnmarshaler, if
// it is one.
func textUnmarshaler(f reflect.Value) (encoding.TextUnmarshaler, bool) {
	if !f.CanAddr() {
		return nil, false
	}
	u, ok := f.Addr().Interface().(encoding.TextUnmarshaler)
	return u, ok
}

// setField stores a column value into a struct field; enum, if not nil,
// maps the strings of an enumeration type to its values.
func setField(f reflect.Value, v Value, enum map[string]uint64) error {
	if v == nil {
		f.SetZero()
		return nil
	}
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), v, enum); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	switch x := v.(type) {
	case string:
		if n, ok := enum[x]; ok {
			f.SetUint(n)
			return nil
		}
		if u, ok := textUnmarshaler(f); ok {
			return u.UnmarshalText([]byte(x)) // Timestamp, Fraction
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(x)
			return nil
		case reflect.Bool:
			switch x {
			case "YES":
				f.SetBool(true)
				return nil
			case "NO":
				f.SetBool(false)
				return nil
			}
		}
	case uint64:
		switch {
		case f.CanUint() && !f.OverflowUint(x):
			f.SetUint(x)
			return nil
		case f.CanInt() && x <= 1<<63-1 && !f.OverflowInt(int64(x)):
			f.SetInt(int64(x))
			return nil
		}
	case int64:
		switch {
		case f.CanInt() && !f.OverflowInt(x):
			f.SetInt(x)
			return nil
		case f.CanUint() && x >= 0 && !f.OverflowUint(uint64(x)):
			f.SetUint(uint64(x))
			return nil
		}
	}
	return fmt.Errorf("cannot store %T %v in %v", v, v, f.Type())
}
