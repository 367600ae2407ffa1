package instrument_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
)

// Regression tests for instance lifetimes and drop-in behaviour found in
// review.

// SetThread while a Read is in flight: when the read ends, THREAD_ID stays
// the new owner (the read must not write back the thread it started with).
func TestSetThreadDuringRead(t *testing.T) {
	k, client, server := newIOPair(t)
	s := k.s
	th := instrument.NewThread("thread/test/handler", instrument.WithSchema(s))
	defer th.End()

	done := make(chan struct{})
	go func() { defer close(done); server.Read(make([]byte, 1)) }()
	for ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName)["STATE"] != "ACTIVE" {
		runtime.Gosched()
	}
	server.SetThread(th)
	client.Write([]byte("x"))
	<-done
	ioCheck(t, "after the read ended", ioRow(t, s, "socket_instances", "EVENT_NAME", k.serverName),
		map[string]any{"THREAD_ID": th.ID(), "STATE": "IDLE"})
}

// An operation that ends while Close destroys the instance must not write
// into the record, which another socket may already reuse.
func TestReleaseDoesNotTouchFreedRecord(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := ioSchema(t)
	class := instrument.NewSocketClass("wait/io/socket/test/reuse", instrument.WithSchema(s))
	th := instrument.NewThread("thread/test/owner", instrument.WithSchema(s))
	defer th.End()
	rounds := 100 // each round lasts until the spinning goroutine is preempted (~10 ms)
	if testing.Short() {
		rounds = 20
	}
	for i := range rounds {
		a, b := net.Pipe()
		c1 := class.Wrap(a)
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				c1.SetThread(th)
			}
		}()
		runtime.Gosched()
		c1.Close()
		x, y := net.Pipe()
		c2 := class.Wrap(x) // no owner: THREAD_ID must stay NULL
		stop.Store(true)
		wg.Wait()
		for _, r := range ioRows(t, s, "socket_instances", "EVENT_NAME", "wait/io/socket/test/reuse") {
			if r["THREAD_ID"] != nil {
				t.Fatalf("round %d: a fresh socket without owner shows THREAD_ID %v", i, r["THREAD_ID"])
			}
		}
		c2.Close()
		b.Close()
		y.Close()
	}
}

// A File whose last use is a blocked Read stays alive during the read: its
// GC cleanup must not give back its OPEN_COUNT while the descriptor is open.
func TestFileAliveDuringRead(t *testing.T) {
	s := ioSchema(t)
	class := instrument.NewFileClass("wait/io/file/test/fifo", instrument.WithSchema(s))
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	f, err := class.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	osf := f.OSFile() // to unblock the reader
	started, done := make(chan struct{}), make(chan struct{})
	go func(f *instrument.File) {
		defer close(done)
		close(started)
		f.Read(make([]byte, 1)) // the last use of f
	}(f)
	f = nil
	<-started
	time.Sleep(20 * time.Millisecond) // let the reader block; the check does not depend on it
	for range 10 {
		runtime.GC()
	}
	if n := ioRow(t, s, "file_instances", "FILE_NAME", path)["OPEN_COUNT"]; n != uint64(1) {
		t.Errorf("OPEN_COUNT = %v during a blocked read, want 1", n)
	}
	osf.Write([]byte("x"))
	<-done
}

// File behaves as *os.File at its edges: ReadFrom on a closed file reads
// nothing from its source, and a nil *File's Close is os.ErrInvalid.
func TestFileDropInEdges(t *testing.T) {
	s := ioSchema(t)
	class := instrument.NewFileClass("wait/io/file/test/edges", instrument.WithSchema(s))
	f, err := class.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := bytes.NewReader(make([]byte, 1000))
	if n, err := f.ReadFrom(src); n != 0 || !errors.Is(err, os.ErrClosed) || src.Len() != 1000 {
		t.Errorf("ReadFrom after Close: n=%d err=%v, source left %d of 1000; want 0, ErrClosed, 1000", n, err, src.Len())
	}
	var nilFile *instrument.File
	if err := nilFile.Close(); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("nil File Close: %v, want os.ErrInvalid", err)
	}
}
