package pfscore

import "github.com/otelpfs/otelpfs/hwclock"

// The setup tables and the timer tables.

func init() {
	defineTable(&tableDef{
		name:    "setup_instruments",
		columns: cols("NAME", ColString, "ENABLED", ColString, "TIMED", ColString, "PROPERTIES", ColString, "VOLATILITY", ColInt, "DOCUMENTATION", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.SetupInstruments() {
				var timed Value
				if r.Timed != nil {
					timed = yesNo(*r.Timed)
				}
				rows = append(rows, Row{r.Name, yesNo(r.Enabled), timed, r.Properties.String(), int64(r.Volatility), nullString(r.Documentation)})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "setup_consumers",
		columns: cols("NAME", ColString, "ENABLED", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.SetupConsumers() {
				rows = append(rows, Row{r.Name.String(), yesNo(r.Enabled)})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "setup_actors",
		columns: cols("HOST", ColString, "USER", ColString, "ROLE", ColString, "ENABLED", ColString, "HISTORY", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.SetupActors() {
				rows = append(rows, Row{r.Host, r.User, r.Role, yesNo(r.Enabled), yesNo(r.History)})
			}
			return rows
		},
		truncate: func(s *Schema) { s.TruncateSetupActors() },
	})
	defineTable(&tableDef{
		name:    "setup_objects",
		columns: cols("OBJECT_TYPE", ColString, "OBJECT_SCHEMA", ColString, "OBJECT_NAME", ColString, "ENABLED", ColString, "TIMED", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.SetupObjects() {
				rows = append(rows, Row{r.ObjectType.String(), r.ObjectSchema, r.ObjectName, yesNo(r.Enabled), yesNo(r.Timed)})
			}
			return rows
		},
		truncate: func(s *Schema) { s.TruncateSetupObjects() },
	})
	defineTable(&tableDef{
		name:    "setup_threads",
		columns: cols("NAME", ColString, "ENABLED", ColString, "HISTORY", ColString, "PROPERTIES", ColString, "VOLATILITY", ColInt, "DOCUMENTATION", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.SetupThreads() {
				rows = append(rows, Row{r.Name, yesNo(r.Enabled), yesNo(r.History), r.Properties.String(), int64(r.Volatility), nullString(r.Documentation)})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "setup_timers",
		columns: cols("NAME", ColString, "TIMER_NAME", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range s.timers.Rows() {
				rows = append(rows, Row{r.Name.String(), r.TimerName.String()})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "performance_timers",
		columns: cols("TIMER_NAME", ColString, "TIMER_FREQUENCY", ColUint, "TIMER_RESOLUTION", ColUint, "TIMER_OVERHEAD", ColUint),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, r := range hwclock.PerformanceTimers() {
				rows = append(rows, Row{r.Name.String(), r.Frequency, r.Resolution, r.Overhead})
			}
			return rows
		},
	})
}
