package instrument

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A SocketClass is a socket instrument class,
// wait/io/socket/<component>/<name>: the kind of connection a service makes
// or accepts (its database client connections, its HTTP server's
// connections, its listening socket). Declare one per kind, once:
//
//	var (
//		dbSockets     = instrument.NewSocketClass("wait/io/socket/app/db_client")
//		listenSockets = instrument.NewSocketClass("wait/io/socket/app/server_tcpip_socket")
//		serverConns   = instrument.NewSocketClass("wait/io/socket/app/client_connection")
//	)
//
//	conn, err := dbSockets.DialContext(ctx, "tcp", "db.internal:5432")
//	ln, err := listenSockets.Listen("tcp", ":8080", serverConns)
//
// Each socket is one instance (socket_instances; socket_summary_by_instance),
// created when the socket is dialed, accepted or wrapped and destroyed when
// it closes, its statistics then rolling up into the class's
// socket_summary_by_event_name row. Its OBJECT_NAME is its address (a
// dialed socket's as dialed, "db.internal:5432"; an accepted or wrapped
// one's remote address, "10.0.0.7:51234"; a listener's own), its
// OBJECT_SCHEMA for setup_objects its network ("tcp", "unix"), and IP and
// PORT in socket_instances the peer's resolved address (the listener's own).
//
// A socket dialed, accepted or wrapped while the class is disabled still
// has its instance: enabling the class later starts recording its
// operations at once.
//
// SOURCE is where the class was declared, not where each socket was made.
// A bad class name or a full schema give sockets that work, uninstrumented.
type SocketClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: uninstrumented
	source string
	dialer net.Dialer
}

// NewSocketClass returns the socket instrument class name, a
// wait/io/socket/<component>/<name> name registered on first use, in the
// schema of WithSchema (by default pfscore.Default()). With a bad name, or
// when the schema is full, the class still makes sockets, uninstrumented.
func NewSocketClass(name string, opts ...Option) *SocketClass {
	c := newConfig(opts)
	sc := &SocketClass{schema: c.schema, source: c.source}
	if class := c.registerAs(name, "NewSocketClass", pfscore.KindSocket); class != nil {
		sc.class = class
	}
	if sc.source == "" {
		sc.source = pfscore.Source(1)
	}
	return sc
}

// Class returns the class's setup_instruments row handle, or nil if the
// class is uninstrumented.
func (c *SocketClass) Class() *pfscore.Class { return c.class }

// Dial connects to address on network, as net.Dial; see DialContext.
func (c *SocketClass) Dial(network, address string) (net.Conn, error) {
	return c.DialContext(context.Background(), network, address)
}

// DialContext connects to address on network, as net.Dialer.DialContext
// with a zero Dialer, and returns a *Conn of the class (as a net.Conn, so
// the method value fits http.Transport.DialContext and the like). The dial
// is a "connect" wait of the new socket's instance, whose OBJECT_NAME is
// address as given; a failed dial's instance is destroyed, its wait counted
// in the class's summaries. The thread ctx carries is the connect wait's
// thread only: the Conn has no owner until SetThread gives it one, because
// a dialed connection commonly outlives the request that dialed it (an
// http.Transport or database/sql pool keeps it, and its read and write
// loops run on goroutines of their own).
func (c *SocketClass) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return c.dial(ctx, network, address, c.dialer.DialContext)
}

// A DialContextFunc dials a connection: net.Dialer.DialContext's signature,
// and http.Transport.DialContext's.
type DialContextFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// DialFunc returns dial instrumented as DialContext is: each connection it
// makes is a *Conn of the class, the dial its "connect" wait. Use it for a
// configured dialer:
//
//	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
//	transport.DialContext = apiSockets.DialFunc(d.DialContext)
func (c *SocketClass) DialFunc(dial DialContextFunc) DialContextFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		return c.dial(ctx, network, address, dial)
	}
}

func (c *SocketClass) dial(ctx context.Context, network, address string, dial DialContextFunc) (net.Conn, error) {
	t := ThreadFromContext(ctx)
	var inst *pfscore.IOInstance
	if c.class != nil {
		inst = c.schema.NewSocketInstance(c.class, network, address, c.source)
	}
	if inst == nil {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &Conn{c: conn}, nil
	}
	var conn net.Conn
	_, err := ioWait(inst, t, pfscore.OpSocketConnect, nil, nil, func() (n int64, err error) {
		conn, err = dial(ctx, network, address)
		return -1, err
	})
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	return newConn(conn, inst, conn.RemoteAddr(), nil), nil
}

