package pfscore

import "maps"

// maxDBSystems bounds the namespaces SetDBSystem remembers.
const maxDBSystems = 256

// SetDBSystem records that the statements run in CURRENT_SCHEMA namespace
// go to a database of kind system, as OpenTelemetry's db.system.name names
// it (mysql, postgresql, sqlite, ...): a database wrapper that knows its
// driver (instrument/pfssql) says so when it opens a database, and
// exporters name the statements' spans and metrics with it. MySQL's tables
// do not show it. A later call for the same namespace replaces the kind;
// past 256 namespaces, new ones are not kept.
func (s *Schema) SetDBSystem(namespace, system string) {
	if system == "" {
		return
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	old := s.dbSystems.Load()
	if old != nil && ((*old)[namespace] == system || len(*old) >= maxDBSystems) {
		return
	}
	m := map[string]string{}
	if old != nil {
		m = maps.Clone(*old)
	}
	m[namespace] = system
	s.dbSystems.Store(&m)
}

// DBSystem returns the kind of database SetDBSystem recorded for
// namespace, "" if none.
func (s *Schema) DBSystem(namespace string) string {
	if m := s.dbSystems.Load(); m != nil {
		return (*m)[namespace]
	}
	return ""
}
