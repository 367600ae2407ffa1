package instrument_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// ioSockets are the three socket classes of a test: a listener, its
// accepted connections, and the client side.
type ioSockets struct {
	s                      *pfscore.Schema
	listen, server, client *instrument.SocketClass
	listenName, serverName string
	clientName             string
	ln                     *instrument.Listener
	accepted               chan *instrument.Conn
}

func newIOSockets(t testing.TB, s *pfscore.Schema) *ioSockets {
	t.Helper()
	k := &ioSockets{s: s, listenName: "wait/io/socket/test/server_tcpip_socket",
		serverName: "wait/io/socket/test/client_connection", clientName: "wait/io/socket/test/client"}
	k.listen = instrument.NewSocketClass(k.listenName, instrument.WithSchema(s))
	k.server = instrument.NewSocketClass(k.serverName, instrument.WithSchema(s))
	k.client = instrument.NewSocketClass(k.clientName, instrument.WithSchema(s))
	ln, err := k.listen.Listen("tcp", "127.0.0.1:0", k.server)
	if err != nil {
		t.Fatal(err)
	}
	k.ln = ln
	k.accepted = make(chan *instrument.Conn, 16)
	go func() {
		defer close(k.accepted)
		for {
			c, err := ln.AcceptConn()
			if err != nil {
				return
			}
			k.accepted <- c
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return k
}

// newIOPair returns newIOSockets on a new ioSchema(t, opts...), and a pair
// of its connections dialed without a thread.
func newIOPair(t testing.TB, opts ...pfscore.Option) (k *ioSockets, client, server *instrument.Conn) {
	t.Helper()
	k = newIOSockets(t, ioSchema(t, opts...))
	client, server = k.pair(t, context.Background())
	return k, client, server
}

// ioSend writes msg on from and reads it on to.
func ioSend(t testing.TB, from, to *instrument.Conn, msg string) {
	t.Helper()
	if _, err := from.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(to, make([]byte, len(msg))); err != nil {
		t.Fatal(err)
	}
}

// pair dials the listener and returns both ends, which the test's cleanup
// closes (a second Close is harmless).
func (k *ioSockets) pair(t testing.TB, ctx context.Context) (client, server *instrument.Conn) {
	t.Helper()
	c, err := k.client.DialContext(ctx, "tcp", k.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client, server = c.(*instrument.Conn), <-k.accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestConnWorkload(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	th := instrument.NewThread("thread/test/client", instrument.WithSchema(s))
	defer th.End()
	client, server := k.pair(t, instrument.ContextWithThread(context.Background(), th))

	port := k.ln.Addr().(*net.TCPAddr).Port
	ioCheck(t, "listener", ioRow(t, s, "socket_instances", "EVENT_NAME", k.listenName),
		map[string]any{"IP": "127.0.0.1", "PORT": int64(port)}) // STATE: ACTIVE while in Accept
	// The dial's thread has the connect wait, but does not own the
	// connection, which may outlive it in a pool: SetThread gives it one.
	ioCheck(t, "client", ioRow(t, s, "socket_instances", "EVENT_NAME", k.clientName),
		map[string]any{"IP": "127.0.0.1", "PORT": int64(port), "STATE": "IDLE", "THREAD_ID": nil})
	ioCheck(t, "connect wait", ioRow(t, s, "events_waits_current", "THREAD_ID", th.ID()),
		map[string]any{"EVENT_NAME": k.clientName, "OPERATION": "connect"})
	client.SetThread(th)
	ioCheck(t, "client", ioRow(t, s, "socket_instances", "EVENT_NAME", k.clientName),
		map[string]any{"THREAD_ID": th.ID()})
	clientPort := client.LocalAddr().(*net.TCPAddr).Port
	ioCheck(t, "server", ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName),
		map[string]any{"IP": "127.0.0.1", "PORT": int64(clientPort), "STATE": "IDLE", "THREAD_ID": nil})

	msgs := []string{"hello", ", ", "world!"}
	for _, m := range msgs {
		if _, err := client.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 13)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "hello, world!" {
		t.Fatalf("server read %q, %v", buf, err)
	}
	if err := server.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("client read after CloseWrite = %d, %v", n, err)
	}
	client.Close()
	server.Close()

	// The sockets are gone; their statistics are in the classes'.
	for _, name := range []string{k.clientName, k.serverName} {
		if rows := ioRows(t, s, "socket_instances", "EVENT_NAME", name); len(rows) != 0 {
			t.Errorf("socket_instances after Close: %v", rows)
		}
	}
	ioCheck(t, "client class", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.clientName), map[string]any{
		"COUNT_WRITE":               uint64(3),
		"SUM_NUMBER_OF_BYTES_WRITE": uint64(13),
		"COUNT_READ":                uint64(1), // the EOF
		"SUM_NUMBER_OF_BYTES_READ":  uint64(0),
		"COUNT_MISC":                uint64(2), // connect, close
	})
	srv := ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.serverName)
	ioCheck(t, "server class", srv, map[string]any{
		"SUM_NUMBER_OF_BYTES_READ": uint64(13),
		"COUNT_WRITE":              uint64(0),
		"COUNT_MISC":               uint64(2), // shutdown, close
	})
	if c := srv["COUNT_READ"].(uint64); c < 1 || c > 3 { // as TCP delivered the three writes
		t.Errorf("server COUNT_READ = %d", c)
	}
	// The listener accepted once and waits in its second accept.
	ioCheck(t, "listener", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.listenName),
		map[string]any{"COUNT_MISC": uint64(1)})

	// The client thread's events.
	cur := ioRow(t, s, "events_waits_current", "THREAD_ID", th.ID())
	ioCheck(t, "events_waits_current", cur, map[string]any{
		"EVENT_NAME": k.clientName, "OPERATION": "close", "OBJECT_TYPE": "SOCKET",
		"OBJECT_NAME": k.ln.Addr().String(), "NUMBER_OF_BYTES": nil,
	})
}

