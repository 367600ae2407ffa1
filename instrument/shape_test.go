package instrument_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Tests of the calls "The shape of every instrument" (doc.go) added:
// StartThread and ThreadClass.StartCtx, the Ctx and ForCtx variants, Cond's
// constructors, Conn.For, and the option kinds.

// threadOps returns the OPERATIONs of th's events_waits_history, oldest
// first, with the event names they belong to.
func threadOps(t *testing.T, s *pfscore.Schema, th *instrument.Thread) (ops, names []string) {
	t.Helper()
	for _, r := range ioRows(t, s, "events_waits_history", "THREAD_ID", th.ID()) {
		ops = append(ops, r["OPERATION"].(string))
		names = append(names, r["EVENT_NAME"].(string))
	}
	return ops, names
}

// historySchema is a private schema with events_waits_current and
// events_waits_history on.
func historySchema(t *testing.T, opts ...pfscore.Option) *pfscore.Schema {
	return ioSchema(t, append([]pfscore.Option{pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true)}, opts...)...)
}

func TestStartThread(t *testing.T) {
	s := historySchema(t)
	in := instrument.WithSchema(s)
	parent := instrument.NewThread("thread/test/parent", in)
	defer parent.End()
	parentCtx := instrument.ContextWithThread(context.Background(), parent)

	ctx, th := instrument.StartThread(parentCtx, "thread/test/request", in,
		instrument.WithUser("alice"), instrument.WithHost("10.0.0.7"), instrument.WithDocumentation("a request"))
	if th == nil || instrument.ThreadFromContext(ctx) != th {
		t.Fatalf("StartThread = %v, context carries %v", th, instrument.ThreadFromContext(ctx))
	}
	ioCheck(t, "threads row", ioRow(t, s, "threads", "THREAD_ID", th.ID()), map[string]any{
		"NAME": "thread/test/request", "PROCESSLIST_USER": "alice", "PROCESSLIST_HOST": "10.0.0.7",
		"TYPE": "FOREGROUND", "INSTRUMENTED": "YES",
	})
	ioCheck(t, "setup_instruments", ioRow(t, s, "setup_instruments", "NAME", "thread/test/request"),
		map[string]any{"DOCUMENTATION": "a request"})
	m := instrument.NewMutex("wait/synch/mutex/test/start", in)
	m.LockCtx(ctx)
	m.Unlock()
	if ops, _ := threadOps(t, s, th); len(ops) != 1 || ops[0] != "lock" {
		t.Errorf("the new thread's history = %v, want one lock", ops)
	}
	if ops, _ := threadOps(t, s, parent); len(ops) != 0 {
		t.Errorf("the parent's history = %v, want nothing", ops)
	}
	th.End()
	if len(ioRows(t, s, "threads", "THREAD_ID", th.ID())) != 0 {
		t.Error("the thread is listed after End")
	}

	// A thread that cannot start is nil, and the context it returns hides
	// the parent's thread: the new actor's waits are nobody's.
	instrument.SetErrorHandler(instrument.ErrorHandlerFunc(func(error) {})) // the bad names are on purpose
	defer instrument.SetErrorHandler(nil)
	for _, bad := range []struct {
		what   string
		schema *pfscore.Schema
		name   string
	}{
		{"bad name", s, "thread/test/bad name"},
		{"wrong kind", s, "wait/synch/mutex/test/start"},
		{"full thread table", ioSchema(t, pfscore.WithMaxThreads(1)), "thread/test/request"},
	} {
		if bad.what == "full thread table" { // containers grow a page at a time: fill it
			for {
				keep := instrument.NewThread("thread/test/keep", instrument.WithSchema(bad.schema))
				if keep == nil {
					break
				}
				defer keep.End()
			}
		}
		ctx, th := instrument.StartThread(parentCtx, bad.name, instrument.WithSchema(bad.schema))
		if th != nil || instrument.ThreadFromContext(ctx) != nil {
			t.Errorf("%s: StartThread = %v, context carries %v; want nil and none", bad.what, th, instrument.ThreadFromContext(ctx))
		}
		th.End() // a nil thread's End is harmless
	}

	// A disabled thread class starts a thread that is not instrumented.
	instrument.NewThreadClass("thread/test/off", in)
	s.UpdateInstruments("thread/test/off", ioBool(false), nil)
	ctx, th = instrument.StartThread(context.Background(), "thread/test/off", in)
	if th == nil {
		t.Fatal("a disabled class started no thread")
	}
	ioCheck(t, "disabled class", ioRow(t, s, "threads", "THREAD_ID", th.ID()), map[string]any{"INSTRUMENTED": "NO"})
	m.LockCtx(ctx)
	m.Unlock()
	if ops, _ := threadOps(t, s, th); len(ops) != 0 {
		t.Errorf("an uninstrumented thread has history %v", ops)
	}
	th.End()

	// A nil context is context.Background().
	//lint:ignore SA1012 a nil context is accepted on purpose
	ctx, th = instrument.StartThread(nil, "thread/test/request", in)
	if th == nil || instrument.ThreadFromContext(ctx) != th {
		t.Error("StartThread(nil, …) did not start a thread in a context")
	}
	th.End()
}

