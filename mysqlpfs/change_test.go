package mysqlpfs_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// An UPDATE of setup_instruments takes effect at once: the next wait on
// the disabled class is not counted, and the setup table says so.
func TestUpdateSetupInstrumentsTakesEffect(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	db := f.db(t)
	res, err := db.Exec("UPDATE performance_schema.setup_instruments SET ENABLED = 'NO' WHERE NAME LIKE 'wait/synch/mutex/app/%'")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("rows affected %d, want 2", n)
	}
	var w pfscore.WaitState
	if f.cache.BeginWait(&w, f.worker, pfscore.OpLock) {
		w.EndWait(-1)
		t.Error("a wait on a class just disabled over SQL began")
	}
	_, rows := queryRows(t, db, "SELECT NAME, ENABLED, TIMED FROM setup_instruments WHERE NAME LIKE 'wait/synch/mutex/app/%' ORDER BY NAME")
	want := [][]string{{"wait/synch/mutex/app/cache", "NO", "YES"}, {"wait/synch/mutex/app/queue", "NO", "YES"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("setup_instruments %v, want %v", rows, want)
	}
	// And back on, by another column's predicate.
	if _, err := db.Exec("UPDATE setup_instruments SET ENABLED = 'YES', TIMED = 'NO' WHERE NAME = 'wait/synch/mutex/app/cache'"); err != nil {
		t.Fatal(err)
	}
	if !f.cache.BeginWait(&w, f.worker, pfscore.OpLock) {
		t.Fatal("a wait on a class enabled again over SQL did not begin")
	}
	w.EndWait(-1)
	_, rows = queryRows(t, db, "SELECT COUNT_STAR FROM events_waits_summary_global_by_event_name WHERE EVENT_NAME = 'wait/synch/mutex/app/cache'")
	if want := [][]string{{"4"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("COUNT_STAR %v, want %v", rows, want)
	}
}

func TestUpdateConsumersThreadsTimers(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	db := f.db(t)
	for _, q := range []string{
		"UPDATE setup_consumers SET ENABLED = 'NO' WHERE NAME = 'events_waits_history_long'",
		"UPDATE threads SET HISTORY = 'NO' WHERE NAME = 'thread/app/worker'",
		"UPDATE setup_timers SET TIMER_NAME = 'NANOSECOND' WHERE NAME = 'wait'",
		"UPDATE setup_threads SET ENABLED = 'NO' WHERE NAME = 'thread/app/worker'",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	_, rows := queryRows(t, db, `SELECT
		(SELECT ENABLED FROM setup_consumers WHERE NAME = 'events_waits_history_long'),
		(SELECT HISTORY FROM threads WHERE NAME = 'thread/app/worker'),
		(SELECT TIMER_NAME FROM setup_timers WHERE NAME = 'wait'),
		(SELECT ENABLED FROM setup_threads WHERE NAME = 'thread/app/worker')`)
	if want := [][]string{{"NO", "NO", "NANOSECOND", "NO"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("after the updates: %v, want %v", rows, want)
	}
}

func TestInsertDeleteSetupActors(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	db := f.db(t)
	if _, err := db.Exec("DELETE FROM setup_actors"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO setup_actors (HOST, USER, ROLE, ENABLED, HISTORY) VALUES ('localhost', 'app', '%', 'YES', 'NO'), ('%', 'batch', '%', 'NO', 'NO')"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec("INSERT INTO setup_actors (HOST, USER, ROLE) VALUES ('localhost', 'app', '%')")
	wantErr(t, "a duplicate INSERT", err, mysqlpfs.ErDupEntry)
	res, err := db.Exec("DELETE FROM setup_actors WHERE USER = 'batch'")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("DELETE affected %d rows, want 1", n)
	}
	_, rows := queryRows(t, db, "SELECT HOST, USER, ROLE, ENABLED, HISTORY FROM setup_actors")
	if want := [][]string{{"localhost", "app", "%", "YES", "NO"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("setup_actors %v, want %v", rows, want)
	}
	// Only the column defaults: MySQL's are '%' and YES.
	if _, err := db.Exec("INSERT INTO setup_objects (OBJECT_TYPE, OBJECT_SCHEMA) VALUES ('FILE', '/tmp')"); err != nil {
		t.Fatal(err)
	}
	_, rows = queryRows(t, db, "SELECT OBJECT_NAME, ENABLED, TIMED FROM setup_objects WHERE OBJECT_TYPE = 'FILE' AND OBJECT_SCHEMA = '/tmp'")
	if want := [][]string{{"%", "YES", "YES"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("setup_objects defaults %v, want %v", rows, want)
	}
}

func TestTruncate(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	db := f.db(t)
	for _, q := range []string{"TRUNCATE TABLE performance_schema.events_waits_summary_global_by_event_name", "TRUNCATE events_waits_history_long"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, rows := queryRows(t, db, `SELECT
		(SELECT SUM(COUNT_STAR) FROM events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE 'wait/synch/mutex/app/%'),
		(SELECT COUNT(*) FROM events_waits_history_long)`)
	if want := [][]string{{"0", "0"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("after TRUNCATE: %v, want %v", rows, want)
	}
}

// Refusals, with MySQL's error numbers.
func TestRefusals(t *testing.T) {
	ro := newFixture(t)
	rw := newFixture(t, mysqlpfs.WithSetupChanges(true))
	var dbs map[*fixture]*sql.DB
	disabled := func() string {
		_, rows := queryRows(t, dbs[ro], "SELECT COUNT(*) FROM setup_instruments WHERE ENABLED = 'NO'")
		return rows[0][0]
	}
	dbs = map[*fixture]*sql.DB{ro: ro.db(t), rw: rw.db(t)}
	before := disabled()
	outfile := filepath.Join(t.TempDir(), "outfile")
	for _, c := range []struct {
		f    *fixture
		q    string
		code uint16
	}{
		{ro, "UPDATE setup_instruments SET ENABLED = 'NO'", mysqlpfs.ErTableAccessDenied},
		{ro, "UPDATE setup_instruments SET ENABLED = 'NO' WHERE NAME = 'no/such/instrument'", mysqlpfs.ErTableAccessDenied},
		{ro, "TRUNCATE TABLE events_waits_history", mysqlpfs.ErTableAccessDenied},
		{ro, "INSERT INTO setup_actors (HOST, USER, ROLE) VALUES ('h', 'u', '%')", mysqlpfs.ErTableAccessDenied},
		{ro, "DELETE FROM setup_objects WHERE OBJECT_TYPE = 'nothing'", mysqlpfs.ErTableAccessDenied},
		{rw, "UPDATE events_waits_current SET OPERATION = 'x'", mysqlpfs.ErTableAccessDenied},
		{rw, "UPDATE setup_instruments SET NAME = 'x' WHERE NAME = 'wait/synch/mutex/app/cache'", mysqlpfs.ErWrongPerfschemaUsage},
		{rw, "UPDATE setup_instruments SET ENABLED = 'MAYBE' WHERE NAME = 'wait/synch/mutex/app/cache'", mysqlpfs.ErWarnDataTruncated},
		{rw, "UPDATE setup_timers SET TIMER_NAME = 'SUNDIAL'", mysqlpfs.ErWarnDataTruncated},
		{rw, "INSERT INTO setup_instruments (NAME) VALUES ('x')", mysqlpfs.ErTableAccessDenied},
		{rw, "DELETE FROM events_waits_history", mysqlpfs.ErTableAccessDenied},
		{rw, "DELETE FROM threads WHERE THREAD_ID = 0", mysqlpfs.ErTableAccessDenied},
		{rw, "TRUNCATE TABLE setup_instruments", mysqlpfs.ErTableAccessDenied},
		{rw, "SELECT * FROM performance_schema.no_such_table", 1146},
		{rw, "SELECT * FROM no_such_db.t", 1044},
		{rw, "USE mysql", 1044},
		{rw, "SELECT LOAD_FILE('/etc/hostname') IS NOT NULL", mysqlpfs.ErSpecificAccessDenied},
		{rw, "SELECT 1 INTO OUTFILE '" + outfile + "'", mysqlpfs.ErSpecificAccessDenied},
		{rw, "SELECT 1 INTO DUMPFILE '" + outfile + "'", mysqlpfs.ErSpecificAccessDenied},
		{rw, "LOAD DATA INFILE '/etc/hostname' INTO TABLE setup_actors", mysqlpfs.ErTableAccessDenied},
		{rw, "DROP DATABASE performance_schema", mysqlpfs.ErTableAccessDenied},
		{rw, "DROP VIEW sys.version", mysqlpfs.ErTableAccessDenied},
		{rw, "ALTER TABLE setup_actors ADD COLUMN x INT", mysqlpfs.ErTableAccessDenied},
		{rw, "SELECT * FROM mysql.user", 1044},
		{rw, "CREATE TABLE performance_schema.t (a INT)", mysqlpfs.ErTableAccessDenied},
		{rw, "CREATE DATABASE mine", mysqlpfs.ErTableAccessDenied},
		{rw, "DROP TABLE performance_schema.threads", mysqlpfs.ErTableAccessDenied},
		{rw, "CREATE VIEW sys.mine AS SELECT 1", mysqlpfs.ErTableAccessDenied},
		{rw, "SET GLOBAL max_connections = 1", 1227},
	} {
		_, err := dbs[c.f].Exec(c.q)
		wantErr(t, c.q, err, c.code)
	}
	if _, err := os.Stat(outfile); err == nil {
		t.Errorf("SELECT ... INTO wrote %s", outfile)
	}
	// Nothing changed.
	if after := disabled(); after != before {
		t.Errorf("refused statements changed the disabled instruments from %s to %s", before, after)
	}
	// A session's own variables it may set.
	for _, q := range []string{"SET SESSION sql_select_limit = 10", "SET @@sql_select_limit = DEFAULT", "SET NAMES utf8mb4", "SET @mine = 1"} {
		if _, err := dbs[rw].Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestBadPassword(t *testing.T) {
	f := newFixture(t)
	for _, c := range [][2]string{{"pfs", "wrong"}, {"pfs", ""}, {"root", ""}, {"nobody", testPassword}} {
		db := must(sqlOpen(f.dsn(c[0], c[1])))
		err := db.Ping()
		db.Close()
		wantErr(t, c[0]+"/"+c[1], err, 1045)
	}
}
