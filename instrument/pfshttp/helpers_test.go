package pfshttp_test

import (
	"context"
	"io"
	"net"
	"net/http/httptrace"
)

// testLog receives the servers' error logs (os.Stderr to debug a test).
var testLog io.Writer = io.Discard

// httptraceWithGotConn calls f with each connection a request gets.
func httptraceWithGotConn(ctx context.Context, f func(net.Conn)) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { f(info.Conn) },
	})
}
