package pfscore

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// captureFixture is a schema with trace capture on (every tree), a request
// statement class, a stage class, a mutex and a thread class; no history
// consumer is on, so trees come from capture alone.
type captureFixture struct {
	s               *Schema
	req, stage, mtx *Class
	thread          *Class
	m               *SyncInstance
}

func newCaptureFixture(t testing.TB, c TraceCapture) *captureFixture {
	s := newTestSchema(t)
	f := &captureFixture{s: s,
		req:    s.MustRegister("statement/http/request", WithDefault(true, true)),
		stage:  s.MustRegister("stage/app/loading", WithDefault(true, true)),
		mtx:    s.MustRegister("wait/synch/mutex/app/cache", WithDefault(true, true)),
		thread: s.MustRegister("thread/app/worker")}
	f.m = s.NewSyncInstance(f.mtx, "cache.go:1")
	s.EnableTraceCapture(c)
	return f
}

var (
	aTrace = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	aSpan  = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
)

// request runs one request's tree on th: the request statement, a stage in
// it with a wait, a SQL statement in the stage with waits waits in it; the
// request's ROWS_SENT says waits, for a reader to check its tree by.
func (f *captureFixture) request(th *Thread, info StatementInfo, waits int) {
	st := f.s.StartStatement(th, f.req, info)
	th.StartStage(f.stage, "h.go:1")
	waitOnce(f.m, th)
	q := f.s.StartSQL(th, StatementInfo{Text: "SELECT a FROM t WHERE id = 1", Schema: "app"})
	for range waits {
		waitOnce(f.m, th)
	}
	q.End(StatementResult{RowsSent: 1})
	st.EndWithText("GET /notes/{id}", true, StatementResult{RowsSent: uint64(waits)})
}

// TestCaptureHandsOverCompleteTree: a sampled top-level statement's tree
// reaches ReadTraces once its top statement ends, never before, with every
// event that ended in it and nothing else, each nested event's parent in
// the tree.
func TestCaptureHandsOverCompleteTree(t *testing.T) {
	f := newCaptureFixture(t, TraceCapture{Sampler: TraceSampler{ParentBased: true, Ratio: 1}})
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	waitOnce(f.m, th) // outside any statement: not in a tree

	st := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET", Normalized: true, TraceID: aTrace, SpanID: aSpan, Sampled: true})
	th.StartStage(f.stage, "h.go:1")
	waitOnce(f.m, th)
	q := f.s.StartSQL(th, StatementInfo{Text: "SELECT a FROM t WHERE id = 1", Schema: "app"})
	waitOnce(f.m, th)
	waitOnce(f.m, th)
	q.End(StatementResult{RowsSent: 1})
	if got := f.s.ReadTraces(nil, 0); len(got) != 0 {
		t.Fatalf("a tree before its top statement ended: %+v", got)
	}
	st.EndWithText("GET /notes/{id}", true, StatementResult{Protocol: &Protocol{Status: 404, Scheme: "http", Path: "/notes/7"}})

	got := f.s.ReadTraces(nil, 0)
	if len(got) != 1 {
		t.Fatalf("%d trees, want 1", len(got))
	}
	tr := got[0]
	if len(tr.Statements) != 2 || len(tr.Stages) != 1 || len(tr.Waits) != 3 || tr.Lost != 0 {
		t.Fatalf("tree of %d statements, %d stages, %d waits, %d lost; want 2, 1, 3, 0",
			len(tr.Statements), len(tr.Stages), len(tr.Waits), tr.Lost)
	}
	top := tr.Top()
	if top.EventName != "statement/http/request" || top.DigestText != "GET /notes/{id}" || top.NestingEventLevel != 0 ||
		top.TraceID == "" || top.InProgress {
		t.Errorf("top statement %+v", *top)
	}
	ids := map[uint64]bool{top.EventID: true}
	for _, e := range tr.Statements {
		ids[e.EventID] = true
	}
	for _, e := range tr.Stages {
		ids[e.EventID] = true
	}
	for _, e := range tr.Waits {
		ids[e.EventID] = true
	}
	check := func(what string, thread, id, nest uint64, inProgress bool) {
		if thread != th.ID() || inProgress || id < top.EventID || id > top.EndEventID {
			t.Errorf("%s %d: thread %d, in progress %v, outside [%d, %d]", what, id, thread, inProgress, top.EventID, top.EndEventID)
		}
		if id != top.EventID && !ids[nest] {
			t.Errorf("%s %d nests in %d, not in the tree", what, id, nest)
		}
	}
	for _, e := range tr.Statements {
		check("statement", e.ThreadID, e.EventID, e.NestingEventID, e.InProgress)
	}
	for _, e := range tr.Stages {
		check("stage", e.ThreadID, e.EventID, e.NestingEventID, e.InProgress)
	}
	for _, e := range tr.Waits {
		check("wait", e.ThreadID, e.EventID, e.NestingEventID, e.InProgress)
	}
	if p := tr.Protocol; p == nil || *p != (Protocol{Status: 404, Scheme: "http", Path: "/notes/7"}) {
		t.Errorf("protocol %+v", p)
	}
	if st := f.s.TraceStats(); st.Trees != 1 || st.TreesLost != 0 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	// The history tables are as their consumers say: off, empty.
	if h := f.s.EventsStatementsHistoryLong(); len(h) != 0 {
		t.Errorf("history_long has %d rows", len(h))
	}
}

