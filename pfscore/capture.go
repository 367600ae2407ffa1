package pfscore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// Trace capture: the events of a sampled top-level statement, handed over
// whole when it ends.
//
// An exporter that builds spans from the _history_long rings has to re-read
// them, find each event's parent, and wait for trees to complete; at a
// service's ordinary rates it reads the same rows many times or misses
// some. Capture turns that around: when a statement begins at nesting level
// 0 on a thread (a request, a connection's command) and the sampler keeps
// its trace, the thread starts a capture buffer; every statement, stage and
// wait that ends on the thread while it runs appends its finished row to
// the buffer, in the write section that ends it; and when the top-level
// statement ends, its row goes last and the whole buffer is handed to the
// schema's trace queue. A reader (the exporter) takes complete trees from
// the queue (ReadTraces) and gives the buffers back. MySQL's tables are
// untouched: capture is one more copy of a row the event path has just
// written, made only for sampled trees.
//
// Invariants:
//   - A buffer belongs to one thread from the level-0 statement's begin to
//     its end (threadCore.capture), written only in that thread's write
//     sections; then to the queue; then to the one reader that took it,
//     until it goes back to the free list. The channels hand it over, so
//     each owner's writes happen before the next owner's reads.
//   - A tree is handed over only when its top-level statement ends: every
//     event in it has ended (events end in the order they nest, and the
//     thread's statement, stage and wait stacks are empty at level 0 but for
//     misuse, which leaves the events in progress out of the tree).
//   - Nothing on the event path blocks: a full queue drops the tree and
//     counts it (TraceStats.TreesLost); a tree past the event bound keeps
//     its first events and counts the rest (EventsLost).
//   - With capture off, the event path pays one load of Schema.capture at a
//     top-level statement's begin and a nil check at each event's end.

// A TraceSampler decides which top-level statements' trees are captured,
// as OpenTelemetry's samplers decide which traces are recorded
// (OTEL_TRACES_SAMPLER): a statement with a parent span (the caller's W3C
// traceparent, StatementInfo.TraceID) follows its sampled flag when
// ParentBased, and otherwise Ratio decides: the share of trace ids kept, from
// 0 (none) to 1 (all), by the trace id's last 8 bytes shifted right by one
// as the SDK's TraceIDRatioBased does (so both keep the same traces), or
// at random for a statement without a trace id.
type TraceSampler struct {
	ParentBased bool
	Ratio       float64
}

// bound returns the sampler's threshold over 63 bits.
func (ts TraceSampler) bound() uint64 {
	switch {
	case ts.Ratio >= 1:
		return math.MaxUint64
	case ts.Ratio > 0:
		return uint64(ts.Ratio * (1 << 63))
	}
	return 0
}

// TraceCapture configures EnableTraceCapture.
type TraceCapture struct {
	Sampler TraceSampler
	// Queue bounds the trees waiting for a reader (default 4096): a tree
	// that finds the queue full is dropped and counted.
	Queue int
	// MaxEvents bounds the events of one tree (default 1024): a tree keeps
	// its top statement and the first MaxEvents-1 other events, and counts
	// the rest as lost.
	MaxEvents int
}

// A capturer is the capture's configuration while it is on; it is
// replaced whole by EnableTraceCapture and removed by DisableTraceCapture.
// Its queue is the schema's, made once: trees queued under one
// configuration stay readable under the next, or with capture off.
type capturer struct {
	parentBased bool
	bound       uint64 // of the 63-bit trace id (see TraceSampler)
	maxEvents   int
	q           *traceQueue
}

// traceQueue is where complete trees wait for ReadTraces, the buffers
// readers gave back, and the counters (TraceStats).
type traceQueue struct {
	queue      chan *captureBuf // complete trees, for ReadTraces
	free       chan *captureBuf // buffers back from readers, for reuse
	trees      atomic.Uint64    // trees handed over
	treesLost  atomic.Uint64    // trees dropped: the queue was full, or the thread ended within one
	eventsLost atomic.Uint64    // events past MaxEvents
}

// captureBuf is one tree's rows, as the event path wrote them: statements
// with their refs, stages and waits, each in the order they ended.
type captureBuf struct {
	q         *traceQueue
	maxEvents int
	stmts     []uint64
	stmtRefs  []unsafe.Pointer
	stages    []uint64
	waits     []uint64
	events    int
	lost      int
	proto     Protocol // the top statement's StatementResult.Protocol
	hasProto  bool
}

