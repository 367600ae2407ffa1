package instrument

import (
	"context"
	"runtime"
	"sync"

	"github.com/otelpfs/otelpfs/pfscore"
)

// syncObject is what Mutex, RWMutex and Cond share: their instance and its
// class, kept side by side so the disabled path is two dependent loads
// (class, then its flags word).
type syncObject struct {
	class *pfscore.Class
	inst  *pfscore.SyncInstance
}

// init registers the class and creates the instance. skip counts the frames
// between init and the user's call, for SOURCE.
func (o *syncObject) init(name, ctor string, kind pfscore.Kind, skip int, opts []Option) {
	c := newConfig(opts)
	class := c.registerAs(name, ctor, kind)
	if class == nil {
		return
	}
	if c.source == "" {
		c.source = pfscore.Source(skip + 1)
	}
	inst := c.schema.NewSyncInstance(class, c.source)
	if inst == nil {
		return
	}
	o.class, o.inst = class, inst
}

// freeWithOwner arranges for inst's record to be freed when owner, the lock
// that holds it, is garbage collected.
func freeWithOwner[T any](owner *T, inst *pfscore.SyncInstance) {
	if inst != nil {
		runtime.AddCleanup(owner, (*pfscore.SyncInstance).Destroy, inst)
	}
}

// on reports whether the object's class collects events now.
func (o *syncObject) on() bool {
	return o.class != nil && o.class.On()
}

// A Mutex is a sync.Mutex whose waits are instrumented as
// wait/synch/mutex/<component>/<name>: each Lock that had to acquire the
// lock is a wait event, LOCKED_BY_THREAD_ID shows the holder, and
// mutex_instances lists it.
//
// Lock, Unlock and TryLock are sync.Mutex's; they attribute nothing to a
// thread, yet still feed the per-instance and global summaries. LockCtx
// attributes the wait to the thread of a context, and For binds a thread for
// a Lock/Unlock pair without a context lookup. A Mutex made without NewMutex
// (the zero value) is a plain, uninstrumented mutex.
//
// When the class is disabled a Lock costs one branch and two loads more than
// sync.Mutex's; when enabled and timed, two timer reads and the bookkeeping
// of pfscore's wait path (see the package benchmarks).
type Mutex struct {
	mu sync.Mutex
	// owned is set by a holder that recorded LOCKED_BY_THREAD_ID, so that
	// Unlock clears it only then. The mutex itself guards it: only the
	// holder reads or writes it.
	owned bool
	syncObject
}

// NewMutex returns a mutex of the instrument class name, a
// wait/synch/mutex/<component>/<name> name registered on first use. With a
// bad name, or when the schema is full, it returns a working uninstrumented
// mutex.
func NewMutex(name string, opts ...Option) *Mutex {
	m := &Mutex{}
	m.init(name, "NewMutex", pfscore.KindMutex, 1, opts)
	freeWithOwner(m, m.inst)
	return m
}

// Init instruments a Mutex declared as a value (a struct field, say) as
// NewMutex would. Call it once, before the mutex is used; a Mutex that is
// never initialized works uninstrumented.
//
//	type cache struct {
//		mu instrument.Mutex
//		m  map[string]string
//	}
//	c := &cache{}
//	c.mu.Init("wait/synch/mutex/app/cache")
func (m *Mutex) Init(name string, opts ...Option) {
	m.init(name, "(*Mutex).Init", pfscore.KindMutex, 1, opts)
	freeWithOwner(m, m.inst)
}

// Lock locks m.
func (m *Mutex) Lock() { m.lock(nil) }

// LockCtx locks m, attributing the wait to the thread ctx carries.
func (m *Mutex) LockCtx(ctx context.Context) { m.lock(ThreadFromContext(ctx)) }

func (m *Mutex) lock(t *Thread) {
	if !m.on() {
		m.mu.Lock()
		return
	}
	m.lockSlow(t)
}

//go:noinline
func (m *Mutex) lockSlow(t *Thread) {
	var w pfscore.WaitState
	if !m.inst.BeginWait(&w, t, pfscore.OpLock) {
		m.mu.Lock()
		return
	}
	m.mu.Lock()
	w.EndWait(-1)
	runtime.KeepAlive(m) // its cleanup must not free the instance before EndWait
	m.inst.SetOwner(t)
	m.owned = true
}

// TryLock tries to lock m and reports whether it succeeded; the attempt is
// a try_lock wait.
func (m *Mutex) TryLock() bool { return m.tryLock(nil) }

func (m *Mutex) tryLock(t *Thread) bool {
	if !m.on() {
		return m.mu.TryLock()
	}
	var w pfscore.WaitState
	if !m.inst.BeginWait(&w, t, pfscore.OpTryLock) {
		return m.mu.TryLock()
	}
	ok := m.mu.TryLock()
	w.EndWait(-1)
	runtime.KeepAlive(m) // its cleanup must not free the instance before EndWait
	if ok {
		m.inst.SetOwner(t)
		m.owned = true
	}
	return ok
}

// Unlock unlocks m.
func (m *Mutex) Unlock() {
	if m.owned {
		m.owned = false
		m.inst.ClearOwner()
	}
	m.mu.Unlock()
}

// For returns m bound to thread t: its Lock attributes the wait to t.
// BoundMutex is a small value; For allocates nothing.
func (m *Mutex) For(t *Thread) BoundMutex { return BoundMutex{m, t} }

// A BoundMutex is a Mutex bound to a thread. It implements sync.Locker.
type BoundMutex struct {
	m *Mutex
	t *Thread
}

// Lock locks the mutex, attributing the wait to the bound thread.
func (b BoundMutex) Lock() { b.m.lock(b.t) }

// TryLock tries to lock the mutex.
func (b BoundMutex) TryLock() bool { return b.m.tryLock(b.t) }

// Unlock unlocks the mutex.
func (b BoundMutex) Unlock() { b.m.Unlock() }
