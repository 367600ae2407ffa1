package instrument

import (
	"io"
	"os"
	"sync"
)

// io.Copy fast paths (io.ReaderFrom, io.WriterTo) for File and Conn.
//
// *os.File and *net.TCPConn copy without user-space buffers where the kernel
// can (copy_file_range, splice, sendfile), but only when they see each other
// unwrapped. A copy done that way is invisible to the wrappers: one system
// call may move gigabytes, with no read or write of ours to time. So:
//
//   - if neither side records anything (both uninstrumented or disabled,
//     sampled once when the copy starts, as an event samples its flags), the
//     copy is handed to the wrapped types, unwrapped, and keeps the zero-copy
//     path;
//   - otherwise the copy runs through a pooled 32 KiB buffer with the
//     wrappers' own Read and Write, so every chunk is a read or write wait
//     with its NUMBER_OF_BYTES, on both sides.
//
// A single wait spanning the whole copy was rejected: its time would include
// the other side's (the network, a pipe), and its byte count would land in
// one side only.

// copyBufs holds the buffers of recorded copies.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyRecorded copies src to dst through a pooled buffer, hiding their
// ReadFrom and WriteTo so that each chunk goes through Read and Write.
func copyRecorded(dst io.Writer, src io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	return io.CopyBuffer(writerOnly{dst}, readerOnly{src}, *bp)
}

type readerOnly struct{ io.Reader }

type writerOnly struct{ io.Writer }

// recorded reports whether reading or writing x would record events: x is
// a File or Conn whose class is on, or a Conn marked idle, possibly under an
// io.LimitedReader.
func recorded(x any) bool {
	switch v := x.(type) {
	case *File:
		return v.on()
	case *Conn:
		return v.on() || v.idle.on.Load() // an idle mark records an idle wait even with the class off
	case *io.LimitedReader:
		return recorded(v.R)
	}
	return false
}

// unwrapReader returns r with a File or Conn replaced by what it wraps, so
// that the wrapped type recognizes it. For an io.LimitedReader it returns a
// new one, and a function that copies its remaining N back.
func unwrapReader(r io.Reader) (io.Reader, func()) {
	switch v := r.(type) {
	case *File:
		return v.f, func() {}
	case *Conn:
		return v.c, func() {}
	case *io.LimitedReader:
		inner, done := unwrapReader(v.R)
		if inner == v.R {
			return r, done
		}
		lr := &io.LimitedReader{R: inner, N: v.N}
		return lr, func() { done(); v.N = lr.N }
	}
	return r, func() {}
}

// unwrapWriter returns w with a File or Conn replaced by what it wraps.
func unwrapWriter(w io.Writer) io.Writer {
	switch v := w.(type) {
	case *File:
		return v.f
	case *Conn:
		return v.c
	}
	return w
}

// ReadFrom copies r to the file until EOF, as os.File.ReadFrom: if nothing
// would be recorded (the file's class is off and r is not a recording File
// or Conn), with the kernel's zero-copy paths; otherwise as a sequence of
// write waits on the file (and read waits on r, if r is a File or Conn). See
// "io.Copy fast paths" in file_copy.go.
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	if f == nil {
		return 0, os.ErrInvalid
	}
	if f.closed.Load() {
		return 0, os.ErrClosed // as os.File.ReadFrom: r is not read
	}
	if f.on() || recorded(r) {
		return copyRecorded(f, r)
	}
	raw, done := unwrapReader(r)
	n, err := f.f.ReadFrom(raw)
	done()
	return n, err
}

// WriteTo copies the file to w until EOF, as os.File.WriteTo: zero-copy
// (sendfile) when nothing would be recorded, read waits on the file (and
// write waits on w, if w is a File or Conn) otherwise; see ReadFrom.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	if f == nil {
		return 0, os.ErrInvalid
	}
	if f.on() || recorded(w) {
		return copyRecorded(w, f)
	}
	return f.f.WriteTo(unwrapWriter(w))
}
