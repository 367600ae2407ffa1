package pfscore

import (
	"path/filepath"
	"runtime"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/store"
)

// SyncInstance is the handle of a mutex, rwlock or cond instance: what an
// instrumented lock keeps to report its waits.
type SyncInstance struct {
	s      *Schema
	rec    *store.Record[syncInstance]
	class  *Class
	id     uint64
	source uint64
	freed  atomic.Bool
}

// NewSyncInstance creates an instance of a mutex, rwlock or cond class.
// source is the SOURCE its events show (file:line where the lock was
// created; see package instrument). It returns nil if class is nil or of
// another kind, or if the instances container is full (counted in
// Performance_schema_{mutex,rwlock,cond}_instances_lost); the lock then
// works uninstrumented.
func (s *Schema) NewSyncInstance(class *Class, source string) *SyncInstance {
	if class == nil {
		return nil
	}
	var c = s.syncContainer(class.kind)
	if c == nil {
		return nil
	}
	rec, d := c.Allocate()
	if rec == nil {
		return nil
	}
	m := &SyncInstance{s: s, rec: rec, class: class, id: s.instanceIDs.Add(1), source: s.names.Intern(source)}
	v := &rec.Value
	v.id.Set(m.id)
	v.class.Set(uint64(class.index))
	v.source.Set(m.source)
	v.owner.Set(0)
	v.readers.Store(0)
	v.stat.reset()
	v.shared.reset()
	rec.Lock.DirtyToAllocated(d)
	return m
}

func (s *Schema) syncContainer(k Kind) *store.Container[syncInstance] {
	switch k {
	case KindMutex:
		return s.mutexes
	case KindRWLock:
		return s.rwlocks
	case KindCond:
		return s.conds
	}
	return nil
}

// Class returns the instance's class.
func (m *SyncInstance) Class() *Class { return m.class }

// BeginWait starts a wait on the instance; see Schema's wait path. It
// returns false if the class is off: the caller runs the operation and does
// not call EndWait.
func (m *SyncInstance) BeginWait(w *WaitState, t *Thread, op Operation) bool {
	if !m.s.beginWait(w, m.class, t, op, m.id, 0, m.source, true, hwclock.ClassWait) {
		return false
	}
	// Only a mutex's lock wait ends with the mutex held, serializing its
	// writers: its statistics are owned cells. A try_lock may fail (nothing
	// held), an rwlock's readers end together, and a cond's locker may be
	// shared (an RLocker): their waits use the atomic statistics. Readers
	// sum the two.
	w.grp = truncSync
	if m.class.kind == KindMutex && op == OpLock {
		w.own = &m.rec.Value.stat
	} else {
		w.shared = &m.rec.Value.shared
	}
	return true
}

// SetOwner records LOCKED_BY_THREAD_ID (or WRITE_LOCKED_BY_THREAD_ID): the
// holder calls it after acquiring, with the lock held.
func (m *SyncInstance) SetOwner(t *Thread) {
	if id := t.ID(); id != m.rec.Value.owner.Load() {
		m.rec.Value.owner.Set(id)
	}
}

// ClearOwner clears it; the holder calls it before releasing.
func (m *SyncInstance) ClearOwner() {
	if m.rec.Value.owner.Load() != 0 {
		m.rec.Value.owner.Set(0)
	}
}

// AddReaders adds delta to READ_LOCKED_BY_COUNT (an rwlock's readers). A
// decrement never takes the count below zero, as in MySQL: a reader that
// locked while the class was off was not counted, and its unlock must not
// be either.
func (m *SyncInstance) AddReaders(delta int64) {
	r := &m.rec.Value.readers
	if delta >= 0 {
		r.Add(delta)
		return
	}
	for {
		n := r.Load()
		if n <= 0 || r.CompareAndSwap(n, max(n+delta, 0)) {
			return
		}
	}
}

