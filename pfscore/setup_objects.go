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
	ObjectSchema string     `pfs:"OBJECT_SCHEMA,dim,bin"`
	ObjectName   string     `pfs:"OBJECT_NAME,dim,bin"`
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

// insertSetupObject is INSERT INTO setup_objects; empty OBJECT_SCHEMA or
// OBJECT_NAME mean '%'. It fails with ErrDuplicateRow if the key exists.
func (s *Schema) insertSetupObject(r SetupObjectsRow) error {
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
	err := rowsInsert(s, &s.objects, r, func(a, b *SetupObjectsRow) bool {
		return a.ObjectType == b.ObjectType && a.ObjectSchema == b.ObjectSchema && a.ObjectName == b.ObjectName
	}, "setup_objects")
	s.objectsVersion.Add(1)
	return err
}

// updateObjects sets ENABLED and TIMED, where not nil, of the rows match
// selects, and returns how many.
func (s *Schema) updateObjects(match func(*SetupObjectsRow) bool, enabled, timed *bool) int {
	n := rowsUpdate(s, &s.objects, match, func(r *SetupObjectsRow) {
		setFlag(&r.Enabled, enabled)
		setFlag(&r.Timed, timed)
	})
	s.objectsVersion.Add(1)
	return n
}

// deleteObjects deletes the rows match selects and returns how many.
func (s *Schema) deleteObjects(match func(*SetupObjectsRow) bool) int {
	n := rowsDelete(s, &s.objects, match)
	s.objectsVersion.Add(1)
	return n
}

// truncateSetupObjects empties setup_objects: no named object is then
// instrumented.
func (s *Schema) truncateSetupObjects() {
	rowsTruncate(s, &s.objects)
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
