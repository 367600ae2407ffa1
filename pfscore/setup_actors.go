package pfscore

import (
	"errors"
	"fmt"
)

// SetupActorsRow is a row of setup_actors: which foreground threads (those
// with a user) are instrumented and keep history. HOST, USER and ROLE are
// literal values or '%' for any; they are not LIKE patterns.
type SetupActorsRow struct {
	Host    string `pfs:"HOST,dim,bin"`
	User    string `pfs:"USER,dim,bin"`
	Role    string `pfs:"ROLE,dim,bin"` // kept for MySQL's shape; otelpfs threads have no role
	Enabled bool   `pfs:"ENABLED,attr"`
	History bool   `pfs:"HISTORY,attr"`
}

// Errors of setup_actors and setup_objects changes.
var (
	ErrDuplicateRow = errors.New("pfs: duplicate row")
	ErrTableFull    = errors.New("pfs: setup table full")
	ErrBadValue     = errors.New("pfs: bad value")
)

// maxSetupRows bounds setup_actors and setup_objects, as
// performance_schema_setup_actors_size and _setup_objects_size do.
const maxSetupRows = 128

// defaultActors is MySQL's default setup_actors: everyone, with history.
var defaultActors = []SetupActorsRow{{Host: "%", User: "%", Role: "%", Enabled: true, History: true}}

// SetupActors returns setup_actors.
func (s *Schema) SetupActors() []SetupActorsRow {
	return append([]SetupActorsRow(nil), *s.actors.Load()...)
}

func (r *SetupActorsRow) normalize() error {
	for _, f := range []struct {
		v   *string
		col string
		max int
	}{{&r.Host, "HOST", 255}, {&r.User, "USER", 32}, {&r.Role, "ROLE", 32}} {
		if *f.v == "" {
			*f.v = "%"
		}
		if len(*f.v) > f.max {
			return fmt.Errorf("%w: %s longer than %d bytes", ErrBadValue, f.col, f.max)
		}
	}
	return nil
}

// insertSetupActor is INSERT INTO setup_actors. Empty HOST, USER or ROLE mean
// '%'. It fails with ErrDuplicateRow if the (HOST, USER, ROLE) key exists.
// Changes affect threads created afterwards, as in MySQL.
func (s *Schema) insertSetupActor(r SetupActorsRow) error {
	if err := r.normalize(); err != nil {
		return err
	}
	return rowsInsert(s, &s.actors, r, func(a, b *SetupActorsRow) bool {
		return a.Host == b.Host && a.User == b.User && a.Role == b.Role
	}, "setup_actors")
}

// updateActors sets ENABLED and HISTORY, where not nil, of the rows match
// selects, and returns how many.
func (s *Schema) updateActors(match func(*SetupActorsRow) bool, enabled, history *bool) int {
	return rowsUpdate(s, &s.actors, match, func(r *SetupActorsRow) {
		setFlag(&r.Enabled, enabled)
		setFlag(&r.History, history)
	})
}

// truncateSetupActors empties setup_actors: no foreground thread is then
// instrumented.
func (s *Schema) truncateSetupActors() { rowsTruncate(s, &s.actors) }

// setFlag stores *v into *f unless v is nil.
func setFlag(f *bool, v *bool) {
	if v != nil {
		*f = *v
	}
}

// lookupActor decides INSTRUMENTED and HISTORY of a thread of user@host, as
// MySQL does: the first row matching (user, host), (user, '%'), ('%', host),
// ('%', '%'), with ROLE '%'; no row means neither.
func (s *Schema) lookupActor(user, host string) (enabled, history bool) {
	rows := *s.actors.Load()
	for _, probe := range [4][2]string{{user, host}, {user, "%"}, {"%", host}, {"%", "%"}} {
		for _, r := range rows {
			if r.User == probe[0] && r.Host == probe[1] && r.Role == "%" {
				return r.Enabled, r.History
			}
		}
	}
	return false, false
}
