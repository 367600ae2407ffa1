package instrument

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A FileClass is a file instrument class, wait/io/file/<component>/<name>:
// the kind of file a service opens (its write-ahead log, its data files, its
// configuration). Declare one per kind, once, and open files through it:
//
//	var walFiles = instrument.NewFileClass("wait/io/file/app/wal")
//
//	f, err := walFiles.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
//
// The files it opens are *File values, which wrap *os.File. Every operation
// on them is a wait event of the class whose OPERATION says what it was
// (open, create, read, write, seek, tell, sync, fstat, chsize, close,
// delete) and whose NUMBER_OF_BYTES is what a read or write moved.
//
// # Instances
//
// As in MySQL, there is one file instance per file name, shared by every
// open of that name: file_instances shows it with its OPEN_COUNT,
// file_summary_by_instance its statistics. FILE_NAME (OBJECT_NAME in the
// event tables) is the absolute, cleaned path, so "./data/x" and "data/x"
// are one file; setup_objects sees its directory as OBJECT_SCHEMA and its
// base name as OBJECT_NAME. The instance is created on the file's first
// open and outlives its last close (OPEN_COUNT 0) until the file is removed
// through Remove, which then removes the instance as well: its statistics
// roll up into the class's file_summary_by_event_name row. A file removed
// while open keeps its instance until its last *File closes, as the file
// itself lives on in the file system until then. Removing a file by other
// means (os.Remove) leaves its instance behind. An open that fails, on a
// file never opened before, leaves no instance behind; its wait counts in
// the class's summaries.
//
// A file opened while the class is disabled is still tracked (its instance
// and OPEN_COUNT): enabling the class later starts recording its operations
// at once.
//
// # Thread attribution
//
// The methods of File attribute their events to no thread: they feed the
// global, per-instance and per-event-name summaries, not a thread's tables.
// For a thread's events, use File.For or File.ForCtx (a bound value,
// allocation-free) and the …Ctx methods of FileClass (OpenCtx, CreateCtx,
// OpenFileCtx, RemoveCtx).
//
// # Limitations
//
// SOURCE is where the class was declared (NewFileClass's caller, or
// WithSource), not where each file was opened: a stack walk per open would
// cost more than the open. A bad class name, a schema whose class or file
// tables are full, or the zero FileClass give files that work, uninstrumented.
type FileClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: uninstrumented
	source string
}

// NewFileClass returns the file instrument class name, a
// wait/io/file/<component>/<name> name registered on first use, in the
// schema of WithSchema (by default pfscore.Default()). WithDocumentation sets
// its DOCUMENTATION, WithSource its SOURCE. With a bad name, or when the
// schema is full, the class still opens files, uninstrumented.
func NewFileClass(name string, opts ...Option) *FileClass {
	c := newConfig(opts)
	fc := &FileClass{schema: c.schema}
	if class := c.registerAs(name, "NewFileClass", pfscore.KindFile); class != nil {
		fc.class = class
	}
	fc.source = c.source
	if fc.source == "" {
		fc.source = pfscore.Source(1)
	}
	return fc
}

// Class returns the class's setup_instruments row handle, or nil if the
// class is uninstrumented.
func (c *FileClass) Class() *pfscore.Class { return c.class }

// Open opens the named file for reading, as os.Open; the open is an "open"
// wait.
func (c *FileClass) Open(name string) (*File, error) {
	return c.openFile(nil, name, os.O_RDONLY, 0)
}

// OpenCtx is Open with the open's wait attributed to the thread ctx
// carries. Later operations on the file are attributed as the File's
// methods say: use For or ForCtx to bind them to a thread.
func (c *FileClass) OpenCtx(ctx context.Context, name string) (*File, error) {
	return c.openFile(ThreadFromContext(ctx), name, os.O_RDONLY, 0)
}

