package pfshttp

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/internal/ctxkey"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/trace"
)

// request is what Handler allocates for a request, in one allocation
// rather than three: the copy of the request the handler gets (net/http
// offers no other way to give it another context), the context that copy
// carries, and the ResponseWriter that records the status.
//
// Nothing in it is reused: the handler may keep the request, its context
// and the writer past its return (goroutines that wait for the context's
// end, say), so each request gets a new one and the garbage collector
// frees it.
type request struct {
	r     http.Request
	ctx   threadCtx
	w     responseWriter
	list  *idleList        // the pool's list of the request's actor, if get found one
	proto pfscore.Protocol // the status and target the request's span shows
}

// withThread returns a context that is parent carrying t, as
// instrument.ContextWithThread(parent, t) does, in q's own storage.
func (q *request) withThread(parent context.Context, t *instrument.Thread) context.Context {
	q.ctx.Context = parent
	q.ctx.t.Store(t)
	return &q.ctx
}

// threadCtx is a context carrying a thread under instrument's key
// (ctxkey.Thread), which instrument.ThreadFromContext finds: it answers
// Value for that key with the thread (nil included, which hides a thread
// of the parent, as ContextWithThread's does) and passes every other key,
// and Deadline, Done and Err, to its parent. context.WithCancel and the
// like see through it to a cancelable parent as they see through
// context.WithValue's contexts (they ask Value for their own key and
// compare Done), so a context derived from it starts no goroutine that one
// derived from ContextWithThread's would not.
type threadCtx struct {
	context.Context
	// t is the request's thread. A pooled thread (WithThreadPool) leaves
	// it when the request ends, so that what outlives the request (a
	// goroutine keeping its context) records on no thread, as it would on
	// an ended one, and not on the thread's next request.
	t atomic.Pointer[instrument.Thread]
	// span, if span.Span is not nil, is the caller's span
	// (WithTraceContext), which Value answers under OpenTelemetry's key
	// (spanKey).
	span remoteSpan
}

// setSpan makes c carry sc as the caller's span.
func (c *threadCtx) setSpan(sc trace.SpanContext) {
	c.span = remoteSpan{Span: noSpan, sc: sc}
}

// OtelpfsSpanIDs returns the trace and span ids of the caller's span
// context c holds, and holds false if it holds none (then its parent may):
// the ids of what trace.SpanContextFromContext finds in c when holds is
// true. bridge.TraceContext, the statements' trace hook, asks a context for
// them (by an interface, importing nothing of pfshttp) before walking the
// context for OpenTelemetry's key; plain arrays, not the span context, for
// it needs the ids only.
func (c *threadCtx) OtelpfsSpanIDs() (traceID [16]byte, spanID [8]byte, sampled, holds bool) {
	if c.span.Span == nil {
		return traceID, spanID, false, false
	}
	return c.span.sc.TraceID(), c.span.sc.SpanID(), c.span.sc.IsSampled(), true
}

func (c *threadCtx) Value(key any) any {
	if _, ok := key.(ctxkey.Thread); ok {
		return c.t.Load()
	}
	if c.span.Span != nil && key == spanKey {
		return trace.Span(&c.span)
	}
	return c.Context.Value(key)
}

// String is for debugging, as context.WithValue's contexts have one.
func (c *threadCtx) String() string {
	return contextName(c.Context) + ".WithValue(instrument thread)"
}

func contextName(c context.Context) string {
	if s, ok := c.(interface{ String() string }); ok {
		return s.String()
	}
	return "context"
}