// room reports whether one more event fits, counting it, or counts it
// lost: MaxEvents less one, which the top statement keeps.
func (b *captureBuf) room() bool {
	if b.events < b.maxEvents-1 {
		b.events++
		return true
	}
	b.lost++
	return false
}

// addStatement adds a statement's row; the top statement's always fits.
func (b *captureBuf) addStatement(row []uint64, refs []unsafe.Pointer, top bool) {
	if top || b.room() {
		b.stmts = append(b.stmts, row...)
		b.stmtRefs = append(b.stmtRefs, refs...)
	}
}

func (b *captureBuf) addStage(row []uint64) {
	if b.room() {
		b.stages = append(b.stages, row...)
	}
}

func (b *captureBuf) addWait(row []uint64) {
	if b.room() {
		b.waits = append(b.waits, row...)
	}
}

// reset empties b for reuse, keeping its capacity; the refs are cleared so
// that a buffer waiting in the free list keeps no string alive.
func (b *captureBuf) reset() {
	clear(b.stmtRefs)
	b.stmts, b.stmtRefs, b.stages, b.waits = b.stmts[:0], b.stmtRefs[:0], b.stages[:0], b.waits[:0]
	b.events, b.lost = 0, 0
	b.proto, b.hasProto = Protocol{}, false
}

// sample reports whether the tree of a top-level statement with info is
// to be captured.
func (cp *capturer) sample(info *StatementInfo) bool {
	if info.TraceID != [16]byte{} {
		if cp.parentBased {
			return info.Sampled
		}
		return binary.BigEndian.Uint64(info.TraceID[8:])>>1 < cp.bound
	}
	switch cp.bound {
	case math.MaxUint64:
		return true
	case 0:
		return false
	}
	return rand.Uint64()>>1 < cp.bound
}

// get returns an empty buffer: one a reader gave back, or a new one.
func (cp *capturer) get() *captureBuf {
	var b *captureBuf
	select {
	case b = <-cp.q.free:
	default:
		b = &captureBuf{q: cp.q}
	}
	b.maxEvents = cp.maxEvents
	return b
}

// maxKeptWords bounds the buffers the free list keeps: one that grew past
// it for a huge tree goes to the garbage collector, so that one burst of
// huge trees does not hold its memory for ever (a tree of the demo is
// about 150 words).
const maxKeptWords = 4096

// maxFreeBuffers bounds the free list: buffers for the trees of that many
// requests in flight at once, beyond which they are made anew.
const maxFreeBuffers = 256

// put gives a buffer back for reuse, or to the garbage collector when the
// free list is full or the buffer grew large.
func (q *traceQueue) put(b *captureBuf) {
	if cap(b.stmts)+cap(b.stages)+cap(b.waits) > maxKeptWords {
		return
	}
	b.reset()
	select {
	case q.free <- b:
	default:
	}
}

// drop gives back the buffer of a tree that will not be complete.
func (q *traceQueue) drop(b *captureBuf) {
	q.treesLost.Add(1)
	q.put(b)
}

// handOff queues a complete tree, or drops it when the queue is full.
func (q *traceQueue) handOff(b *captureBuf) {
	q.eventsLost.Add(uint64(b.lost))
	select {
	case q.queue <- b:
		q.trees.Add(1)
	default:
		q.drop(b)
	}
}