// Create creates or truncates the named file, as os.Create; the open is a
// "create" wait.
func (c *FileClass) Create(name string) (*File, error) {
	return c.openFile(nil, name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// CreateCtx is Create with the open's wait attributed to the thread ctx
// carries; see OpenCtx.
func (c *FileClass) CreateCtx(ctx context.Context, name string) (*File, error) {
	return c.openFile(ThreadFromContext(ctx), name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens the named file as os.OpenFile does. The open is a wait
// whose OPERATION is "create" if flag has os.O_CREATE, "open" otherwise.
func (c *FileClass) OpenFile(name string, flag int, perm os.FileMode) (*File, error) {
	return c.openFile(nil, name, flag, perm)
}

// OpenFileCtx is OpenFile with the open's wait attributed to the thread ctx
// carries; see OpenCtx.
func (c *FileClass) OpenFileCtx(ctx context.Context, name string, flag int, perm os.FileMode) (*File, error) {
	return c.openFile(ThreadFromContext(ctx), name, flag, perm)
}

func (c *FileClass) openFile(t *Thread, name string, flag int, perm os.FileMode) (*File, error) {
	var inst *pfscore.IOInstance
	if c != nil && c.class != nil {
		inst = fileRefs.acquire(c.schema, c.class, absPath(name), c.source)
	}
	if inst == nil {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return &File{f: f}, nil
	}
	op := pfscore.OpFileOpen
	if flag&os.O_CREATE != 0 {
		op = pfscore.OpFileCreate
	}
	var f *os.File
	_, err := ioWait(inst, t, op, nil, nil, func() (n int64, err error) {
		f, err = os.OpenFile(name, flag, perm)
		return -1, err
	})
	if err != nil {
		fileRefs.release(inst)
		return nil, err
	}
	return newFile(f, inst), nil
}

// Wrap instruments f, a file opened elsewhere (os.CreateTemp, an inherited
// descriptor), as a file of the class: no open wait is recorded, but the
// file counts in OPEN_COUNT and its operations from here on are waits. The
// returned File owns f: close f through it.
func (c *FileClass) Wrap(f *os.File) *File {
	var inst *pfscore.IOInstance
	if c != nil && c.class != nil {
		inst = fileRefs.acquire(c.schema, c.class, absPath(f.Name()), c.source)
	}
	if inst == nil {
		return &File{f: f}
	}
	return newFile(f, inst)
}

// Remove removes the named file or empty directory, as os.Remove, as a
// "delete" wait. If the removal succeeds, the file's instance leaves
// file_instances, at once or, if the file is still open through a File, at
// its last Close.
func (c *FileClass) Remove(name string) error { return c.remove(nil, name) }

// RemoveCtx is Remove with the wait attributed to the thread ctx carries.
func (c *FileClass) RemoveCtx(ctx context.Context, name string) error {
	return c.remove(ThreadFromContext(ctx), name)
}

func (c *FileClass) remove(t *Thread, name string) error {
	var inst *pfscore.IOInstance
	if c != nil && c.class != nil {
		inst = fileRefs.acquire(c.schema, c.class, absPath(name), c.source)
	}
	if inst == nil {
		return os.Remove(name)
	}
	_, err := ioWait(inst, t, pfscore.OpFileDelete, nil, nil, func() (int64, error) { return -1, os.Remove(name) })
	fileRefs.remove(inst, err == nil)
	return err
}

// absPath is a file's FILE_NAME: its absolute, cleaned path, or the cleaned
// name if the working directory is unknown.
func absPath(name string) string {
	if filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	if p, err := filepath.Abs(name); err == nil {
		return p
	}
	return filepath.Clean(name)
}

// A File is an *os.File whose operations are wait events of its FileClass;
// see FileClass for the model. It implements io.Reader, io.Writer,
// io.Seeker, io.Closer, io.ReaderAt, io.WriterAt, io.StringWriter,
// io.ReaderFrom and io.WriterTo.
//
// What each method records (OPERATION, NUMBER_OF_BYTES):
//
//	Read, ReadAt                read, bytes read (also when an error or EOF ends it)
//	Write, WriteAt, WriteString write, bytes written
//	Seek                        seek; tell for Seek(0, io.SeekCurrent), as MySQL's my_tell
//	Sync                        sync
//	Stat                        fstat
//	Truncate                    chsize
//	Close                       close; OPEN_COUNT drops by one
//	ReadFrom, WriteTo           see their documentation
//	Name, Fd, OSFile            nothing
//
// file_summary_* count read and write waits in their READ and WRITE columns
// and every other operation in MISC.
//
// # Cost
//
// When the class is disabled, a method costs a nil check and one atomic
// load more than the *os.File method, and allocates nothing. When enabled,
// it adds pfscore's wait path (two timer reads when TIMED, a few atomic adds
// on the file's shared statistics), and still allocates nothing.
//
// # Concurrency
//
// A File may be used by several goroutines at once, as an *os.File may. The
// instance's statistics are shared and updated with atomic adds. A File that
// becomes unreachable without Close gives its OPEN_COUNT back when it is
// garbage collected.
//
// Accepted race: an operation that overlaps the Close of the last File of a
// removed file may add its wait to the freed instance's record, which a new
// instance may already be reusing (a stray count in another row, never a
// memory fault). Counting operations in flight would close the window at
// the cost of two locked instructions per operation; a close racing a
// removal racing I/O on the same descriptor is a bug in the caller anyway.
type File struct {
	f       *os.File
	class   *pfscore.Class      // inst's class; nil: uninstrumented
	inst    *pfscore.IOInstance // nil: uninstrumented
	closed  atomic.Bool
	cleanup runtime.Cleanup
}

// newFile returns the File of f, an open file holding a reference to inst
// (see fileRefs).
func newFile(f *os.File, inst *pfscore.IOInstance) *File {
	fileRefs.opened(inst)
	inst.AddOpen(1)
	file := &File{f: f, class: inst.Class(), inst: inst}
	file.cleanup = runtime.AddCleanup(file, releaseLost, inst)
	return file
}

// releaseLost gives back the OPEN_COUNT and reference of a File that was
// garbage collected without Close.
func releaseLost(inst *pfscore.IOInstance) {
	inst.AddOpen(-1)
	fileRefs.release(inst)
}

// on reports whether f's class collects events now: a nil check and one
// atomic load.
func (f *File) on() bool { return f != nil && f.class != nil && f.class.On() }

// os returns the wrapped *os.File, nil for a nil File: a nil File's
// methods then answer as a nil *os.File's do (os.ErrInvalid).
func (f *File) os() *os.File {
	if f == nil {
		return nil
	}
	return f.f
}

// OSFile returns the wrapped *os.File, for what File does not wrap (Chmod,
// ReadDir, SyscallConn, ...). Operations on it are not recorded; do not
// Close it directly (close the File).
func (f *File) OSFile() *os.File { return f.f }

// Name returns the name of the file as presented to Open.
func (f *File) Name() string { return f.f.Name() }

// Fd returns the file's descriptor; see os.File.Fd.
func (f *File) Fd() uintptr { return f.f.Fd() }

// For returns f bound to thread t: its methods attribute their waits to t.
// BoundFile is a small value; For allocates nothing.
func (f *File) For(t *Thread) BoundFile { return BoundFile{f, t} }

// ForCtx returns f bound to the thread ctx carries, for one call or a few:
//
//	f.ForCtx(ctx).Write(p)
//	fmt.Fprintf(f.ForCtx(ctx), "GET %s\n", path)
func (f *File) ForCtx(ctx context.Context) BoundFile { return BoundFile{f, ThreadFromContext(ctx)} }

// Each operation below is three functions: the File method and the
// BoundFile method, which run the operation directly if the class is off (a
// nil check and an atomic load), and otherwise call a function of both with
// the thread (none, or the bound one). That function runs the operation in a
// closure through f.wait, so that every recorded operation of a file or
// socket has the one body of ioWait; the closure lives on the stack (it does
// not escape), and the function is kept out of line so that its larger
// frame is not the disabled path's.

// wait runs call, an operation of kind op on the file, as a wait attributed
// to t, unless f is closed or its instance (setup_objects) is off. call
// returns the wait's NUMBER_OF_BYTES (negative for an operation that moves
// none) and the operation's error. f's cleanup must not run during the
// operation: ioWait keeps f alive to its end.
func (f *File) wait(t *Thread, op pfscore.Operation, call func() (int64, error)) (int64, error) {
	return ioWait(f.inst, t, op, &f.closed, f, call)
}

// ioWait runs call as a wait of op on inst, attributed to t, if inst's class
// and object collect events now and closed (if not nil) is false;
// otherwise it only runs call. call returns the wait's NUMBER_OF_BYTES,
// negative for none, and its error. keep is kept reachable until the wait
// has ended: the object whose garbage collection would free inst, or nil.
// Every recorded operation of a file or socket goes through it.
func ioWait(inst *pfscore.IOInstance, t *Thread, op pfscore.Operation, closed *atomic.Bool, keep any, call func() (int64, error)) (int64, error) {
	var w pfscore.WaitState
	if (closed != nil && closed.Load()) || !inst.BeginWait(&w, t, op) {
		return call()
	}
	n, err := call()
	w.EndWait(n)
	runtime.KeepAlive(keep)
	return n, err
}

// Read reads up to len(p) bytes into p, as os.File.Read.
func (f *File) Read(p []byte) (int, error) {
	if !f.on() {
		return f.os().Read(p)
	}
	return f.read(nil, p)
}

// Read is File.Read, attributed to the bound thread.
func (b BoundFile) Read(p []byte) (int, error) {
	if !b.f.on() {
		return b.f.os().Read(p)
	}
	return b.f.read(b.t, p)
}

//go:noinline
func (f *File) read(t *Thread, p []byte) (int, error) {
	n, err := f.wait(t, pfscore.OpFileRead, func() (int64, error) {
		n, err := f.f.Read(p)
		return int64(n), err
	})
	return int(n), err
}

// ReadAt reads len(p) bytes at offset off, as os.File.ReadAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if !f.on() {
		return f.os().ReadAt(p, off)
	}
	return f.readAt(nil, p, off)
}

// ReadAt is File.ReadAt, attributed to the bound thread.
func (b BoundFile) ReadAt(p []byte, off int64) (int, error) {
	if !b.f.on() {
		return b.f.os().ReadAt(p, off)
	}
	return b.f.readAt(b.t, p, off)
}

//go:noinline
func (f *File) readAt(t *Thread, p []byte, off int64) (int, error) {
	n, err := f.wait(t, pfscore.OpFileRead, func() (int64, error) {
		n, err := f.f.ReadAt(p, off)
		return int64(n), err
	})
	return int(n), err
}

// Write writes p, as os.File.Write.
func (f *File) Write(p []byte) (int, error) {
	if !f.on() {
		return f.os().Write(p)
	}
	return f.write(nil, p)
}

// Write is File.Write, attributed to the bound thread.
func (b BoundFile) Write(p []byte) (int, error) {
	if !b.f.on() {
		return b.f.os().Write(p)
	}
	return b.f.write(b.t, p)
}

//go:noinline
func (f *File) write(t *Thread, p []byte) (int, error) {
	n, err := f.wait(t, pfscore.OpFileWrite, func() (int64, error) {
		n, err := f.f.Write(p)
		return int64(n), err
	})
	return int(n), err
}

// WriteAt writes p at offset off, as os.File.WriteAt.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if !f.on() {
		return f.os().WriteAt(p, off)
	}
	return f.writeAt(nil, p, off)
}

