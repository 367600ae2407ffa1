package pfscore

import (
	"encoding/binary"
	"unsafe"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
)

// Statement events: statement/sql/<command> and statement/<component>/<name>
// classes, the rows of events_statements_current, _history and
// _history_long, the summaries by event name and by digest, and the
// latency histograms.
//
// A statement is begun with Schema.StartStatement, which returns a
// Statement the caller keeps (on its stack: MySQL's statement locker
// state) and ends with Statement.End. With a thread, statements nest: a
// statement begun while another is in progress on the thread is one level
// deeper (NESTING_EVENT_LEVEL), and nests in it (NESTING_EVENT_TYPE
// STATEMENT), up to statementStackDepth levels; deeper statements count in
// the summaries but show no row (Performance_schema_nested_statement_lost).
// Stages and waits begun during a statement nest in it. A statement that
// ends while statements it encloses are still open (two result sets open
// at once, closed in the order they opened) ends in place and leaves the
// stack with them. Each pushed statement has a sequence number of its
// thread, so an End through a copy of an ended Statement is recognised and
// ignored.
//
// Every per-thread write is a write section (Thread.enter), like the other
// events'; the current rows have a sequence word each, as the stage row
// does, since the guard's moves with every wait.

// statementStackDepth is MySQL's performance_schema_max_statement_stack.
const statementStackDepth = 10

// The words of a statement row, as a thread's current slots and the history
// rings store it.
const (
	qThreadID      = iota // THREAD_ID
	qEventID              // EVENT_ID
	qEndEventID           // END_EVENT_ID+1; 0 while in progress
	qClass                // class index+1; 0: empty slot
	qTimerStart           // TIMER_START, ps; 0: untimed
	qTimerEnd             // TIMER_END, ps
	qDigest0              // DIGEST, 4 words, when qfHasDigest
	qDigest1              //
	qDigest2              //
	qDigest3              //
	qRowsAffected         // ROWS_AFFECTED
	qRowsSent             // ROWS_SENT
	qRowsExamined         // ROWS_EXAMINED
	qErrors               // ERRORS
	qWarnings             // WARNINGS
	qNestingID            // NESTING_EVENT_ID; 0: NULL
	qMisc                 // timer | nesting type<<8 | level<<16 | flags<<24
	qTextLen              // SQL_TEXT's length (of the clipped text)
	qDigestTextLen        // DIGEST_TEXT's
	qSchemaLen            // CURRENT_SCHEMA's
	qMessageLen           // MESSAGE_TEXT's
	qSource               // interned SOURCE
	qTrace0               // TRACE_ID, 2 words, when qfHasTrace
	qTrace1               //
	qSpan                 // SPAN_ID
	stmtWidth
)

// The pointer cells of a statement row: the strings whose lengths the words
// above hold.
const (
	rText = iota
	rDigestText
	rSchema
	rMessage
	stmtRefs
)

// Flags in a statement row's qMisc, above the timer's byte (bits 24-31).
const (
	qfHasDigest = 1 << (32 + iota)
	qfTextCut
	qfHasTrace
)

// stmtSlot is a current statement row: words, strings and a sequence word
// of its own.
type stmtSlot struct {
	seq   owned.Seq
	cells [stmtWidth]owned.Uint64
	refs  [stmtRefs]owned.Pointer // the strings' bytes
}

// stmtLevel is a statement in progress on a thread, its owner's.
type stmtLevel struct {
	seq  uint64 // which statement of the thread (threadCore.stmtSeq): its End finds it by that
	id   uint64 // its EVENT_ID, 0 without a current row
	nest uint64 // the EVENT_ID what begins inside nests in: id, or the enclosing level's
	done bool   // ended while statements above it were open: popped with them
}

// StatementInfo describes a statement as it begins.
type StatementInfo struct {
	// Text is SQL_TEXT, the statement as the application sent it; its
	// digest is computed from it (once per distinct text, see the
	// statement cache).
	Text string
	// Normalized says Text is already in normalized form, its own
	// DIGEST_TEXT: an HTTP route pattern, an RPC method. Its DIGEST is the
	// SHA-256 of the text.
	Normalized bool
	// Schema is CURRENT_SCHEMA, and half of the by-digest key.
	Schema string
	// Source is SOURCE.
	Source string
	// TraceID and SpanID are the OpenTelemetry span the statement runs in,
	// zero for none (see instrument's trace hook); Sampled is that span's
	// sampled flag, which a parent-based TraceSampler follows.
	TraceID [16]byte
	SpanID  [8]byte
	Sampled bool
}

