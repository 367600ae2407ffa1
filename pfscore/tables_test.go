package pfscore

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

// The Tables side: the catalog, and setup changes as UPDATE, INSERT and
// DELETE with WHERE clauses.

func TestCatalog(t *testing.T) {
	s := newTestSchema(t)
	cat, err := s.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(cat) != len(s.TableNames()) {
		t.Fatalf("%d catalog entries for %d tables", len(cat), len(s.TableNames()))
	}
	byName := map[string]TableInfo{}
	for _, ti := range cat {
		byName[ti.Name] = ti
		cols, _ := s.Columns(ti.Name)
		if !slices.Equal(cols, ti.Columns) || ti.Truncatable != s.Truncatable(ti.Name) {
			t.Errorf("%s: catalog entry disagrees with Columns/Truncatable", ti.Name)
		}
	}
	for name, want := range map[string][]string{
		"setup_instruments": {"ENABLED", "TIMED"},
		"setup_consumers":   {"ENABLED"},
		"setup_threads":     {"ENABLED", "HISTORY"},
		"setup_timers":      {"TIMER_NAME"},
		"setup_actors":      {"ENABLED", "HISTORY"},
		"setup_objects":     {"ENABLED", "TIMED"},
		"threads":           {"INSTRUMENTED", "HISTORY"},
	} {
		if got := byName[name].Updatable; !slices.Equal(got, want) {
			t.Errorf("%s: updatable %v, want %v", name, got, want)
		}
	}
	if !byName["setup_actors"].Insertable || !byName["setup_objects"].Insertable || byName["setup_instruments"].Insertable {
		t.Error("Insertable is wrong")
	}
}

func TestUpdateSetupInstruments(t *testing.T) {
	s := newTestSchema(t)
	a := s.MustRegister("wait/synch/mutex/app/a_b")
	b := s.MustRegister("wait/synch/mutex/app/axb") // LIKE 'a_b' would match it; '=' must not
	n, err := s.Update("setup_instruments", []string{"NAME = " + QuoteString(a.Name())}, map[string]Value{"enabled": "NO", "TIMED": false})
	if err != nil || n != 1 {
		t.Fatalf("Update = %d, %v", n, err)
	}
	if a.Enabled() || !b.Enabled() {
		t.Errorf("after UPDATE: a enabled %v, b enabled %v", a.Enabled(), b.Enabled())
	}
	n, err = s.Update("setup_instruments", []string{"NAME LIKE 'wait/synch/mutex/app/%'", "ENABLED = 'NO'"}, map[string]Value{"ENABLED": "YES"})
	if err != nil || n != 1 || !a.Enabled() {
		t.Fatalf("Update where ENABLED='NO' = %d, %v; a enabled %v", n, err, a.Enabled())
	}
	for _, tc := range []struct {
		table string
		set   map[string]Value
		want  error
	}{
		{"setup_instruments", map[string]Value{"NAME": "x"}, ErrNotUpdatable},
		{"setup_instruments", map[string]Value{"NOPE": "x"}, ErrBadValue},
		{"setup_instruments", map[string]Value{"ENABLED": "maybe"}, ErrBadValue},
		{"setup_instruments", map[string]Value{"ENABLED": uint64(1)}, ErrBadValue},
		{"setup_instruments", map[string]Value{}, ErrBadValue},
		{"events_waits_current", map[string]Value{"EVENT_ID": uint64(1)}, ErrNotUpdatable},
		{"no_such_table", map[string]Value{"X": "Y"}, ErrUnknownTable},
	} {
		if _, err := s.Update(tc.table, nil, tc.set); !errors.Is(err, tc.want) {
			t.Errorf("Update(%s, %v) = %v, want %v", tc.table, tc.set, err, tc.want)
		}
	}
	if _, err := s.Update("setup_instruments", []string{"NAME ="}, map[string]Value{"ENABLED": "NO"}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("bad where: %v", err)
	}
}