// EnableTraceCapture starts capturing the trees of sampled top-level
// statements for ReadTraces, or changes the sampler and MaxEvents of the
// capture on; the queue's size is the first call's. It turns on the
// consumers whose rows a tree is made of: events_statements_current,
// events_stages_current and events_waits_current (and the
// global_instrumentation and thread_instrumentation they depend on), which
// MySQL's defaults leave off for stages and waits; that is most of what
// capture costs a service (ARCHITECTURE.md, OpenTelemetry).
func (s *Schema) EnableTraceCapture(c TraceCapture) {
	if c.Queue <= 0 {
		c.Queue = 4096
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = 1024
	}
	for _, cons := range []Consumer{ConsumerGlobalInstrumentation, ConsumerThreadInstrumentation,
		ConsumerEventsStatementsCurrent, ConsumerEventsStagesCurrent, ConsumerEventsWaitsCurrent} {
		s.SetConsumer(cons, true)
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	q := s.traceQueue.Load()
	if q == nil {
		q = &traceQueue{queue: make(chan *captureBuf, c.Queue), free: make(chan *captureBuf, min(c.Queue, maxFreeBuffers))}
		s.traceQueue.Store(q)
	}
	s.capture.Store(&capturer{parentBased: c.Sampler.ParentBased, bound: c.Sampler.bound(), maxEvents: c.MaxEvents, q: q})
}

// DisableTraceCapture stops capturing: top-level statements that begin
// from now on make no tree. Trees in progress are handed over when they
// end, and queued trees stay for ReadTraces.
func (s *Schema) DisableTraceCapture() { s.capture.Store(nil) }

// TraceStats counts what capture did since EnableTraceCapture first ran.
type TraceStats struct {
	Trees      uint64 // trees handed to the queue
	TreesLost  uint64 // trees dropped: the queue was full, or their thread ended within them
	EventsLost uint64 // events left out of a tree past TraceCapture.MaxEvents
	Queued     int    // trees waiting for ReadTraces
}

// TraceStats returns the capture's counters.
func (s *Schema) TraceStats() TraceStats {
	q := s.traceQueue.Load()
	if q == nil {
		return TraceStats{}
	}
	return TraceStats{Trees: q.trees.Load(), TreesLost: q.treesLost.Load(),
		EventsLost: q.eventsLost.Load(), Queued: len(q.queue)}
}

// A CapturedTrace is the events of one sampled top-level statement, each
// as its _history row shows it: the top-level statement is the last of
// Statements; the others nest in it, directly or through one another (see
// their NESTING_EVENT_ID). Events are in the order they ended.
type CapturedTrace struct {
	Statements []StatementEvent
	Stages     []StageEvent
	Waits      []WaitEvent
	// Lost is the events of the tree past TraceCapture.MaxEvents, left out
	// (the top statement is always in).
	Lost int
	// Protocol is what the top statement's End said of the request it
	// served (StatementResult.Protocol), nil if nothing.
	Protocol *Protocol
}

// Top returns the top-level statement of the tree.
func (ct *CapturedTrace) Top() *StatementEvent {
	if len(ct.Statements) == 0 {
		return nil
	}
	return &ct.Statements[len(ct.Statements)-1]
}

// ReadTraces takes up to max complete trees from the queue (all of them
// when max <= 0), appends them to dst and returns it. It never waits: with
// none queued it returns dst as it was. Safe for concurrent use; each tree
// goes to one caller.
func (s *Schema) ReadTraces(dst []CapturedTrace, max int) []CapturedTrace {
	q := s.traceQueue.Load()
	if q == nil {
		return dst
	}
	for n := 0; max <= 0 || n < max; n++ {
		var b *captureBuf
		select {
		case b = <-q.queue:
		default:
			return dst
		}
		dst = append(dst, s.decodeTree(b))
		q.put(b)
	}
	return dst
}

// decodeTree turns a buffer's rows into events.
func (s *Schema) decodeTree(b *captureBuf) CapturedTrace {
	ct := CapturedTrace{Lost: b.lost}
	if b.hasProto {
		p := b.proto
		ct.Protocol = &p
	}
	if n := len(b.stmts) / stmtWidth; n > 0 {
		ct.Statements = make([]StatementEvent, 0, n)
		for i, k := 0, 0; i+stmtWidth <= len(b.stmts); i, k = i+stmtWidth, k+stmtRefs {
			if e, ok := s.decodeStatement(b.stmts[i:i+stmtWidth], b.stmtRefs[k:k+stmtRefs]); ok {
				ct.Statements = append(ct.Statements, e)
			}
		}
	}
	if n := len(b.stages) / stageWidth; n > 0 {
		ct.Stages = make([]StageEvent, 0, n)
		for i := 0; i+stageWidth <= len(b.stages); i += stageWidth {
			if e, ok := s.decodeStage(b.stages[i : i+stageWidth]); ok {
				ct.Stages = append(ct.Stages, e)
			}
		}
	}
	if n := len(b.waits) / waitWidth; n > 0 {
		ct.Waits = make([]WaitEvent, 0, n)
		for i := 0; i+waitWidth <= len(b.waits); i += waitWidth {
			if e, ok := s.decodeWait(b.waits[i : i+waitWidth]); ok {
				ct.Waits = append(ct.Waits, e)
			}
		}
	}
	return ct
}

// beginCapture starts the tree of a top-level statement beginning on t,
// if capture is on and the sampler keeps it. In a write section.
func (t *Thread) beginCapture(info *StatementInfo) {
	if b := t.capture; b != nil {
		// The previous tree's top statement never ended here (its End
		// found the thread busy): it is incomplete, and lost.
		t.capture = nil
		b.q.drop(b)
	}
	cp := t.s.capture.Load()
	if cp == nil || !cp.sample(info) {
		return
	}
	t.capture = cp.get()
}