// Wrap instruments conn, a connection made elsewhere, as a socket of the
// class, whose OBJECT_NAME is conn's remote address. The returned Conn owns
// conn: close conn through it.
func (c *SocketClass) Wrap(conn net.Conn) *Conn {
	ra := conn.RemoteAddr()
	inst := c.newInstance(ra)
	if inst == nil {
		return &Conn{c: conn}
	}
	return newConn(conn, inst, ra, nil)
}

// newInstance returns a new instance of the class for a socket at a, or
// nil if the class is uninstrumented or the schema's sockets are full.
func (c *SocketClass) newInstance(a net.Addr) *pfscore.IOInstance {
	if c == nil || c.class == nil {
		return nil
	}
	network, address := "", ""
	if a != nil {
		network, address = a.Network(), a.String()
	}
	return c.schema.NewSocketInstance(c.class, network, address, c.source)
}

// Listen listens on address, as net.Listen, and returns a Listener of the
// class whose accepted connections are Conns of class conns (nil: of this
// class too). MySQL, for one, separates them: the listening socket's class
// (server_tcpip_socket) from its connections' (client_connection).
func (c *SocketClass) Listen(network, address string, conns *SocketClass) (*Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return c.WrapListener(l, conns), nil
}

// WrapListener instruments l as a listening socket of the class, whose
// OBJECT_NAME is l's address; its accepted connections are Conns of class
// conns (nil: of this class). The returned Listener owns l.
func (c *SocketClass) WrapListener(l net.Listener, conns *SocketClass) *Listener {
	if conns == nil {
		conns = c
	}
	ln := &Listener{l: l, conns: conns}
	a := l.Addr()
	if inst := c.newInstance(a); inst != nil {
		ln.sock.init(inst, a, nil)
		ln.sock.cleanup = runtime.AddCleanup(ln, (*pfscore.IOInstance).Destroy, inst)
	}
	return ln
}

// socket is what Conn and Listener share: the instance, the owner thread,
// and the state word that keeps the instance alive while operations use it.
//
// # State word
//
//	bit 62       closed: the socket was closed; no new operation uses inst
//	bits 0..61   operations in flight on inst
//
// An operation first adds 1 (acquire). If the closed bit was set, it runs
// unrecorded; otherwise it may use inst until it subtracts 1 (release).
// Close sets the closed bit while holding an operation of its own, and
// whoever brings the word to exactly "closed, none in flight" destroys the
// instance: an operation cannot reach a freed record, even when Close runs
// while another goroutine is blocked in Read (the usual way to stop a
// reader in Go). The two locked adds cost about 15 ns next to a system call
// of a microsecond or more; they are on the enabled path only.
//
// STATE (socket_instances) is ACTIVE from an operation's acquire and IDLE
// again when a release leaves none in flight. Accepted race: a release
// writing IDLE and a concurrent acquire writing ACTIVE may land in either
// order, leaving IDLE shown during an operation until the next one.
type socket struct {
	class   *pfscore.Class      // inst's class; nil: uninstrumented
	inst    *pfscore.IOInstance // nil: uninstrumented
	owner   atomic.Pointer[Thread]
	state   atomic.Int64
	closing atomic.Bool
	cleanup runtime.Cleanup
}

const sockClosed = 1 << 62

// init sets up an instrumented socket: its IP and PORT from a, and its
// owner t. The caller arranges s.cleanup.
func (s *socket) init(inst *pfscore.IOInstance, a net.Addr, t *Thread) {
	s.class, s.inst = inst.Class(), inst
	setAddress(inst, a)
	if t != nil {
		s.owner.Store(t)
		inst.SetSocketState(t, false)
	}
}

// on reports whether the socket's class collects events now.
func (s *socket) on() bool { return s.class != nil && s.class.On() }

