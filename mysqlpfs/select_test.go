package mysqlpfs_test

import (
	"reflect"
	"testing"
)

func TestSelectWhereOrder(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	cols, rows := queryRows(t, db, `SELECT EVENT_NAME, COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name
		WHERE EVENT_NAME LIKE 'WAIT/synch/mutex/app/%' ORDER BY COUNT_STAR DESC, EVENT_NAME`)
	if want := []string{"EVENT_NAME", "COUNT_STAR"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
	want := [][]string{{"wait/synch/mutex/app/cache", "3"}, {"wait/synch/mutex/app/queue", "2"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

func TestSelectGroupBy(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	_, rows := queryRows(t, db, `SELECT SUBSTRING_INDEX(EVENT_NAME, '/', 3) AS cls, SUM(COUNT_STAR) AS n, COUNT(*) AS names
		FROM events_waits_summary_global_by_event_name
		WHERE EVENT_NAME LIKE 'wait/synch/%' GROUP BY cls ORDER BY cls`)
	want := [][]string{{"wait/synch/mutex", "5", "2"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

// A join of threads with their current waits: the worker is waiting on
// the queue.
func TestSelectJoinThreadsCurrentWaits(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	_, rows := queryRows(t, db, `SELECT t.NAME, t.PROCESSLIST_USER, w.EVENT_NAME, w.OPERATION, w.END_EVENT_ID IS NULL AS waiting
		FROM performance_schema.threads t
		JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID
		WHERE t.NAME = 'thread/app/worker'`)
	want := [][]string{{"thread/app/worker", "app", "wait/synch/mutex/app/queue", "lock", "1"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

// Column types: TIMER_* are BIGINT UNSIGNED, strings VARCHAR or TEXT, and
// NULL is NULL.
func TestColumnTypes(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	rows, err := db.Query("SELECT EVENT_NAME, SUM_TIMER_WAIT, COUNT_STAR FROM events_waits_summary_global_by_event_name LIMIT 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range types {
		got = append(got, ct.DatabaseTypeName())
	}
	if want := []string{"VARCHAR", "UNSIGNED BIGINT", "UNSIGNED BIGINT"}; !reflect.DeepEqual(got, want) {
		t.Errorf("types %v, want %v", got, want)
	}
	_, nulls := queryRows(t, db, "SELECT TIMED, DOCUMENTATION FROM setup_instruments WHERE NAME = 'thread/app/worker'")
	if want := [][]string{{"NULL", "NULL"}}; !reflect.DeepEqual(nulls, want) {
		t.Errorf("a thread class's TIMED and DOCUMENTATION: %v, want %v", nulls, want)
	}
}

// Every pfscore table is a table of performance_schema, with its
// columns in order.
func TestEveryTable(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	cat, _ := f.s.Catalog()
	_, rows := queryRows(t, db, "SHOW TABLES FROM performance_schema")
	if len(rows) != len(cat) {
		t.Errorf("SHOW TABLES: %d tables, want %d", len(rows), len(cat))
	}
	for _, ti := range cat {
		cols, _ := queryRows(t, db, "SELECT * FROM performance_schema."+ti.Name+" LIMIT 1")
		if len(cols) != len(ti.Columns) {
			t.Errorf("%s: %d columns, want %d", ti.Name, len(cols), len(ti.Columns))
			continue
		}
		for i, c := range ti.Columns {
			if cols[i] != c.Name {
				t.Errorf("%s: column %d is %s, want %s", ti.Name, i, cols[i], c.Name)
			}
		}
	}
}

func TestSysFunctions(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	_, rows := queryRows(t, db, `SELECT sys.format_pico_time(999), format_pico_time(3501), sys.format_pico_time(188732396662000),
		format_pico_time(NULL), sys.format_bytes(1023), format_bytes(2048), sys.format_bytes(-1572864),
		sys.format_statement('SELECT a, b, c FROM some_table WHERE x = 1 AND y = 2 AND z IN (1, 2, 3, 4, 5, 6)'),
		sys.format_statement('SELECT 1'), sys.ps_thread_id(12345), sys.format_time(1000000)`)
	want := [][]string{{"999 ps", "3.50 ns", "3.15 min", "NULL", "1023 bytes", "2.00 KiB", "-1.50 MiB",
		"SELECT a, b, c FROM some_table ...  2 AND z IN (1, 2, 3, 4, 5, 6)",
		"SELECT 1", "NULL", "1.00 us"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%q\nwant\n%q", rows, want)
	}
}
