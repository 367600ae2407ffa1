package pfscore_test

// A torn-row detector for events_waits_current, events_waits_history and
// events_waits_history_long: writers write wait events whose columns obey a
// relation that a row mixing two events breaks, while readers check every
// row they read.

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// hxTornWriter is one writer: a goroutine driving its own threads, each
// thread's event k (EVENT_ID k: no nesting) an operation ops[k%len(ops)]
// on object objs[k%len(objs)] moving bytes(k) bytes (NULL if bytes is nil).
type hxTornWriter struct {
	kind  string
	class *pfscore.Class
	ops   []pfscore.Operation
	names []string // OBJECT_NAME of each object; nil for sync objects
	bytes func(k uint64) int64
	begin func(w *pfscore.WaitState, th *pfscore.Thread, k uint64) bool
}

// hxTornThread is a writer's thread.
type hxTornThread struct {
	w *hxTornWriter
	// begun counts the events begun on the thread, stored before each
	// BeginWait: loaded after a read, it bounds the EVENT_IDs the read shows.
	begun atomic.Uint64
}

// TestWaitRowsNotTornConcurrentSafe runs the detector with threads that
// live through the test ("steady"), and with threads that end and are
// replaced every few hundred events ("recycling"), which lets the detector
// also see rows of ended threads' storage.
func TestWaitRowsNotTornConcurrentSafe(t *testing.T) {
	t.Run("steady", func(t *testing.T) { hxTornRows(t, false) })
	t.Run("recycling", func(t *testing.T) { hxTornRows(t, true) })
}

func hxTornRows(t *testing.T, recycle bool) {
	// A short history_long, so that readers read often.
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithWaitsHistoryLongSize(512), pfscore.WithWaitsHistorySize(hxHistorySize))...)
	tc := s.MustRegister("thread/hx/torn")
	var writers []*hxTornWriter
	// Files: three per writer, read, written, sought, synced, flushed.
	for i := range 2 {
		c := s.MustRegister(fmt.Sprintf("wait/io/file/hxt/file%d", i))
		var files []*pfscore.IOInstance
		var names []string
		for j := range 3 {
			path := fmt.Sprintf("/hxt/w%d/f%d.dat", i, j)
			f := s.FileInstance(c, path, "torn_test.go:1")
			if f == nil {
				t.Fatal("FileInstance returned nil")
			}
			files, names = append(files, f), append(names, path)
		}
		w := &hxTornWriter{kind: "file", class: c, names: names,
			ops:   []pfscore.Operation{pfscore.OpFileRead, pfscore.OpFileWrite, pfscore.OpFileSeek, pfscore.OpFileSync, pfscore.OpFileFlush},
			bytes: func(k uint64) int64 { return int64(k*7 + 3) }}
		w.begin = func(ws *pfscore.WaitState, th *pfscore.Thread, k uint64) bool {
			return files[k%3].BeginWait(ws, th, w.ops[k%uint64(len(w.ops))])
		}
		writers = append(writers, w)
	}
	// Sockets: two per writer, sent to, received from, optioned.
	for i := range 2 {
		c := s.MustRegister(fmt.Sprintf("wait/io/socket/hxt/sock%d", i))
		var socks []*pfscore.IOInstance
		var names []string
		for j := range 2 {
			addr := fmt.Sprintf("10.0.%d.%d:5432", i, j)
			f := s.NewSocketInstance(c, "tcp", addr, "torn_test.go:2")
			if f == nil {
				t.Fatal("NewSocketInstance returned nil")
			}
			t.Cleanup(f.Destroy)
			socks, names = append(socks, f), append(names, addr)
		}
		w := &hxTornWriter{kind: "socket", class: c, names: names,
			ops:   []pfscore.Operation{pfscore.OpSocketSend, pfscore.OpSocketRecv, pfscore.OpSocketOpt},
			bytes: func(k uint64) int64 { return int64(k*11 + 5) }}
		w.begin = func(ws *pfscore.WaitState, th *pfscore.Thread, k uint64) bool {
			return socks[k%2].BeginWait(ws, th, w.ops[k%uint64(len(w.ops))])
		}
		writers = append(writers, w)
	}
	// Locks: a rwlock read and write locked, a cond waited on, a mutex.
	for _, spec := range []struct {
		name string
		ops  []pfscore.Operation
	}{
		{"wait/synch/rwlock/hxt/rw", []pfscore.Operation{pfscore.OpReadLock, pfscore.OpWriteLock, pfscore.OpTryReadLock}},
		{"wait/synch/cond/hxt/cond", []pfscore.Operation{pfscore.OpWait, pfscore.OpTimedWait}},
		{"wait/synch/mutex/hxt/mutex", []pfscore.Operation{pfscore.OpLock, pfscore.OpTryLock}},
	} {
		c := s.MustRegister(spec.name)
		m := s.NewSyncInstance(c, "torn_test.go:3")
		if m == nil {
			t.Fatal("NewSyncInstance returned nil")
		}
		t.Cleanup(m.Destroy)
		w := &hxTornWriter{kind: "sync", class: c, ops: spec.ops}
		w.begin = func(ws *pfscore.WaitState, th *pfscore.Thread, k uint64) bool {
			return m.BeginWait(ws, th, w.ops[k%uint64(len(w.ops))])
		}
		writers = append(writers, w)
	}

	var threads sync.Map // THREAD_ID -> *hxTornThread
	lookup := func(id uint64) *hxTornThread {
		if v, ok := threads.Load(id); ok {
			return v.(*hxTornThread)
		}
		return nil
	}
	r := hxStart(t, hxBudget(2*time.Second))
	var events atomic.Int64
	for g, w := range writers {
		r.Go(func() {
			var th *pfscore.Thread
			var info *hxTornThread
			defer func() { th.End() }()
			life := uint64(0)
			for n := uint64(0); r.On(); n++ {
				if th == nil || (recycle && info.begun.Load() >= life) {
					th.End()
					th = s.NewThread(tc, pfscore.ThreadOptions{User: fmt.Sprint("user", g%3), Host: "host"})
					if th == nil {
						r.Fail("NewThread returned nil")
						return
					}
					info = &hxTornThread{w: w}
					threads.Store(th.ID(), info)
					life = 1 + (n*37+uint64(g)*101)%500
				}
				k := info.begun.Load() + 1
				info.begun.Store(k)
				var ws pfscore.WaitState
				if !w.begin(&ws, th, k) {
					r.Fail("%s: BeginWait returned false with the class on", w.class.Name())
					return
				}
				b := int64(-1)
				if w.bytes != nil {
					b = w.bytes(k)
				}
				ws.EndWait(b)
				events.Add(1)
				if k == 1 { // EVENT_IDs of a thread start at 1
					var got []pfscore.WaitEvent
					for _, e := range s.EventsWaitsCurrent() {
						if e.ThreadID == th.ID() {
							got = append(got, e)
						}
					}
					if len(got) != 1 || got[0].EventID != 1 || got[0].EndEventID != 1 || got[0].InProgress {
						r.Fail("%s: after a new thread's first event, its events_waits_current rows are %+v, want EVENT_ID 1 END_EVENT_ID 1",
							w.class.Name(), got)
						return
					}
				}
			}
		})
	}
	var reads atomic.Int64
	for _, api := range []bool{true, false} {
		r.Go(func() {
			for n := 0; n < hxIters(1_000_000) && r.On(); n++ {
				for i := range hxWaitTables {
					rows := hxReadWaits(r, s, i, api)
					hxCheckTornRows(r, hxWaitTables[i], api, rows, lookup)
				}
				reads.Add(1)
			}
		})
	}
	r.Begin()
	r.Wait()
	t.Logf("%d events, %d reads of the three tables", events.Load(), reads.Load())
}

