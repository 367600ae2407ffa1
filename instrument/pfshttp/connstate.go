package pfshttp

import (
	"crypto/tls"
	"net"
	"net/http"

	"github.com/otelpfs/otelpfs/instrument"
)

// ConnState returns an http.Server.ConnState hook that records the time a
// connection waits for its next request as the idle instrument, not as a
// socket read, as MySQL records a connection waiting for its next command.
// It acts on the connections of a listener instrument wraps
// (instrument.SocketClass.WrapListener or Listen), whose Accept returns
// *instrument.Conn, directly or under crypto/tls (tls.NewListener: the
// hook sees the *tls.Conn and follows its NetConn); it leaves other
// connections alone.
//
// The first time it marks a connection idle (see below) it gives the
// connection a thread of class thread/http/connection
// (WithConnectionThreadClass), a background thread without user or host,
// which records the connection's idle waits
// (instrument.Conn.SetIdleThread); when the connection closes or is
// hijacked, the hook ends the connection's idle thread. Its socket reads
// and writes stay its Conn's, attributed to no thread: net/http reads a
// connection on a goroutine of its own while the handler writes it, and a
// Thread is driven by one goroutine at a time.
//
// The wait is marked (instrument.Conn.SetIdle) when the connection is new
// (if it is not TLS: a TLS connection first reads its handshake) and each
// time it goes idle after a response; the Read that returns the next
// request's first bytes ends the idle wait, and the reads of the rest of the
// request are socket reads. StateActive clears a mark no read has used (a
// pipelined request already buffered).
//
// HTTP/2 connections are not marked: their frames are read continuously by
// a goroutine of their own, so "the next read" is not the wait for the next
// request. Over TLS the hook tells them by their negotiated protocol; an
// unencrypted HTTP/2 connection (http.Protocols.SetUnencryptedHTTP2)
// looks like HTTP/1 to it, so Server leaves the marks out when the server
// enables that protocol, and a ConnState installed by hand must not be
// used on such a server.
//
// Wrap the hook around any the server has (Server does).
func ConnState(opts ...Option) func(net.Conn, http.ConnState) {
	return newConnState(newConfig(opts), nil, true)
}

// Server instruments srv: its Handler (http.DefaultServeMux if nil) with
// Handler, unless it is one already, and its ConnState with ConnState,
// calling the hook srv had after it. Call it before srv serves. The idle
// accounting needs srv's listener wrapped by instrument:
//
//	ln, err := listenSockets.Listen("tcp", ":8080", connSockets)
//	…
//	pfshttp.Server(srv)
//	err = srv.Serve(ln)
func Server(srv *http.Server, opts ...Option) {
	c := newConfig(opts)
	h := srv.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	if _, ok := h.(*handler); !ok {
		srv.Handler = Handler(h, opts...)
	}
	h2c := srv.Protocols != nil && srv.Protocols.UnencryptedHTTP2()
	srv.ConnState = newConnState(c, srv.ConnState, !h2c)
}

// newConnState returns the hook; plainIdle says whether to mark
// connections that are not TLS.
func newConnState(c config, next func(net.Conn, http.ConnState), plainIdle bool) func(net.Conn, http.ConnState) {
	cs := &connState{
		threads:   instrument.NewThreadClass(c.connTh, instrument.WithSchema(c.schema)),
		plainIdle: plainIdle,
	}
	if next == nil {
		return cs.hook
	}
	return func(nc net.Conn, state http.ConnState) {
		cs.hook(nc, state)
		next(nc, state)
	}
}

type connState struct {
	threads   *instrument.ThreadClass
	plainIdle bool
}

func (cs *connState) hook(nc net.Conn, state http.ConnState) {
	c, tc := unwrapConn(nc)
	if c == nil {
		return
	}
	switch state {
	case http.StateNew:
		// Called from the server's accept loop, before the connection's
		// goroutine starts: the thread passes to it with the connection.
		if tc == nil && cs.plainIdle {
			cs.markIdle(c)
		}
	case http.StateActive:
		c.SetIdle(false)
	case http.StateIdle:
		if (tc == nil && cs.plainIdle) || (tc != nil && tc.ConnectionState().NegotiatedProtocol != "h2") {
			cs.markIdle(c)
		}
	case http.StateHijacked, http.StateClosed:
		c.SetIdle(false)
		if t := c.IdleThread(); t != nil {
			c.SetIdleThread(nil)
			t.End()
		}
	}
}

// markIdle marks c idle, giving it a connection thread first if it has no
// idle thread yet.
func (cs *connState) markIdle(c *instrument.Conn) {
	if c.IdleThread() == nil {
		c.SetIdleThread(cs.threads.Start("", ""))
	}
	c.SetIdle(true)
}

// unwrapConn returns the *instrument.Conn under nc, and the *tls.Conn
// between them, if any.
func unwrapConn(nc net.Conn) (*instrument.Conn, *tls.Conn) {
	switch v := nc.(type) {
	case *instrument.Conn:
		return v, nil
	case *tls.Conn:
		if c, ok := v.NetConn().(*instrument.Conn); ok {
			return c, v
		}
	}
	return nil, nil
}
