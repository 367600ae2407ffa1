package bridge

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/trace"
)

// Traces turns the trees a *pfscore.Schema captures (EnableTraceCapture)
// into spans: each tree is one sampled top-level statement (an HTTP
// request, a connection's command) with everything that ended inside it,
// complete when its statement ended, so a Read sends each span once and
// never waits for, or guesses at, a parent. This is the span path
// exporter.StartOTLP uses; History, which reads the _history_long tables,
// serves Tables that are not a *pfscore.Schema.
//
//	event                          becomes
//	top-level statement            the tree's root span: a child of the span its statement recorded
//	                               (the caller's, through the W3C traceparent), else a trace of its own
//	statement nested in another    a child span of the stage of its parent statement it ran in, if
//	                               any, else of its parent statement; of the span it recorded, when it
//	                               recorded one its parent statement did not
//	stage                          a child span of its statement
//	wait                           a span event of the stage or statement it nests in
//
// Span names, kinds and attributes are History's (see doc.go, # Spans):
// the database and HTTP semantic conventions, and the
// performance_schema columns as pfs.* attributes. A request's span also
// carries what its instrument told of it at its end (pfscore.Protocol:
// http.response.status_code, url.scheme, url.path), which no table keeps.
type Traces struct {
	s   *pfscore.Schema
	mu  sync.Mutex
	cfg spanConfig
	buf []pfscore.CapturedTrace

	trees, spans, lost atomic.Uint64
}

// NewTraces returns a Traces over s's captured trees. It takes History's
// options (WithSQLText, WithDBSystem; WithMaxPending means nothing here).
// It does not turn capture on: s.EnableTraceCapture does.
func NewTraces(s *pfscore.Schema, opts ...HistoryOption) (*Traces, error) {
	if s == nil {
		return nil, errors.New("bridge: NewTraces: nil Schema")
	}
	var hc historyConfig
	for _, o := range opts {
		if o != nil {
			hc = o.applyHistory(hc)
		}
	}
	hc.systems = s
	return &Traces{s: s, cfg: hc.spanConfig}, nil
}

// TracesStats counts what a Traces read.
type TracesStats struct {
	Trees uint64 // trees read
	Spans uint64 // spans made of them
	// EventsLost is the events the trees read left out (past
	// pfscore.TraceCapture.MaxEvents): their spans are missing.
	EventsLost uint64
}

// Stats returns the counters.
func (t *Traces) Stats() TracesStats {
	return TracesStats{Trees: t.trees.Load(), Spans: t.spans.Load(), EventsLost: t.lost.Load()}
}

// Read appends the spans of up to max queued trees (all of them when max
// <= 0) to dst and returns it; it never waits. Safe for concurrent use;
// Reads run one at a time, and each tree is read once.
func (t *Traces) Read(dst []Span, max int) []Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.s.ReadTraces(t.buf[:0], max)
	now := time.Now()
	n := len(dst)
	grow := 0
	for i := range t.buf {
		grow += len(t.buf[i].Statements) + len(t.buf[i].Stages)
	}
	dst = slices.Grow(dst, grow)
	for i := range t.buf {
		dst = t.cfg.treeSpans(dst, &t.buf[i], now)
		t.lost.Add(uint64(t.buf[i].Lost))
	}
	clear(t.buf) // the events' strings are the spans' now, or garbage
	validSpans(dst[n:])
	t.trees.Add(uint64(len(t.buf)))
	t.spans.Add(uint64(len(dst) - n))
	return dst
}

// treeRef is a span of a tree being built: its event and index in out.
type treeRef struct {
	event uint64
	at    int
}