// acquire registers an operation in flight and marks the socket ACTIVE,
// with its owner. It returns false, holding nothing, if the socket is
// closed.
func (s *socket) acquire() bool {
	if s.state.Add(1)&sockClosed != 0 {
		if s.state.Add(-1) == sockClosed {
			s.inst.Destroy()
		}
		return false
	}
	s.inst.SetSocketState(s.owner.Load(), true)
	return true
}

// release ends an operation acquire admitted. The last operation in flight
// marks the socket IDLE, with its current owner, while it still holds the
// instance: once its hold is given up a concurrent Close may destroy the
// instance and another socket reuse the record.
func (s *socket) release() {
	if s.state.Load() == 1 { // ours is the only operation, and not closed
		s.inst.SetSocketState(s.owner.Load(), false)
	}
	if s.state.Add(-1) == sockClosed {
		s.inst.Destroy()
	}
}

// wait runs call, an operation of kind op on the socket, as a wait
// attributed to t, holding the socket (acquire) meanwhile; on a closed
// socket it only runs call. call returns the wait's NUMBER_OF_BYTES
// (negative for none) and the operation's error. Every operation of a Conn
// or Listener but Close goes through it.
func (s *socket) wait(t *Thread, op pfscore.Operation, call func() (int64, error)) (int64, error) {
	if !s.acquire() {
		return call()
	}
	n, err := ioWait(s.inst, t, op, nil, nil, call) // release keeps s alive
	s.release()
	return n, err
}

// close closes the socket with raw as a "close" wait of t and destroys its
// instance once no operation uses it. Only the first call records anything.
func (s *socket) close(t *Thread, raw func() error) error {
	if s.inst == nil || s.closing.Swap(true) {
		return raw()
	}
	s.cleanup.Stop()
	if !s.acquire() {
		return raw()
	}
	// No operation is admitted from here on: the closed bit goes on while
	// Close still holds an operation of its own, before the real close.
	s.state.Add(sockClosed)
	_, err := ioWait(s.inst, t, pfscore.OpSocketClose, nil, nil, func() (int64, error) { return -1, raw() })
	s.release()
	return err
}

// setThread makes t the owner: the thread of later waits, and THREAD_ID,
// written at once if no operation is in flight, else when the last ends.
func (s *socket) setThread(t *Thread) {
	s.owner.Store(t)
	if s.inst != nil && s.acquire() {
		s.release()
	}
}

// setAddress records a socket's IP and PORT from its address.
func setAddress(inst *pfscore.IOInstance, a net.Addr) {
	switch a := a.(type) {
	case nil:
	case *net.TCPAddr:
		inst.SetSocketAddress(a.IP.String(), a.Port)
	case *net.UDPAddr:
		inst.SetSocketAddress(a.IP.String(), a.Port)
	case *net.UnixAddr:
		// A Unix socket has a path, no IP or port (as MySQL shows it).
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			inst.SetSocketAddress(ap.Addr().String(), int(ap.Port()))
		}
	}
}

// A Conn is a net.Conn whose operations are wait events of its SocketClass:
//
//	Read               recv, bytes read
//	Write              send, bytes written
//	CloseRead/Write    shutdown
//	Close              close; the instance is destroyed
//	ReadFrom, WriteTo  see their documentation
//	deadlines, addrs   nothing
//
// socket_summary_* count recv in READ, send in WRITE, the rest in MISC. A
// Read's wait includes the time it blocks for the peer, except while the
// Conn is marked idle (SetIdle).
//
// # Idle
//
// A server connection spends most of its life waiting for the client's next
// request. MySQL records that wait as the thread's idle event, not as a
// socket wait, so that the time a connection sits unused does not swamp the
// time spent reading requests. A Conn does the same: after SetIdle(true),
// its Reads are idle waits (the idle instrument, setup_timers' idle timer)
// of its idle thread (SetIdleThread; by default its owner) until one
// returns data or fails, which ends the mark. The bytes that Read returns
// count as a recv wait of no measurable length, so READ's COUNT and
// NUMBER_OF_BYTES still count every read; its time is idle time only.
// Idle waits belong to a thread: without an idle thread or owner the wait
// is not recorded at all, neither as idle nor as recv. Package pfshttp sets
// the mark from an http.Server's ConnState hook.
//
// # Thread attribution
//
// A socket has an owner thread (socket_instances.THREAD_ID), as in MySQL,
// where it is the thread that serves the connection: a Conn's waits are
// attributed to its owner, which only SetThread sets, and a BoundConn's
// (For, ForCtx) to its bound thread, the owner staying. A dialed or accepted
// Conn has none until then: the dial's connect wait belongs to the thread
// of its context, but the connection usually lives on in a pool after that
// request, read and written by goroutines of its own. Give a Conn an owner
// when one thread serves it for its whole life (a server's connection
// handler); bind one call to a thread (conn.ForCtx(ctx).Write(p)) when the
// connection serves one request at a time from a pool. A Thread is driven
// by one goroutine at a time: a Conn read by one goroutine while another
// writes it should have no owner, or its thread loses the waits that
// overlap (counted in Performance_schema_thread_events_lost; rows are never
// torn).
//
// # Cost
//
// Disabled: a nil check and one atomic load over the net.Conn method, no
// allocation. Enabled: pfscore's wait path, the owner load, the in-flight
// count and STATE updates (see socket), and a call through a closure on the
// stack (see socket.wait); no allocation.
//
// A Conn may be used by several goroutines at once, as a net.Conn may. One
// that becomes unreachable without Close has its instance destroyed when it
// is garbage collected.
type Conn struct {
	c net.Conn
	socket
	idle idleMark
}

