package instrument

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// Claim 5: a dialed Conn has no owner thread until SetThread, even when the
// dial's context carries one; the connect wait is the dial thread's, later
// reads and writes are nobody's; and a Conn whose dial thread has ended is
// not written through that thread.
func TestReviewDialedConnHasNoOwner(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // a server that reads and drops what it gets
		if c, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	sc := NewSocketClass("wait/io/socket/review/client", WithSchema(s))
	th := NewThread("thread/review/dialer", WithSchema(s))
	conn, err := sc.DialContext(ContextWithThread(context.Background(), th), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := conn.(*Conn)
	if c.Thread() != nil {
		t.Errorf("dialed Conn owner = thread %d, want none", c.Thread().ID())
	}
	th.End() // the dial's request is over
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Status() {
		if v.Name == "Performance_schema_thread_events_lost" && v.Value != 0 {
			t.Errorf("write after the dial thread ended lost %d thread events: it went through that thread", v.Value)
		}
	}
}
