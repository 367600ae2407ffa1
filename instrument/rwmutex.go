package instrument

import (
	"context"
	"runtime"
	"sync"

	"github.com/otelpfs/otelpfs/pfscore"
)

// An RWMutex is a sync.RWMutex instrumented as
// wait/synch/rwlock/<component>/<name>: read_lock and write_lock waits,
// WRITE_LOCKED_BY_THREAD_ID and READ_LOCKED_BY_COUNT in rwlock_instances.
// The method set is sync.RWMutex's, plus …Ctx variants and For, as Mutex.
type RWMutex struct {
	mu sync.RWMutex
	syncObject
}

// NewRWMutex returns a read-write mutex of the instrument class name
// (wait/synch/rwlock/<component>/<name>).
func NewRWMutex(name string, opts ...Option) *RWMutex {
	m := &RWMutex{}
	m.init(name, "NewRWMutex", pfscore.KindRWLock, 1, opts)
	freeWithOwner(m, m.inst)
	return m
}

// Init instruments an RWMutex declared as a value, as NewRWMutex would; see
// Mutex.Init.
func (rw *RWMutex) Init(name string, opts ...Option) {
	rw.init(name, "(*RWMutex).Init", pfscore.KindRWLock, 1, opts)
	freeWithOwner(rw, rw.inst)
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
	if !rw.inst.BeginWait(&w, t, pfscore.OpWriteLock) {
		rw.mu.Lock()
		return
	}
	rw.mu.Lock()
	w.EndWait(-1)
	runtime.KeepAlive(rw) // its cleanup must not free the instance before EndWait
	rw.inst.SetOwner(t)
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

func (rw *RWMutex) tryLock(t *Thread) bool {
	if !rw.on() {
		return rw.mu.TryLock()
	}
	var w pfscore.WaitState
	if !rw.inst.BeginWait(&w, t, pfscore.OpTryWriteLock) {
		return rw.mu.TryLock()
	}
	ok := rw.mu.TryLock()
	w.EndWait(-1)
	runtime.KeepAlive(rw) // its cleanup must not free the instance before EndWait
	if ok {
		rw.inst.SetOwner(t)
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
	if rw.inst.BeginWait(&w, t, pfscore.OpReadLock) {
		rw.mu.RLock()
		w.EndWait(-1)
		runtime.KeepAlive(rw) // its cleanup must not free the instance before EndWait
	} else {
		rw.mu.RLock()
	}
	rw.inst.AddReaders(1)
}

// TryRLock tries to lock rw for reading.
func (rw *RWMutex) TryRLock() bool { return rw.tryRLock(nil) }

func (rw *RWMutex) tryRLock(t *Thread) bool {
	if !rw.on() {
		return rw.mu.TryRLock()
	}
	var w pfscore.WaitState
	var ok bool
	if rw.inst.BeginWait(&w, t, pfscore.OpTryReadLock) {
		ok = rw.mu.TryRLock()
		w.EndWait(-1)
		runtime.KeepAlive(rw) // its cleanup must not free the instance before EndWait
	} else {
		ok = rw.mu.TryRLock()
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

// For returns rw bound to thread t.
func (rw *RWMutex) For(t *Thread) BoundRWMutex { return BoundRWMutex{rw, t} }

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
