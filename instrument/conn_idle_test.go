package instrument_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// idleSums returns COUNT_STAR and SUM_TIMER_WAIT of the idle row of
// events_waits_summary_global_by_event_name.
func idleSums(t testing.TB, s *pfscore.Schema) (count, sum uint64) {
	t.Helper()
	r := ioRow(t, s, "events_waits_summary_global_by_event_name", "EVENT_NAME", "idle")
	return r["COUNT_STAR"].(uint64), r["SUM_TIMER_WAIT"].(uint64)
}

// recvSums returns COUNT_READ, SUM_TIMER_READ and SUM_NUMBER_OF_BYTES_READ
// of the socket class name in socket_summary_by_event_name.
func recvSums(t testing.TB, s *pfscore.Schema, name string) (count, sum, bytes uint64) {
	t.Helper()
	r := ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", name)
	return r["COUNT_READ"].(uint64), r["SUM_TIMER_READ"].(uint64), r["SUM_NUMBER_OF_BYTES_READ"].(uint64)
}

const idlePause = 50 * time.Millisecond

// sendLater writes p to c after idlePause.
func sendLater(c *instrument.Conn, p string) {
	go func() {
		time.Sleep(idlePause)
		c.NetConn().Write([]byte(p))
	}()
}

// A Conn marked idle times the wait for the peer's next bytes as an idle
// wait of its owner; the bytes count as a recv of no length of its own; the
// mark ends with the data, and later reads are recv waits again.
func TestConnIdleOwner(t *testing.T) {
	s := ioSchema(t, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	k := newIOSockets(t, s)
	client, server := k.pair(t, context.Background())
	th := instrument.NewThread("thread/test/connection", instrument.WithSchema(s))
	defer th.End()
	server.SetThread(th)

	server.SetIdle(true)
	if !server.Idle() {
		t.Fatal("Idle() = false after SetIdle(true)")
	}
	sendLater(client, "ping")
	buf := make([]byte, 16)
	n, err := server.Read(buf)
	if n != 4 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	if server.Idle() {
		t.Error("the mark outlived a Read that returned data")
	}
	count, sum := idleSums(t, s)
	if count != 1 || sum < uint64(idlePause.Nanoseconds())*1000/2 { // the sender began its pause before the read
		t.Errorf("idle: COUNT_STAR %d, SUM_TIMER_WAIT %d ps; want 1, >= %v", count, sum, idlePause)
	}
	rc, rs, rb := recvSums(t, s, k.serverName)
	if rc != 1 || rb != 4 || rs >= uint64(idlePause.Nanoseconds())*1000/2 {
		t.Errorf("recv: COUNT_READ %d, SUM_TIMER_READ %d ps, bytes %d; want 1, far below %v, 4", rc, rs, rb, idlePause)
	}
	// The history has the idle wait, then the recv, both of the owner; the
	// idle wait nests in nothing.
	var ops []string
	for _, r := range ioRows(t, s, "events_waits_history", "THREAD_ID", th.ID()) {
		ops = append(ops, r["OPERATION"].(string))
		if r["OPERATION"] == "idle" && r["NESTING_EVENT_ID"] != nil {
			t.Errorf("the idle wait nests in %v", r["NESTING_EVENT_ID"])
		}
	}
	if len(ops) != 2 || ops[0] != "idle" || ops[1] != "recv" {
		t.Errorf("owner's history: %v, want [idle recv]", ops)
	}

	// Unmarked: a recv wait of the whole pause.
	sendLater(client, "pong")
	if _, err := io.ReadFull(server, buf[:4]); err != nil {
		t.Fatal(err)
	}
	if count, _ := idleSums(t, s); count != 1 {
		t.Errorf("idle COUNT_STAR after an unmarked read: %d, want 1", count)
	}
	if rc, rs, _ := recvSums(t, s, k.serverName); rc != 2 || rs < uint64(idlePause.Nanoseconds())*1000/2 {
		t.Errorf("recv after an unmarked read: COUNT_READ %d, SUM_TIMER_READ %d; want 2, >= %v", rc, rs, idlePause)
	}
}

// The idle thread takes the idle waits of a Conn without an owner; its
// recv waits stay threadless. An error ends the mark too.
func TestConnIdleThread(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	client, server := k.pair(t, context.Background())
	th := instrument.NewThread("thread/test/connection", instrument.WithSchema(s))
	defer th.End()
	server.SetIdleThread(th)
	if server.IdleThread() != th {
		t.Fatal("IdleThread() is not the thread SetIdleThread set")
	}

	server.SetIdle(true)
	sendLater(client, "ping")
	buf := make([]byte, 16)
	if n, err := server.Read(buf); n != 4 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	rows := ioRows(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID())
	for _, r := range rows {
		want := uint64(0)
		if r["EVENT_NAME"] == "idle" {
			want = 1
		}
		if r["COUNT_STAR"] != want {
			t.Errorf("idle thread: %v COUNT_STAR %v, want %d", r["EVENT_NAME"], r["COUNT_STAR"], want)
		}
	}
	if rc, _, rb := recvSums(t, s, k.serverName); rc != 1 || rb != 4 {
		t.Errorf("recv: COUNT_READ %d, bytes %d; want 1, 4", rc, rb)
	}

	// A read that fails ends the mark: the peer closes.
	server.SetIdle(true)
	client.Close()
	if _, err := server.Read(buf); err != io.EOF {
		t.Fatalf("Read after the peer closed: %v, want EOF", err)
	}
	if server.Idle() {
		t.Error("the mark outlived a failed Read")
	}
	if count, _ := idleSums(t, s); count != 2 {
		t.Errorf("idle COUNT_STAR = %d, want 2", count)
	}
	if rc, _, _ := recvSums(t, s, k.serverName); rc != 1 {
		t.Errorf("COUNT_READ = %d after a failed idle read, want 1", rc)
	}
}

// SetIdle(false) clears the mark; a disabled socket class still records
// the idle wait, and no recv; a BoundConn's idle wait is its thread's.
func TestConnIdleClearDisabledBound(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	client, server := k.pair(t, context.Background())
	th := instrument.NewThread("thread/test/connection", instrument.WithSchema(s))
	defer th.End()
	buf := make([]byte, 16)

	server.SetIdle(true)
	server.SetIdle(false)
	sendLater(client, "a")
	if _, err := server.ForCtx(instrument.ContextWithThread(context.Background(), th)).Read(buf); err != nil {
		t.Fatal(err)
	}
	if count, _ := idleSums(t, s); count != 0 {
		t.Errorf("idle after SetIdle(false): %d waits", count)
	}

	s.UpdateInstruments(k.serverName, ioBool(false), nil)
	server.SetIdle(true)
	sendLater(client, "b")
	if _, err := server.For(th).Read(buf); err != nil {
		t.Fatal(err)
	}
	if count, _ := idleSums(t, s); count != 1 {
		t.Errorf("idle of a BoundConn with its class disabled: %d waits, want 1", count)
	}
	rows := ioRows(t, s, "events_waits_summary_by_thread_by_event_name", "THREAD_ID", th.ID())
	for _, r := range rows {
		if r["EVENT_NAME"] == "idle" && r["COUNT_STAR"] != uint64(1) {
			t.Errorf("the bound thread's idle COUNT_STAR = %v, want 1", r["COUNT_STAR"])
		}
	}
	if rc, _, _ := recvSums(t, s, k.serverName); rc != 1 {
		t.Errorf("COUNT_READ = %d, want 1 (the unmarked read only)", rc)
	}

	// The idle instrument off: the marked read is neither idle nor a recv
	// of its length.
	s.UpdateInstruments(k.serverName, ioBool(true), nil)
	s.UpdateInstruments("idle", ioBool(false), nil)
	_, before, _ := recvSums(t, s, k.serverName)
	server.SetThread(th)
	server.SetIdle(true)
	sendLater(client, "c")
	if _, err := server.Read(buf); err != nil {
		t.Fatal(err)
	}
	if count, _ := idleSums(t, s); count != 1 {
		t.Errorf("idle COUNT_STAR = %d with idle disabled, want 1", count)
	}
	if rc, rs, _ := recvSums(t, s, k.serverName); rc != 2 || rs-before >= uint64(idlePause.Nanoseconds())*1000 {
		t.Errorf("recv: COUNT_READ %d, SUM_TIMER_READ grew %d ps; want 2, below %v", rc, rs-before, idlePause)
	}
}

// An idle mark that is never used adds no allocation to Read.
func TestConnIdleAllocs(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	client, server := k.pair(t, context.Background())
	th := instrument.NewThread("thread/test/connection", instrument.WithSchema(s))
	defer th.End()
	server.SetThread(th)
	buf := make([]byte, 1)
	go io.Copy(client.NetConn(), zeros{})
	if n := testing.AllocsPerRun(100, func() {
		server.SetIdle(true)
		server.Read(buf)
	}); n != 0 {
		t.Errorf("idle Read: %v allocs", n)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A File copying from a Conn marked idle (File.ReadFrom, the io.Copy fast
// path) records the idle wait even when both classes are off: the kernel's
// zero-copy path would skip the mark.
func TestConnIdleThroughFileReadFrom(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	client, server := k.pair(t, context.Background())
	th := instrument.NewThread("thread/test/connection", instrument.WithSchema(s))
	defer th.End()
	server.SetThread(th)
	fc := instrument.NewFileClass("wait/io/file/test/copy", instrument.WithSchema(s))
	f, err := fc.Create(filepath.Join(t.TempDir(), "copy"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s.UpdateInstruments(k.serverName, ioBool(false), nil)
	s.UpdateInstruments("wait/io/file/test/copy", ioBool(false), nil)

	server.SetIdle(true)
	sendLater(client, "data")
	if n, err := io.Copy(f, io.LimitReader(server, 4)); n != 4 || err != nil {
		t.Fatalf("io.Copy = %d, %v", n, err)
	}
	if count, _ := idleSums(t, s); count != 1 {
		t.Errorf("idle COUNT_STAR %d after a copy from a Conn marked idle, want 1", count)
	}
}
