package pfscore

import "fmt"

// SetupThreadsRow is a row of setup_threads: a thread class and the
// INSTRUMENTED and HISTORY that threads of the class start with when no user
// decides it through setup_actors (background threads).
type SetupThreadsRow struct {
	Name          string     `pfs:"NAME,dim"`
	Enabled       bool       `pfs:"ENABLED,attr"`
	History       bool       `pfs:"HISTORY,attr"`
	Properties    Properties `pfs:"PROPERTIES,attr"`
	Volatility    int        `pfs:"VOLATILITY,attr"`
	Documentation string     `pfs:"DOCUMENTATION,text,null"`
}

// SetupThreads returns setup_threads: the registered thread classes.
func (s *Schema) SetupThreads() []SetupThreadsRow {
	var rows []SetupThreadsRow
	for _, c := range s.Classes() {
		if c.kind != KindThread {
			continue
		}
		f := c.flags.Load()
		rows = append(rows, SetupThreadsRow{
			Name:          c.name,
			Enabled:       f&flagSetEnabled != 0,
			History:       f&flagHistory != 0,
			Properties:    c.props,
			Volatility:    c.volatility,
			Documentation: c.doc,
		})
	}
	return rows
}

// UpdateThreads is UPDATE setup_threads SET ENABLED=…, HISTORY=… WHERE NAME
// LIKE pattern; nil leaves a column as it is. As in MySQL, it affects
// threads created afterwards, not running ones (use Thread.SetInstrumented
// and SetHistory for those). It returns the number of rows matched.
func (s *Schema) UpdateThreads(pattern string, enabled, history *bool) (int, error) {
	return s.updateClasses(pattern, func(c *Class) bool { return c.kind == KindThread }, threadsUpdate(enabled, history))
}

// threadsUpdate sets ENABLED and HISTORY, where not nil.
func threadsUpdate(enabled, history *bool) func(*Class, uint32) uint32 {
	return func(_ *Class, f uint32) uint32 {
		if enabled != nil {
			f = setBit(f, flagSetEnabled, *enabled)
		}
		if history != nil {
			f = setBit(f, flagHistory, *history)
		}
		return f
	}
}

// threadClassDefaults returns a thread class's ENABLED and HISTORY.
func threadClassDefaults(c *Class) (enabled, history bool) {
	if c.kind != KindThread {
		panic(fmt.Sprintf("pfs: BUG: %s is not a thread class", c.name))
	}
	f := c.flags.Load()
	return f&flagSetEnabled != 0, f&flagHistory != 0
}
