package bridge

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxPending is how many rows a History holds by default while they
// wait for the statement they nest in to end.
const DefaultMaxPending = 1 << 16

// historyConfig is a History's configuration, read at NewHistory.
type historyConfig struct {
	spanConfig
	maxPending int
	now        func() time.Time
}

// A HistoryOption configures a History.
type HistoryOption interface {
	applyHistory(historyConfig) historyConfig
}

type historyOptionFunc func(historyConfig) historyConfig

func (f historyOptionFunc) applyHistory(c historyConfig) historyConfig { return f(c) }

// WithSQLText sets whether a SQL statement's span carries its raw text
// (SQL_TEXT, possibly clipped to the schema's max SQL text length) as
// db.query.text. Raw SQL holds the statement's literals: customer names,
// ids, sometimes secrets. By default, false: spans carry DIGEST_TEXT only,
// which never holds a literal.
func WithSQLText(on bool) HistoryOption {
	return historyOptionFunc(func(c historyConfig) historyConfig {
		c.sqlText = on
		return c
	})
}

// WithDBSystem sets db.system.name of every SQL statement's span ("mysql",
// "postgresql", "sqlite", ... as the semantic conventions name them). An
// empty name keeps the default: what the database wrapper recorded for the
// statement's CURRENT_SCHEMA (pfscore.Schema.SetDBSystem: pfssql records
// its driver's), else DefaultDBSystem ("other_sql").
func WithDBSystem(name string) HistoryOption {
	return historyOptionFunc(func(c historyConfig) historyConfig {
		if name != "" {
			c.dbSystem = name
		}
		return c
	})
}

// WithMaxPending sets how many rows the History holds while they wait for
// the statement they nest in to end (a long request's stages, waits and
// SQL statements); when more wait, the oldest are dropped and counted
// (HistoryStats.Dropped). n < 1 keeps the default. By default,
// DefaultMaxPending.
func WithMaxPending(n int) HistoryOption {
	return historyOptionFunc(func(c historyConfig) historyConfig {
		if n >= 1 {
			c.maxPending = n
		}
		return c
	})
}

// withHistoryClock sets the clock for untimed events, for tests.
func withHistoryClock(now func() time.Time) HistoryOption {
	return historyOptionFunc(func(c historyConfig) historyConfig {
		c.now = now
		return c
	})
}

// HistoryStats are a History's counters since NewHistory.
type HistoryStats struct {
	Reads uint64 // calls of Read that read the tables
	Spans uint64 // spans Read returned
	// Lost counts events the History knows existed, from the gaps in a
	// thread's EVENT_IDs, but never read: a _history_long ring overwrote
	// them first (or dropped them, see Performance_schema_*_history_long_lost),
	// or a TRUNCATE cut them. A lower bound: see the package doc.
	Lost uint64
	// Orphans counts waits dropped because the span they belong to is
	// gone (their stage or statement lost, or sent before they arrived),
	// and stages and statements sent as roots for the same reason.
	Orphans uint64
	// Dropped counts rows dropped unsent because more than WithMaxPending
	// were waiting for their statements to end.
	Dropped uint64
	// Pending is how many rows wait now for the statement they nest in.
	Pending int
}

// A History reads the _history_long tables of a pfscore.Tables from a
// cursor and turns the events that ended since its previous Read into
// spans (see the package doc, "Spans"). Its methods are safe for
// concurrent use; Reads run one at a time.
type History struct {
	src source
	cfg historyConfig
	// Threads with an id above this one began after NewHistory: all their
	// events are accounted for, from EVENT_ID 1.
	maxThreadAtStart uint64

	mu      sync.Mutex
	threads map[uint64]*threadState
	// unreadRuns counts, for a thread seen but not yet given a cursor, the
	// Reads in a row that could not read it (see threadState.unreadRuns).
	unreadRuns map[uint64]int
	pool       map[key]*node // rows read, waiting for their statement
	order      []key         // the pool's keys in arrival order (with keys since removed)
	recent     map[key]spanRef
	previous   map[key]spanRef // recent, as of the previous Read

	reads, spans, lost, orphans, dropped atomic.Uint64
	pending                              atomic.Int64
}