func TestThreadClassStartCtx(t *testing.T) {
	s := historySchema(t)
	requests := instrument.NewThreadClass("thread/test/request", instrument.WithSchema(s))
	ctx, th := requests.StartCtx(context.Background(), "bob", "10.0.0.8")
	defer th.End()
	if th == nil || instrument.ThreadFromContext(ctx) != th {
		t.Fatalf("StartCtx = %v, context carries %v", th, instrument.ThreadFromContext(ctx))
	}
	ioCheck(t, "threads row", ioRow(t, s, "threads", "THREAD_ID", th.ID()),
		map[string]any{"PROCESSLIST_USER": "bob", "PROCESSLIST_HOST": "10.0.0.8"})

	var none *instrument.ThreadClass
	ctx, nt := none.StartCtx(ctx, "u", "h")
	if nt != nil || instrument.ThreadFromContext(ctx) != nil {
		t.Errorf("a nil ThreadClass's StartCtx = %v, context carries %v; want nil and none", nt, instrument.ThreadFromContext(ctx))
	}
}

// TestSyncCtxVariants: TryLockCtx, TryRLockCtx and ForCtx attribute their
// waits to the context's thread; NewCond takes its name first, and Cond.Init
// instruments a Cond declared as a value.
func TestSyncCtxVariants(t *testing.T) {
	s := historySchema(t)
	in := instrument.WithSchema(s)
	ctx, th := instrument.StartThread(context.Background(), "thread/test/worker", in)
	defer th.End()

	var q struct {
		mu    instrument.Mutex
		rw    instrument.RWMutex
		ready instrument.Cond
		n     int
	}
	q.mu.Init("wait/synch/mutex/test/queue", in)
	q.rw.Init("wait/synch/rwlock/test/queue", in)
	q.ready.Init("wait/synch/cond/test/queue_ready", &q.mu, in)

	if !q.mu.TryLockCtx(ctx) {
		t.Fatal("TryLockCtx failed on a free mutex")
	}
	ioCheck(t, "mutex_instances", ioRow(t, s, "mutex_instances", "NAME", "wait/synch/mutex/test/queue"),
		map[string]any{"LOCKED_BY_THREAD_ID": th.ID()})
	if q.mu.TryLockCtx(ctx) {
		t.Fatal("TryLockCtx succeeded on a held mutex")
	}
	q.mu.Unlock()
	q.mu.ForCtx(ctx).Lock()
	q.n++
	q.mu.Unlock()

	if !q.rw.TryRLockCtx(ctx) {
		t.Fatal("TryRLockCtx failed on a free rwlock")
	}
	if q.rw.TryLockCtx(ctx) {
		t.Fatal("TryLockCtx succeeded under a reader")
	}
	q.rw.RUnlock()
	if !q.rw.TryLockCtx(ctx) {
		t.Fatal("TryLockCtx failed on a free rwlock")
	}
	ioCheck(t, "rwlock_instances", ioRow(t, s, "rwlock_instances", "NAME", "wait/synch/rwlock/test/queue"),
		map[string]any{"WRITE_LOCKED_BY_THREAD_ID": th.ID()})
	q.rw.Unlock()
	q.rw.ForCtx(ctx).RLock()
	q.rw.RUnlock()

	// A producer signals the Cond once the waiter waits.
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.mu.Lock()
		q.n++
		q.ready.Broadcast()
		q.mu.Unlock()
	}()
	q.mu.ForCtx(ctx).Lock()
	for q.n < 2 {
		q.ready.ForCtx(ctx).Wait()
	}
	q.mu.Unlock()
	<-done

	ops, names := threadOps(t, s, th)
	var got []string
	for i := range ops {
		got = append(got, filepath.Base(names[i])+" "+ops[i])
	}
	want := []string{"queue try_lock", "queue try_lock", "queue lock",
		"queue try_read_lock", "queue try_write_lock", "queue try_write_lock", "queue read_lock", "queue lock"}
	if len(got) < len(want) {
		t.Fatalf("history %v, want it to start with %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("history %v, want it to start with %v", got, want)
		}
	}
	// The rest are the Cond's waits, if the producer came second, and the
	// re-lock of each (a lock wait of no thread, inside sync.Cond).
	for _, g := range got[len(want):] {
		if g != "queue_ready wait" {
			t.Errorf("history after the locks: %v, want only queue_ready waits", got[len(want):])
		}
	}
	if len(ioRows(t, s, "cond_instances", "NAME", "wait/synch/cond/test/queue_ready")) != 1 {
		t.Error("cond_instances lacks the Cond made by Init")
	}
}