// StatementResult is what a statement did, as its End reports it.
type StatementResult struct {
	RowsAffected uint64 // ROWS_AFFECTED
	RowsSent     uint64 // ROWS_SENT: rows returned to the application
	RowsExamined uint64 // ROWS_EXAMINED
	Errors       uint64 // ERRORS: 1 for a statement that failed
	Warnings     uint64 // WARNINGS
	Message      string // MESSAGE_TEXT: the error's text
	// Client-side times, picoseconds: waiting for a pooled connection, in
	// the driver's round trips, and iterating the result.
	PoolTime, DriverTime, FetchTime uint64
	Retries                         uint64 // attempts repeated (driver.ErrBadConn)
	Cancelled                       bool   // the statement's context was done
	// Protocol is what a top-level statement that served a request (an
	// HTTP request, an RPC) says of it in OpenTelemetry's terms and not in
	// MySQL's tables: its span carries it (CapturedTrace.Protocol), and
	// nothing else keeps it. nil for none.
	Protocol *Protocol
}

// Protocol is a served request's status and target, for its span.
type Protocol struct {
	Status int    // the protocol's status code: HTTP's 200, 404, ...
	Scheme string // url.scheme: http, https
	Path   string // url.path, as the client sent it
	// Query is url.query, without the '?'. A query string may carry
	// secrets (tokens, passwords): an instrument sets it only when told to
	// (pfshttp never does).
	Query string
	// Method is the request's method as the client sent it, when the
	// statement's text names it _OTHER (http.request.method_original).
	Method string
}

// Statement is a statement in progress: what StartStatement returns, for
// End. It is a value the caller keeps; the zero Statement (an instrument
// that is off) does nothing. End it once: a copy ended again is recognised
// when the statement ran on a thread (and ignored), not otherwise.
type Statement struct {
	s      *Schema
	t      *Thread
	c      *Class
	entry  *stmtEntry // its digest counts when sfDigest is set
	schema string
	start  uint64
	seq    uint64
	meta   stmtMeta
}

// stmtMeta is a Statement's flags (sf*), its stack level (bits 8-15) and
// its timer (bits 16-23), in one word: a Statement is then nine words or
// fewer, which Go passes and returns in registers rather than through
// memory (the amd64 ABI has nine integer registers for results).
type stmtMeta uint32

func (m stmtMeta) level() int           { return int(uint8(m >> 8)) }
func (m stmtMeta) timer() hwclock.Timer { return hwclock.Timer(uint8(m >> 16)) }

// Statement flags.
const (
	sfTimed   stmtMeta = 1 << iota
	sfThread           // the thread part: statistics, and the stack level
	sfEvent            // a current row
	sfHistory          // to events_statements_history at End
	sfLong             // to events_statements_history_long
	sfDigest           // entry's digest, computed, is the statement's (DIGEST is not NULL)
	sfNewText          // EndWithText: the row's text is written as it ends
)

// digest returns the statement's digest, nil for none.
func (st *Statement) digest() *digestInfo {
	if st.meta&sfDigest == 0 {
		return nil
	}
	return st.entry.dg.Load() // set before sfDigest was (digestOf)
}

// StartStatement begins a statement of class c (a statement/... class) on
// thread t (nil: none). c off, or not a statement class of s, gives the
// zero Statement. Safe only from the goroutine that drives t.
func (s *Schema) StartStatement(t *Thread, c *Class, info StatementInfo) Statement {
	if c == nil || c.kind != KindStatement || !s.owns(c) {
		return Statement{}
	}
	f := c.flags.Load()
	if f&flagOn == 0 {
		return Statement{}
	}
	var e *stmtEntry
	if info.Text != "" {
		e = s.stmtCache.lookup(info.Text, info.Normalized)
	}
	return s.startStatement(t, c, f, e, &info)
}

// StartSQL begins a SQL statement on thread t (nil: none): its class is
// statement/sql/<command> from the text's first keywords (see SQLCommand),
// registered on first use. The text's class and digest are computed once
// per distinct text (the statement cache), so a repeated text costs a
// lookup.
func (s *Schema) StartSQL(t *Thread, info StatementInfo) Statement {
	e := s.stmtCache.lookup(info.Text, false)
	c := e.sqlClass()
	if c == nil {
		return Statement{}
	}
	f := c.flags.Load()
	if f&flagOn == 0 {
		return Statement{}
	}
	return s.startStatement(t, c, f, e, &info)
}