// hxCheckTornRows checks one read of a wait events table.
func hxCheckTornRows(r *hxRun, table string, api bool, rows []hxEvent, lookup func(uint64) *hxTornThread) {
	last := map[uint64]uint64{} // THREAD_ID -> the last EVENT_ID in this read
	rows1 := map[uint64]int{}   // THREAD_ID -> its rows in this read
	seen := map[[2]uint64]bool{}
	for _, e := range rows {
		fail := func(msg string, args ...any) {
			r.Fail("%s (api %v): %s: %v", table, api, fmt.Sprintf(msg, args...), e)
		}
		th := lookup(e.thread)
		if th == nil {
			fail("THREAD_ID is no writer's")
			continue
		}
		w, k := th.w, e.id
		switch {
		case e.name != w.class.Name():
			fail("EVENT_NAME is not the writer's class %s", w.class.Name())
			continue
		case k == 0:
			fail("EVENT_ID 0")
			continue
		}
		if b := th.begun.Load(); k > b {
			fail("EVENT_ID beyond the %d events the thread began", b)
		}
		if op := w.ops[k%uint64(len(w.ops))].String(); e.op != op {
			fail("OPERATION is not %s, event %d's", op, k)
		}
		if w.names != nil {
			if name := w.names[k%uint64(len(w.names))]; e.object != name {
				fail("OBJECT_NAME is not %s, event %d's", name, k)
			}
		} else if e.object != "" {
			fail("OBJECT_NAME of a lock")
		}
		switch {
		case e.running && e.hasBytes:
			fail("NUMBER_OF_BYTES of an event in progress")
		case !e.running && w.bytes != nil && (!e.hasBytes || e.bytes != w.bytes(k)):
			fail("NUMBER_OF_BYTES is not %d, event %d's", w.bytes(k), k)
		case w.bytes == nil && e.hasBytes:
			fail("NUMBER_OF_BYTES of a lock")
		}
		if !e.running && e.end != e.id {
			fail("END_EVENT_ID is not EVENT_ID: no wait nests in another")
		}
		if e.running && table != "events_waits_current" {
			fail("an event in progress in a history table")
		}
		if e.nesting != 0 {
			fail("NESTING_EVENT_ID of an event that nests in nothing")
		}
		if e.start == 0 {
			fail("TIMER_START NULL for a timed class")
		} else if e.stop < e.start {
			fail("TIMER_END < TIMER_START")
		}
		key := [2]uint64{e.thread, e.id}
		if seen[key] {
			fail("the event twice in one read")
		}
		seen[key] = true
		if prev, ok := last[e.thread]; ok {
			if table == "events_waits_current" {
				fail("a second row for a thread that never nests waits")
			} else if e.id <= prev {
				fail("EVENT_ID %d after %d: a history is oldest first", e.id, prev)
			}
		}
		last[e.thread] = e.id
		if rows1[e.thread]++; table == "events_waits_history" && rows1[e.thread] == hxHistorySize+1 {
			fail("more than %d rows for the thread", hxHistorySize)
		}
	}
}
