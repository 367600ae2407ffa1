package pfscore

import (
	"sync/atomic"
	"unsafe"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/internal/store"
)

// Object instances: one record per instrumented object (a mutex, a file, a
// socket), in containers per family, so mutex_instances, file_instances and
// the by-instance summaries are scans of one container each.
//
// Instance statistics are updated on the hot path without the record's Lock:
// they are independent counters that readers load atomically; the Lock
// guards the identity fields (class, name, id), which change only when the
// record is allocated.

// syncInstance is a mutex, rwlock or cond instance (mutex_instances,
// rwlock_instances, cond_instances). With its Record header a record is
// exactly one 128-byte line: a mutex's statistics are written by whoever
// holds it, and two mutexes used on two cores must not share a line. (A page
// is one allocation of at least 32 KiB, which the Go allocator aligns to its
// 8 KiB pages, so records start on line boundaries.)
type syncInstance struct {
	id     owned.Uint64 // OBJECT_INSTANCE_BEGIN
	class  owned.Uint64 // class index
	source owned.Uint64 // interned SOURCE of the instance's creation

	// owner is LOCKED_BY_THREAD_ID (mutex) or WRITE_LOCKED_BY_THREAD_ID
	// (rwlock), 0 for none. A mutex's is written by its holder.
	owner owned.Uint64
	// readers is an rwlock's READ_LOCKED_BY_COUNT.
	readers atomic.Int64

	// stat is the instance's events_waits_summary_by_instance row. A
	// mutex's and a cond's events end with the instrumented lock held, which
	// serializes their writers (ownedStat); an rwlock's readers end together
	// (sharedStat, in shared below).
	stat   ownedStat
	shared sharedStat
	_      [8]byte // to 128 bytes with the Record header
}

// ioInstance is a file or socket instance (file_instances, socket_instances,
// file_summary_by_instance, socket_summary_by_instance).
type ioInstance struct {
	id     owned.Uint64 // OBJECT_INSTANCE_BEGIN
	class  owned.Uint64
	name   owned.Uint64 // interned FILE_NAME, or the socket's address
	source owned.Uint64
	// thread is a socket's THREAD_ID (0 for none). Any goroutine using the
	// socket may set it, so it is an atomic, not an owned cell.
	thread atomic.Uint64
	port   owned.Uint64 // socket: PORT
	ip     owned.Uint64 // socket: interned IP
	// open is OPEN_COUNT for a file; for a socket, 1 while ACTIVE (in an
	// I/O) and 0 while IDLE.
	open atomic.Int64
	// objState holds setup_objects' ENABLED and TIMED for this object (low
	// byte) and the setup_objects version they were looked up at (above).
	objState atomic.Uint64

	read, write, misc     sharedStat
	readBytes, writeBytes atomic.Uint64
}

func init() {
	// Keep the records at their intended sizes; see syncInstance.
	if s := unsafe.Sizeof(store.Record[syncInstance]{}); s != store.CacheLine {
		panic("pfs: BUG: a syncInstance record is not one cache line")
	}
}
