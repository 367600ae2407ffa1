package mysqlpfs_test

import (
	"database/sql"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A service serves its schema over the MySQL protocol; any MySQL client
// then queries performance_schema and sys, here go-sql-driver/mysql.
func Example() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	cache := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:12")
	for range 3 {
		var w pfscore.WaitState
		if cache.BeginWait(&w, nil, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}

	srv, err := mysqlpfs.Listen("127.0.0.1:0", s, mysqlpfs.WithUser("pfs", "secret"), mysqlpfs.WithSetupChanges(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "pfs", "secret", "tcp", srv.Addr()
	db, _ := sql.Open("mysql", cfg.FormatDSN())
	defer db.Close()

	var name string
	var count int
	err = db.QueryRow(`SELECT events, total FROM sys.waits_global_by_latency
		WHERE events LIKE 'wait/synch/mutex/app/%'`).Scan(&name, &count)
	fmt.Println(name, count, err)

	_, err = db.Exec("UPDATE performance_schema.setup_instruments SET ENABLED = 'NO' WHERE NAME = 'wait/synch/mutex/app/cache'")
	var w pfscore.WaitState
	fmt.Println("after UPDATE, a wait begins:", cache.BeginWait(&w, nil, pfscore.OpLock), err)

	_, err = db.Exec("DELETE FROM performance_schema.events_waits_current")
	fmt.Println(err)
	// Output:
	// wait/synch/mutex/app/cache 3 <nil>
	// after UPDATE, a wait begins: false <nil>
	// Error 1142 (42000): DELETE command denied to user 'pfs'@'%' for table 'events_waits_current'
}
