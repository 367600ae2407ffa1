package pfshttp

import (
	"context"
	"net/http"
	"reflect"

	"github.com/otelpfs/otelpfs/instrument"
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
	r   http.Request
	ctx threadCtx
	w   responseWriter
}

// withThread returns a context that is parent carrying t, as
// instrument.ContextWithThread(parent, t) does: q's own threadCtx when
// threadKey is known, else ContextWithThread's (one more allocation).
func (q *request) withThread(parent context.Context, t *instrument.Thread) context.Context {
	if threadKey == nil {
		return instrument.ContextWithThread(parent, t)
	}
	q.ctx = threadCtx{Context: parent, t: t}
	return &q.ctx
}

// threadCtx is a context carrying a thread, which
// instrument.ThreadFromContext finds: it answers Value for instrument's
// key with the thread (nil included, which hides a thread of the parent,
// as ContextWithThread's does) and passes every other key, and Deadline,
// Done and Err, to its parent. context.WithCancel and the like see through
// it to a cancelable parent as they see through context.WithValue's
// contexts (they ask Value for their own key and compare Done), so a
// context derived from it starts no goroutine that one derived from
// ContextWithThread's would not.
type threadCtx struct {
	context.Context
	t *instrument.Thread
}

func (c *threadCtx) Value(key any) any {
	if key == threadKey {
		return c.t
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

// threadKey is the key instrument.ThreadFromContext asks a context's
// Value for, learnt once by asking for the thread of a context that
// records the key: instrument keeps its key unexported. It is nil, and
// Handler uses instrument.ContextWithThread, if instrument did not ask
// exactly one comparable key, or if a threadCtx does not then carry a
// thread exactly as ContextWithThread's context does (checked here).
var threadKey any

func init() { threadKey = learnThreadKey() }

// keyProbe records the keys Value is asked for.
type keyProbe struct {
	context.Context
	keys []any
}

func (p *keyProbe) Value(key any) any {
	p.keys = append(p.keys, key)
	return nil
}

func learnThreadKey() any {
	p := &keyProbe{Context: context.Background()}
	if instrument.ThreadFromContext(p) != nil || len(p.keys) != 1 || p.keys[0] == nil ||
		!reflect.TypeOf(p.keys[0]).Comparable() || !threadCtxWorks(p.keys[0]) {
		return nil
	}
	return p.keys[0]
}

// threadCtxWorks reports whether, with k as threadKey, a threadCtx
// carries its thread, hides its parent's, and passes other keys on.
func threadCtxWorks(k any) bool {
	saved := threadKey
	threadKey = k
	defer func() { threadKey = saved }()
	a, b := new(instrument.Thread), new(instrument.Thread)
	type otherKey struct{}
	parent := context.WithValue(instrument.ContextWithThread(context.Background(), a), otherKey{}, b)
	return instrument.ThreadFromContext(&threadCtx{Context: parent, t: b}) == b &&
		instrument.ThreadFromContext(&threadCtx{Context: parent}) == nil &&
		instrument.ThreadFromContext(&threadCtx{Context: context.Background(), t: a}) == a &&
		(&threadCtx{Context: parent, t: a}).Value(otherKey{}) == b
}