func TestUpdateConsumersThreadsTimers(t *testing.T) {
	s := newTestSchema(t)
	if n, err := s.Update("setup_consumers", []string{"NAME LIKE 'events_waits_history%'"}, map[string]Value{"ENABLED": "YES"}); err != nil || n != 2 {
		t.Fatalf("consumers: %d, %v", n, err)
	}
	if !s.ConsumerEnabled(ConsumerEventsWaitsHistory) || !s.ConsumerEnabled(ConsumerEventsWaitsHistoryLong) {
		t.Error("history consumers still off")
	}
	tc := s.MustRegister("thread/app/worker")
	if n, err := s.Update("setup_threads", []string{"NAME = 'thread/app/worker'"}, map[string]Value{"HISTORY": "NO"}); err != nil || n != 1 {
		t.Fatalf("setup_threads: %d, %v", n, err)
	}
	if _, history := threadClassDefaults(tc); history {
		t.Error("thread class HISTORY still YES")
	}
	if n, err := s.Update("setup_timers", []string{"NAME = 'wait'"}, map[string]Value{"TIMER_NAME": "NANOSECOND"}); err != nil || n != 1 {
		t.Fatalf("setup_timers: %d, %v", n, err)
	}
	res, _ := s.Query("setup_timers", Query{Where: []string{"NAME = 'wait'"}})
	if len(res.Rows) != 1 || res.Rows[0][1] != "NANOSECOND" {
		t.Errorf("setup_timers after UPDATE: %v", res.Rows)
	}
	if _, err := s.Update("setup_timers", []string{"NAME = 'wait'"}, map[string]Value{"TIMER_NAME": "SUNDIAL"}); err == nil {
		t.Error("unknown timer accepted")
	}

	th := s.NewThread(tc, ThreadOptions{})
	defer th.End()
	if n, err := s.Update("threads", []string{"THREAD_ID = " + uintString(th.ID())}, map[string]Value{"INSTRUMENTED": "NO"}); err != nil || n != 1 {
		t.Fatalf("threads: %d, %v", n, err)
	}
	if th.Instrumented() {
		t.Error("thread still instrumented")
	}
}

func uintString(v uint64) string { return strconv.FormatUint(v, 10) }

func TestInsertDeleteSetupActorsObjects(t *testing.T) {
	s := newTestSchema(t)
	if err := s.Insert("setup_actors", map[string]Value{"HOST": "web1", "USER": "alice", "HISTORY": "NO"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert("setup_actors", map[string]Value{"host": "web1", "user": "alice"}); !errors.Is(err, ErrDuplicateRow) {
		t.Errorf("duplicate insert: %v", err)
	}
	rows := s.SetupActors()
	if i := slices.IndexFunc(rows, func(r SetupActorsRow) bool { return r.User == "alice" }); i < 0 ||
		rows[i] != (SetupActorsRow{Host: "web1", User: "alice", Role: "%", Enabled: true, History: false}) {
		t.Errorf("setup_actors = %+v", rows)
	}
	if n, err := s.Update("setup_actors", []string{"USER = 'alice'"}, map[string]Value{"ENABLED": "NO"}); err != nil || n != 1 {
		t.Fatalf("update: %d, %v", n, err)
	}
	if n, err := s.Delete("setup_actors", []string{"USER = 'alice'"}); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	if len(s.SetupActors()) != 1 {
		t.Errorf("after DELETE: %+v", s.SetupActors())
	}

	if err := s.Insert("setup_objects", map[string]Value{"OBJECT_TYPE": "FILE", "OBJECT_NAME": "/var/log/%", "TIMED": "NO"}); err != nil {
		t.Fatal(err)
	}
	// OBJECT_TYPE defaults to TABLE, as in MySQL; a bad one is refused.
	if err := s.Insert("setup_objects", map[string]Value{"OBJECT_SCHEMA": "db", "OBJECT_NAME": "x"}); err != nil {
		t.Errorf("insert without OBJECT_TYPE: %v", err)
	} else if res, _ := s.Query("setup_objects", Query{Where: []string{"OBJECT_SCHEMA = 'db'"}}); len(res.Rows) != 1 || res.Rows[0][0] != "TABLE" {
		t.Errorf("inserted row: %v", res.Rows)
	}
	if err := s.Insert("setup_objects", map[string]Value{"OBJECT_TYPE": "VIEW"}); !errors.Is(err, ErrBadValue) {
		t.Errorf("insert of OBJECT_TYPE VIEW: %v", err)
	}
	if err := s.Insert("setup_objects", map[string]Value{"OBJECT_TYPE": "FILE", "object_type": "SOCKET"}); !errors.Is(err, ErrBadValue) {
		t.Errorf("a column named twice: %v", err)
	}
	if n, err := s.Delete("setup_objects", []string{"OBJECT_TYPE = 'FILE'", "OBJECT_NAME = '/var/log/%'"}); err != nil || n != 1 {
		t.Fatalf("delete object: %d, %v", n, err)
	}
	if err := s.Insert("setup_instruments", map[string]Value{"NAME": "x"}); !errors.Is(err, ErrNotInsertable) {
		t.Errorf("insert into setup_instruments: %v", err)
	}
	if _, err := s.Delete("threads", nil); !errors.Is(err, ErrNotInsertable) {
		t.Errorf("delete from threads: %v", err)
	}
}

func TestParseFlag(t *testing.T) {
	for v, want := range map[string]bool{"YES": true, "on": true, " True ": true, "y": true, "1": true, "no": false, "OFF": false, "false": false, "N": false, "0": false} {
		if got, err := ParseFlag(v); err != nil || got != want {
			t.Errorf("ParseFlag(%q) = %v, %v", v, got, err)
		}
	}
	if _, err := ParseFlag("maybe"); !errors.Is(err, ErrBadValue) {
		t.Errorf("ParseFlag(maybe) = %v", err)
	}
}
