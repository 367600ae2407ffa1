package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/instrument/internal/ctxkey"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A Thread is an actor of the performance schema: a request handler, a
// worker, a connection. See pfscore.Thread for its contract: one goroutine
// drives it at a time; a nil *Thread is valid and means "no thread".
type Thread = pfscore.Thread

// StartThread starts a thread of the class name (thread/<component>/<name>,
// registered on first use) and returns a copy of ctx that carries it,
// with the thread, as OpenTelemetry's tracer.Start returns a span's context
// and the span:
//
//	ctx, t := instrument.StartThread(ctx, "thread/app/request", instrument.WithUser(user))
//	defer t.End()
//
// The returned context carries the new thread and hides any thread ctx
// carried: a thread is driven by one goroutine at a time, and the new actor
// is not the parent's. If no thread can start (the name is invalid, which is
// reported as NewThread's are, or the schema's thread table is full), t is
// nil and the context carries no thread; every instrument and t.End accept
// that. A thread class disabled in setup_instruments still starts a thread,
// listed in threads with INSTRUMENTED NO, whose waits feed only the global
// and per-instance summaries.
//
// A nil ctx is taken as context.Background(). For a thread per request,
// ThreadClass.StartCtx does the same without the name lookup and the
// options.
func StartThread(ctx context.Context, name string, opts ...ThreadOption) (context.Context, *Thread) {
	t := startThread(name, "StartThread", opts)
	return ContextWithThread(ctx, t), t
}

// NewThread starts a thread of the class name (thread/<component>/<name>,
// registered on first use) and returns it. End it with Thread.End when the
// actor is done. It returns nil, which every instrument accepts, if the
// name is invalid or the schema's thread table is full. StartThread does the
// same and returns a context that carries the thread.
func NewThread(name string, opts ...ThreadOption) *Thread {
	return startThread(name, "NewThread", opts)
}

func startThread(name, ctor string, opts []ThreadOption) *Thread {
	c := configure(opts, ThreadOption.applyThreadOption)
	class := c.registerAs(name, ctor, pfscore.KindThread)
	if class == nil {
		return nil
	}
	return c.schema.NewThread(class, pfscore.ThreadOptions{User: c.user, Host: c.host})
}

// A ThreadClass is a thread class registered once, to start many threads
// cheaply (a thread per request or per connection):
//
//	var requests = instrument.NewThreadClass("thread/app/request")
//
//	func handle(w http.ResponseWriter, r *http.Request) {
//		ctx, t := requests.StartCtx(r.Context(), user(r), clientHost(r))
//		defer t.End()
//		…
//	}
type ThreadClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: an invalid name or a full schema
}

// NewThreadClass registers the thread class name (thread/<component>/<name>).
// It takes WithSchema and WithDocumentation; a thread's user and host are
// given to each Start. An invalid name gives a class whose threads are nil,
// which every instrument accepts.
func NewThreadClass(name string, opts ...ThreadClassOption) *ThreadClass {
	c := configure(opts, ThreadClassOption.applyThreadClassOption)
	return &ThreadClass{schema: c.schema, class: c.registerAs(name, "NewThreadClass", pfscore.KindThread)}
}

// Start starts a thread of the class for user@host (either may be empty: a
// thread without a user is a background thread, see pfscore.ThreadOptions).
// It returns nil if the class is invalid or the thread table is full.
func (c *ThreadClass) Start(user, host string) *Thread {
	if c == nil || c.class == nil {
		return nil
	}
	return c.schema.NewThread(c.class, pfscore.ThreadOptions{User: user, Host: host})
}

// StartCtx is Start returning, with the thread, a copy of ctx that carries
// it; see StartThread for the context it returns.
func (c *ThreadClass) StartCtx(ctx context.Context, user, host string) (context.Context, *Thread) {
	t := c.Start(user, host)
	return ContextWithThread(ctx, t), t
}

// threadKey is the key a context carries its thread under; pfshttp's
// contexts use it too (ctxkey's doc).
type threadKey = ctxkey.Thread

// ContextWithThread returns a copy of ctx carrying t, for the …Ctx methods
// of the instruments and for code further down the call chain. A nil t
// gives a context that carries no thread, whatever ctx carried. A nil ctx
// is taken as context.Background().
func ContextWithThread(ctx context.Context, t *Thread) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, threadKey{}, t)
}

// ThreadFromContext returns the thread ctx carries, or nil.
func ThreadFromContext(ctx context.Context) *Thread {
	if ctx == nil {
		return nil
	}
	t, _ := ctx.Value(threadKey{}).(*Thread)
	return t
}
