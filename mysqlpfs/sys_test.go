package mysqlpfs_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The sys views the issue names, each with its x$ twin.
var wantSysViews = []string{"statement_analysis", "waits_global_by_latency", "host_summary", "user_summary",
	"memory_global_by_current_bytes", "memory_by_thread_by_current_bytes"}

// Every sys view runs, and each listed one with its x$ twin exists.
func TestSysEveryView(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	_, rows := queryRows(t, db, "SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'sys' ORDER BY TABLE_NAME")
	var names []string
	for _, r := range rows {
		names = append(names, r[0])
	}
	for _, v := range wantSysViews {
		for _, n := range []string{v, "x$" + v} {
			if !slices.Contains(names, n) {
				t.Errorf("sys.%s missing; views: %v", n, names)
			}
		}
	}
	if len(names) < 40 {
		t.Errorf("%d sys views, want at least 40: %v", len(names), names)
	}
	for _, n := range names {
		cols, _ := queryRows(t, db, "SELECT * FROM sys.`"+n+"`")
		if len(cols) == 0 {
			t.Errorf("sys.%s: no columns", n)
		}
	}
}

// viewRows returns the rows of sys.view where its first column is key.
func viewRows(t *testing.T, f *fixture, q string) [][]string {
	t.Helper()
	_, rows := queryRows(t, f.db(t), q)
	return rows
}

func TestSysWaitsGlobalByLatency(t *testing.T) {
	f := newFixture(t)
	rows := viewRows(t, f, "SELECT events, total FROM sys.waits_global_by_latency WHERE events LIKE 'wait/synch/mutex/app/%' ORDER BY events")
	if want := [][]string{{"wait/synch/mutex/app/cache", "3"}, {"wait/synch/mutex/app/queue", "2"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("waits_global_by_latency %v, want %v", rows, want)
	}
	// The formatted view has units; x$ has the picoseconds of the table.
	raw := viewRows(t, f, "SELECT w.total_latency = s.SUM_TIMER_WAIT FROM sys.`x$waits_global_by_latency` w JOIN performance_schema.events_waits_summary_global_by_event_name s ON s.EVENT_NAME = w.events WHERE w.events = 'wait/synch/mutex/app/cache'")
	if want := [][]string{{"1"}}; !reflect.DeepEqual(raw, want) {
		t.Errorf("x$ total_latency = SUM_TIMER_WAIT: %v", raw)
	}
	fmtd := viewRows(t, f, "SELECT total_latency FROM sys.waits_global_by_latency WHERE events = 'wait/synch/mutex/app/cache'")
	if len(fmtd) != 1 || !strings.HasSuffix(fmtd[0][0], "s") {
		t.Errorf("formatted total_latency %v, want a number and a unit", fmtd)
	}
}

func TestSysStatementAnalysis(t *testing.T) {
	f := newFixture(t)
	rows := viewRows(t, f, "SELECT query, db, exec_count, rows_sent, rows_sent_avg FROM sys.statement_analysis")
	want := [][]string{{"SELECT * FROM `orders` WHERE `id` = ?", "shop", "2", "2", "1"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("statement_analysis %q, want %q", rows, want)
	}
}

func TestSysUserAndHostSummary(t *testing.T) {
	f := newFixture(t)
	rows := viewRows(t, f, "SELECT user, statements, current_connections, unique_hosts FROM sys.user_summary WHERE user = 'app'")
	if want := [][]string{{"app", "2", "1", "1"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("user_summary %v, want %v", rows, want)
	}
	rows = viewRows(t, f, "SELECT host, statements, current_connections, unique_users FROM sys.`x$host_summary` WHERE host = 'localhost'")
	if want := [][]string{{"localhost", "2", "1", "1"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("x$host_summary %v, want %v", rows, want)
	}
}

func TestSysMemory(t *testing.T) {
	f := newFixture(t)
	// The schema's own containers are memory it holds.
	rows := viewRows(t, f, "SELECT COUNT(*) > 0, MIN(current_alloc) > 0 FROM sys.`x$memory_global_by_current_bytes` WHERE event_name LIKE 'memory/performance_schema/%'")
	if want := [][]string{{"1", "1"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("x$memory_global_by_current_bytes: %v", rows)
	}
	rows = viewRows(t, f, "SELECT user FROM sys.memory_by_thread_by_current_bytes WHERE thread_id = "+
		viewRows(t, f, "SELECT THREAD_ID FROM performance_schema.threads WHERE NAME = 'thread/app/worker'")[0][0])
	if len(rows) > 1 || len(rows) == 1 && rows[0][0] != "app@localhost" {
		t.Errorf("memory_by_thread_by_current_bytes: %v, want app@localhost or no row", rows)
	}
}

func TestSysProcesslist(t *testing.T) {
	f := newFixture(t)
	rows := viewRows(t, f, "SELECT user, last_wait, last_wait_latency, last_statement FROM sys.processlist WHERE user = 'app@localhost'")
	want := [][]string{{"app@localhost", "wait/synch/mutex/app/queue", "Still Waiting", "NULL"}}
	if len(rows) != 1 || !reflect.DeepEqual(rows[0][:3], want[0][:3]) {
		t.Errorf("processlist %q, want %q", rows, want)
	}
}