// Destroy removes the instance: its statistics roll up into its class's
// global row and its record is freed. Call it once, when the lock is no
// longer used (package instrument does it from a cleanup when the lock is
// garbage collected).
func (m *SyncInstance) Destroy() {
	if m == nil || m.freed.Swap(true) {
		return
	}
	s := m.s
	s.instMu.Lock()
	e := s.epochOf(truncSync)
	st := m.rec.Value.stat.load(e.tag)
	st.add(m.rec.Value.shared.load(e.tag))
	s.destroyedWaits(m.class.index).addRow(e, st)
	s.syncContainer(m.class.kind).Free(m.rec)
	s.instMu.Unlock()
	s.maybeReclaim()
}

// IOInstance is the handle of a file or socket instance.
type IOInstance struct {
	s      *Schema
	rec    *store.Record[ioInstance]
	class  *Class
	id     uint64
	name   uint64
	source uint64
	typ    ObjectType
	grp    uint8 // truncFile or truncSocket
	schema string
	oname  string
	freed  atomic.Bool
}

// IOInstance flags, from setup_objects.
const (
	ioEnabled uint32 = 1 << iota
	ioTimed
)

// FileInstance returns the instance of the file at path for class (a
// wait/io/file class), creating it on first use: as in MySQL, one instance
// per file name, shared by every open of it, kept after the last close
// (file_instances shows OPEN_COUNT 0) until DeleteFile. It returns nil if
// the container is full (Performance_schema_file_instances_lost).
func (s *Schema) FileInstance(class *Class, path, source string) *IOInstance {
	if class == nil || class.kind != KindFile {
		return nil
	}
	if f, ok := s.files.Load(path); ok {
		return f.(*IOInstance)
	}
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if f, ok := s.files.Load(path); ok {
		return f.(*IOInstance)
	}
	f := s.newIOInstance(s.fileInsts, class, path, source, ObjectFile, filepath.Dir(path), filepath.Base(path))
	if f != nil {
		s.files.Store(path, f)
	}
	return f
}

// DeleteFile removes the instance of the file at path, if any (the file was
// deleted): its statistics roll up into its class.
func (s *Schema) DeleteFile(path string) {
	s.filesMu.Lock()
	f, ok := s.files.LoadAndDelete(path)
	s.filesMu.Unlock()
	if ok {
		f.(*IOInstance).destroy(s.fileInsts)
	}
}

// NewSocketInstance creates the instance of one socket of class (a
// wait/io/socket class); network and address are the socket's ("tcp",
// "127.0.0.1:5432"), shown as OBJECT_NAME. Destroy it when the socket
// closes. It returns nil if the container is full
// (Performance_schema_socket_instances_lost).
func (s *Schema) NewSocketInstance(class *Class, network, address, source string) *IOInstance {
	if class == nil || class.kind != KindSocket {
		return nil
	}
	return s.newIOInstance(s.socketInsts, class, address, source, ObjectSocket, network, address)
}

func (s *Schema) newIOInstance(c *store.Container[ioInstance], class *Class, name, source string, typ ObjectType, schema, oname string) *IOInstance {
	rec, d := c.Allocate()
	if rec == nil {
		return nil
	}
	f := &IOInstance{s: s, rec: rec, class: class, id: s.instanceIDs.Add(1),
		name: s.names.Intern(name), source: s.names.Intern(source), typ: typ, grp: groupOf(class.kind), schema: schema, oname: oname}
	v := &rec.Value
	v.id.Set(f.id)
	v.class.Set(uint64(class.index))
	v.name.Set(f.name)
	v.source.Set(f.source)
	v.thread.Store(0)
	v.port.Set(0)
	v.ip.Set(0)
	v.open.Store(0)
	v.read.reset()
	v.write.reset()
	v.misc.reset()
	v.readBytes.Store(0)
	v.writeBytes.Store(0)
	v.objState.Store(0)
	f.refreshObject()
	rec.Lock.DirtyToAllocated(d)
	return f
}

