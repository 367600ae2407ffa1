package mysqlpfs_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/mysqlpfs"
)

func TestQueryTimeout(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithQueryTimeout(200*time.Millisecond))
	db := f.db(t)
	start := time.Now()
	_, err := db.Exec("SELECT SLEEP(5)")
	wantErr(t, "SELECT SLEEP(5)", err, mysqlpfs.ErQueryTimeout)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the statement ran %v past a 200ms timeout", d)
	}
	// A join that would produce a billion rows is cut off too.
	start = time.Now()
	_, err = db.Exec(`SELECT COUNT(*) FROM setup_instruments a, setup_instruments b, setup_instruments c,
		setup_instruments d, setup_instruments e, setup_instruments f`)
	wantErr(t, "a six-way cross join", err, mysqlpfs.ErQueryTimeout)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the cross join ran %v past a 200ms timeout", d)
	}
	// The connection still serves.
	if _, rows := queryRows(t, db, "SELECT 1"); len(rows) != 1 {
		t.Errorf("SELECT 1 after a timeout: %v", rows)
	}
}

func TestRowLimit(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithRowLimit(3))
	db := f.db(t)
	rows, err := db.Query("SELECT NAME FROM setup_instruments")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	wantErr(t, "SELECT of more rows than the limit", err, mysqlpfs.ErTooBigSelect)
	if _, got := queryRows(t, db, "SELECT NAME FROM setup_instruments LIMIT 3"); len(got) != 3 {
		t.Errorf("LIMIT 3 under a limit of 3: %d rows", len(got))
	}
}

func TestListenRefusals(t *testing.T) {
	s := newFixture(t).s
	for _, c := range []struct {
		addr string
		opts []mysqlpfs.Option
		want error
	}{
		{"0.0.0.0:0", nil, mysqlpfs.ErrNotLoopback},
		{":0", nil, mysqlpfs.ErrNotLoopback},
		{"192.0.2.1:0", nil, mysqlpfs.ErrNotLoopback},
		{"0.0.0.0:0", []mysqlpfs.Option{mysqlpfs.WithRemoteAccess(true)}, mysqlpfs.ErrNoPassword},
		{"127.0.0.1:0", []mysqlpfs.Option{mysqlpfs.WithUser("", "x")}, mysqlpfs.ErrBadOption},
		{"127.0.0.1:0", []mysqlpfs.Option{mysqlpfs.WithUser("a'b", "x")}, mysqlpfs.ErrBadOption},
	} {
		srv, err := mysqlpfs.Listen(c.addr, s, c.opts...)
		if srv != nil {
			srv.Close()
		}
		if !errors.Is(err, c.want) {
			t.Errorf("Listen(%q): %v, want %v", c.addr, err, c.want)
		}
	}
	if _, err := mysqlpfs.Listen("127.0.0.1:0", nil); !errors.Is(err, mysqlpfs.ErrBadOption) {
		t.Errorf("Listen with no tables: %v", err)
	}
	if _, err := mysqlpfs.Listen("no-port", s); err == nil {
		t.Error("Listen(no-port): no error")
	}
}

// Close closes the connections it serves, and a second Close is a no-op.
func TestCloseClosesConnections(t *testing.T) {
	f := newFixture(t)
	conn, err := net.Dial("tcp", f.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 1)
	if _, err := conn.Read(buf); err != nil { // the handshake's first byte
		t.Fatal(err)
	}
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := conn.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the connection stayed open after Close")
			}
			break
		}
	}
	if err := f.srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := net.Dial("tcp", f.srv.Addr()); err == nil {
		t.Error("the server accepts after Close")
	}
}
