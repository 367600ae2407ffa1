package mysqlpfs_test

import (
	"database/sql"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/mysqlpfs"
)

// TestReview19_AlterUserChangesServerPassword shows that any client, on
// a server that only reads, could change the one account's password with
// ALTER USER: the engine put the new hash in its user table, then
// panicked persisting it (no persister), which dropped the connection
// but kept the change, so every other client, and the service's own
// tools, were locked out with 1045. MySQL lets an account change its own
// password, but this server's account is the service's configuration
// (WithUser), not the client's: it must refuse, as it refuses CREATE USER
// and GRANT, and the configured password must keep working.
func TestReview19_AlterUserChangesServerPassword(t *testing.T) {
	f := newFixture(t)
	for _, q := range []string{
		"ALTER USER pfs IDENTIFIED BY 'pwned'",
		"ALTER USER CURRENT_USER() IDENTIFIED BY 'pwned'",
		"ALTER USER 'pfs'@'%' IDENTIFIED WITH caching_sha2_password BY 'pwned'",
	} {
		db := f.db(t)
		_, err := db.Exec(q)
		db.Close()
		if err == nil || mysqlErr(err) == 0 {
			t.Errorf("%s: %v, want a MySQL error (1227), not success or a dropped connection", q, err)
		}
		good := must(sqlOpen(f.dsn("pfs", testPassword)))
		if err := good.Ping(); err != nil {
			t.Errorf("after %s, the configured password: %v", q, err)
		}
		good.Close()
		bad := must(sqlOpen(f.dsn("pfs", "pwned")))
		if err := bad.Ping(); err == nil {
			t.Errorf("after %s, the client's password logs in", q)
		}
		bad.Close()
	}
}

// TestReview19_HandshakeHangHoldsConnectionSlot shows that a client that
// connects and never answers the server's greeting holds a connection
// slot for ever: with WithMaxConnections(1), one such socket (anyone who
// reaches the port, before any password) shuts every real client out.
// MySQL closes a connection that has not authenticated within
// connect_timeout (10 s by default) with "Got timeout reading
// communication packets" / ER_HANDSHAKE_ERROR.
func TestReview19_HandshakeHangHoldsConnectionSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the handshake timeout")
	}
	f := newFixture(t, mysqlpfs.WithMaxConnections(1))
	idle, err := net.Dial("tcp", f.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	buf := make([]byte, 4096)
	if _, err := idle.Read(buf); err != nil { // the greeting; never answered
		t.Fatal(err)
	}
	// The server must drop the silent client within MySQL's connect_timeout
	// (with some slack).
	idle.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		if _, err := idle.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("a client that never answered the greeting still holds its connection after 15s")
			}
			break
		}
	}
	db := f.db(t)
	if err := db.Ping(); err != nil {
		t.Errorf("a real client after the silent one was dropped: %v", err)
	}
}

// TestReview19_RepeatAllocatesUnbounded shows that one statement can make
// the service allocate what it likes: REPEAT('x', 300000000) builds a
// 300 MB string (2 GB with the count at its int32 maximum, and 16 such
// connections at once exhaust most machines) before the row limit or the
// timeout can act. MySQL returns NULL, with warning 1301, for a REPEAT,
// LPAD, RPAD, SPACE, CONCAT ... whose result would pass
// max_allowed_packet (64 MB by default); the engine reports a
// max_allowed_packet of 1 GB and does not check it.
func TestReview19_RepeatAllocatesUnbounded(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	var n sql.NullInt64
	if err := db.QueryRow("SELECT LENGTH(REPEAT('x', 300000000))").Scan(&n); err != nil {
		if mysqlErr(err) != 0 {
			return // refused: fine
		}
		t.Fatal(err)
	}
	if n.Valid {
		t.Errorf("REPEAT built a %d-byte string; MySQL gives NULL past max_allowed_packet (64 MB)", n.Int64)
	}
}