// threadState is the cursor of one thread: which EVENT_IDs the History has
// read or decided about.
type threadState struct {
	// unreadRuns counts the Reads in a row that could not read the
	// thread's events in progress and so decided nothing about it; after
	// maxUnreadRuns, a Read decides anyway, so that a thread never read
	// does not hold its ids (ahead) forever.
	unreadRuns int
	next       uint64              // every id below is decided: read, lost, or in open
	open       map[uint64]struct{} // ids below next, in progress when decided
	ahead      map[uint64]struct{} // ids at or above next already read
	hi         uint64              // one past the highest id read by the previous Reads
}

// maxUnreadRuns bounds the Reads in a row that decide nothing about a
// thread whose events in progress they could not read.
const maxUnreadRuns = 16

// spanRef is what a late child needs of a span already sent.
type spanRef struct {
	trace    trace.TraceID
	span     trace.SpanID
	recTrace trace.TraceID // the trace and span the statement recorded, if any
	recSpan  trace.SpanID
	start    time.Time // the span's start: an untimed child's times
}

type nodeKind uint8

const (
	kindStatement nodeKind = iota
	kindStage
	kindWait
)

// node is a row read and not yet sent.
type node struct {
	kind    nodeKind
	key     key
	parent  key // zero event: nests in nothing a span can hold
	strikes uint8
	stmt    *pfscore.StatementEvent
	stage   *pfscore.StageEvent
	wait    *pfscore.WaitEvent
}

// NewHistory returns a History over t's _history_long tables. Its first
// Read returns the spans of what the tables hold then; each later Read,
// those of what ended since. A *pfscore.Schema is read directly, any other
// Tables (a remote one, say) through Query.
func NewHistory(t pfscore.Tables, opts ...HistoryOption) (*History, error) {
	if t == nil {
		return nil, errors.New("bridge: NewHistory: nil Tables")
	}
	cfg := historyConfig{maxPending: DefaultMaxPending, now: time.Now}
	if sys, ok := t.(dbSystems); ok {
		cfg.systems = sys
	}
	for _, o := range opts {
		if o != nil {
			cfg = o.applyHistory(cfg)
		}
	}
	var src source = tablesSource{t}
	if s, ok := t.(*pfscore.Schema); ok && s != nil {
		src = schemaSource{tablesSource{t}, s}
	}
	live, err := src.liveThreads()
	if err != nil {
		return nil, err
	}
	h := &History{src: src, cfg: cfg, threads: map[uint64]*threadState{}, unreadRuns: map[uint64]int{},
		pool: map[key]*node{}, recent: map[key]spanRef{}}
	for _, id := range live {
		h.maxThreadAtStart = max(h.maxThreadAtStart, id)
	}
	return h, nil
}

// Stats returns the History's counters.
func (h *History) Stats() HistoryStats {
	return HistoryStats{Reads: h.reads.Load(), Spans: h.spans.Load(), Lost: h.lost.Load(),
		Orphans: h.orphans.Load(), Dropped: h.dropped.Load(), Pending: int(h.pending.Load())}
}

// Read returns the spans of the statements (and stages outside statements)
// that ended since the previous Read, each with its stages as child spans
// and its waits as span events. A statement in progress, and what nests in
// it, waits for a later Read. An error from the tables leaves the cursor
// where it was.
func (h *History) Read() ([]Span, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cons, err := h.src.consumers()
	if err != nil {
		return nil, err
	}
	live, err := h.src.liveThreads()
	if err != nil {
		return nil, err
	}
	// In progress first, history after: an event read as in progress that
	// ends before the history is read shows in both, and an event that
	// was neither in progress then nor in the history read after it has
	// its row overwritten, or began after the first read (see account).
	progress, unread, err := h.src.inProgress()
	if err != nil {
		return nil, err
	}
	snap, err := h.src.history()
	if err != nil {
		return nil, err
	}
	h.reads.Add(1)
	inProgress := make(map[key]struct{}, len(progress))
	for _, k := range progress {
		inProgress[k] = struct{}{}
	}
	fresh, roots := h.account(&snap, progress, inProgress, unread, live, strictAccounting(cons))

	h.previous, h.recent = h.recent, make(map[key]spanRef, len(h.recent))
	for _, n := range fresh {
		h.pool[n.key] = n
		h.order = append(h.order, n.key)
	}
	out := h.assemble(inProgress, unread, roots)
	validSpans(out) // utf8.go
	h.evict()
	h.pending.Store(int64(len(h.pool)))
	h.spans.Add(uint64(len(out)))
	return out, nil
}