func TestConnStateAndThread(t *testing.T) {
	k, client, server := newIOPair(t)
	s := k.s

	th := instrument.NewThread("thread/test/handler", instrument.WithSchema(s))
	defer th.End()
	server.SetThread(th)
	if server.Thread() != th {
		t.Error("Thread() is not the owner")
	}
	ioCheck(t, "owner set", ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName),
		map[string]any{"THREAD_ID": th.ID(), "STATE": "IDLE"})

	// ACTIVE while a Read waits for data.
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.Read(make([]byte, 1))
	}()
	for ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName)["STATE"] != "ACTIVE" {
		runtime.Gosched()
	}
	client.Write([]byte("x"))
	<-done
	ioCheck(t, "after the read", ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName),
		map[string]any{"STATE": "IDLE"})
	ioCheck(t, "by thread", ioRow(t, s, "events_waits_current", "THREAD_ID", th.ID()),
		map[string]any{"OPERATION": "recv", "NUMBER_OF_BYTES": int64(1)})

	server.SetThread(nil)
	ioCheck(t, "owner cleared", ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName),
		map[string]any{"THREAD_ID": nil})
}

// Close while another goroutine is blocked in Read: the reader is released,
// its wait counted, and the instance destroyed after it.
func TestConnCloseWhileReading(t *testing.T) {
	k, _, server := newIOPair(t)
	s := k.s

	done := make(chan error)
	go func() {
		_, err := server.Read(make([]byte, 1))
		done <- err
	}()
	for ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName)["STATE"] != "ACTIVE" {
		runtime.Gosched()
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close = %v", err)
	}
	if rows := ioRows(t, s, "socket_instances", "EVENT_NAME", k.serverName); len(rows) != 0 {
		t.Fatalf("socket_instances after Close: %v", rows)
	}
	ioCheck(t, "server class", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.serverName),
		map[string]any{"COUNT_READ": uint64(1), "COUNT_MISC": uint64(1)})

	// Operations after Close record nothing and fail as net.Conn's do.
	if _, err := server.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close = %v", err)
	}
	if err := server.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
	ioCheck(t, "server class", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.serverName),
		map[string]any{"COUNT_STAR": uint64(2)})
}