// startStatement begins a statement of class c, whose flags are f; e is
// the text's cache entry (nil for a statement without text).
func (s *Schema) startStatement(t *Thread, c *Class, f uint32, e *stmtEntry, info *StatementInfo) Statement {
	st := Statement{s: s, c: c, entry: e, schema: info.Schema}
	if f&flagSetTimed != 0 {
		tm := s.timers.Timer(hwclock.ClassStatement)
		st.meta |= sfTimed | stmtMeta(tm)<<16
		st.start = tm.Now()
	}
	cons := s.consumers.Load()
	if cons&(1<<ConsumerStatementsDigest) != 0 && e != nil && s.cfg.maxDigestLength > 0 {
		if e.digestOf().has { // computed here, outside any write section
			st.meta |= sfDigest
		}
	}
	if t != nil && t.s == s && !t.ended.Load() {
		t.beginStatement(&st, info, cons&t.mask.Load())
	}
	return st
}

// SetText replaces the statement's text (and so its digest), as MySQL's
// statement text arrives after the statement began: an HTTP request's route
// is known once the request is routed. normalized is as in StatementInfo.
// Safe only from the goroutine that drives the statement's thread.
func (st *Statement) SetText(text string, normalized bool) {
	s := st.s
	if s == nil {
		return
	}
	st.setText(s, text, normalized)
	if st.meta&sfEvent == 0 {
		return
	}
	t := st.t
	if t.ended.Load() {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	defer t.leave(g)
	if level := st.meta.level(); level < t.stmtDepth && t.stmts[level].seq == st.seq {
		slot := &t.stmtRows[level]
		slot.seq.BeginWrite()
		t.writeText(slot, st)
		slot.seq.EndWrite()
	}
}

// setText makes text the statement's, with its digest: SetText but the
// row.
func (st *Statement) setText(s *Schema, text string, normalized bool) {
	st.entry = nil
	st.meta &^= sfDigest
	if text != "" {
		st.entry = s.stmtCache.lookup(text, normalized)
		if s.consumers.Load()&(1<<ConsumerStatementsDigest) != 0 && s.cfg.maxDigestLength > 0 {
			if st.entry.digestOf().has {
				st.meta |= sfDigest
			}
		}
	}
}

// EndWithText is SetText then End, in one step: the text replaces the
// statement's as SetText's does, and reaches the current row as the
// statement ends, in the write section that ends it, rather than in one
// of its own. For a statement whose text is known only at its end, as an
// HTTP request's route is.
func (st *Statement) EndWithText(text string, normalized bool, r StatementResult) {
	s := st.s
	if s == nil {
		return
	}
	st.setText(s, text, normalized)
	st.meta |= sfNewText
	st.End(r)
}

// writeText writes a statement row's SQL_TEXT, DIGEST and DIGEST_TEXT: in
// a write section, between the row's BeginWrite and EndWrite.
func (t *Thread) writeText(slot *stmtSlot, st *Statement) {
	var text string
	if st.entry != nil {
		text = st.entry.text // the engine's copy: the row keeps nothing of the caller's
	}
	clipped, cut := clipText(text, t.s.cfg.maxSQLText)
	c := &slot.cells
	misc := c[qMisc].Load() &^ (qfTextCut | qfHasDigest)
	if cut {
		misc |= qfTextCut
	}
	var dtext string
	if d := st.digest(); d != nil {
		misc |= qfHasDigest
		dtext = d.text
		c[qDigest0].Set(binary.LittleEndian.Uint64(d.digest[0:]))
		c[qDigest1].Set(binary.LittleEndian.Uint64(d.digest[8:]))
		c[qDigest2].Set(binary.LittleEndian.Uint64(d.digest[16:]))
		c[qDigest3].Set(binary.LittleEndian.Uint64(d.digest[24:]))
	}
	c[qMisc].Set(misc)
	c[qTextLen].Set(uint64(len(clipped)))
	c[qDigestTextLen].Set(uint64(len(dtext)))
	setRef(&slot.refs[rText], clipped)
	setRef(&slot.refs[rDigestText], dtext)
}

// Now returns the statement's timer's reading, picoseconds, or 0 for an
// untimed statement: the clock the client-side times of StatementResult
// are measured on.
func (st *Statement) Now() uint64 {
	if st.meta&sfTimed == 0 {
		return 0
	}
	return st.meta.timer().Now()
}

// Start returns the statement's TIMER_START, picoseconds on the clock of
// Now, or 0 for an untimed statement: EndAt(st.Start()+wait) ends it
// after exactly wait.
func (st *Statement) Start() uint64 {
	if st.meta&sfTimed == 0 {
		return 0
	}
	return st.start
}

// Timed reports whether the statement is timed.
func (st *Statement) Timed() bool { return st.meta&sfTimed != 0 }

// Timer returns the timer Now reads; meaningful when Timed.
func (st *Statement) Timer() hwclock.Timer { return st.meta.timer() }

// Active reports whether the statement is instrumented at all.
func (st *Statement) Active() bool { return st.s != nil }

// beginStatement pushes the statement on the thread's stack and writes its
// current row, in a write section.
func (t *Thread) beginStatement(st *Statement, info *StatementInfo, cons uint32) {
	if cons&(1<<ConsumerThreadInstrumentation) == 0 {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	defer t.leave(g) // a section is closed whatever happens in it
	level := t.stmtDepth
	if level >= statementStackDepth {
		t.s.nestedStatementLost.Add(1)
		return
	}
	t.stmtSeq++
	st.t, st.seq = t, t.stmtSeq
	st.meta |= stmtMeta(level) << 8
	st.meta |= sfThread
	// What the statement nests in: the enclosing statement, or at level 0
	// the transaction in progress (what begins inside the statement nests
	// in statements only).
	var stmtParent uint64
	if level > 0 {
		stmtParent = t.stmts[level-1].nest
	}
	parent, nestType := stmtParent, NestingStatement
	if level == 0 && t.trx.on {
		t.trx.statements++
		parent, nestType = t.trx.id, NestingTransaction
	}
	t.stmts[level] = stmtLevel{seq: st.seq, nest: stmtParent}
	t.stmtDepth = level + 1
	t.stmtNest = stmtParent
	slot := &t.stmtRows[level]
	if cons&(1<<ConsumerEventsStatementsCurrent) == 0 {
		if slot.cells[qClass].Load() != 0 {
			slot.seq.BeginWrite()
			slot.cells[qClass].Set(0) // no row at this level: an older one must not show
			slot.seq.EndWrite()
		}
		t.stmtDepthCell.Set(uint64(t.stmtDepth))
		return
	}
	st.meta |= sfEvent
	if level >= t.stmtRowsUsed {
		t.stmtRowsUsed = level + 1
	}
	if cons&(1<<ConsumerEventsStatementsHistory) != 0 && t.stmtHistory != nil {
		st.meta |= sfHistory
	}
	if cons&(1<<ConsumerEventsStatementsHistoryLong) != 0 && t.s.stmtsLong != nil {
		st.meta |= sfLong
	}
	id := t.eventID
	t.eventID++
	t.stmts[level] = stmtLevel{seq: st.seq, id: id, nest: id}
	t.stmtNest = id
	if level == 0 && (t.capture != nil || t.s.capture.Load() != nil) {
		t.beginCapture(info) // capture.go; the test keeps capture off at a load
	}

	src := t.s.classSource(st.c, info.Source) // st.c is t.s's: startStatement's callers checked
	misc := uint64(st.meta.timer())<<miscTimer | uint64(level)<<16
	if parent != 0 {
		misc |= uint64(nestType) << 8
	}
	if info.TraceID != [16]byte{} {
		misc |= qfHasTrace
	}
	c := &slot.cells
	slot.seq.BeginWrite()
	c[qThreadID].Set(t.id)
	c[qEventID].Set(id)
	c[qEndEventID].Set(0)
	c[qClass].Set(uint64(st.c.index) + 1)
	c[qTimerStart].Set(st.start)
	c[qTimerEnd].Set(0)
	c[qRowsAffected].Set(0)
	c[qRowsSent].Set(0)
	c[qRowsExamined].Set(0)
	c[qErrors].Set(0)
	c[qWarnings].Set(0)
	c[qMessageLen].Set(0)
	c[qNestingID].Set(parent)
	c[qMisc].Set(misc)
	c[qSchemaLen].Set(uint64(len(info.Schema)))
	c[qSource].Set(src)
	c[qTrace0].Set(binary.LittleEndian.Uint64(info.TraceID[0:]))
	c[qTrace1].Set(binary.LittleEndian.Uint64(info.TraceID[8:]))
	c[qSpan].Set(binary.LittleEndian.Uint64(info.SpanID[:]))
	setRef(&slot.refs[rSchema], info.Schema)
	setRef(&slot.refs[rMessage], "")
	t.writeText(slot, st)
	slot.seq.EndWrite()
	t.stmtDepthCell.Set(uint64(t.stmtDepth))
}

// What endStatement did with a statement's thread part.
const (
	stmtCounted = iota // counted in the thread's statistics
	stmtDropped        // not counted there: the thread was busy or ended
	stmtStale          // already ended (a copy of the Statement ended before): count nothing
)

// End ends the statement with what it did. Safe only from the goroutine that
// drives the statement's thread.
func (st *Statement) End(r StatementResult) {
	if st.s == nil {
		return
	}
	var end uint64
	if st.meta&sfTimed != 0 {
		end = st.meta.timer().Now()
	}
	st.EndAt(end, r)
}

// EndAt is End at a time the caller read before: end is a reading of the
// statement's Now (ignored for an untimed statement). A caller that timed
// the statement's last phase saves a clock read; one that ends a statement
// late (it waited to see whether a retry would take it) ends it when it
// really ended.
func (st *Statement) EndAt(end uint64, r StatementResult) {
	s := st.s
	if s == nil {
		return
	}
	st.s = nil // a second End of this variable does nothing
	timed := st.meta&sfTimed != 0
	var wait uint64
	if timed {
		end = max(end, st.start)
		wait = end - st.start
	} else {
		end = hwclock.Cycle.Now() // for LAST_SEEN
	}
	done := stmtDropped
	var span spanRef // the current row's trace, copied by endStatement
	if st.meta&sfThread != 0 {
		done = st.t.endStatement(st, timed, wait, end, &r, &span)
	}
	switch done {
	case stmtStale:
		return
	case stmtDropped:
		st.c.stmt.stat.aggregate(s.epochOf(truncThreads), timed, wait)
		st.c.stmt.x.addResult(&r)
	}
	if d := st.digest(); d != nil {
		rec := s.digestRecord(st.entry, d, st.schema, end, st.c)
		rec.stats.aggregate(timed, wait, end, &r)
		if st.meta&sfEvent != 0 {
			rec.stats.maybeSample(st.entry.text, timed, wait, end, s.sampleAgePicos, uint64(s.cfg.maxSQLText), &span)
		}
	}
	if timed {
		s.stmtHist[histBucket(wait)].Add(1)
	}
}

// endStatement ends the thread part of st: statistics, the row closed and
// copied to history, the stack popped. It says what it did (stmtCounted,
// stmtDropped, stmtStale).
//
// When the statement had a current row, endStatement copies the row's
// TRACE_ID and SPAN_ID to span (for the digest's query sample): in the
// write section, where the row is still this statement's. After it, the
// thread may run another statement, or end and lend its storage to another
// thread.
func (t *Thread) endStatement(st *Statement, timed bool, wait, end uint64, r *StatementResult, span *spanRef) int {
	if t.ended.Load() {
		t.s.threadEventsLost.Add(1)
		return stmtDropped
	}
	g, ok := t.enter()
	if !ok {
		return stmtDropped
	}
	defer t.leave(g)
	level := st.meta.level()
	if level >= t.stmtDepth || t.stmts[level].seq != st.seq || t.stmts[level].done {
		return stmtStale // ended before, through a copy of st
	}
	top := level == t.stmtDepth-1
	depth := -1 // the stack's new depth, published on the way out when top
	// A stage begun inside the statement, while it was the innermost, ends
	// with it.
	if top && t.stage.on && t.stage.stmtDepth > level {
		t.endStage(&reading{timer: st.meta.timer(), now: end, ok: timed})
	}
	t.stat(st.c.index).aggregate(t.s.epochOf(truncThreads), timed, wait)
	t.stmtCounts(st.c.kindIndex).addResult(r)
	if top {
		// Pop it, and the statements below that ended while it was open
		// (two result sets open at once, closed in the order they opened).
		d := level
		for d > 0 && t.stmts[d-1].done {
			d--
		}
		t.stmtDepth = d
		t.stmtNest = 0
		if d > 0 {
			t.stmtNest = t.stmts[d-1].nest
		}
		// Readers copy the rows below the published depth: it drops only
		// once the row is ended and in history (below), or a reader would
		// see the statement neither in progress nor in history.
		depth = d
	} else {
		// Statements above it are still open: it ends in place, and leaves
		// the stack with them. What begins next nests in the innermost.
		t.stmts[level].done = true
	}
	if st.meta&sfEvent == 0 {
		if depth >= 0 {
			t.stmtDepthCell.Set(uint64(depth))
		}
		return stmtCounted
	}
	msg, _ := clipText(r.Message, t.s.cfg.maxSQLText)
	slot := &t.stmtRows[level]
	c := &slot.cells
	if c[qMisc].Load()&qfHasTrace != 0 {
		span.ok = true
		binary.LittleEndian.PutUint64(span.trace[0:], c[qTrace0].Load())
		binary.LittleEndian.PutUint64(span.trace[8:], c[qTrace1].Load())
		binary.LittleEndian.PutUint64(span.span[:], c[qSpan].Load())
	}
	slot.seq.BeginWrite()
	if st.meta&sfNewText != 0 {
		t.writeText(slot, st)
	}
	c[qEndEventID].Set(t.eventID) // the last EVENT_ID so far, +1
	c[qTimerEnd].Set(end)
	c[qRowsAffected].Set(r.RowsAffected)
	c[qRowsSent].Set(r.RowsSent)
	c[qRowsExamined].Set(r.RowsExamined)
	c[qErrors].Set(r.Errors)
	c[qWarnings].Set(r.Warnings)
	c[qMessageLen].Set(uint64(len(msg)))
	setRef(&slot.refs[rMessage], msg)
	// In progress until the history rows exist (see endStage).
	if st.meta&(sfHistory|sfLong) != 0 || t.capture != nil {
		row := owned.OwnView(c[:]) // the row is this thread's: no copy
		refs := owned.OwnPointers(slot.refs[:])
		if st.meta&sfHistory != 0 {
			t.stmtHistory.AppendRefs(row, refs)
		}
		if st.meta&sfLong != 0 {
			t.s.stmtsLong.AppendRefs(row, refs)
		}
		if t.capture != nil {
			t.capture.addStatement(row, refs, level == 0)
		}
	}
	slot.seq.EndWrite()
	if b := t.capture; b != nil && level == 0 { // the tree is complete: capture.go
		t.capture = nil
		if r.Protocol != nil {
			b.proto, b.hasProto = *r.Protocol, true
		}
		b.q.handOff(b)
	}
	if depth >= 0 {
		t.stmtDepthCell.Set(uint64(depth))
	}
	return stmtCounted
}

// nesting returns what a wait beginning now at level 0 nests in: the stage
// in progress with a current row, else the innermost statement with one.
// In a write section.
func (t *Thread) nesting() (uint64, NestingType) {
	if t.stage.nest != 0 {
		return t.stage.nest, NestingStage
	}
	if t.stmtNest != 0 {
		return t.stmtNest, NestingStatement
	}
	return 0, NestingNone
}

// copyStmt copies a current statement row with the seqlock protocol on its
// sequence; false if no stable copy came.
func (c *threadCore) copyStmt(level int, dst *[stmtWidth]uint64, refs *[stmtRefs]unsafe.Pointer) bool {
	slot := &c.stmtRows[level]
	for i := 0; copyRetry(i); i++ {
		v := slot.seq.Load()
		if v&1 != 0 {
			continue
		}
		for i := range slot.cells {
			dst[i] = slot.cells[i].Load()
		}
		for i := range slot.refs {
			refs[i] = slot.refs[i].Load()
		}
		if slot.seq.Load() == v {
			return true
		}
	}
	return false
}

// StatementEvent is a row of the events_statements_* tables.
type StatementEvent struct {
	ThreadID          uint64      `pfs:"THREAD_ID,id"`
	EventID           uint64      `pfs:"EVENT_ID,id"`
	EndEventID        uint64      `pfs:"END_EVENT_ID,id,valid=!InProgress"`
	EventName         string      `pfs:"EVENT_NAME,dim"`
	Source            string      `pfs:"SOURCE,text,null"`
	TimerStart        uint64      `pfs:"TIMER_START,time,valid=Timed"`
	TimerEnd          uint64      `pfs:"TIMER_END,time,valid=Timed"` // for a statement in progress, now
	TimerWait         uint64      `pfs:"TIMER_WAIT,duration,valid=Timed"`
	SQLText           string      `pfs:"SQL_TEXT,text,null"`
	Digest            string      `pfs:"DIGEST,attr,null"`
	DigestText        string      `pfs:"DIGEST_TEXT,text,null"`
	CurrentSchema     string      `pfs:"CURRENT_SCHEMA,attr,null"`
	MessageText       string      `pfs:"MESSAGE_TEXT,text,null"`
	Errors            uint64      `pfs:"ERRORS,gauge"`
	Warnings          uint64      `pfs:"WARNINGS,gauge"`
	RowsAffected      uint64      `pfs:"ROWS_AFFECTED,gauge"`
	RowsSent          uint64      `pfs:"ROWS_SENT,gauge"`
	RowsExamined      uint64      `pfs:"ROWS_EXAMINED,gauge"`
	NestingEventID    uint64      `pfs:"NESTING_EVENT_ID,id,null"`
	NestingEventType  NestingType `pfs:"NESTING_EVENT_TYPE,attr,null"`
	NestingEventLevel uint64      `pfs:"NESTING_EVENT_LEVEL,attr"`
	TraceID           string      `pfs:"TRACE_ID,id,null"`
	SpanID            string      `pfs:"SPAN_ID,id,null"`

	InProgress bool // the statement has not ended: END_EVENT_ID is NULL
	Timed      bool // the TIMER_* columns are not NULL
}

// decodeStatement turns a row's words and strings into a StatementEvent;
// false for an empty slot or a class that no longer exists.
func (s *Schema) decodeStatement(c []uint64, refs []unsafe.Pointer) (StatementEvent, bool) {
	classes := s.Classes()
	ci := c[qClass]
	if ci == 0 || ci > uint64(len(classes)) {
		return StatementEvent{}, false
	}
	misc := c[qMisc]
	e := StatementEvent{
		ThreadID:          c[qThreadID],
		EventID:           c[qEventID],
		EventName:         classes[ci-1].name,
		Source:            s.names.Lookup(c[qSource]),
		TimerStart:        c[qTimerStart],
		SQLText:           showText(refString(refs[rText], c[qTextLen]), misc&qfTextCut != 0),
		CurrentSchema:     refString(refs[rSchema], c[qSchemaLen]),
		MessageText:       refString(refs[rMessage], c[qMessageLen]),
		Errors:            c[qErrors],
		Warnings:          c[qWarnings],
		RowsAffected:      c[qRowsAffected],
		RowsSent:          c[qRowsSent],
		RowsExamined:      c[qRowsExamined],
		NestingEventID:    c[qNestingID],
		NestingEventType:  NestingType(misc >> 8 & 0xff),
		NestingEventLevel: misc >> 16 & 0xff,
	}
	if misc&qfHasDigest != 0 {
		var d digest.Digest
		binary.LittleEndian.PutUint64(d[0:], c[qDigest0])
		binary.LittleEndian.PutUint64(d[8:], c[qDigest1])
		binary.LittleEndian.PutUint64(d[16:], c[qDigest2])
		binary.LittleEndian.PutUint64(d[24:], c[qDigest3])
		e.Digest = d.Hex()
		e.DigestText = refString(refs[rDigestText], c[qDigestTextLen])
	}
	if misc&qfHasTrace != 0 {
		var tr [16]byte
		var sp [8]byte
		binary.LittleEndian.PutUint64(tr[0:], c[qTrace0])
		binary.LittleEndian.PutUint64(tr[8:], c[qTrace1])
		binary.LittleEndian.PutUint64(sp[:], c[qSpan])
		e.TraceID, e.SpanID = hexString(tr[:]), hexString(sp[:])
	}
	if end := c[qEndEventID]; end != 0 {
		e.EndEventID = end - 1
		e.TimerEnd = c[qTimerEnd]
	} else {
		e.InProgress = true
		if tm := hwclock.Timer(misc >> miscTimer & 0xff); e.TimerStart != 0 && tm < hwclock.NumTimers {
			e.TimerEnd = inProgressEnd(tm, e.TimerStart)
		}
	}
	if e.TimerStart != 0 {
		e.Timed = true
		e.TimerWait = e.TimerEnd - e.TimerStart
	} else {
		e.TimerEnd = 0
	}
	return e, true
}

// setRef stores s's bytes in a row's pointer cell, unless the cell holds
// them already (a thread's statements mostly repeat their schema and texts,
// and an unchanged cell skips the write barrier).
func setRef(p *owned.Pointer, s string) {
	if b := unsafe.Pointer(unsafe.StringData(s)); p.Load() != b {
		p.Set(b)
	}
}

// refString rebuilds a string from a row's pointer cell and length word.
// The pointer keeps the bytes alive; the row's version check made the pair
// consistent.
func refString(p unsafe.Pointer, n uint64) string {
	if p == nil || n == 0 {
		return ""
	}
	return unsafe.String((*byte)(p), int(n))
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, x := range b {
		out[2*i], out[2*i+1] = digits[x>>4], digits[x&15]
	}
	return string(out)
}

// EventsStatementsCurrent returns events_statements_current: each thread's
// statements in progress, outermost first, or its last statement if none
// is.
func (s *Schema) EventsStatementsCurrent() []StatementEvent {
	return s.eventsStatementsCurrent(nil)
}

// eventsStatementsCurrent is EventsStatementsCurrent, adding to unread the
// threads with a row it could not copy (when unread is not nil).
func (s *Schema) eventsStatementsCurrent(unread map[uint64]bool) []StatementEvent {
	s.beginRead()
	defer s.endRead()
	s.readMu.Lock()
	marks := s.stmtMarks
	s.readMu.Unlock()
	var out []StatementEvent
	var row [stmtWidth]uint64
	var refs [stmtRefs]unsafe.Pointer
	for _, t := range s.liveThreads() {
		n := int(min(t.stmtDepthCell.Load(), statementStackDepth))
		pending := n > 0
		if !pending {
			n = 1 // the last statement, if it ended
		}
		for level := range n {
			if !t.copyStmt(level, &row, &refs) {
				markUnread(unread, t)
				continue
			}
			if e, ok := s.decodeStatement(row[:], refs[:]); ok && e.EventID > marks[e.ThreadID] {
				if pending && !e.InProgress {
					continue // as MySQL: the statements in progress, or the last one when none is
				}
				out = append(out, e)
			}
		}
	}
	return out
}

// EventsStatementsHistory returns events_statements_history: each thread's
// last statements, oldest first.
func (s *Schema) EventsStatementsHistory() []StatementEvent {
	s.beginRead()
	defer s.endRead()
	var out []StatementEvent
	var words []uint64
	var refs []unsafe.Pointer
	for _, t := range s.liveThreads() {
		if t.stmtHistory == nil {
			continue
		}
		words, refs = t.stmtHistory.AppendRowsRefs(words[:0], refs[:0])
		out = s.appendStatements(out, words, refs)
	}
	return out
}

// EventsStatementsHistoryLong returns events_statements_history_long,
// oldest first.
func (s *Schema) EventsStatementsHistoryLong() []StatementEvent {
	if s.stmtsLong == nil {
		return nil
	}
	words, refs := s.stmtsLong.AppendRowsRefs(nil, nil)
	return s.appendStatements(nil, words, refs)
}

func (s *Schema) appendStatements(out []StatementEvent, words []uint64, refs []unsafe.Pointer) []StatementEvent {
	for i, k := 0, 0; i+stmtWidth <= len(words); i, k = i+stmtWidth, k+stmtRefs {
		if e, ok := s.decodeStatement(words[i:i+stmtWidth], refs[k:k+stmtRefs]); ok {
			out = append(out, e)
		}
	}
	return out
}

func init() {
	defineRows("events_statements_current", (*Schema).EventsStatementsCurrent, func(s *Schema) {
		// Hide every row shown now; each thread's next statement shows again.
		marks := map[uint64]uint64{}
		var row [stmtWidth]uint64
		var refs [stmtRefs]unsafe.Pointer
		for _, t := range s.liveThreads() {
			for level := range statementStackDepth {
				if t.copyStmt(level, &row, &refs) && row[qClass] != 0 && row[qEventID] > marks[row[qThreadID]] {
					marks[row[qThreadID]] = row[qEventID]
				}
			}
		}
		s.stmtMarks = marks
	})
	defineRows("events_statements_history", (*Schema).EventsStatementsHistory, func(s *Schema) {
		for _, t := range s.liveThreads() {
			if t.stmtHistory != nil {
				t.stmtHistory.Reset()
			}
		}
	})
	defineRows("events_statements_history_long", (*Schema).EventsStatementsHistoryLong, func(s *Schema) {
		if s.stmtsLong != nil {
			s.stmtsLong.Reset()
		}
	})
	defineFamily(eventFamily[StatementStats, stmtStat]{
		prefix: "events_statements_summary",
		member: func(c *Class) bool { return c.kind == KindStatement },
		groups: groupsThreads,
		group:  func(*Class) uint8 { return truncThreads },
		global: (*Schema).globalStatements,
		thread: (*Thread).threadStmtStatsAt,
		actor:  (*actorRow).actorStmtStatsAt,
	})
}