// strictAccounting reports whether every event that gets an EVENT_ID also
// gets a _history_long row: for each kind of event, the current consumer
// (which hands out the id) is off or the history_long consumer is on. When
// not, a gap may be an event that never had a row, and gaps are not
// counted as lost.
func strictAccounting(cons map[pfscore.Consumer]bool) bool {
	pairs := [][2]pfscore.Consumer{
		{pfscore.ConsumerEventsWaitsCurrent, pfscore.ConsumerEventsWaitsHistoryLong},
		{pfscore.ConsumerEventsStagesCurrent, pfscore.ConsumerEventsStagesHistoryLong},
		{pfscore.ConsumerEventsStatementsCurrent, pfscore.ConsumerEventsStatementsHistoryLong},
		{pfscore.ConsumerEventsTransactionsCurrent, pfscore.ConsumerEventsTransactionsHistoryLong},
	}
	for _, p := range pairs {
		if cons[p[0]] && !cons[p[1]] {
			return false
		}
	}
	return true
}

// account runs the cursor over a snapshot: it returns the rows not read
// before, as nodes, and counts the gaps it can decide as lost. The waits
// among them outside any statement, stage or wait, which no span holds,
// it returns as roots, by key alone (see assemble).
//
// A thread's EVENT_IDs come from one counter, in the order its events
// begin, and every event that has one ends in a _history_long table (when
// accounting is strict). An id below the highest id the previous Reads
// found began before the previous Read's history was read, so at this Read
// it is either in progress (and seen so in the current tables, read first)
// or ended and in a _history_long table, read after, unless the ring lost
// it. Such an id, neither read nor in progress, is lost; one in progress is
// remembered (open) until its row arrives. On a thread in unread, what is in
// progress is unknown: its ids wait, undecided, for a Read that reads it
// (at most maxUnreadRuns Reads; see threadState.unreadRuns). account
// removes from unread the threads it decided about all the same.
func (h *History) account(snap *snapshot, progress []key, inProgress map[key]struct{},
	unread map[uint64]bool, live []uint64, strict bool) (fresh []*node, roots []key) {
	type span struct{ lo, hi uint64 } // ids in the snapshot: [lo, hi]
	seen := map[uint64]*span{}
	// A ring holds a thread's rows in runs: the thread of the row before
	// is looked up once, not once a row (note and isNew).
	var lastSeen *span // of thread lastThread, once not nil
	var lastThread uint64
	note := func(k key) {
		if lastSeen == nil || k.thread != lastThread {
			lastThread, lastSeen = k.thread, seen[k.thread]
			if lastSeen == nil {
				lastSeen = &span{k.event, k.event}
				seen[k.thread] = lastSeen
			}
		}
		lastSeen.lo, lastSeen.hi = min(lastSeen.lo, k.event), max(lastSeen.hi, k.event)
	}
	for _, k := range snap.trx {
		note(k)
	}
	for i := range snap.stmts {
		note(key{snap.stmts[i].ThreadID, snap.stmts[i].EventID})
	}
	for i := range snap.stages {
		note(key{snap.stages[i].ThreadID, snap.stages[i].EventID})
	}
	for i := range snap.waits {
		note(key{snap.waits[i].ThreadID, snap.waits[i].EventID})
	}
	for _, k := range snap.outer {
		note(k)
	}
	progressBy := map[uint64][]uint64{}
	for _, k := range progress {
		progressBy[k.thread] = append(progressBy[k.thread], k.event)
	}
	for th, r := range seen {
		if h.threads[th] != nil {
			continue
		}
		if unread[th] && th <= h.maxThreadAtStart && h.unreadRuns[th] < maxUnreadRuns {
			// Where its cursor starts depends on what it has in progress:
			// its rows wait for a Read that reads it (isNew, below).
			h.unreadRuns[th]++
			continue
		}
		delete(h.unreadRuns, th)
		delete(unread, th) // decided from now on, as if read
		ts := &threadState{next: r.lo, open: map[uint64]struct{}{}, ahead: map[uint64]struct{}{}}
		if th > h.maxThreadAtStart {
			ts.next = 1 // began after NewHistory: every event counts
		} else {
			for _, id := range progressBy[th] {
				ts.next = min(ts.next, id)
			}
		}
		h.threads[th] = ts
	}
	// h.threads does not change while isNew runs.
	var lastTS *threadState
	looked := false
	isNew := func(k key) bool {
		if !looked || k.thread != lastThread {
			lastThread, lastTS, looked = k.thread, h.threads[k.thread], true
		}
		ts := lastTS
		if ts == nil {
			return false // a thread first seen unread: read again later
		}
		if k.event < ts.next {
			if _, ok := ts.open[k.event]; ok {
				delete(ts.open, k.event)
				return true
			}
			return false
		}
		if _, ok := ts.ahead[k.event]; ok {
			return false
		}
		ts.ahead[k.event] = struct{}{}
		return true
	}
	for _, k := range snap.trx {
		isNew(k)
	}
	for i := range snap.stmts {
		e := &snap.stmts[i]
		if k := (key{e.ThreadID, e.EventID}); !e.InProgress && isNew(k) {
			row := *e // a copy: a pending node must not keep the whole snapshot alive
			n := &node{kind: kindStatement, key: k, stmt: &row}
			if e.NestingEventType == pfscore.NestingStatement && e.NestingEventID != 0 {
				n.parent = key{e.ThreadID, e.NestingEventID}
			}
			fresh = append(fresh, n)
		}
	}
	for i := range snap.stages {
		e := &snap.stages[i]
		if k := (key{e.ThreadID, e.EventID}); !e.InProgress && isNew(k) {
			row := *e // a copy: a pending node must not keep the whole snapshot alive
			n := &node{kind: kindStage, key: k, stage: &row}
			if e.NestingEventType == pfscore.NestingStatement && e.NestingEventID != 0 {
				n.parent = key{e.ThreadID, e.NestingEventID}
			}
			fresh = append(fresh, n)
		}
	}
	for i := range snap.waits {
		e := &snap.waits[i]
		if k := (key{e.ThreadID, e.EventID}); !e.InProgress && isNew(k) {
			var parent key
			switch e.NestingEventType {
			case pfscore.NestingStatement, pfscore.NestingStage, pfscore.NestingWait:
				if e.NestingEventID != 0 {
					parent = key{e.ThreadID, e.NestingEventID}
				}
			}
			if parent.event == 0 {
				roots = append(roots, k)
				continue
			}
			row := *e // a copy: a pending node must not keep the whole snapshot alive
			fresh = append(fresh, &node{kind: kindWait, key: k, parent: parent, wait: &row})
		}
	}
	for _, k := range snap.outer {
		if isNew(k) {
			roots = append(roots, k)
		}
	}

	// Decide the ids below each thread's previous high mark.
	var lost uint64
	for th, ts := range h.threads {
		if unread[th] && ts.unreadRuns < maxUnreadRuns {
			ts.unreadRuns++
			if r, ok := seen[th]; ok {
				ts.hi = max(ts.hi, r.hi+1)
			}
			continue
		}
		ts.unreadRuns = 0
		delete(unread, th) // decided, as if read: assemble strikes its rows too
		for id := range ts.open {
			if _, ok := inProgress[key{th, id}]; !ok {
				delete(ts.open, id) // ended, and not in the history read after
				if strict {
					lost++
				}
			}
		}
		if ts.hi > ts.next {
			undecided := ts.hi - ts.next
			for _, id := range progressBy[th] {
				if id >= ts.next && id < ts.hi {
					if _, read := ts.ahead[id]; !read {
						ts.open[id] = struct{}{}
						undecided--
					}
				}
			}
			for id := range ts.ahead {
				if id < ts.hi {
					delete(ts.ahead, id)
					undecided--
				}
			}
			if strict {
				lost += undecided
			}
			ts.next = ts.hi
		}
		if r, ok := seen[th]; ok {
			ts.hi = max(ts.hi, r.hi+1)
		}
	}
	h.lost.Add(lost)

	// Forget the threads that ended and left no row behind: their ids
	// never come back.
	alive := make(map[uint64]bool, len(live))
	for _, th := range live {
		alive[th] = true
	}
	for th := range h.threads {
		if _, ok := seen[th]; !ok && !alive[th] {
			delete(h.threads, th)
		}
	}
	for th := range h.unreadRuns {
		if !alive[th] {
			delete(h.unreadRuns, th)
		}
	}
	return fresh, roots
}

