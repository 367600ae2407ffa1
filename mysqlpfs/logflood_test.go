package mysqlpfs_test

import (
	"bytes"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
)

// A lockedBuffer is a bytes.Buffer for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A stranger's failed logins, unknown databases and bad prepared
// statements do not fill the service's log (logrus's standard logger,
// where the engine logs): 100 of each make a few lines, not hundreds.
func TestLogFlood(t *testing.T) {
	f := newFixture(t)
	std := logrus.StandardLogger()
	var buf lockedBuffer
	out, level := std.Out, std.GetLevel()
	std.SetOutput(&buf)
	std.SetLevel(logrus.InfoLevel)
	defer func() { std.SetOutput(out); std.SetLevel(level) }()

	for range 100 {
		db, err := sql.Open("mysql", f.dsn("pfs", "wrong"))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, "a wrong password", db.Ping(), 1045)
		db.Close()
	}
	bad, err := sql.Open("mysql", strings.Replace(f.dsn("pfs", testPassword), "/performance_schema", "/nosuchdb", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	db := f.db(t)
	db.SetMaxOpenConns(1)
	for range 100 {
		if err := bad.Ping(); err == nil {
			t.Fatal("a connection to an unknown database: no error")
		}
		bad.Close()
		bad, _ = sql.Open("mysql", strings.Replace(f.dsn("pfs", testPassword), "/performance_schema", "/nosuchdb", 1))
		if _, err := db.Prepare("SELECT nosuchcolumn FROM setup_instruments WHERE NAME = ?"); err == nil {
			t.Fatal("a bad prepared statement: no error")
		}
	}
	lines := strings.Count(buf.String(), "\n")
	if lines > 30 {
		t.Errorf("300 refusals logged %d lines; the first:\n%.2000s", lines, buf.String())
	}
	t.Logf("%d lines", lines)
}

// Close closes the clients' connections under the engine's readers; that
// is not an error for the service's log.
func TestCloseLogsNothing(t *testing.T) {
	std := logrus.StandardLogger()
	var buf lockedBuffer
	out, level := std.Out, std.GetLevel()
	std.SetOutput(&buf)
	std.SetLevel(logrus.InfoLevel)
	defer func() { std.SetOutput(out); std.SetLevel(level) }()

	f := newFixture(t)
	db := f.db(t)
	if err := db.Ping(); err != nil { // an idle connection, open
		t.Fatal(err)
	}
	f.srv.Close()
	if got := buf.String(); strings.Contains(got, "closed network connection") || strings.Contains(got, "level=error") {
		t.Errorf("Close logged:\n%s", got)
	}
}