// treeSpans appends the spans of one tree to out.
func (c *spanConfig) treeSpans(out []Span, ct *pfscore.CapturedTrace, now time.Time) []Span {
	top := ct.Top()
	if top == nil {
		return out
	}
	thread := top.ThreadID
	base := len(out)
	refs := make([]treeRef, 0, len(ct.Statements)+len(ct.Stages))
	var index map[uint64]int // for a large tree; refs is searched otherwise
	find := func(event uint64) int {
		if index != nil {
			if i, ok := index[event]; ok {
				return i
			}
			return -1
		}
		for _, r := range refs {
			if r.event == event {
				return r.at
			}
		}
		return -1
	}
	traceID, remote, hasRemote := recordedTrace(top)
	if !hasRemote {
		traceID = traceIDOf(thread, top.EventID)
	}
	// The root first, so that the others can take their times from it.
	root := c.statementSpan(top, now, ct.Protocol)
	root.TraceID, root.SpanID = traceID, SpanIDOf(thread, top.EventID)
	if hasRemote {
		root.Parent, root.RemoteParent = remote, true
	}
	out = append(out, root)
	refs = append(refs, treeRef{top.EventID, base})
	fallback := root.Start
	for i := range ct.Stages {
		e := &ct.Stages[i]
		sp := c.stageSpan(e, fallback)
		sp.TraceID, sp.SpanID = traceID, SpanIDOf(thread, e.EventID)
		refs = append(refs, treeRef{e.EventID, len(out)})
		out = append(out, sp)
	}
	nested := ct.Statements[:len(ct.Statements)-1]
	for i := range nested {
		e := &nested[i]
		sp := c.statementSpan(e, fallback, nil)
		sp.TraceID, sp.SpanID = traceID, SpanIDOf(thread, e.EventID)
		refs = append(refs, treeRef{e.EventID, len(out)})
		out = append(out, sp)
	}
	if len(refs) > 32 {
		index = make(map[uint64]int, len(refs))
		for _, r := range refs {
			index[r.event] = r.at
		}
	}
	// Parents, now that every span of the tree has its index.
	rootID := out[base].SpanID
	parentOf := func(event uint64) trace.SpanID {
		if i := find(event); i >= 0 {
			return out[i].SpanID
		}
		return rootID // left out of the tree (MaxEvents): the root holds it
	}
	k := base + 1
	for i := range ct.Stages {
		out[k].Parent = parentOf(ct.Stages[i].NestingEventID)
		k++
	}
	for i := range nested {
		e := &nested[i]
		sp := &out[k]
		k++
		sp.Parent = parentOf(e.NestingEventID)
		if st := containingStage(ct.Stages, e); st != nil {
			sp.Parent = SpanIDOf(thread, st.EventID)
		}
		// A statement that recorded a span of the application's own, one
		// its parent statement did not record (a span the handler began
		// inside the request), is that span's child, in the same trace.
		if tr, own, ok := recordedTrace(e); ok && tr == traceID {
			if _, psp, pok := recordedTrace(parentStatement(ct, e.NestingEventID)); !pok || psp != own {
				sp.Parent, sp.RemoteParent = own, true
			}
		}
	}
	// Waits, as events of the span they nest in: through nested waits to
	// the stage or statement that holds them.
	for i := range ct.Waits {
		e := &ct.Waits[i]
		holder, kind := e.NestingEventID, e.NestingEventType
		for hops := 0; kind == pfscore.NestingWait && hops < len(ct.Waits); hops++ {
			w := waitByID(ct.Waits, holder)
			if w == nil {
				break
			}
			holder, kind = w.NestingEventID, w.NestingEventType
		}
		at := find(holder)
		if at < 0 {
			at = base
		}
		sp := &out[at]
		ev := c.waitEvent(e, sp.Start)
		// Waits are timed by the wait timer (CYCLE by default), spans by
		// the statement and stage timers (NANOSECOND): two calibrations,
		// which may disagree by microseconds. A wait happened inside its
		// span, so its event is kept inside it.
		if ev.Time.Before(sp.Start) {
			ev.Time = sp.Start
		} else if ev.Time.After(sp.End) {
			ev.Time = sp.End
		}
		sp.Events = append(sp.Events, ev)
	}
	return out
}

// containingStage returns the stage of e's parent statement that was in
// progress while e ran (a stage's statements run inside it), nil if none
// is known: the engine nests a statement in its parent statement, and a
// trace shows the phase of the request it ran in.
func containingStage(stages []pfscore.StageEvent, e *pfscore.StatementEvent) *pfscore.StageEvent {
	if e.NestingEventType != pfscore.NestingStatement {
		return nil
	}
	for i := range stages {
		st := &stages[i]
		// Ids are handed out in begin order: the stage began before the
		// statement and ended after it began (END_EVENT_ID is the last id
		// when it ended).
		if st.NestingEventID == e.NestingEventID && st.EventID < e.EventID && st.EndEventID >= e.EventID {
			return st
		}
	}
	return nil
}

// parentStatement returns the statement of the tree with EVENT_ID event.
func parentStatement(ct *pfscore.CapturedTrace, event uint64) *pfscore.StatementEvent {
	for i := range ct.Statements {
		if ct.Statements[i].EventID == event {
			return &ct.Statements[i]
		}
	}
	return &pfscore.StatementEvent{}
}

// waitByID returns the wait of waits with EVENT_ID id, nil if none.
func waitByID(waits []pfscore.WaitEvent, id uint64) *pfscore.WaitEvent {
	for i := range waits {
		if waits[i].EventID == id {
			return &waits[i]
		}
	}
	return nil
}
