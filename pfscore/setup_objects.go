package pfscore

import (
	"fmt"
	"strings"
)

// An ObjectType is setup_objects.OBJECT_TYPE. MySQL's types name database
// objects; otelpfs adds FILE and SOCKET, the named objects a Go service has.
type ObjectType uint8

const (
	ObjectEvent ObjectType = iota + 1
	ObjectFunction
	ObjectProcedure
	ObjectTable
	ObjectTrigger
	ObjectFile   // OBJECT_SCHEMA: the directory; OBJECT_NAME: the file's base name
	ObjectSocket // OBJECT_SCHEMA: the network ("tcp", "unix"); OBJECT_NAME: the address
	numObjectTypes
)

var objectTypeNames = [numObjectTypes]string{"", "EVENT", "FUNCTION", "PROCEDURE", "TABLE", "TRIGGER", "FILE", "SOCKET"}

func (t ObjectType) String() string {
	if t > 0 && t < numObjectTypes {
		return objectTypeNames[t]
	}
	return fmt.Sprintf("ObjectType(%d)", uint8(t))
}

// ParseObjectType returns the OBJECT_TYPE named name (case-insensitive).
func ParseObjectType(name string) (ObjectType, error) {
	for i := ObjectType(1); i < numObjectTypes; i++ {
		if strings.EqualFold(objectTypeNames[i], name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: OBJECT_TYPE %q (want one of %s)", ErrBadValue, name, strings.Join(objectTypeNames[1:], ", "))
}

// SetupObjectsRow is a row of setup_objects: whether events on matching named
// objects are collected (ENABLED) and timed (TIMED). OBJECT_SCHEMA and
// OBJECT_NAME are literal values or '%' for any.
type SetupObjectsRow struct {
	ObjectType   ObjectType `pfs:"OBJECT_TYPE,dim"`
	ObjectSchema string     `pfs:"OBJECT_SCHEMA,dim"`
	ObjectName   string     `pfs:"OBJECT_NAME,dim"`
	Enabled      bool       `pfs:"ENABLED,attr"`
	Timed        bool       `pfs:"TIMED,attr"`
}

// defaultObjects are MySQL 8.0's defaults, plus FILE and SOCKET rows that
// enable every file and socket.
func defaultObjects() []SetupObjectsRow {
	var rows []SetupObjectsRow
	for t := ObjectEvent; t <= ObjectTrigger; t++ {
		for _, sys := range []string{"mysql", "performance_schema", "information_schema"} {
			rows = append(rows, SetupObjectsRow{t, sys, "%", false, false})
		}
		rows = append(rows, SetupObjectsRow{t, "%", "%", true, true})
	}
	rows = append(rows, SetupObjectsRow{ObjectFile, "%", "%", true, true}, SetupObjectsRow{ObjectSocket, "%", "%", true, true})
	return rows
}

// SetupObjects returns setup_objects.
func (s *Schema) SetupObjects() []SetupObjectsRow {
	return append([]SetupObjectsRow(nil), *s.objects.Load()...)
}

// InsertSetupObject is INSERT INTO setup_objects; empty OBJECT_SCHEMA or
// OBJECT_NAME mean '%'. It fails with ErrDuplicateRow if the key exists.
func (s *Schema) InsertSetupObject(r SetupObjectsRow) error {
	if r.ObjectType == 0 || r.ObjectType >= numObjectTypes {
		return fmt.Errorf("%w: OBJECT_TYPE %d", ErrBadValue, r.ObjectType)
	}
	if r.ObjectSchema == "" {
		r.ObjectSchema = "%"
	}
	if r.ObjectName == "" {
		r.ObjectName = "%"
	}
	if len(r.ObjectSchema) > 512 || len(r.ObjectName) > 512 {
		return fmt.Errorf("%w: OBJECT_SCHEMA or OBJECT_NAME longer than 512 bytes", ErrBadValue)
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	old := *s.objects.Load()
	for _, o := range old {
		if o.ObjectType == r.ObjectType && o.ObjectSchema == r.ObjectSchema && o.ObjectName == r.ObjectName {
			return fmt.Errorf("%w: setup_objects (%s, %s, %s)", ErrDuplicateRow, r.ObjectType, r.ObjectSchema, r.ObjectName)
		}
	}
	if len(old) >= maxSetupRows {
		return fmt.Errorf("%w: setup_objects holds at most %d rows", ErrTableFull, maxSetupRows)
	}
	next := append(append([]SetupObjectsRow(nil), old...), r)
	s.objects.Store(&next)
	s.objectsVersion.Add(1)
	return nil
}

// UpdateSetupObjects is UPDATE setup_objects SET ENABLED=…, TIMED=… WHERE
// OBJECT_TYPE=typ AND OBJECT_SCHEMA=schema AND OBJECT_NAME=name; a zero typ
// or empty string matches any value. It returns the number of rows changed.
func (s *Schema) UpdateSetupObjects(typ ObjectType, schema, name string, enabled, timed *bool) int {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	next := append([]SetupObjectsRow(nil), *s.objects.Load()...)
	n := 0
	for i := range next {
		r := &next[i]
		if (typ == 0 || typ == r.ObjectType) && matchKey(schema, r.ObjectSchema) && matchKey(name, r.ObjectName) {
			n++
			if enabled != nil {
				r.Enabled = *enabled
			}
			if timed != nil {
				r.Timed = *timed
			}
		}
	}
	s.objects.Store(&next)
	s.objectsVersion.Add(1)
	return n
}

// DeleteSetupObjects deletes the rows matching as UpdateSetupObjects does
// and returns how many.
func (s *Schema) DeleteSetupObjects(typ ObjectType, schema, name string) int {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	old := *s.objects.Load()
	var next []SetupObjectsRow
	for _, r := range old {
		if !((typ == 0 || typ == r.ObjectType) && matchKey(schema, r.ObjectSchema) && matchKey(name, r.ObjectName)) {
			next = append(next, r)
		}
	}
	s.objects.Store(&next)
	s.objectsVersion.Add(1)
	return len(old) - len(next)
}

// TruncateSetupObjects empties setup_objects: no named object is then
// instrumented.
func (s *Schema) TruncateSetupObjects() {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	empty := []SetupObjectsRow{}
	s.objects.Store(&empty)
	s.objectsVersion.Add(1)
}

// lookupObject decides ENABLED and TIMED for an object, as MySQL does: the
// row matching (type, schema, name), else (type, schema, '%'), else (type,
// '%', '%'); no row means neither.
func (s *Schema) lookupObject(typ ObjectType, schema, name string) (enabled, timed bool) {
	rows := *s.objects.Load()
	for _, probe := range [3][2]string{{schema, name}, {schema, "%"}, {"%", "%"}} {
		for _, r := range rows {
			if r.ObjectType == typ && r.ObjectSchema == probe[0] && r.ObjectName == probe[1] {
				return r.Enabled, r.Timed
			}
		}
	}
	return false, false
}