func TestConnDisabled(t *testing.T) {
	k, client, server := newIOPair(t)
	s := k.s

	s.UpdateInstruments("wait/io/socket/%", ioBool(false), nil)
	ioSend(t, client, server, "12345")
	ioCheck(t, "disabled client", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.clientName),
		map[string]any{"COUNT_STAR": uint64(1)}) // the connect, before
	ioCheck(t, "disabled server", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.serverName),
		map[string]any{"COUNT_STAR": uint64(0)})

	s.UpdateInstruments("wait/io/socket/%", ioBool(true), nil)
	ioSend(t, client, server, "12345")
	ioCheck(t, "enabled client", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.clientName),
		map[string]any{"COUNT_WRITE": uint64(1), "SUM_NUMBER_OF_BYTES_WRITE": uint64(5)})
	ioCheck(t, "enabled server", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.serverName),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(5)})
}

func TestConnSetupObjects(t *testing.T) {
	k, client, server := newIOPair(t)
	s := k.s
	// The client socket's OBJECT_NAME is the address it dialed.
	if err := s.Insert("setup_objects", map[string]pfscore.Value{"OBJECT_TYPE": "SOCKET",
		"OBJECT_SCHEMA": "tcp", "OBJECT_NAME": k.ln.Addr().String(), "ENABLED": "NO", "TIMED": "NO"}); err != nil {
		t.Fatal(err)
	}
	ioSend(t, client, server, "12345")
	ioCheck(t, "disabled object", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.clientName),
		map[string]any{"COUNT_WRITE": uint64(0)})
	ioCheck(t, "other object", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.serverName),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(5)})
}

func TestDialFailure(t *testing.T) {
	s := ioSchema(t)
	class := instrument.NewSocketClass("wait/io/socket/test/refused", instrument.WithSchema(s))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if c, err := class.Dial("tcp", addr); err == nil {
		c.Close()
		t.Skip("something listens on the closed port")
	}
	ioCheckFailed(t, s, "socket_instances", "socket_summary_by_event_name", "wait/io/socket/test/refused")
}

func TestConnUninstrumented(t *testing.T) {
	s := ioSchema(t)
	bad := instrument.NewSocketClass("wait/io/socket/bad name", instrument.WithSchema(s))
	if bad.Class() != nil {
		t.Fatal("bad name registered")
	}
	ln, err := bad.Listen("tcp", "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	c, err := bad.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	c.Close()
	if rows := ioRows(t, s, "socket_instances", "", nil); len(rows) != 0 {
		t.Fatalf("socket_instances: %v", rows)
	}

	// Wrap of a connection without addresses (net.Pipe) works too.
	p1, p2 := net.Pipe()
	class := instrument.NewSocketClass("wait/io/socket/test/pipe", instrument.WithSchema(s))
	w := class.Wrap(p1)
	go p2.Write([]byte("abc"))
	if _, err := io.ReadFull(w, buf[:3]); err != nil {
		t.Fatal(err)
	}
	if err := w.CloseWrite(); !errors.Is(err, instrument.ErrNoHalfClose) {
		t.Errorf("CloseWrite on a pipe = %v", err)
	}
	w.Close()
	p2.Close()
	ioCheck(t, "pipe", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", "wait/io/socket/test/pipe"),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(3)})
}

func TestConnCopy(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	files := instrument.NewFileClass("wait/io/file/test/sendfile", instrument.WithSchema(s))
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 10_000)
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	round := func(i int) {
		t.Helper()
		client, server := k.pair(t, context.Background())
		f, err := files.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte)
		go func() {
			dst, err := files.Create(filepath.Join(dir, "dst"+strconv.Itoa(i)))
			if err != nil {
				t.Error(err)
				close(got)
				return
			}
			io.Copy(dst, server) // File.ReadFrom(*Conn)
			dst.Close()
			b, _ := os.ReadFile(dst.Name())
			got <- b
		}()
		if n, err := io.Copy(client, f); n != int64(len(data)) || err != nil { // Conn.ReadFrom(*File)
			t.Fatalf("io.Copy = %d, %v", n, err)
		}
		client.Close()
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatalf("copied %d bytes, not the data", len(b))
		}
		f.Close()
		server.Close()
	}
	round(1)
	ioCheck(t, "client", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.clientName),
		map[string]any{"SUM_NUMBER_OF_BYTES_WRITE": uint64(len(data))})
	ioCheck(t, "server", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.serverName),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(len(data))})
	ioCheck(t, "source", ioRow(t, s, "file_summary_by_instance", "FILE_NAME", src),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(len(data))})

	// Everything off: the zero-copy paths, same data, nothing counted.
	s.UpdateInstruments("wait/io/%", ioBool(false), nil)
	round(2)
	ioCheck(t, "source, disabled", ioRow(t, s, "file_summary_by_instance", "FILE_NAME", src),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": uint64(len(data))})
}