// WriteAt is File.WriteAt, attributed to the bound thread.
func (b BoundFile) WriteAt(p []byte, off int64) (int, error) {
	if !b.f.on() {
		return b.f.os().WriteAt(p, off)
	}
	return b.f.writeAt(b.t, p, off)
}

//go:noinline
func (f *File) writeAt(t *Thread, p []byte, off int64) (int, error) {
	n, err := f.wait(t, pfscore.OpFileWrite, func() (int64, error) {
		n, err := f.f.WriteAt(p, off)
		return int64(n), err
	})
	return int(n), err
}

// WriteString writes s, as os.File.WriteString (without copying s).
func (f *File) WriteString(s string) (int, error) {
	if !f.on() {
		return f.os().WriteString(s)
	}
	return f.writeString(nil, s)
}

// WriteString is File.WriteString, attributed to the bound thread.
func (b BoundFile) WriteString(s string) (int, error) {
	if !b.f.on() {
		return b.f.os().WriteString(s)
	}
	return b.f.writeString(b.t, s)
}

//go:noinline
func (f *File) writeString(t *Thread, s string) (int, error) {
	n, err := f.wait(t, pfscore.OpFileWrite, func() (int64, error) {
		n, err := f.f.WriteString(s)
		return int64(n), err
	})
	return int(n), err
}

