package pfscore

import "github.com/otelpfs/otelpfs/hwclock"

// The setup tables and the timer tables.

// setupTimersRow is a row of setup_timers.
type setupTimersRow struct {
	Name      hwclock.EventClass `pfs:"NAME,dim"`
	TimerName hwclock.Timer      `pfs:"TIMER_NAME,attr"`
}

// performanceTimersRow is a row of performance_timers.
type performanceTimersRow struct {
	TimerName       hwclock.Timer `pfs:"TIMER_NAME,dim"`
	TimerFrequency  uint64        `pfs:"TIMER_FREQUENCY,attr"`
	TimerResolution uint64        `pfs:"TIMER_RESOLUTION,attr"`
	TimerOverhead   uint64        `pfs:"TIMER_OVERHEAD,attr"`
}

// cell returns the string in column name of row, a row of t.
func (t *tableDef) cell(row Row, name string) string {
	if i := t.column(name); i >= 0 && i < len(row) {
		if v, ok := row[i].(string); ok {
			return v
		}
	}
	return ""
}

// namesOf returns the set of the NAME column of rows.
func (t *tableDef) namesOf(rows []Row) map[string]bool {
	names := make(map[string]bool, len(rows))
	for _, r := range rows {
		names[t.cell(r, "NAME")] = true
	}
	return names
}

func init() {
	instruments := defineRows("setup_instruments", (*Schema).SetupInstruments, nil)
	instruments.setup = &setupDef{columns: []string{"ENABLED", "TIMED"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			enabled, timed, err := twoFlags(set, "ENABLED", "TIMED")
			if err != nil {
				return err
			}
			names := instruments.namesOf(rows)
			_, err = s.updateClasses("%", func(c *Class) bool { return names[c.name] }, instrumentsUpdate(enabled, timed))
			return err
		}}

	consumers := defineRows("setup_consumers", (*Schema).SetupConsumers, nil)
	consumers.setup = &setupDef{columns: []string{"ENABLED"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			enabled, err := flagOf(set, "ENABLED")
			if err != nil {
				return err
			}
			for name := range consumers.namesOf(rows) {
				c, err := ParseConsumer(name)
				if err != nil {
					return err
				}
				s.SetConsumer(c, *enabled)
			}
			return nil
		}}

	actors := defineRows("setup_actors", (*Schema).SetupActors, (*Schema).truncateSetupActors)
	actorKey := func(rows []Row) func(*SetupActorsRow) bool {
		keys := map[[3]string]bool{}
		for _, r := range rows {
			keys[[3]string{actors.cell(r, "HOST"), actors.cell(r, "USER"), actors.cell(r, "ROLE")}] = true
		}
		return func(r *SetupActorsRow) bool { return keys[[3]string{r.Host, r.User, r.Role}] }
	}
	actors.setup = &setupDef{columns: []string{"ENABLED", "HISTORY"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			enabled, history, err := twoFlags(set, "ENABLED", "HISTORY")
			if err == nil {
				s.updateActors(actorKey(rows), enabled, history)
			}
			return err
		},
		insert: func(s *Schema, v map[string]Value) error {
			var r SetupActorsRow
			var err error
			if r.Host, err = stringOf(v, "HOST", "%"); err != nil {
				return err
			}
			if r.User, err = stringOf(v, "USER", "%"); err != nil {
				return err
			}
			if r.Role, err = stringOf(v, "ROLE", "%"); err != nil {
				return err
			}
			enabled, history, err := twoFlags(v, "ENABLED", "HISTORY")
			if err != nil {
				return err
			}
			r.Enabled, r.History = orTrue(enabled), orTrue(history) // MySQL's defaults
			return s.insertSetupActor(r)
		},
		remove: func(s *Schema, rows []Row) { rowsDelete(s, &s.actors, actorKey(rows)) },
	}

	objects := defineRows("setup_objects", (*Schema).SetupObjects, (*Schema).truncateSetupObjects)
	objectKey := func(rows []Row) func(*SetupObjectsRow) bool {
		keys := map[[3]string]bool{}
		for _, r := range rows {
			keys[[3]string{objects.cell(r, "OBJECT_TYPE"), objects.cell(r, "OBJECT_SCHEMA"), objects.cell(r, "OBJECT_NAME")}] = true
		}
		return func(r *SetupObjectsRow) bool {
			return keys[[3]string{r.ObjectType.String(), r.ObjectSchema, r.ObjectName}]
		}
	}
	objects.setup = &setupDef{columns: []string{"ENABLED", "TIMED"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			enabled, timed, err := twoFlags(set, "ENABLED", "TIMED")
			if err == nil {
				s.updateObjects(objectKey(rows), enabled, timed)
			}
			return err
		},
		insert: func(s *Schema, v map[string]Value) error {
			var r SetupObjectsRow
			typ, err := stringOf(v, "OBJECT_TYPE", "TABLE") // MySQL's default
			if err != nil {
				return err
			}
			if r.ObjectType, err = ParseObjectType(typ); err != nil {
				return err
			}
			if r.ObjectSchema, err = stringOf(v, "OBJECT_SCHEMA", "%"); err != nil {
				return err
			}
			if r.ObjectName, err = stringOf(v, "OBJECT_NAME", "%"); err != nil {
				return err
			}
			enabled, timed, err := twoFlags(v, "ENABLED", "TIMED")
			if err != nil {
				return err
			}
			r.Enabled, r.Timed = orTrue(enabled), orTrue(timed) // MySQL's defaults
			return s.insertSetupObject(r)
		},
		remove: func(s *Schema, rows []Row) { s.deleteObjects(objectKey(rows)) },
	}

	threads := defineRows("setup_threads", (*Schema).SetupThreads, nil)
	threads.setup = &setupDef{columns: []string{"ENABLED", "HISTORY"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			enabled, history, err := twoFlags(set, "ENABLED", "HISTORY")
			if err != nil {
				return err
			}
			names := threads.namesOf(rows)
			_, err = s.updateClasses("%", func(c *Class) bool { return c.kind == KindThread && names[c.name] }, threadsUpdate(enabled, history))
			return err
		}}

	timers := defineRows("setup_timers", func(s *Schema) []setupTimersRow {
		var rows []setupTimersRow
		for _, r := range s.timers.Rows() {
			rows = append(rows, setupTimersRow{r.Name, r.TimerName})
		}
		return rows
	}, nil)
	timers.setup = &setupDef{columns: []string{"TIMER_NAME"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			timer, err := stringOf(set, "TIMER_NAME", "")
			if err != nil {
				return err
			}
			for name := range timers.namesOf(rows) {
				if _, err := s.timers.Set(name, timer); err != nil {
					return err
				}
			}
			return nil
		}}

	defineRows("performance_timers", func(*Schema) []performanceTimersRow {
		var rows []performanceTimersRow
		for _, r := range hwclock.PerformanceTimers() {
			rows = append(rows, performanceTimersRow{r.Name, r.Frequency, r.Resolution, r.Overhead})
		}
		return rows
	}, nil)
}

// twoFlags returns the flag columns a and b of set (see flagOf).
func twoFlags(set map[string]Value, a, b string) (*bool, *bool, error) {
	x, err := flagOf(set, a)
	if err != nil {
		return nil, nil, err
	}
	y, err := flagOf(set, b)
	return x, y, err
}

// orTrue is *v, or true when v is nil: MySQL's default for the flags of a
// new setup_actors or setup_objects row.
func orTrue(v *bool) bool { return v == nil || *v }