// TestReview19_VersionSaysEngine shows that VERSION() and @@version say
// the engine's 8.0.31 (and @@version_comment "Dolt"), not the
// 8.0.36-otelpfs the handshake and doc.go announce; sys.version's
// mysql_version says 8.0.31 too. Tools (Workbench, Grafana, the mysql
// client's status) read @@version to pick features. MySQL answers the
// same version in all three places.
func TestReview19_VersionSaysEngine(t *testing.T) {
	f := newFixture(t)
	_, rows := queryRows(t, f.db(t), "SELECT VERSION(), @@version, (SELECT mysql_version FROM sys.version)")
	for i, v := range rows[0] {
		if v != "8.0.36-otelpfs" {
			t.Errorf("column %d: %q, want 8.0.36-otelpfs (the handshake's)", i, v)
		}
	}
}

// TestReview19_XSysSumsAreFloats shows that the x$ sys views, whose point
// is raw numbers for programs, return their SUM columns as the engine's
// float64: sys.x$memory_global_total is "5.867376e+06", not "5867376",
// and a sum past 2^53 (a cumulative 2.5 hours of waits in picoseconds)
// loses its last digits. MySQL's SUM of BIGINT UNSIGNED is an exact
// DECIMAL(42,0) (sys.x$memory_global_total.total_allocated is
// decimal(41,0)).
func TestReview19_XSysSumsAreFloats(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	_, rows := queryRows(t, db, "SELECT total_allocated FROM sys.`x$memory_global_total`")
	if _, err := strconv.ParseUint(rows[0][0], 10, 64); err != nil {
		t.Errorf("x$memory_global_total.total_allocated = %q, not an integer", rows[0][0])
	}
	_, rows = queryRows(t, db, "SELECT SUM(a) FROM (SELECT CAST(9007199254740993 AS UNSIGNED) AS a) t")
	if rows[0][0] != "9007199254740993" {
		t.Errorf("SUM of 9007199254740993 = %q", rows[0][0])
	}
}

// TestReview19_XViewsNeedBackquotes shows that the x$ views cannot be
// named as MySQL users name them, unquoted: SELECT * FROM
// sys.x$statement_analysis is a syntax error (1105 "near '$'") from the
// engine's parser, which takes no $ in an unquoted identifier; MySQL does
// (identifiers may hold [0-9a-zA-Z$_]), and its documentation writes the
// views that way.
func TestReview19_XViewsNeedBackquotes(t *testing.T) {
	f := newFixture(t)
	if _, err := f.db(t).Exec("SELECT * FROM sys.x$statement_analysis"); err != nil {
		t.Errorf("sys.x$statement_analysis unquoted: %v", err)
	}
}

// TestReview19_CloseLeavesStatementsRunning shows that Close, documented
// to cancel a statement running on a connection it closes, leaves the
// statement running: with no query timeout, a SELECT SLEEP(30) (or a
// cross join) goes on in the engine's goroutines for its full length
// after Close has returned and its client has seen the connection drop.
// (The engine's own check for a closed connection never runs either: it
// needs the *net.TCPConn, which the tracking listener wraps.) MySQL's
// shutdown kills every connection's statement.
func TestReview19_CloseLeavesStatementsRunning(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithQueryTimeout(0))
	db := f.db(t)
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("SELECT SLEEP(30)")
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !stackHas("(*Sleep).Eval") {
		if time.Now().After(deadline) {
			t.Fatal("the statement did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.srv.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the client did not see Close")
	}
	deadline = time.Now().Add(2 * time.Second)
	for stackHas("(*Sleep).Eval") {
		if time.Now().After(deadline) {
			t.Fatal("SELECT SLEEP(30) still runs 2s after Close")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stackHas reports whether a goroutine's stack holds s.
func stackHas(s string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), s)
		}
		buf = make([]byte, 2*len(buf))
	}
}