// idleMark is a Conn's idle state: see "Idle" in Conn's documentation.
type idleMark struct {
	on     atomic.Bool            // the next Reads are idle waits, until one returns data or fails
	thread atomic.Pointer[Thread] // the thread of the idle waits; nil: the Read's thread
}

func newConn(conn net.Conn, inst *pfscore.IOInstance, ra net.Addr, t *Thread) *Conn {
	c := &Conn{c: conn}
	c.init(inst, ra, t)
	c.cleanup = runtime.AddCleanup(c, (*pfscore.IOInstance).Destroy, inst)
	return c
}

// NetConn returns the wrapped connection. Operations on it are not
// recorded; do not Close it directly.
func (c *Conn) NetConn() net.Conn { return c.c }

// SetThread makes t the Conn's owner: the thread its waits are attributed
// to and socket_instances.THREAD_ID. A nil t clears it. Safe for concurrent
// use; the owner is read once per operation.
func (c *Conn) SetThread(t *Thread) { c.setThread(t) }

// Thread returns the Conn's owner thread, or nil.
func (c *Conn) Thread() *Thread { return c.owner.Load() }

// For returns c bound to thread t: its methods attribute their waits to t
// instead of the owner, which stays the socket's THREAD_ID. Use it when the
// thread that uses a connection changes from call to call (a connection
// taken from a pool for one request):
//
//	conn.For(t).Write(query)
//
// BoundConn is a small value; For allocates nothing.
func (c *Conn) For(t *Thread) BoundConn { return BoundConn{c, t} }

// ForCtx returns c bound to the thread ctx carries; see For.
func (c *Conn) ForCtx(ctx context.Context) BoundConn { return BoundConn{c, ThreadFromContext(ctx)} }

// SetIdle marks the Conn idle (true) or clears the mark (false). While the
// mark is on, a Read is an idle wait of the idle thread (SetIdleThread, by
// default the owner) instead of a recv wait; the first Read that returns
// data or an error clears it. Mark a server connection idle when it has
// answered a request and waits for the next; see "Idle" above. Safe for
// concurrent use, but the mark is meant for a connection read by one
// goroutine at a time: a Read in progress when the mark is set stays a
// recv wait, and the Read after it is the idle one.
func (c *Conn) SetIdle(idle bool) { c.idle.on.Store(idle) }

// Idle reports whether the Conn is marked idle: SetIdle(true) was called
// and no Read has returned data or failed since.
func (c *Conn) Idle() bool { return c.idle.on.Load() }

// SetIdleThread makes t the thread of the Conn's idle waits; nil (the
// default) leaves them to the Read's thread: the owner, or a BoundConn's
// thread. A server whose connection has no owner (its reads and writes run
// on several goroutines, as net/http's do) gives it a thread of its own for
// its idle waits, as MySQL's connection thread has them. Safe for
// concurrent use.
func (c *Conn) SetIdleThread(t *Thread) { c.idle.thread.Store(t) }

// IdleThread returns the thread SetIdleThread set, or nil.
func (c *Conn) IdleThread() *Thread { return c.idle.thread.Load() }