// Seek sets the offset for the next Read or Write, as os.File.Seek. It is a
// "seek" wait, or a "tell" wait for Seek(0, io.SeekCurrent), which only
// asks where the offset is.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if !f.on() {
		return f.os().Seek(offset, whence)
	}
	return f.seek(nil, offset, whence)
}

// Seek is File.Seek, attributed to the bound thread.
func (b BoundFile) Seek(offset int64, whence int) (int64, error) {
	if !b.f.on() {
		return b.f.os().Seek(offset, whence)
	}
	return b.f.seek(b.t, offset, whence)
}

//go:noinline
func (f *File) seek(t *Thread, offset int64, whence int) (int64, error) {
	op := pfscore.OpFileSeek
	if offset == 0 && whence == io.SeekCurrent {
		op = pfscore.OpFileTell
	}
	var ret int64
	_, err := f.wait(t, op, func() (n int64, err error) {
		ret, err = f.f.Seek(offset, whence)
		return -1, err
	})
	return ret, err
}

// Sync commits the file to stable storage, as os.File.Sync.
func (f *File) Sync() error {
	if !f.on() {
		return f.os().Sync()
	}
	return f.sync(nil)
}

// Sync is File.Sync, attributed to the bound thread.
func (b BoundFile) Sync() error {
	if !b.f.on() {
		return b.f.os().Sync()
	}
	return b.f.sync(b.t)
}