func TestConnAllocs(t *testing.T) {
	s := ioSchema(t, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	k := newIOSockets(t, s)
	th := instrument.NewThread("thread/test/allocs", instrument.WithSchema(s))
	defer th.End()
	client, server := k.pair(t, instrument.ContextWithThread(context.Background(), th))
	out, in := []byte("x"), make([]byte, 1)
	ops := func() {
		client.Write(out)
		server.Read(in)
	}
	ioNoAllocs(t, s, "wait/io/socket/%", ops)
}

// TestConnConcurrentSafe runs several connections, each written and read by
// its own goroutines, while a reader selects the socket tables, then checks
// the class totals against what the goroutines did.
func TestConnConcurrentSafe(t *testing.T) {
	s := ioSchema(t, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true))
	k := newIOSockets(t, s)
	const conns = 4
	iters := ioIters(500, 50)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var sent [conns]uint64
	for i := range conns {
		th := instrument.NewThread("thread/test/client", instrument.WithSchema(s))
		client, server := k.pair(t, instrument.ContextWithThread(context.Background(), th))
		wg.Add(2)
		go func() { // writer, then closer
			defer wg.Done()
			defer th.End()
			<-start
			msg := make([]byte, 10+i)
			for range iters {
				n, err := client.Write(msg)
				if err != nil {
					t.Error(err)
					return
				}
				sent[i] += uint64(n)
			}
			client.Close()
		}()
		go func() { // reader to EOF, with the server's own thread
			defer wg.Done()
			sth := instrument.NewThread("thread/test/server", instrument.WithSchema(s))
			defer sth.End()
			server.SetThread(sth)
			<-start
			io.Copy(io.Discard, server)
			server.Close()
		}()
	}
	stop := ioSelectLoop(t, s, start, "socket_instances", "socket_summary_by_instance", "socket_summary_by_event_name",
		"events_waits_current", "events_waits_history", "events_waits_history_long")
	close(start)
	wg.Wait()
	stop()

	var total uint64
	for _, n := range sent {
		total += n
	}
	ioCheck(t, "client class", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.clientName), map[string]any{
		"COUNT_WRITE":               uint64(conns * iters),
		"SUM_NUMBER_OF_BYTES_WRITE": total,
		"COUNT_MISC":                uint64(2 * conns), // connect, close
	})
	ioCheck(t, "server class", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", k.serverName),
		map[string]any{"SUM_NUMBER_OF_BYTES_READ": total})
	for _, name := range []string{k.clientName, k.serverName} {
		if rows := ioRows(t, s, "socket_instances", "EVENT_NAME", name); len(rows) != 0 {
			t.Errorf("socket_instances after Close: %v", rows)
		}
	}
}

func TestConnDialFunc(t *testing.T) {
	s := ioSchema(t)
	k := newIOSockets(t, s)
	class := instrument.NewSocketClass("wait/io/socket/test/custom", instrument.WithSchema(s))
	var d net.Dialer
	dialed := 0
	dial := class.DialFunc(func(ctx context.Context, network, address string) (net.Conn, error) {
		dialed++
		return d.DialContext(ctx, network, address)
	})
	c, err := dial(context.Background(), "tcp", k.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server := <-k.accepted
	defer server.Close()
	c.Write([]byte("abc"))
	c.Close()
	if dialed != 1 {
		t.Errorf("the dial function ran %d times", dialed)
	}
	ioCheck(t, "custom", ioRow(t, s, "socket_summary_by_event_name", "EVENT_NAME", "wait/io/socket/test/custom"),
		map[string]any{"SUM_NUMBER_OF_BYTES_WRITE": uint64(3), "COUNT_MISC": uint64(2)})
}
