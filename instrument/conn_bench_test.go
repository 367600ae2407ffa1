package instrument_test

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
)

// Conn benchmarks: 64-byte writes on a loopback TCP connection whose peer
// discards what it reads; raw, through a disabled class, and enabled.

func benchConn(b *testing.B, on bool) (*instrument.Conn, net.Conn) {
	b.Helper()
	s := ioSchema(b)
	k := newIOSockets(b, s)
	th := instrument.NewThread("thread/bench/writer", instrument.WithSchema(s))
	client, server := k.pair(b, instrument.ContextWithThread(context.Background(), th))
	go func() {
		io.Copy(io.Discard, server.NetConn())
		server.Close()
	}()
	s.UpdateInstruments("wait/io/socket/%", ioBool(on), ioBool(true))
	b.Cleanup(func() { client.Close(); th.End() })
	return client, client.NetConn()
}

func BenchmarkConnWriteRaw(b *testing.B) {
	_, raw := benchConn(b, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		raw.Write(buf)
	}
}

func BenchmarkConnWriteDisabled(b *testing.B) {
	c, _ := benchConn(b, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

// Enabled and timed, with the owner thread's current event.
func BenchmarkConnWriteEnabled(b *testing.B) {
	c, _ := benchConn(b, true)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

// The same on a net.Conn that discards its writes in memory: no system
// call, so the difference is the instrument's own cost.

type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }
func (discardConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5432}
}

func benchDiscard(b *testing.B, on, thread bool) *instrument.Conn {
	b.Helper()
	s := ioSchema(b)
	class := instrument.NewSocketClass("wait/io/socket/bench/discard", instrument.WithSchema(s))
	s.UpdateInstruments("wait/io/socket/%", ioBool(on), ioBool(true))
	c := class.Wrap(discardConn{})
	if thread {
		th := instrument.NewThread("thread/bench/writer", instrument.WithSchema(s))
		c.SetThread(th)
		b.Cleanup(th.End)
	}
	return c
}

// benchRawConn is a package variable so that the raw benchmark's call stays
// an interface call, as the wrapper's is.
var benchRawConn net.Conn = discardConn{}

func BenchmarkConnWriteMemRaw(b *testing.B) {
	c := benchRawConn
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

func BenchmarkConnWriteMemDisabled(b *testing.B) {
	c := benchDiscard(b, false, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

func BenchmarkConnWriteMemEnabled(b *testing.B) {
	c := benchDiscard(b, true, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

func BenchmarkConnWriteMemEnabledThread(b *testing.B) {
	c := benchDiscard(b, true, true)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(buf)
	}
}

// Reads on a net.Conn that fills p in memory: the Read path's own cost,
// which the idle mark (Conn.SetIdle) must leave unchanged while unused.

type fillConn struct{ discardConn }

func (fillConn) Read(p []byte) (int, error) { return len(p), nil }

var benchRawReadConn net.Conn = fillConn{}

func benchFill(b *testing.B, on, thread bool) *instrument.Conn {
	b.Helper()
	s := ioSchema(b)
	class := instrument.NewSocketClass("wait/io/socket/bench/fill", instrument.WithSchema(s))
	s.UpdateInstruments("wait/io/socket/%", ioBool(on), ioBool(true))
	c := class.Wrap(fillConn{})
	if thread {
		th := instrument.NewThread("thread/bench/reader", instrument.WithSchema(s))
		c.SetThread(th)
		b.Cleanup(th.End)
	}
	return c
}

func BenchmarkConnReadMemRaw(b *testing.B) {
	c := benchRawReadConn
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Read(buf)
	}
}

func BenchmarkConnReadMemDisabled(b *testing.B) {
	c := benchFill(b, false, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Read(buf)
	}
}

func BenchmarkConnReadMemEnabled(b *testing.B) {
	c := benchFill(b, true, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Read(buf)
	}
}

func BenchmarkConnReadMemEnabledThread(b *testing.B) {
	c := benchFill(b, true, true)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		c.Read(buf)
	}
}