//go:noinline
func (f *File) sync(t *Thread) error {
	_, err := f.wait(t, pfscore.OpFileSync, func() (int64, error) { return -1, f.f.Sync() })
	return err
}

// Stat returns the file's FileInfo, as os.File.Stat; an "fstat" wait.
func (f *File) Stat() (os.FileInfo, error) {
	if !f.on() {
		return f.os().Stat()
	}
	return f.stat(nil)
}

// Stat is File.Stat, attributed to the bound thread.
func (b BoundFile) Stat() (os.FileInfo, error) {
	if !b.f.on() {
		return b.f.os().Stat()
	}
	return b.f.stat(b.t)
}

//go:noinline
func (f *File) stat(t *Thread) (os.FileInfo, error) {
	var fi os.FileInfo
	_, err := f.wait(t, pfscore.OpFileFstat, func() (n int64, err error) {
		fi, err = f.f.Stat()
		return -1, err
	})
	return fi, err
}

// Truncate changes the file's size, as os.File.Truncate; a "chsize" wait.
func (f *File) Truncate(size int64) error {
	if !f.on() {
		return f.os().Truncate(size)
	}
	return f.truncate(nil, size)
}

// Truncate is File.Truncate, attributed to the bound thread.
func (b BoundFile) Truncate(size int64) error {
	if !b.f.on() {
		return b.f.os().Truncate(size)
	}
	return b.f.truncate(b.t, size)
}

//go:noinline
func (f *File) truncate(t *Thread, size int64) error {
	_, err := f.wait(t, pfscore.OpFileChsize, func() (int64, error) { return -1, f.f.Truncate(size) })
	return err
}

