package mysqlpfs_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A fixture is a schema with known events, served by a Server.
type fixture struct {
	s      *pfscore.Schema
	srv    *mysqlpfs.Server
	cache  *pfscore.SyncInstance
	worker *pfscore.Thread
	// busy is a wait in progress on worker: its events_waits_current row.
	busy pfscore.WaitState
}

const testPassword = "s3cret"

// newFixture builds a schema: thread/app/worker (user app@localhost) with
// 3 ended waits on wait/synch/mutex/app/cache, 2 on .../queue and one on
// the queue still in progress, and two statements; it serves it with opts
// (after the test account pfs/s3cret) and closes everything at the end.
func newFixture(t testing.TB, opts ...mysqlpfs.Option) *fixture {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update("setup_consumers", nil, map[string]pfscore.Value{"ENABLED": "YES"}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s}
	f.cache = s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:12")
	queue := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/queue"), "queue.go:40")
	s.MustRegister("wait/io/file/app/log")
	s.MustRegister("memory/app/buffers")
	f.worker = s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "app", Host: "localhost"})
	for i := range 5 {
		m := f.cache
		if i%2 == 1 {
			m = queue
		}
		var w pfscore.WaitState
		if m.BeginWait(&w, f.worker, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}
	for _, q := range []string{"SELECT * FROM orders WHERE id = 1", "SELECT * FROM orders WHERE id = 2"} {
		st := s.StartSQL(f.worker, pfscore.StatementInfo{Text: q, Schema: "shop"})
		st.End(pfscore.StatementResult{RowsSent: 1, RowsExamined: 1})
	}
	if !queue.BeginWait(&f.busy, f.worker, pfscore.OpLock) {
		t.Fatal("the queue's wait did not start")
	}
	all := append([]mysqlpfs.Option{mysqlpfs.WithUser("pfs", testPassword)}, opts...)
	f.srv, err = mysqlpfs.Listen("127.0.0.1:0", s, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.busy.EndWait(-1)
		f.srv.Close()
		f.worker.End()
	})
	return f
}

// dsn returns a go-sql-driver DSN for the fixture's server.
func (f *fixture) dsn(user, password string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr = "tcp", f.srv.Addr()
	cfg.DBName = "performance_schema"
	return cfg.FormatDSN()
}

// db opens the fixture's server as the test account.
func (f *fixture) db(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", f.dsn("pfs", testPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryRows runs q and returns its rows as strings ("NULL" for NULL).
func queryRows(t testing.TB, db *sql.DB, q string, args ...any) (cols []string, out [][]string) {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err = rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

// mysqlErr returns err's MySQL error number, or 0.
func mysqlErr(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// wantErr checks that err is MySQL error code.
func wantErr(t testing.TB, what string, err error, code uint16) {
	t.Helper()
	if got := mysqlErr(err); got != code {
		t.Errorf("%s: error %v (code %d), want code %d", what, err, got, code)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint("must: ", err))
	}
	return v
}

func sqlOpen(dsn string) (*sql.DB, error) { return sql.Open("mysql", dsn) }