// TestCaptureSampler: a parent-based sampler follows the caller's sampled
// flag; without a caller's trace, the ratio decides (0 none, 1 all); a
// ratio sampler keeps a trace id by its low 63 bits.
func TestCaptureSampler(t *testing.T) {
	unsampledTrace := aTrace
	for _, tc := range []struct {
		name    string
		sampler TraceSampler
		info    StatementInfo
		want    bool
	}{
		{"parent sampled", TraceSampler{ParentBased: true, Ratio: 0}, StatementInfo{TraceID: aTrace, SpanID: aSpan, Sampled: true}, true},
		{"parent not sampled", TraceSampler{ParentBased: true, Ratio: 1}, StatementInfo{TraceID: unsampledTrace, SpanID: aSpan}, false},
		{"root, always on", TraceSampler{ParentBased: true, Ratio: 1}, StatementInfo{}, true},
		{"root, always off", TraceSampler{ParentBased: true, Ratio: 0}, StatementInfo{}, false},
		// The SDK's TraceIDRatioBased: the last 8 bytes, big-endian,
		// shifted right by one, below ratio * 2^63.
		{"ratio keeps a low id", TraceSampler{Ratio: 0.5}, StatementInfo{TraceID: [16]byte{8: 0x7f, 15: 1}}, true},
		{"ratio drops a high id", TraceSampler{Ratio: 0.5}, StatementInfo{TraceID: [16]byte{8: 0x80}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCaptureFixture(t, TraceCapture{Sampler: tc.sampler})
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			info := tc.info
			info.Text, info.Normalized = "GET /x", true
			f.request(th, info, 1)
			if got := len(f.s.ReadTraces(nil, 0)) == 1; got != tc.want {
				t.Errorf("captured %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCaptureBounds: a full queue drops whole trees and counts them; a tree
// past MaxEvents keeps its first events and counts the rest; a thread that
// ends within a tree loses the tree, counted.
func TestCaptureBounds(t *testing.T) {
	f := newCaptureFixture(t, TraceCapture{Sampler: TraceSampler{Ratio: 1}, Queue: 2, MaxEvents: 4})
	th := f.s.NewThread(f.thread, ThreadOptions{})
	for range 5 {
		f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, 5)
	}
	got := f.s.ReadTraces(nil, 0)
	if len(got) != 2 {
		t.Fatalf("%d trees read, want the queue's 2", len(got))
	}
	// Events end: stage's wait, SQL's 5 waits, SQL, stage, request: 9;
	// the first 3 are kept, and the top statement.
	if tr := got[0]; tr.Lost != 5 || len(tr.Waits) != 3 || len(tr.Statements) != 1 || tr.Top().NestingEventLevel != 0 {
		t.Errorf("tree: %d waits, %d statements, %d lost; want 3, 1 (the top), 5", len(tr.Waits), len(tr.Statements), tr.Lost)
	}
	if st := f.s.TraceStats(); st.Trees != 2 || st.TreesLost != 3 || st.EventsLost != 25 {
		t.Errorf("stats %+v, want 2 trees, 3 lost, 25 events lost", st)
	}
	st := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET /y", Normalized: true})
	waitOnce(f.m, th)
	th.End()
	st.End(StatementResult{})
	f.s.NewThread(f.thread, ThreadOptions{}).End() // takes the storage up again: recycle
	if st := f.s.TraceStats(); st.TreesLost != 4 {
		t.Errorf("after a thread ended within a tree: %+v", st)
	}
}

// TestCaptureOffCostsNoTree: with capture off, or disabled, no tree is made;
// trees queued before Disable stay readable.
func TestCaptureOffCostsNoTree(t *testing.T) {
	f := newCaptureFixture(t, TraceCapture{Sampler: TraceSampler{Ratio: 1}})
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, 1)
	f.s.DisableTraceCapture()
	f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, 1)
	if got := f.s.ReadTraces(nil, 0); len(got) != 1 {
		t.Errorf("%d trees, want the 1 made before Disable", len(got))
	}
}

// TestCaptureConcurrentSafe: threads run trees on several goroutines while
// readers take them and capture is switched on and off. Every tree read is
// whole and one thread's (its events within its top statement's ids, each
// parent in the tree, the counts each request made), and trees made, read
// and lost add up.
func TestCaptureConcurrentSafe(t *testing.T) {
	f := newCaptureFixture(t, TraceCapture{Sampler: TraceSampler{Ratio: 1}, Queue: 64})
	const workers, rounds = 4, 300
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		read    atomic.Int64
		badTree atomic.Value
	)
	verify := func(tr CapturedTrace) {
		top := tr.Top()
		if top == nil || len(tr.Statements) != 2 || len(tr.Stages) != 1 || len(tr.Waits) != 1+int(top.RowsSent) {
			badTree.Store(fmt.Sprintf("tree %d statements, %d stages, %d waits: %+v", len(tr.Statements), len(tr.Stages), len(tr.Waits), tr))
			return
		}
		for _, e := range tr.Waits {
			if e.ThreadID != top.ThreadID || e.EventID <= top.EventID || e.EventID > top.EndEventID {
				badTree.Store(fmt.Sprintf("wait %+v outside its tree %d (%d, %d]", e, top.ThreadID, top.EventID, top.EndEventID))
			}
		}
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []CapturedTrace
			for !stop.Load() {
				buf = f.s.ReadTraces(buf[:0], 8)
				for _, tr := range buf {
					verify(tr)
				}
				read.Add(int64(len(buf)))
			}
		}()
	}
	wg.Add(1)
	go func() { // switch capture off and on, on most of the time
		defer wg.Done()
		for !stop.Load() {
			f.s.DisableTraceCapture()
			runtime.Gosched()
			f.s.EnableTraceCapture(TraceCapture{Sampler: TraceSampler{Ratio: 1}, Queue: 64})
			time.Sleep(50 * time.Microsecond)
		}
	}()
	var work sync.WaitGroup
	for w := range workers {
		work.Add(1)
		go func() {
			defer work.Done()
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			for i := range rounds {
				f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, (w+i)%4)
			}
		}()
	}
	work.Wait()
	stop.Store(true)
	wg.Wait()
	// However the scheduler ran the goroutines, the last trees are made
	// with capture on, and checked like the others.
	for _, tr := range f.s.ReadTraces(nil, 0) {
		verify(tr)
		read.Add(1)
	}
	f.s.EnableTraceCapture(TraceCapture{Sampler: TraceSampler{Ratio: 1}, Queue: 64})
	th := f.s.NewThread(f.thread, ThreadOptions{})
	for n := range 3 {
		f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, n)
	}
	th.End()
	last := f.s.ReadTraces(nil, 0)
	for _, tr := range last {
		verify(tr)
	}
	read.Add(int64(len(last)))
	if v := badTree.Load(); v != nil {
		t.Fatal(v)
	}
	st := f.s.TraceStats()
	if len(last) != 3 || uint64(read.Load()) > st.Trees {
		t.Errorf("%d trees read, the last %d; stats %+v", read.Load(), len(last), st)
	}
}

// TestCaptureFreeListDropsHugeBuffers: a buffer that grew for a huge tree
// is not kept for reuse, so a burst of huge trees does not hold its memory.
func TestCaptureFreeListDropsHugeBuffers(t *testing.T) {
	f := newCaptureFixture(t, TraceCapture{Sampler: TraceSampler{Ratio: 1}, MaxEvents: 1 << 14})
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, 2000)
	f.request(th, StatementInfo{Text: "GET /x", Normalized: true}, 1)
	if got := f.s.ReadTraces(nil, 0); len(got) != 2 {
		t.Fatalf("%d trees", len(got))
	}
	q := f.s.traceQueue.Load()
	if len(q.free) != 1 {
		t.Fatalf("free list holds %d buffers, want the small tree's 1", len(q.free))
	}
	b := <-q.free
	if n := cap(b.stmts) + cap(b.stages) + cap(b.waits); n > maxKeptWords {
		t.Errorf("a buffer of %d words kept", n)
	}
}
