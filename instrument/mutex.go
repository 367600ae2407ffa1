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

// initSync makes o, the syncObject of owner (a Mutex, RWMutex or Cond), an
// instance of the class name of kind kind, and arranges for the instance's
// record to be freed when owner is garbage collected. ctor is the
// constructor, for errors; SOURCE is its caller's file:line.
func initSync[T any](owner *T, o *syncObject, name, ctor string, kind pfscore.Kind, opts []Option) {
	c := newConfig(opts)
	class := c.registerAs(name, ctor, kind)
	if class == nil {
		return
	}
	if c.source == "" {
		c.source = pfscore.Source(2) // the constructor's caller
	}
	inst := c.schema.NewSyncInstance(class, c.source)
	if inst == nil {
		return
	}
	o.class, o.inst = class, inst
	runtime.AddCleanup(owner, (*pfscore.SyncInstance).Destroy, inst)
}

// on reports whether the object's class collects events now.
func (o *syncObject) on() bool {
	return o.class != nil && o.class.On()
}

// begin starts a wait of op on the object, attributed to t. It returns
// false if the class is off: the caller runs its operation unrecorded and
// does not call end.
func (o *syncObject) begin(w *pfscore.WaitState, t *Thread, op pfscore.Operation) bool {
	return o.inst.BeginWait(w, t, op)
}

// end ends the wait begin started, once the operation is over. Every
// recorded lock, try-lock and cond wait goes through begin and end.
func (o *syncObject) end(w *pfscore.WaitState) {
	w.EndWait(-1)
	// o is inside the lock: keeping it keeps the lock, whose cleanup must
	// not free the instance before EndWait.
	runtime.KeepAlive(o)
}

// A Mutex is a sync.Mutex whose waits are instrumented as
// wait/synch/mutex/<component>/<name>: each Lock that had to acquire the
// lock is a wait event, LOCKED_BY_THREAD_ID shows the holder, and
// mutex_instances lists it.
//
// Lock, Unlock and TryLock are sync.Mutex's; they attribute nothing to a
// thread, yet still feed the per-instance and global summaries. LockCtx and
// TryLockCtx attribute the wait to the thread of a context, and For (or
// ForCtx) binds a thread for a Lock/Unlock pair. A Mutex made without
// NewMutex or Init (the zero value) is a plain, uninstrumented mutex.
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
	initSync(m, &m.syncObject, name, "NewMutex", pfscore.KindMutex, opts)
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
	initSync(m, &m.syncObject, name, "(*Mutex).Init", pfscore.KindMutex, opts)
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
	waited := m.begin(&w, t, pfscore.OpLock)
	m.mu.Lock()
	if waited {
		m.end(&w)
		m.held(t)
	}
}

// held records t as the holder, for LOCKED_BY_THREAD_ID; Unlock clears it.
func (m *Mutex) held(t *Thread) {
	m.inst.SetOwner(t)
	m.owned = true
}

// TryLock tries to lock m and reports whether it succeeded; the attempt is
// a try_lock wait.
func (m *Mutex) TryLock() bool { return m.tryLock(nil) }

// TryLockCtx is TryLock, attributing the attempt to the thread ctx carries.
func (m *Mutex) TryLockCtx(ctx context.Context) bool { return m.tryLock(ThreadFromContext(ctx)) }

func (m *Mutex) tryLock(t *Thread) bool {
	if !m.on() {
		return m.mu.TryLock()
	}
	var w pfscore.WaitState
	waited := m.begin(&w, t, pfscore.OpTryLock)
	ok := m.mu.TryLock()
	if waited {
		m.end(&w)
		if ok {
			m.held(t)
		}
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

// ForCtx returns m bound to the thread ctx carries.
func (m *Mutex) ForCtx(ctx context.Context) BoundMutex { return BoundMutex{m, ThreadFromContext(ctx)} }

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
