package mysqlpfs_test

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// demoClasses are the instrument classes of examples/demo.
var demoClasses = []string{
	"wait/synch/mutex/demo/note_cache", "wait/synch/mutex/demo/journal", "wait/synch/rwlock/demo/config",
	"wait/io/file/demo/journal", "wait/io/socket/demo/api_listener", "wait/io/socket/demo/api_connection",
}

// BenchmarkSQLEndpointSelect is SELECT * FROM
// performance_schema.events_waits_summary_global_by_event_name over the
// wire (go-sql-driver/mysql, one connection, every row scanned), against
// a schema with the demo's classes, and one with a thousand more wait
// classes; rows/op is the table's row count. Budget: under 20 ms.
func BenchmarkSQLEndpointSelect(b *testing.B) {
	for _, extra := range []int{0, 1000} {
		b.Run(fmt.Sprintf("classes=demo+%d", extra), func(b *testing.B) {
			s, err := pfscore.New(pfscore.WithoutEnvironment())
			if err != nil {
				b.Fatal(err)
			}
			th := s.NewThread(s.MustRegister("thread/demo/worker"), pfscore.ThreadOptions{User: "demo", Host: "localhost"})
			defer th.End()
			names := append([]string(nil), demoClasses...)
			for i := range extra {
				names = append(names, fmt.Sprintf("wait/synch/mutex/bench/m%04d", i))
			}
			for _, n := range names {
				if c, err := s.Register(n); err == nil && (c.Kind() == pfscore.KindMutex || c.Kind() == pfscore.KindRWLock) {
					m := s.NewSyncInstance(c, "bench")
					var w pfscore.WaitState
					if m.BeginWait(&w, th, pfscore.OpLock) {
						w.EndWait(-1)
					}
				}
			}
			srv, err := mysqlpfs.Listen("127.0.0.1:0", s, mysqlpfs.WithUser("pfs", "bench"))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "pfs", "bench", "tcp", srv.Addr()
			db, err := sql.Open("mysql", cfg.FormatDSN())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			b.ReportAllocs()
			b.ResetTimer()
			var n int
			for b.Loop() {
				n = selectAll(b, db)
			}
			b.ReportMetric(float64(n), "rows/op")
		})
	}
}

// selectAll runs the benchmark's query and scans every row, returning the
// row count.
func selectAll(b *testing.B, db *sql.DB) int {
	rows, err := db.Query("SELECT * FROM performance_schema.events_waits_summary_global_by_event_name")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var (
		name                     string
		count, sum, min, avg, mx uint64
		n                        int
	)
	for rows.Next() {
		if err := rows.Scan(&name, &count, &sum, &min, &avg, &mx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkMutexTimedDuringSQLSelect is a timed mutex wait (begin and end,
// summaries on) on one goroutine, while nothing else runs (quiet), while
// another goroutine runs BenchmarkSQLEndpointSelect's query every 10 ms
// (select-100/s, a dashboard refreshing fast), and back to back
// (select-flat-out). Reads take no lock a writer waits for: the cases
// differ by what sharing the cores, the caches and the garbage collector
// with the query costs. (B/op counts the querying goroutine's
// allocations too.)
func BenchmarkMutexTimedDuringSQLSelect(b *testing.B) {
	for _, c := range []struct {
		name  string
		pause time.Duration // between queries; <0: no queries
	}{{"quiet", -1}, {"select-100/s", 10 * time.Millisecond}, {"select-flat-out", 0}} {
		selecting := c.pause >= 0
		b.Run(c.name, func(b *testing.B) {
			s, err := pfscore.New(pfscore.WithoutEnvironment())
			if err != nil {
				b.Fatal(err)
			}
			th := s.NewThread(s.MustRegister("thread/demo/worker"), pfscore.ThreadOptions{})
			defer th.End()
			m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/demo/note_cache"), "bench")
			srv, err := mysqlpfs.Listen("127.0.0.1:0", s, mysqlpfs.WithUser("pfs", "bench"))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			stop := make(chan struct{})
			done := make(chan struct{})
			if selecting {
				cfg := mysql.NewConfig()
				cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "pfs", "bench", "tcp", srv.Addr()
				db, err := sql.Open("mysql", cfg.FormatDSN())
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				go func() {
					defer close(done)
					for {
						select {
						case <-stop:
							return
						default:
							selectAll(b, db)
							time.Sleep(c.pause)
						}
					}
				}()
			} else {
				close(done)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				var w pfscore.WaitState
				if m.BeginWait(&w, th, pfscore.OpLock) {
					w.EndWait(-1)
				}
			}
			b.StopTimer()
			close(stop)
			<-done
		})
	}
}
