package instrument_test

// Regression tests from the fresh-eyes review of issue 10 (the table layer
// and the service API): each was a reproducer of a defect the review found,
// fixed since, or of a property it tried to break and could not. Comments
// below describe what each reproduced when it was written.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
)

// A nil *File's Close is os.ErrInvalid, "as a nil *os.File's Close"
// (TestFileDropInEdges), but its other methods, and those of the BoundFile
// ForCtx returns for it, panic where *os.File's return os.ErrInvalid.
func TestReview10NilFileMethodsPanic(t *testing.T) {
	var f *instrument.File
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Read":              func() error { _, err := f.Read(make([]byte, 1)); return err },
		"Write":             func() error { _, err := f.Write([]byte("x")); return err },
		"Stat":              func() error { _, err := f.Stat(); return err },
		"Sync":              func() error { return f.Sync() },
		"ForCtx(ctx).Write": func() error { _, err := f.ForCtx(ctx).Write([]byte("x")); return err },
		"ForCtx(ctx).Close": func() error { return f.ForCtx(ctx).Close() },
	} {
		panicked, err := func() (panicked any, err error) {
			defer func() { panicked = recover() }()
			return nil, call()
		}()
		if panicked != nil || !errors.Is(err, os.ErrInvalid) {
			t.Errorf("nil File %s: err %v, panic %v; want os.ErrInvalid as *os.File", name, err, panicked)
		}
	}
}

// Holds: operations through ForCtx on a closed file fail as os.File's do
// and record nothing; OPEN_COUNT stays 0.
func TestReview10ForCtxOnClosedFile(t *testing.T) {
	s := ioSchema(t)
	class := instrument.NewFileClass("wait/io/file/test/closed", instrument.WithSchema(s))
	ctx, th := instrument.StartThread(context.Background(), "thread/test/closer", instrument.WithSchema(s))
	defer th.End()
	path := filepath.Join(t.TempDir(), "a")
	f, err := class.CreateCtx(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ForCtx(ctx).Close(); err != nil {
		t.Fatal(err)
	}
	before := ioRow(t, s, "file_summary_by_instance", "FILE_NAME", path)
	if _, err := f.ForCtx(ctx).Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := f.ForCtx(ctx).Close(); err == nil {
		t.Errorf("second Close: nil error")
	}
	after := ioRow(t, s, "file_summary_by_instance", "FILE_NAME", path)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("operations on a closed file recorded:\nbefore %v\nafter  %v", before, after)
	}
	if n := ioRow(t, s, "file_instances", "FILE_NAME", path)["OPEN_COUNT"]; n != uint64(0) {
		t.Errorf("OPEN_COUNT %v after Close and a second Close", n)
	}
}

// Holds: StartThread under a context that carries a thread starts a new,
// separate thread (the child's waits are not the parent's) and the child
// context carries only the child; an invalid name gives a nil thread and a
// context carrying none, as documented.
func TestReview10StartThreadUnderParent(t *testing.T) {
	s := ioSchema(t)
	in := instrument.WithSchema(s)
	pctx, parent := instrument.StartThread(context.Background(), "thread/test/parent", in, instrument.WithUser("p"))
	defer parent.End()
	cctx, child := instrument.StartThread(pctx, "thread/test/child", in, instrument.WithUser("c"))
	defer child.End()
	if child == nil || child == parent || instrument.ThreadFromContext(cctx) != child || instrument.ThreadFromContext(pctx) != parent {
		t.Fatalf("child %v parent %v; ctx carries %v", child, parent, instrument.ThreadFromContext(cctx))
	}
	mu := instrument.NewMutex("wait/synch/mutex/test/pc", in)
	mu.LockCtx(cctx)
	mu.Unlock()
	rows := ioRows(t, s, "events_waits_summary_by_thread_by_event_name", "EVENT_NAME", "wait/synch/mutex/test/pc")
	for _, r := range rows {
		want := uint64(0)
		if r["THREAD_ID"] == child.ID() {
			want = 1
		}
		if r["COUNT_STAR"] != want {
			t.Errorf("thread %v: COUNT_STAR %v, want %d", r["THREAD_ID"], r["COUNT_STAR"], want)
		}
	}
	bctx, bad := instrument.StartThread(pctx, "not a thread name", in)
	if bad != nil || instrument.ThreadFromContext(bctx) != nil {
		t.Errorf("invalid name: thread %v, ctx carries %v", bad, instrument.ThreadFromContext(bctx))
	}
}

// A zero SharedOption (an exported struct type, so one can be declared)
// panics with a nil function call inside the constructor.
func TestReview10ZeroSharedOption(t *testing.T) {
	var o instrument.SharedOption
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("NewMutex with a zero SharedOption panics: %v", r)
		}
	}()
	instrument.NewMutex("wait/synch/mutex/test/zeroopt", o)
}
