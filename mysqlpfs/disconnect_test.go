package mysqlpfs_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/mysqlpfs"
)

// A client that closes its connection mid-statement cancels the
// statement: it leaves the process list at once, not at its end.
func TestDisconnectCancelsStatement(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server cannot tell a closed connection on this system")
	}
	f := newFixture(t, mysqlpfs.WithQueryTimeout(60*time.Second))
	db := f.db(t)
	sleeping := func() bool { return mysqlpfs.RunningStatements(f.srv) > 0 }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "SELECT SLEEP(30)")
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("the statement never showed in the process list")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // the driver closes the connection
	<-done
	start := time.Now()
	for sleeping() {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the statement still runs 5s after its client closed the connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the statement ended %v after its client left", time.Since(start))
}