// TestCondWaitCtx: WaitCtx is the context's thread's wait, and the SOURCE
// of a Cond is its constructor's caller.
func TestCondWaitCtx(t *testing.T) {
	s := historySchema(t)
	in := instrument.WithSchema(s)
	ctx, th := instrument.StartThread(context.Background(), "thread/test/consumer", in)
	defer th.End()
	var mu sync.Mutex
	c := instrument.NewCond("wait/synch/cond/test/ready", &mu, in)
	ready := false
	done := make(chan struct{})
	mu.Lock()
	go func() {
		defer close(done)
		mu.Lock() // the waiter released it inside Wait
		ready = true
		c.Signal()
		mu.Unlock()
	}()
	for !ready {
		c.WaitCtx(ctx)
	}
	mu.Unlock()
	<-done
	cur := ioRow(t, s, "events_waits_current", "THREAD_ID", th.ID())
	ioCheck(t, "events_waits_current", cur, map[string]any{"EVENT_NAME": "wait/synch/cond/test/ready", "OPERATION": "wait"})
	if src, _ := cur["SOURCE"].(string); len(src) < len("shape_test.go") || src[:len("shape_test.go")] != "shape_test.go" {
		t.Errorf("SOURCE = %q, want the NewCond call", src)
	}
}

func TestFileCtxVariants(t *testing.T) {
	s := historySchema(t)
	class := instrument.NewFileClass("wait/io/file/test/ctx", instrument.WithSchema(s))
	ctx, th := instrument.StartThread(context.Background(), "thread/test/writer", instrument.WithSchema(s))
	defer th.End()
	path := filepath.Join(t.TempDir(), "f")

	f, err := class.CreateCtx(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	b := f.ForCtx(ctx)
	if b.File() != f {
		t.Error("ForCtx(ctx).File() is not the file")
	}
	b.WriteString("hello")
	b.Sync()
	f.WriteString(", nobody's") // no thread
	b.Close()

	g, err := class.OpenCtx(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(g.ForCtx(ctx))
	g.Close() // no thread
	if string(data) != "hello, nobody's" {
		t.Errorf("read back %q", data)
	}
	if _, err := class.OpenCtx(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("OpenCtx of a missing file succeeded")
	}

	ops, _ := threadOps(t, s, th)
	want := "[create write sync close open read read open]"
	if got := fmt.Sprint(ops); got != want {
		t.Errorf("the thread's history = %s, want %s", got, want)
	}
	ioCheck(t, "file_summary_by_instance", ioRow(t, s, "file_summary_by_instance", "FILE_NAME", path),
		map[string]any{"COUNT_WRITE": uint64(2), "COUNT_READ": uint64(2), "SUM_NUMBER_OF_BYTES_READ": uint64(len(data))})
}

// TestConnFor: a Conn's For and ForCtx attribute a call's wait to a thread
// without making it the owner (socket_instances.THREAD_ID).
func TestConnFor(t *testing.T) {
	k, client, server := newIOPair(t, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	s := k.s
	ctx, th := instrument.StartThread(context.Background(), "thread/test/request", instrument.WithSchema(s))
	defer th.End()

	bc := client.ForCtx(ctx)
	if bc.Conn() != client {
		t.Error("ForCtx(ctx).Conn() is not the Conn")
	}
	if n, err := bc.Write([]byte("ping")); n != 4 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	ioCheck(t, "a bound write leaves the owner", ioRow(t, s, "socket_instances", "EVENT_NAME", k.clientName),
		map[string]any{"THREAD_ID": nil, "STATE": "IDLE"})
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server.For(th), buf); err != nil || string(buf) != "ping" {
		t.Fatalf("server read %q, %v", buf, err)
	}
	server.Write([]byte("pong")) // the owner's: none
	if _, err := io.ReadFull(client.For(th), buf); err != nil || string(buf) != "pong" {
		t.Fatalf("client read %q, %v", buf, err)
	}
	if err := bc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := server.ForCtx(ctx).Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("server read after CloseWrite = %d, %v; want EOF", n, err)
	}
	if err := bc.CloseRead(); err != nil {
		t.Fatal(err)
	}
	if err := bc.Close(); err != nil {
		t.Fatal(err)
	}

	ops, names := threadOps(t, s, th)
	var got []string
	for i := range ops {
		side := "client"
		if names[i] == k.serverName {
			side = "server"
		}
		got = append(got, side+" "+ops[i])
	}
	want := "[client send server recv client recv client shutdown server recv client shutdown client close]"
	if fmt.Sprint(got) != want {
		t.Errorf("the thread's history = %s, want %s", fmt.Sprint(got), want)
	}
	ioCheck(t, "server", ioRow(t, s, "socket_summary_by_instance", "EVENT_NAME", k.serverName),
		map[string]any{"COUNT_READ": uint64(2), "COUNT_WRITE": uint64(1)})
}

func TestStartIdleCtx(t *testing.T) {
	s := historySchema(t)
	ctx, th := instrument.StartThread(context.Background(), "thread/test/worker", instrument.WithSchema(s))
	defer th.End()
	iw := instrument.StartIdleCtx(ctx)
	iw.End()
	none := instrument.StartIdleCtx(context.Background()) // no thread: nothing recorded
	none.End()
	if ops, names := threadOps(t, s, th); len(ops) != 1 || names[0] != "idle" || ops[0] != "idle" {
		t.Errorf("the thread's history = %v %v, want one idle", names, ops)
	}
	ioCheck(t, "idle", ioRow(t, s, "events_waits_summary_global_by_event_name", "EVENT_NAME", "idle"),
		map[string]any{"COUNT_STAR": uint64(1)})
}

// TestOptionKinds: each option is accepted exactly by the constructors it
// configures (the compiler refuses the others; this checks the types that
// make it so).
func TestOptionKinds(t *testing.T) {
	s := ioSchema(t)
	for _, c := range []struct {
		name                string
		opt                 any
		inst, thread, class bool
	}{
		{"WithSchema", instrument.WithSchema(s), true, true, true},
		{"WithDocumentation", instrument.WithDocumentation("d"), true, true, true},
		{"WithSource", instrument.WithSource("x.go:1"), true, false, false},
		{"WithUser", instrument.WithUser("u"), false, true, false},
		{"WithHost", instrument.WithHost("h"), false, true, false},
	} {
		_, inst := c.opt.(instrument.Option)
		_, thread := c.opt.(instrument.ThreadOption)
		_, class := c.opt.(instrument.ThreadClassOption)
		if inst != c.inst || thread != c.thread || class != c.class {
			t.Errorf("%s: Option %v, ThreadOption %v, ThreadClassOption %v; want %v, %v, %v",
				c.name, inst, thread, class, c.inst, c.thread, c.class)
		}
	}
}

// A nil context is context.Background() for ContextWithThread, and
// ThreadFromContext of one is nil.
func TestContextWithThreadNil(t *testing.T) {
	th := instrument.NewThread("thread/test/worker", instrument.WithSchema(ioSchema(t)))
	defer th.End()
	//lint:ignore SA1012 a nil context is accepted on purpose
	if got := instrument.ThreadFromContext(instrument.ContextWithThread(nil, th)); got != th {
		t.Errorf("ContextWithThread(nil, th) carries %v", got)
	}
	//lint:ignore SA1012 a nil context is accepted on purpose
	if instrument.ThreadFromContext(nil) != nil {
		t.Error("a nil context carries a thread")
	}
}