// Read reads from the connection, as net.Conn.Read: a "recv" wait, or an
// idle wait while the Conn is marked idle (SetIdle).
func (c *Conn) Read(p []byte) (int, error) {
	if c.idle.on.Load() {
		return c.readIdle(c.owner.Load(), p)
	}
	if !c.on() {
		return c.c.Read(p)
	}
	return c.read(c.owner.Load(), p)
}

// Read is Conn.Read, attributed to the bound thread.
func (b BoundConn) Read(p []byte) (int, error) {
	if b.c.idle.on.Load() {
		return b.c.readIdle(b.t, p)
	}
	if !b.c.on() {
		return b.c.c.Read(p)
	}
	return b.c.read(b.t, p)
}

// readIdle is a Read by thread t while the Conn is marked idle: an idle
// wait of the idle thread, else of t, then, if it returned data, a recv
// wait of t for the bytes, which takes no time of its own (the data is in
// p already) but keeps READ's count and bytes whole. Data or an error
// clears the mark.
//
//go:noinline
func (c *Conn) readIdle(t *Thread, p []byte) (int, error) {
	it := c.idle.thread.Load()
	if it == nil {
		it = t
	}
	iw := StartIdle(it)
	n, err := c.c.Read(p)
	iw.End()
	if n > 0 || err != nil {
		c.idle.on.Store(false)
	}
	if n > 0 && c.on() {
		c.wait(t, pfscore.OpSocketRecv, func() (int64, error) { return int64(n), nil })
	}
	return n, err
}

// read is Read, recorded. Read and Write check the class's switch
// themselves, and leave the closure to a function of its own, so that a
// disabled class costs a nil check and a load.
//
//go:noinline
func (c *Conn) read(t *Thread, p []byte) (int, error) {
	n, err := c.wait(t, pfscore.OpSocketRecv, func() (int64, error) {
		n, err := c.c.Read(p)
		return int64(n), err
	})
	return int(n), err
}

// Write writes to the connection, as net.Conn.Write: a "send" wait.
func (c *Conn) Write(p []byte) (int, error) {
	if !c.on() {
		return c.c.Write(p)
	}
	return c.write(c.owner.Load(), p)
}

// Write is Conn.Write, attributed to the bound thread.
func (b BoundConn) Write(p []byte) (int, error) {
	if !b.c.on() {
		return b.c.c.Write(p)
	}
	return b.c.write(b.t, p)
}

// write is Write, recorded.
//
//go:noinline
func (c *Conn) write(t *Thread, p []byte) (int, error) {
	n, err := c.wait(t, pfscore.OpSocketSend, func() (int64, error) {
		n, err := c.c.Write(p)
		return int64(n), err
	})
	return int(n), err
}

// Close closes the connection, as net.Conn.Close: a "close" wait; the
// socket's instance is destroyed once no operation uses it. A second Close
// records nothing and returns the wrapped Close's error.
func (c *Conn) Close() error { return c.close(c.owner.Load(), c.c.Close) }

// Close is Conn.Close, attributed to the bound thread.
func (b BoundConn) Close() error { return b.c.close(b.t, b.c.c.Close) }

// ErrNoHalfClose is returned by CloseRead and CloseWrite when the wrapped
// connection cannot shut down one direction (it is not a *net.TCPConn,
// *net.UnixConn or the like).
var ErrNoHalfClose = errors.New("instrument: connection cannot close one direction")

// CloseRead shuts down the reading side of the connection, as
// net.TCPConn.CloseRead: a "shutdown" wait.
func (c *Conn) CloseRead() error { return c.closeRead(c.owner.Load()) }

// CloseRead is Conn.CloseRead, attributed to the bound thread.
func (b BoundConn) CloseRead() error { return b.c.closeRead(b.t) }

func (c *Conn) closeRead(t *Thread) error {
	cr, ok := c.c.(interface{ CloseRead() error })
	if !ok {
		return ErrNoHalfClose
	}
	return c.misc(t, pfscore.OpSocketShutdown, cr.CloseRead)
}

// CloseWrite shuts down the writing side of the connection, as
// net.TCPConn.CloseWrite: a "shutdown" wait. (net/http's server uses it to
// close connections gracefully.)
func (c *Conn) CloseWrite() error { return c.closeWrite(c.owner.Load()) }