// assemble sends every tree of pending rows whose root is known: a root
// statement or stage, or a child of a span sent earlier, or an orphan.
// roots are the waits this Read found outside any span (see account): they
// are dropped, uncounted, with what nests in them, as a wait in nothing
// is; they never enter the pool, where most Reads would put thousands of
// them only to drop them.
func (h *History) assemble(inProgress map[key]struct{}, unread map[uint64]bool, roots []key) []Span {
	children := make(map[key][]*node, len(h.pool))
	var tops []*node
	var parentless map[key]bool // the parents of pending rows, not pending themselves
	for _, n := range h.pool {
		if n.parent.event != 0 {
			if _, ok := h.pool[n.parent]; ok {
				children[n.parent] = append(children[n.parent], n)
				continue
			}
			if parentless == nil {
				parentless = map[key]bool{}
			}
			parentless[n.parent] = true
		}
		tops = append(tops, n)
	}
	// The roots that rows wait for take them as children: dropped with
	// them below, they are not tops.
	var dropped []key
	for _, k := range roots {
		if parentless[k] {
			dropped = append(dropped, k)
			parentless[k] = false // once
		}
	}
	if len(dropped) > 0 {
		tops = slices.DeleteFunc(tops, func(n *node) bool {
			if n.parent.event != 0 && !parentless[n.parent] && slices.Contains(dropped, n.parent) {
				children[n.parent] = append(children[n.parent], n)
				return true
			}
			return false
		})
	}
	slices.SortFunc(tops, func(a, b *node) int {
		return cmp.Or(cmp.Compare(a.key.thread, b.key.thread), cmp.Compare(a.key.event, b.key.event))
	})
	b := spanBuilder{h: h, children: children, now: h.cfg.now()}
	for _, k := range dropped {
		for _, c := range children[k] {
			b.drop(c, false) // in a wait in nothing: no span to hold them
		}
	}
	for _, n := range tops {
		switch {
		case n.parent.event == 0:
			if n.kind == kindWait {
				b.drop(n, false) // a wait in nothing: no span to hold it
				continue
			}
			b.emit(n, nil, false)
		case h.sent(n.parent) != nil:
			if n.kind == kindWait {
				b.drop(n, true)
				continue
			}
			b.emit(n, h.sent(n.parent), false)
		default:
			if _, ok := inProgress[n.parent]; ok || unread[n.parent.thread] {
				n.strikes = 0 // in progress, or may be
				continue
			}
			// Neither read nor in progress. Its parent may have begun after
			// the current tables were read; if it is still missing at the
			// next Read, it is gone.
			if n.strikes++; n.strikes < 2 {
				continue
			}
			if n.kind == kindWait {
				b.drop(n, true)
				continue
			}
			b.emit(n, nil, true)
		}
	}
	return b.out
}