// refreshObject looks the instance up in setup_objects again and returns
// its flags. The record's objState word holds the flags with the
// setup_objects version they were looked up at; it only moves forward, so
// a slow refresh can never overwrite a newer one with stale flags.
func (f *IOInstance) refreshObject() uint32 {
	ver := f.s.objectsVersion.Load()
	en, timed := f.s.lookupObject(f.typ, f.schema, f.oname)
	var fl uint32
	if en {
		fl |= ioEnabled
	}
	if timed {
		fl |= ioTimed
	}
	next := ver<<8 | uint64(fl)
	st := &f.rec.Value.objState
	for {
		old := st.Load()
		if old>>8 >= ver && old != 0 {
			return uint32(old & 0xff) // a newer or equal lookup is there
		}
		if st.CompareAndSwap(old, next) {
			return fl
		}
	}
}

// Class returns the instance's class.
func (f *IOInstance) Class() *Class { return f.class }

// BeginWait starts an I/O wait on the instance. It returns false if the
// class or the object (setup_objects) is off.
//
// A destroyed instance records nothing: BeginWait returns false, so a late
// operation cannot write into a record another instance reuses.
func (f *IOInstance) BeginWait(w *WaitState, t *Thread, op Operation) bool {
	if !f.class.On() || f.freed.Load() {
		return false
	}
	st := f.rec.Value.objState.Load()
	fl := uint32(st & 0xff)
	if st>>8 != f.s.objectsVersion.Load() {
		fl = f.refreshObject()
	}
	if fl&ioEnabled == 0 {
		return false
	}
	if !f.s.beginWait(w, f.class, t, op, f.id, f.name, f.source, fl&ioTimed != 0, hwclock.ClassWait) {
		return false
	}
	w.io = &f.rec.Value
	w.grp = f.grp
	return true
}

// AddOpen adds delta to a file's OPEN_COUNT; on a destroyed instance it does
// nothing.
func (f *IOInstance) AddOpen(delta int64) {
	if !f.freed.Load() {
		f.rec.Value.open.Add(delta)
	}
}

// SetSocketState records a socket's owner thread and whether it is in an
// I/O (ACTIVE) or not (IDLE).
func (f *IOInstance) SetSocketState(t *Thread, active bool) {
	v := &f.rec.Value
	if id := t.ID(); v.thread.Load() != id {
		v.thread.Store(id)
	}
	var n int64
	if active {
		n = 1
	}
	v.open.Store(n)
}

// SetSocketAddress records a socket's IP and PORT.
func (f *IOInstance) SetSocketAddress(ip string, port int) {
	f.rec.Value.ip.Set(f.s.names.Intern(ip))
	f.rec.Value.port.Set(uint64(port))
}

// Destroy removes a socket instance (the socket closed): its statistics
// roll up into its class. For files use DeleteFile.
func (f *IOInstance) Destroy() {
	if f != nil && f.typ == ObjectSocket {
		f.destroy(f.s.socketInsts)
	}
}

func (f *IOInstance) destroy(c *store.Container[ioInstance]) {
	if f.freed.Swap(true) {
		return
	}
	v := &f.rec.Value
	f.s.instMu.Lock()
	e := f.s.epochOf(f.grp)
	st := v.read.load(e.tag)
	st.add(v.write.load(e.tag))
	st.add(v.misc.load(e.tag))
	f.s.destroyedWaits(f.class.index).addRow(e, st)
	f.s.destroyedIO(f.class.index).add(e, v)
	c.Free(f.rec)
	f.s.instMu.Unlock()
	f.s.maybeReclaim()
}

// BeginIdle starts an idle wait of thread t: the thread waits for its next
// unit of work (a request, a message). Idle events need a thread; with nil
// BeginIdle returns false.
func (s *Schema) BeginIdle(w *WaitState, t *Thread) bool {
	if t == nil {
		return false
	}
	return s.beginWait(w, s.idle, t, OpIdle, 0, 0, 0, true, hwclock.ClassIdle)
}

// Source returns the "file.go:123" SOURCE of the caller skip frames up (0
// is the caller of Source), for instruments to capture once, where an
// object is created: never per event.
func Source(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return ""
	}
	return filepath.Base(file) + ":" + itoa(line)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}
