package instrument

import (
	"context"
	"runtime"
	"sync"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A Cond is a sync.Cond instrumented as wait/synch/cond/<component>/<name>:
// each Wait is a wait event, from the call to the return with L held again.
// Signal and Broadcast are not waits and are not recorded. Make it with
// NewCond; it embeds sync.Cond, so L, Signal and Broadcast are sync.Cond's.
//
// When L is an instrumented Mutex, the re-lock inside Wait is recorded too,
// as a lock wait of L without a thread (sync.Cond calls L.Lock itself).
type Cond struct {
	// sync.Cond's L, Signal and Broadcast are promoted; Wait is replaced.
	sync.Cond
	syncObject
}

// NewCond returns a condition variable of the instrument class name
// (wait/synch/cond/<component>/<name>) with locker l.
func NewCond(l sync.Locker, name string, opts ...Option) *Cond {
	c := &Cond{Cond: sync.Cond{L: l}}
	c.init(name, "NewCond", pfscore.KindCond, 1, opts)
	freeWithOwner(c, c.inst)
	return c
}

// Wait is sync.Cond.Wait.
func (c *Cond) Wait() { c.wait(nil) }

// WaitCtx is Wait, attributing the wait to the thread ctx carries. It does
// not return early when ctx is done: sync.Cond cannot.
func (c *Cond) WaitCtx(ctx context.Context) { c.wait(ThreadFromContext(ctx)) }

// For returns c bound to thread t: its Wait attributes the wait to t.
func (c *Cond) For(t *Thread) BoundCond { return BoundCond{c, t} }

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
	if !c.inst.BeginWait(&w, t, pfscore.OpWait) {
		c.Cond.Wait()
		return
	}
	c.Cond.Wait()
	w.EndWait(-1)
	runtime.KeepAlive(c) // its cleanup must not free the instance before EndWait
}
