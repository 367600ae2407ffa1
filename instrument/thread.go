package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A Thread is an actor of the performance schema: a request handler, a
// worker, a connection. See pfscore.Thread for its contract: one goroutine
// drives it at a time; a nil *Thread is valid and means "no thread".
type Thread = pfscore.Thread

// NewThread starts a thread of the class name (thread/<component>/<name>,
// registered on first use) and returns it. End it with Thread.End when the
// actor is done. It returns nil, which every instrument accepts, if the
// name is invalid or the schema's thread table is full. For a thread per
// request, a ThreadClass saves the name lookup and the options.
func NewThread(name string, opts ...Option) *Thread {
	c := newConfig(opts)
	return newThreadClass(name, "NewThread", opts).Start(c.user, c.host)
}

// A ThreadClass is a thread class registered once, to start many threads
// cheaply (a thread per request or per connection):
//
//	var requests = instrument.NewThreadClass("thread/app/request")
//
//	func handle(w http.ResponseWriter, r *http.Request) {
//		t := requests.Start(user(r), clientHost(r))
//		defer t.End()
//		…
//	}
type ThreadClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: an invalid name or a full schema
}

// NewThreadClass registers the thread class name (thread/<component>/<name>).
// WithSchema and WithDocumentation apply; WithUser and WithHost do not (they
// belong to each thread: see Start). An invalid name gives a class whose
// threads are nil, which every instrument accepts.
func NewThreadClass(name string, opts ...Option) *ThreadClass {
	return newThreadClass(name, "NewThreadClass", opts)
}

func newThreadClass(name, ctor string, opts []Option) *ThreadClass {
	c := newConfig(opts)
	return &ThreadClass{schema: c.schema, class: c.registerAs(name, ctor, pfscore.KindThread)}
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

type threadKey struct{}

// ContextWithThread returns a copy of ctx carrying t, for the …Ctx methods
// of the instruments and for code further down the call chain.
func ContextWithThread(ctx context.Context, t *Thread) context.Context {
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
