//go:build linux

package mysqlpfs_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// TestReview19_OneStatementKillsTheService shows that one SELECT, from
// any client of a read-only server, ends the whole service:
// REPEAT(REPEAT('x', 65536), 2147483647) asks the Go runtime for one
// 140 TB string, which no machine has; the runtime's "fatal error: out
// of memory" is not a panic, nothing recovers it, and the process exits.
// (REPLACE, LPAD, RPAD and CONCAT of large user variables reach the same
// end.) MySQL returns NULL, with warning 1301, for a string function whose
// result would pass max_allowed_packet.
//
// The server runs in a child process (this test binary again), its
// address space capped at 100 TB so that the request fails at once
// whatever the machine's overcommit policy.
func TestReview19_OneStatementKillsTheService(t *testing.T) {
	if os.Getenv("MYSQLPFS_REVIEW19_CHILD") == "1" {
		review19Child()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReview19_OneStatementKillsTheService$")
	cmd.Env = append(os.Environ(), "MYSQLPFS_REVIEW19_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	exited := make(chan struct{})
	lines := bufio.NewScanner(out)
	var addr string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the child served no address")
	}
	go func() {
		for lines.Scan() {
		}
		cmd.Wait()
		close(exited)
	}()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "pfs", testPassword, "tcp", addr
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	var n sql.NullInt64
	err = db.QueryRow("SELECT LENGTH(REPEAT(REPEAT('x', 65536), 2147483647))").Scan(&n)
	t.Logf("the statement: %v (%v)", err, n)
	select {
	case <-exited:
		t.Fatal("the service process died of one SELECT")
	case <-time.After(time.Second):
	}
	if err := db.Ping(); err != nil {
		t.Errorf("the server after the statement: %v", err)
	}
}

// review19Child serves a schema until killed, its address space capped.
func review19Child() {
	const limit = 100 << 40 // 100 TB
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Println("RLIMIT", err)
		os.Exit(1)
	}
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		panic(err)
	}
	srv, err := mysqlpfs.Listen("127.0.0.1:0", s, mysqlpfs.WithUser("pfs", testPassword))
	if err != nil {
		panic(err)
	}
	fmt.Println("ADDR " + srv.Addr())
	time.Sleep(time.Minute)
	os.Exit(0)
}