// Close closes the file, as os.File.Close: a "close" wait, and OPEN_COUNT
// drops by one. A second Close records nothing and returns os.File.Close's
// error.
func (f *File) Close() error { return f.close(nil) }

// Close is File.Close, attributed to the bound thread.
func (b BoundFile) Close() error { return b.f.close(b.t) }

func (f *File) close(t *Thread) error {
	if f == nil {
		return os.ErrInvalid // as a nil *os.File's Close
	}
	if f.inst == nil || f.closed.Swap(true) {
		return f.os().Close()
	}
	f.cleanup.Stop()
	_, err := ioWait(f.inst, t, pfscore.OpFileClose, nil, f, func() (int64, error) { return -1, f.f.Close() })
	f.inst.AddOpen(-1)
	fileRefs.release(f.inst)
	runtime.KeepAlive(f)
	return err
}

// A BoundFile is a File bound to a thread (File.For, File.ForCtx): its
// methods are the File's, with their waits attributed to the thread.
type BoundFile struct {
	f *File
	t *Thread
}

// File returns the bound File.
func (b BoundFile) File() *File { return b.f }

// fileRefs tracks which file instances are in use, so that removing a file
// never frees an instance a File still reports to: pfscore.Schema.DeleteFile
// frees the record at once, and a File holding its *IOInstance would then
// write into whatever instance reuses the record.
//
// An instance is held by each open File and by each open or remove in
// progress. It is deleted (DeleteFile) when its last hold goes and either
// the file was removed through a FileClass since it was last opened, or no
// open of it ever succeeded (a failed open or a remove of a file never
// opened: no instance is left for a file that does not exist).
//
// One mutex guards the map: it is taken by opens, closes and removes, each
// of which costs a system call, never by reads and writes. pfscore's
// FileInstance is called under it, so a lookup and its hold are one step
// with respect to a deletion.
var fileRefs = fileRegistry{m: map[*pfscore.IOInstance]*fileRef{}}

type fileRegistry struct {
	mu sync.Mutex
	m  map[*pfscore.IOInstance]*fileRef
}

type fileRef struct {
	schema  *pfscore.Schema
	path    string
	holds   int  // open Files, and opens and removes in progress
	opened  bool // an open succeeded since the instance was made or the file removed
	removed bool // removed since it was last opened: delete with the last hold
}

// acquire returns the instance of path, created if need be, with one hold
// on it; nil if the schema's file instances are full.
func (r *fileRegistry) acquire(s *pfscore.Schema, class *pfscore.Class, path, source string) *pfscore.IOInstance {
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := s.FileInstance(class, path, source)
	if inst == nil {
		return nil
	}
	ref := r.m[inst]
	if ref == nil {
		ref = &fileRef{schema: s, path: path}
		r.m[inst] = ref
	}
	ref.holds++
	return inst
}

// opened records a successful open of a held instance: the hold stays, for
// the File, until release.
func (r *fileRegistry) opened(inst *pfscore.IOInstance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref := r.m[inst]; ref != nil {
		ref.opened, ref.removed = true, false
	}
}

// remove ends a remove's hold; removed says whether the file was removed.
func (r *fileRegistry) remove(inst *pfscore.IOInstance, removed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref := r.m[inst]; ref != nil && removed {
		ref.removed, ref.opened = true, false
	}
	r.releaseLocked(inst)
}

// release ends a hold: a File's, or a failed open's.
func (r *fileRegistry) release(inst *pfscore.IOInstance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseLocked(inst)
}

func (r *fileRegistry) releaseLocked(inst *pfscore.IOInstance) {
	ref := r.m[inst]
	if ref == nil {
		return
	}
	if ref.holds--; ref.holds > 0 {
		return
	}
	if ref.removed || !ref.opened {
		delete(r.m, inst)
		ref.schema.DeleteFile(ref.path)
	}
}