// CloseWrite is Conn.CloseWrite, attributed to the bound thread.
func (b BoundConn) CloseWrite() error { return b.c.closeWrite(b.t) }

func (c *Conn) closeWrite(t *Thread) error {
	cw, ok := c.c.(interface{ CloseWrite() error })
	if !ok {
		return ErrNoHalfClose
	}
	return c.misc(t, pfscore.OpSocketShutdown, cw.CloseWrite)
}

// misc runs raw as a wait of op, attributed to t, that moves no bytes.
func (c *Conn) misc(t *Thread, op pfscore.Operation, raw func() error) error {
	if !c.on() {
		return raw()
	}
	_, err := c.wait(t, op, func() (int64, error) { return -1, raw() })
	return err
}

// A BoundConn is a Conn bound to a thread (Conn.For, Conn.ForCtx): its
// methods are the Conn's, with their waits attributed to the thread. It is
// an io.ReadWriteCloser.
type BoundConn struct {
	c *Conn
	t *Thread
}

// Conn returns the bound Conn.
func (b BoundConn) Conn() *Conn { return b.c }

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.c.LocalAddr() }

// RemoteAddr returns the remote network address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// SetDeadline sets the read and write deadlines, as net.Conn's; not a wait.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// SetReadDeadline sets the read deadline; not a wait.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.c.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline; not a wait.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.c.SetWriteDeadline(t) }

// ReadFrom copies r to the connection until EOF: when nothing would be
// recorded, with the wrapped connection's ReadFrom (sendfile, splice) given
// r unwrapped; otherwise as a sequence of send waits (and read waits on r,
// if r is a File or Conn). See "io.Copy fast paths" in file_copy.go.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if c.on() || recorded(r) {
		return copyRecorded(c, r)
	}
	rf, ok := c.c.(io.ReaderFrom)
	if !ok {
		return copyRecorded(c.c, r)
	}
	raw, done := unwrapReader(r)
	n, err := rf.ReadFrom(raw)
	done()
	return n, err
}

// WriteTo copies from the connection to w until EOF or an error: when
// nothing would be recorded, with the wrapped connection's WriteTo (splice)
// given w unwrapped; otherwise as a sequence of recv waits (and write waits
// on w, if w is a File or Conn).
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	if c.on() || c.idle.on.Load() || recorded(w) {
		return copyRecorded(w, c)
	}
	wt, ok := c.c.(io.WriterTo)
	if !ok {
		return copyRecorded(w, c.c)
	}
	return wt.WriteTo(unwrapWriter(w))
}

// A Listener is a net.Listener whose Accept is an "accept" wait of its
// class, on the listening socket's instance, and returns the connection as
// a *Conn of its connections' class (see SocketClass.Listen). Close is a
// "close" wait that destroys the instance. The accept waits are attributed
// to the Listener's owner thread (SetThread), by default none; an accepted
// Conn has no owner until its handler calls Conn.SetThread.
type Listener struct {
	l     net.Listener
	conns *SocketClass
	sock  socket
}

// Accept waits for and returns the next connection, a *Conn.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptConn()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn is Accept returning the *Conn.
func (l *Listener) AcceptConn() (*Conn, error) {
	var conn net.Conn
	var err error
	if !l.sock.on() {
		conn, err = l.l.Accept()
	} else {
		_, err = l.sock.wait(l.sock.owner.Load(), pfscore.OpSocketAccept, func() (int64, error) {
			conn, err = l.l.Accept()
			return -1, err
		})
	}
	if err != nil {
		return nil, err
	}
	return l.conns.Wrap(conn), nil
}

// Close closes the listener: a "close" wait; the instance is destroyed.
func (l *Listener) Close() error { return l.sock.close(l.sock.owner.Load(), l.l.Close) }

// Addr returns the listener's network address.
func (l *Listener) Addr() net.Addr { return l.l.Addr() }

// SetThread makes t the Listener's owner: the thread of its accept waits.
func (l *Listener) SetThread(t *Thread) { l.sock.setThread(t) }

// NetListener returns the wrapped listener; do not Close it directly.
func (l *Listener) NetListener() net.Listener { return l.l }
