package instrument

import (
	"context"
	"sync"

	"github.com/otelpfs/otelpfs/pfscore"
)

// An RWMutex is a sync.RWMutex instrumented as
// wait/synch/rwlock/<component>/<name>: read_lock and write_lock waits,
// WRITE_LOCKED_BY_THREAD_ID and READ_LOCKED_BY_COUNT in rwlock_instances.
// The method set is sync.RWMutex's, plus a …Ctx variant of each locking
// method, For and ForCtx, as Mutex.
type RWMutex struct {
	mu sync.RWMutex
	syncObject
}

// NewRWMutex returns a read-write mutex of the instrument class name
// (wait/synch/rwlock/<component>/<name>).
func NewRWMutex(name string, opts ...Option) *RWMutex {
	m := &RWMutex{}
	initSync(m, &m.syncObject, name, "NewRWMutex", pfscore.KindRWLock, opts)
	return m
}

// Init instruments an RWMutex declared as a value, as NewRWMutex would; see
// Mutex.Init.
func (rw *RWMutex) Init(name string, opts ...Option) {
	initSync(rw, &rw.syncObject, name, "(*RWMutex).Init", pfscore.KindRWLock, opts)
}

// Lock locks rw for writing.
func (rw *RWMutex) Lock() { rw.lock(nil) }

// LockCtx locks rw for writing, attributing the wait to ctx's thread.
func (rw *RWMutex) LockCtx(ctx context.Context) { rw.lock(ThreadFromContext(ctx)) }

func (rw *RWMutex) lock(t *Thread) {
	if !rw.on() {
		rw.mu.Lock()
		return
	}
	var w pfscore.WaitState
	waited := rw.begin(&w, t, pfscore.OpWriteLock)
	rw.mu.Lock()
	if waited {
		rw.end(&w)
		rw.inst.SetOwner(t)
	}
}

// Unlock unlocks rw for writing.
func (rw *RWMutex) Unlock() {
	if rw.inst != nil {
		rw.inst.ClearOwner()
	}
	rw.mu.Unlock()
}

// TryLock tries to lock rw for writing.
func (rw *RWMutex) TryLock() bool { return rw.tryLock(nil) }

// TryLockCtx is TryLock, attributing the attempt to the thread ctx carries.
func (rw *RWMutex) TryLockCtx(ctx context.Context) bool { return rw.tryLock(ThreadFromContext(ctx)) }

func (rw *RWMutex) tryLock(t *Thread) bool {
	if !rw.on() {
		return rw.mu.TryLock()
	}
	var w pfscore.WaitState
	waited := rw.begin(&w, t, pfscore.OpTryWriteLock)
	ok := rw.mu.TryLock()
	if waited {
		rw.end(&w)
		if ok {
			rw.inst.SetOwner(t)
		}
	}
	return ok
}

// RLock locks rw for reading.
func (rw *RWMutex) RLock() { rw.rlock(nil) }

// RLockCtx locks rw for reading, attributing the wait to ctx's thread.
func (rw *RWMutex) RLockCtx(ctx context.Context) { rw.rlock(ThreadFromContext(ctx)) }

func (rw *RWMutex) rlock(t *Thread) {
	if !rw.on() {
		rw.mu.RLock()
		return
	}
	var w pfscore.WaitState
	waited := rw.begin(&w, t, pfscore.OpReadLock)
	rw.mu.RLock()
	if waited {
		rw.end(&w)
	}
	rw.inst.AddReaders(1)
}

// TryRLock tries to lock rw for reading.
func (rw *RWMutex) TryRLock() bool { return rw.tryRLock(nil) }

// TryRLockCtx is TryRLock, attributing the attempt to the thread ctx
// carries.
func (rw *RWMutex) TryRLockCtx(ctx context.Context) bool { return rw.tryRLock(ThreadFromContext(ctx)) }

func (rw *RWMutex) tryRLock(t *Thread) bool {
	if !rw.on() {
		return rw.mu.TryRLock()
	}
	var w pfscore.WaitState
	waited := rw.begin(&w, t, pfscore.OpTryReadLock)
	ok := rw.mu.TryRLock()
	if waited {
		rw.end(&w)
	}
	if ok {
		rw.inst.AddReaders(1)
	}
	return ok
}

// RUnlock undoes one RLock.
func (rw *RWMutex) RUnlock() {
	if rw.inst != nil {
		rw.inst.AddReaders(-1)
	}
	rw.mu.RUnlock()
}

// RLocker returns a Locker whose Lock and Unlock are RLock and RUnlock.
func (rw *RWMutex) RLocker() sync.Locker { return rlocker{rw} }

type rlocker struct{ rw *RWMutex }

func (r rlocker) Lock()   { r.rw.RLock() }
func (r rlocker) Unlock() { r.rw.RUnlock() }

// For returns rw bound to thread t: its locking methods attribute their
// waits to t. For allocates nothing.
func (rw *RWMutex) For(t *Thread) BoundRWMutex { return BoundRWMutex{rw, t} }

// ForCtx returns rw bound to the thread ctx carries.
func (rw *RWMutex) ForCtx(ctx context.Context) BoundRWMutex {
	return BoundRWMutex{rw, ThreadFromContext(ctx)}
}

// A BoundRWMutex is an RWMutex bound to a thread. It implements sync.Locker.
type BoundRWMutex struct {
	rw *RWMutex
	t  *Thread
}

// Lock locks for writing, attributing the wait to the bound thread.
func (b BoundRWMutex) Lock() { b.rw.lock(b.t) }

// Unlock unlocks for writing.
func (b BoundRWMutex) Unlock() { b.rw.Unlock() }

// RLock locks for reading, attributing the wait to the bound thread.
func (b BoundRWMutex) RLock() { b.rw.rlock(b.t) }

// RUnlock undoes one RLock.
func (b BoundRWMutex) RUnlock() { b.rw.RUnlock() }

// TryLock tries to lock for writing, attributing the attempt to the bound
// thread.
func (b BoundRWMutex) TryLock() bool { return b.rw.tryLock(b.t) }

// TryRLock tries to lock for reading, attributing the attempt to the bound
// thread.
func (b BoundRWMutex) TryRLock() bool { return b.rw.tryRLock(b.t) }
