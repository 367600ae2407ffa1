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
// name is invalid or the schema's thread table is full.
func NewThread(name string, opts ...Option) *Thread {
	c := newConfig(opts)
	class := c.register(name)
	if class == nil {
		return nil
	}
	return c.schema.NewThread(class, pfscore.ThreadOptions{User: c.user, Host: c.host})
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