// sent returns the span a key was sent as by this Read or the previous
// one, or nil.
func (h *History) sent(k key) *spanRef {
	if r, ok := h.recent[k]; ok {
		return &r
	}
	if r, ok := h.previous[k]; ok {
		return &r
	}
	return nil
}

// evict drops the oldest pending rows beyond maxPending.
func (h *History) evict() {
	i := 0
	for ; len(h.pool) > h.cfg.maxPending && i < len(h.order); i++ {
		if _, ok := h.pool[h.order[i]]; ok {
			delete(h.pool, h.order[i])
			h.dropped.Add(1)
		}
	}
	h.order = h.order[i:]
	if len(h.order) > 2*len(h.pool)+64 {
		kept := h.order[:0]
		for _, k := range h.order {
			if _, ok := h.pool[k]; ok {
				kept = append(kept, k)
			}
		}
		h.order = slices.Clip(kept)
	}
}

// spanBuilder makes the spans of one Read.
type spanBuilder struct {
	h        *History
	children map[key][]*node
	now      time.Time
	out      []Span
}

// drop removes n and what nests in it from the pool, counting them as
// orphans when counted.
func (b *spanBuilder) drop(n *node, counted bool) {
	delete(b.h.pool, n.key)
	if counted {
		b.h.orphans.Add(1)
	}
	for _, c := range b.children[n.key] {
		b.drop(c, counted)
	}
}

