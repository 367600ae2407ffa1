package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// setupValue reads column col of the row of a setup table whose first
// column is key.
func setupValue(t *testing.T, s *pfscore.Schema, table, key, col string) any {
	t.Helper()
	res, err := s.Select(table)
	if err != nil {
		t.Fatal(err)
	}
	ci := -1
	for i, c := range res.Columns {
		if c.Name == col {
			ci = i
		}
	}
	for _, r := range res.Rows {
		if r[0] == key {
			return r[ci]
		}
	}
	return nil
}

func TestSetupChanges(t *testing.T) {
	svc := startService(t, exporter.WithSetupChanges(true))
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"instruments", "name=wait/synch/mutex/pfs/%", "enabled=no"}, "setup_instruments: 1 row matched"},
		{[]string{"setup_consumers", "name=events_waits_%", "enabled=on"}, "setup_consumers: 3 rows matched"},
		{[]string{"threads", "name=thread/pfs/%", "history=no"}, "setup_threads: 1 row matched"},
		{[]string{"timers", "name=wait", "timer_name=MILLISECOND"}, "setup_timers: 1 row matched, timer MILLISECOND"},
		{[]string{"actors", "op=insert", "user=batch", "history=no"}, "setup_actors: insert 1 row matched"},
		{[]string{"objects", `{"op":"delete","object_type":"SOCKET"}`}, "setup_objects: delete 1 row matched"},
	} {
		code, out, errs := pfs(t, append([]string{"setup", "--addr", svc.addr}, tc.args...)...)
		if code != 0 || strings.TrimSpace(out) != tc.out {
			t.Errorf("pfs setup %v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errs, tc.out)
		}
	}
	if v := setupValue(t, svc.s, "setup_instruments", testMutex, "ENABLED"); v != "NO" {
		t.Errorf("%s ENABLED = %v", testMutex, v)
	}
	// The change took effect at once: the mutex no longer counts.
	before := countStar(t, svc.s)
	svc.work(5)
	if after := countStar(t, svc.s); after != before {
		t.Errorf("disabled mutex counted: %d -> %d", before, after)
	}
	if v := setupValue(t, svc.s, "setup_consumers", "events_waits_history_long", "ENABLED"); v != "YES" {
		t.Errorf("events_waits_history_long ENABLED = %v", v)
	}
	if v := setupValue(t, svc.s, "setup_timers", "wait", "TIMER_NAME"); v != "MILLISECOND" {
		t.Errorf("setup_timers wait = %v", v)
	}

	// The body from standard input, the answer as JSON.
	var out, errb bytes.Buffer
	code := run([]string{"setup", "--addr", svc.addr, "--json", "instruments", "-"},
		strings.NewReader(`{"name":"wait/synch/mutex/pfs/%","enabled":true}`), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), `"rows_matched":1`) {
		t.Errorf("from stdin: exit %d %s %s", code, out.String(), errb.String())
	}
	if v := setupValue(t, svc.s, "setup_instruments", testMutex, "ENABLED"); v != "YES" {
		t.Errorf("%s ENABLED = %v after re-enabling", testMutex, v)
	}
}

func countStar(t *testing.T, s *pfscore.Schema) uint64 {
	t.Helper()
	res, _ := s.Select("events_waits_summary_global_by_event_name")
	for _, r := range res.Rows {
		if r[0] == testMutex {
			return r[1].(uint64)
		}
	}
	t.Fatalf("no row for %s", testMutex)
	return 0
}

func TestSetupErrors(t *testing.T) {
	svc := startService(t, exporter.WithSetupChanges(true))
	readOnly := startService(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"setup", "--addr", readOnly.addr, "instruments", "name=%", "enabled=no"}, 1, "changes are disabled"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "name=%"}, 1, "nothing to change"},
		{[]string{"setup", "--addr", svc.addr, "timers", "name=wait", "timer_name=SUNDIAL"}, 1, "SUNDIAL"},
		{[]string{"setup", "--addr", svc.addr, "actors", "op=insert"}, 1, "duplicate row"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "name=%", "colour=red"}, 1, `unknown field "colour"`},
		{[]string{"setup", "--addr", svc.addr}, 2, "which table?"},
		{[]string{"setup", "--addr", svc.addr, "widgets", "name=%"}, 2, `unknown setup table "widgets"`},
		{[]string{"setup", "--addr", svc.addr, "instruments"}, 2, "nothing to change"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "name"}, 2, "want key=value"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "name=%", "enabled=maybe"}, 2, "want yes or no"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "name=%", "name=x"}, 2, "given twice"},
		{[]string{"setup", "--addr", svc.addr, "instruments", "{not json"}, 2, "not valid JSON"},
		{[]string{"setup", "-h"}, 0, "usage: pfs setup"},
	} {
		code, _, errs := pfs(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("pfs %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	if v := setupValue(t, readOnly.s, "setup_instruments", testMutex, "ENABLED"); v != "YES" {
		t.Errorf("a refused change changed %s: ENABLED = %v", testMutex, v)
	}
}
