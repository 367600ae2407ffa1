package instrument

import (
	"context"
	"sync"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A Cond is a sync.Cond instrumented as wait/synch/cond/<component>/<name>:
// each Wait is a wait event, from the call to the return with L held again.
// Signal and Broadcast are not waits and are not recorded. Make it with
// NewCond, or Init one declared as a value; it embeds sync.Cond, so L,
// Signal and Broadcast are sync.Cond's.
//
// When L is an instrumented Mutex, the re-lock inside Wait is recorded too,
// as a lock wait of L without a thread (sync.Cond calls L.Lock itself).
type Cond struct {
	// sync.Cond's L, Signal and Broadcast are promoted; Wait is replaced.
	sync.Cond
	syncObject
}

// NewCond returns a condition variable of the instrument class name
// (wait/synch/cond/<component>/<name>) with locker l, as sync.NewCond(l)
// does. The name comes first, as in every constructor of the package.
func NewCond(name string, l sync.Locker, opts ...Option) *Cond {
	c := &Cond{Cond: sync.Cond{L: l}}
	initSync(c, &c.syncObject, name, "NewCond", pfscore.KindCond, opts)
	return c
}

// Init makes c, a Cond declared as a value, a condition variable of the
// instrument class name with locker l, as NewCond would; see Mutex.Init.
// Call it once, before c is used.
//
//	type queue struct {
//		mu    instrument.Mutex
//		ready instrument.Cond
//	}
//	q := &queue{}
//	q.mu.Init("wait/synch/mutex/app/queue")
//	q.ready.Init("wait/synch/cond/app/queue_ready", &q.mu)
func (c *Cond) Init(name string, l sync.Locker, opts ...Option) {
	c.L = l
	initSync(c, &c.syncObject, name, "(*Cond).Init", pfscore.KindCond, opts)
}

// Wait is sync.Cond.Wait.
func (c *Cond) Wait() { c.wait(nil) }

// WaitCtx is Wait, attributing the wait to the thread ctx carries. It does
// not return early when ctx is done: sync.Cond cannot.
func (c *Cond) WaitCtx(ctx context.Context) { c.wait(ThreadFromContext(ctx)) }

// For returns c bound to thread t: its Wait attributes the wait to t.
func (c *Cond) For(t *Thread) BoundCond { return BoundCond{c, t} }

// ForCtx returns c bound to the thread ctx carries.
func (c *Cond) ForCtx(ctx context.Context) BoundCond { return BoundCond{c, ThreadFromContext(ctx)} }

// A BoundCond is a Cond bound to a thread.
type BoundCond struct {
	c *Cond
	t *Thread
}

// Wait is Cond.Wait, attributed to the bound thread.
func (b BoundCond) Wait() { b.c.wait(b.t) }

func (c *Cond) wait(t *Thread) {
	if !c.on() {
		c.Cond.Wait()
		return
	}
	var w pfscore.WaitState
	waited := c.begin(&w, t, pfscore.OpWait)
	c.Cond.Wait()
	if waited {
		c.end(&w)
	}
}