// emit sends the statement or stage n as a span, child of parent (nil: a
// root), and what nests in it: stages and statements as child spans, waits
// as events. orphan marks a span whose parent is lost.
func (b *spanBuilder) emit(n *node, parent *spanRef, orphan bool) {
	delete(b.h.pool, n.key)
	if orphan {
		b.h.orphans.Add(1)
	}
	fallback := b.now
	if parent != nil && !parent.start.IsZero() {
		fallback = parent.start
	}
	var sp Span
	ref := spanRef{span: SpanIDOf(n.key.thread, n.key.event)}
	switch n.kind {
	case kindStatement:
		sp = b.h.cfg.statementSpan(n.stmt, fallback, nil)
		tr, rs, rec := recordedTrace(n.stmt)
		if rec {
			ref.recTrace, ref.recSpan = tr, rs
		}
		switch {
		case rec && (parent == nil || parent.recTrace != tr || parent.recSpan != rs):
			// In the application's trace, under the span it recorded
			// (unless the enclosing statement recorded the same span:
			// then under that statement, which is more precise).
			ref.trace, sp.Parent, sp.RemoteParent = tr, rs, true
		case parent != nil:
			ref.trace, sp.Parent = parent.trace, parent.span
		default:
			ref.trace = traceIDOf(n.key.thread, n.key.event)
		}
	case kindStage:
		sp = b.h.cfg.stageSpan(n.stage, fallback)
		if parent != nil {
			ref.trace, sp.Parent = parent.trace, parent.span
		} else {
			ref.trace = traceIDOf(n.key.thread, n.key.event)
		}
	}
	sp.TraceID, sp.SpanID, ref.start = ref.trace, ref.span, sp.Start
	if orphan {
		sp.Attributes = append(sp.Attributes, keyOrphan.Bool(true),
			keyNestingID.Int64(spanInt(n.parent.event)))
	}
	b.h.recent[n.key] = ref
	at := len(b.out)
	b.out = append(b.out, sp)
	var events []SpanEvent
	kids := b.children[n.key]
	slices.SortFunc(kids, func(a, c *node) int { return cmp.Compare(a.key.event, c.key.event) })
	for _, c := range kids {
		if c.kind == kindWait {
			events = b.waits(c, sp.Start, events)
			continue
		}
		b.emit(c, &ref, false)
	}
	// Waits are timed with setup_timers' wait timer (CYCLE by default),
	// statements and stages with theirs (NANOSECOND): two calibrations,
	// which may disagree by tens of microseconds after a while. A wait
	// happened inside its span, so its event is kept inside it.
	for i := range events {
		if events[i].Time.Before(sp.Start) {
			events[i].Time = sp.Start
		} else if events[i].Time.After(sp.End) {
			events[i].Time = sp.End
		}
	}
	slices.SortStableFunc(events, func(a, c SpanEvent) int { return a.Time.Compare(c.Time) })
	b.out[at].Events = events
}

// waits appends the event of wait n, and of the waits nested in it, to
// events, and removes them from the pool.
func (b *spanBuilder) waits(n *node, fallback time.Time, events []SpanEvent) []SpanEvent {
	delete(b.h.pool, n.key)
	events = append(events, b.h.cfg.waitEvent(n.wait, fallback))
	for _, c := range b.children[n.key] {
		if c.kind == kindWait {
			events = b.waits(c, fallback, events)
		} else {
			b.drop(c, true) // only waits nest in a wait
		}
	}
	return events
}

// String describes the stats, for logs.
func (s HistoryStats) String() string {
	return fmt.Sprintf("reads=%d spans=%d lost=%d orphans=%d dropped=%d pending=%d",
		s.Reads, s.Spans, s.Lost, s.Orphans, s.Dropped, s.Pending)
}
