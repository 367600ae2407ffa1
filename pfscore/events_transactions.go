package pfscore

import (
	"fmt"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/owned"
)

// Transaction events: the class "transaction", the rows of
// events_transactions_current, _history and _history_long, and the
// events_transactions_summary_* family, whose rows split their statistics
// into read-write and read-only transactions.
//
// A thread has at most one transaction at a time (MySQL's too): it begins
// with Schema.StartTransaction, which returns a Transaction the caller
// keeps, and ends with Transaction.End, committed or rolled back.
// Statements at level 0 that begin during a transaction nest in it
// (NESTING_EVENT_TYPE TRANSACTION); the transaction nests in the statement
// in progress when it began, if any. Per-thread writes are write sections,
// and the current row has its own sequence word, as the stage row does.

// The words of a transaction row.
const (
	xThreadID   = iota // THREAD_ID
	xEventID           // EVENT_ID
	xEndEventID        // END_EVENT_ID+1; 0 while in progress
	xState             // TransactionState
	xTimerStart        // TIMER_START, ps; 0: untimed
	xTimerEnd          // TIMER_END, ps
	xMisc              // timer<<miscTimer | nesting type<<8 | isolation<<16 | read only 1 | autocommit 2
	xNestingID         // NESTING_EVENT_ID; 0: NULL
	xSavepoints        // NUMBER_OF_SAVEPOINTS
	xRollbackTo        // NUMBER_OF_ROLLBACK_TO_SAVEPOINT
	xRelease           // NUMBER_OF_RELEASE_SAVEPOINT
	xStatements        // STATEMENTS: statements at level 0 during the transaction
	xSource            // interned SOURCE
	trxWidth
)

// A TransactionState is events_transactions_*.STATE.
type TransactionState uint8

const (
	TrxActive TransactionState = iota + 1
	TrxCommitted
	TrxRolledBack
)

var trxStateNames = [...]string{"", "ACTIVE", "COMMITTED", "ROLLED BACK"}

func (s TransactionState) String() string {
	if int(s) < len(trxStateNames) {
		return trxStateNames[s]
	}
	return fmt.Sprintf("TransactionState(%d)", uint8(s))
}

// An IsolationLevel is ISOLATION_LEVEL: MySQL's four, and the others
// database/sql names.
type IsolationLevel uint8

const (
	IsolationDefault IsolationLevel = iota // the database's own default: NULL
	IsolationReadUncommitted
	IsolationReadCommitted
	IsolationWriteCommitted
	IsolationRepeatableRead
	IsolationSnapshot
	IsolationSerializable
	IsolationLinearizable
)

var isolationNames = [...]string{"", "READ UNCOMMITTED", "READ COMMITTED", "WRITE COMMITTED",
	"REPEATABLE READ", "SNAPSHOT", "SERIALIZABLE", "LINEARIZABLE"}

func (l IsolationLevel) String() string {
	if int(l) < len(isolationNames) {
		return isolationNames[l]
	}
	return fmt.Sprintf("IsolationLevel(%d)", uint8(l))
}

// An AccessMode is ACCESS_MODE.
type AccessMode uint8

const (
	ReadWrite AccessMode = iota
	ReadOnly
)

func (m AccessMode) String() string {
	if m == ReadOnly {
		return "READ ONLY"
	}
	return "READ WRITE"
}

// TransactionInfo describes a transaction as it begins.
type TransactionInfo struct {
	ReadOnly   bool           // ACCESS_MODE READ ONLY
	Isolation  IsolationLevel // ISOLATION_LEVEL
	Autocommit bool           // AUTOCOMMIT: a single statement's implicit transaction
	Source     string         // SOURCE
}

// trxState is the thread's transaction in progress, its owner's.
type trxState struct {
	on         bool
	seq        uint64 // which transaction of the thread (threadCore.trxSeq): its End finds it by that
	id         uint64 // EVENT_ID; 0 without a current row
	statements uint64
}

// trxSlot is the thread's current transaction row.
type trxSlot struct {
	seq   owned.Seq
	cells [trxWidth]owned.Uint64
}

// Transaction is a transaction in progress: what StartTransaction returns,
// for its savepoint counts and End. The zero Transaction does nothing.
type Transaction struct {
	s     *Schema
	t     *Thread
	start uint64
	id    uint64
	seq   uint64
	timer hwclock.Timer
	flags stmtMeta
	ro    bool
}

// StartTransaction begins a transaction on thread t (nil: none), as the
// transaction instrument says (off: the zero Transaction). A transaction
// already in progress on t is left as it is: the new one counts in the
// summaries but has no row.
func (s *Schema) StartTransaction(t *Thread, info TransactionInfo) Transaction {
	c := s.trxClass
	f := c.flags.Load()
	if f&flagOn == 0 {
		return Transaction{}
	}
	tx := Transaction{s: s, ro: info.ReadOnly}
	if f&flagSetTimed != 0 {
		tx.flags |= sfTimed
		tx.timer = s.timers.Timer(hwclock.ClassTransaction)
		tx.start = tx.timer.Now()
	}
	if t != nil && t.s == s && !t.ended.Load() {
		t.beginTransaction(&tx, &info, s.consumers.Load()&t.mask.Load())
	}
	return tx
}

func (t *Thread) beginTransaction(tx *Transaction, info *TransactionInfo, cons uint32) {
	if cons&(1<<ConsumerThreadInstrumentation) == 0 {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	defer t.leave(g)
	if t.trx.on {
		return // one at a time
	}
	t.trxSeq++
	tx.t, tx.seq = t, t.trxSeq
	tx.flags |= sfThread
	t.trx = trxState{on: true, seq: tx.seq}
	if cons&(1<<ConsumerEventsTransactionsCurrent) == 0 {
		return
	}
	tx.flags |= sfEvent
	if cons&(1<<ConsumerEventsTransactionsHistory) != 0 && t.trxHistory != nil {
		tx.flags |= sfHistory
	}
	if cons&(1<<ConsumerEventsTransactionsHistoryLong) != 0 && t.s.trxLong != nil {
		tx.flags |= sfLong
	}
	tx.id = t.eventID
	t.eventID++
	t.trx.id = tx.id
	src := t.s.classSource(t.s.trxClass, info.Source)
	misc := uint64(tx.timer)<<miscTimer | uint64(info.Isolation)<<16
	nest := t.stmtNest
	if nest != 0 {
		misc |= uint64(NestingStatement) << 8
	}
	if info.ReadOnly {
		misc |= 1
	}
	if info.Autocommit {
		misc |= 2
	}
	c := &t.trxRow.cells
	t.trxRow.seq.BeginWrite()
	c[xThreadID].Set(t.id)
	c[xEventID].Set(tx.id)
	c[xEndEventID].Set(0)
	c[xState].Set(uint64(TrxActive))
	c[xTimerStart].Set(tx.start)
	c[xTimerEnd].Set(0)
	c[xMisc].Set(misc)
	c[xNestingID].Set(nest)
	c[xSavepoints].Set(0)
	c[xRollbackTo].Set(0)
	c[xRelease].Set(0)
	c[xStatements].Set(0)
	c[xSource].Set(src)
	t.trxRow.seq.EndWrite()
}

// Savepoint counts a SAVEPOINT in the transaction's row; RollbackToSavepoint
// and ReleaseSavepoint count ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT.
func (tx *Transaction) Savepoint()           { tx.count(xSavepoints) }
func (tx *Transaction) RollbackToSavepoint() { tx.count(xRollbackTo) }
func (tx *Transaction) ReleaseSavepoint()    { tx.count(xRelease) }

func (tx *Transaction) count(word int) {
	t := tx.t
	if tx.flags&sfEvent == 0 || t.ended.Load() {
		return
	}
	g, ok := t.enter()
	if !ok {
		return
	}
	if t.trx.on && t.trx.seq == tx.seq {
		t.trxRow.seq.BeginWrite()
		t.trxRow.cells[word].Set(t.trxRow.cells[word].Load() + 1)
		t.trxRow.seq.EndWrite()
	}
	t.leave(g)
}

// End ends the transaction: committed, or rolled back.
func (tx *Transaction) End(committed bool) {
	s := tx.s
	if s == nil {
		return
	}
	timed := tx.flags&sfTimed != 0
	var end, wait uint64
	if timed {
		end = tx.timer.Now()
		wait = end - tx.start
	}
	mode := ReadWrite
	if tx.ro {
		mode = ReadOnly
	}
	tx.s = nil // a second End of this variable does nothing
	done := stmtDropped
	if tx.flags&sfThread != 0 {
		done = tx.t.endTransaction(tx, mode, timed, wait, end, committed)
	}
	if done == stmtDropped {
		s.trxUnthreaded[mode].aggregate(s.epochOf(truncThreads), timed, wait)
	}
}

// endTransaction ends the thread part of tx; it says what it did, as
// endStatement does (a transaction whose thread has a later one, or none,
// was ended already: stmtStale).
func (t *Thread) endTransaction(tx *Transaction, mode AccessMode, timed bool, wait, end uint64, committed bool) int {
	if t.ended.Load() {
		t.s.threadEventsLost.Add(1)
		return stmtDropped
	}
	g, ok := t.enter()
	if !ok {
		return stmtDropped
	}
	defer t.leave(g)
	if !t.trx.on || t.trx.seq != tx.seq {
		return stmtStale
	}
	statements := t.trx.statements
	t.trx = trxState{}
	t.trxStats[mode].aggregate(t.s.epochOf(truncThreads), timed, wait)
	if tx.flags&sfEvent == 0 {
		return stmtCounted
	}
	state := TrxRolledBack
	if committed {
		state = TrxCommitted
	}
	c := &t.trxRow.cells
	t.trxRow.seq.BeginWrite()
	c[xEndEventID].Set(t.eventID)
	c[xTimerEnd].Set(end)
	c[xState].Set(uint64(state))
	c[xStatements].Set(statements)
	// In progress until the history rows exist (see endStage).
	if tx.flags&(sfHistory|sfLong) != 0 {
		row := owned.OwnView(c[:]) // the row is this thread's: no copy
		if tx.flags&sfHistory != 0 {
			t.trxHistory.Append(row)
		}
		if tx.flags&sfLong != 0 {
			t.s.trxLong.Append(row)
		}
	}
	t.trxRow.seq.EndWrite()
	return stmtCounted
}

// copyTrx copies the thread's current transaction row.
func (c *threadCore) copyTrx(dst *[trxWidth]uint64) bool {
	for i := 0; copyRetry(i); i++ {
		v := c.trxRow.seq.Load()
		if v&1 != 0 {
			continue
		}
		for i := range c.trxRow.cells {
			dst[i] = c.trxRow.cells[i].Load()
		}
		if c.trxRow.seq.Load() == v {
			return true
		}
	}
	return false
}

// TransactionEvent is a row of the events_transactions_* tables.
type TransactionEvent struct {
	ThreadID               uint64           `pfs:"THREAD_ID,id"`
	EventID                uint64           `pfs:"EVENT_ID,id"`
	EndEventID             uint64           `pfs:"END_EVENT_ID,id,valid=!InProgress"`
	EventName              string           `pfs:"EVENT_NAME,dim"`
	State                  TransactionState `pfs:"STATE,attr"`
	Source                 string           `pfs:"SOURCE,text,null"`
	TimerStart             uint64           `pfs:"TIMER_START,time,valid=Timed"`
	TimerEnd               uint64           `pfs:"TIMER_END,time,valid=Timed"`
	TimerWait              uint64           `pfs:"TIMER_WAIT,duration,valid=Timed"`
	AccessMode             AccessMode       `pfs:"ACCESS_MODE,attr"`
	IsolationLevel         IsolationLevel   `pfs:"ISOLATION_LEVEL,attr,null"`
	Autocommit             bool             `pfs:"AUTOCOMMIT,attr"`
	NumberOfSavepoints     uint64           `pfs:"NUMBER_OF_SAVEPOINTS,gauge"`
	NumberOfRollbackTo     uint64           `pfs:"NUMBER_OF_ROLLBACK_TO_SAVEPOINT,gauge"`
	NumberOfReleaseSavepnt uint64           `pfs:"NUMBER_OF_RELEASE_SAVEPOINT,gauge"`
	Statements             uint64           `pfs:"STATEMENTS,gauge,valid=!InProgress"`
	NestingEventID         uint64           `pfs:"NESTING_EVENT_ID,id,null"`
	NestingEventType       NestingType      `pfs:"NESTING_EVENT_TYPE,attr,null"`

	InProgress bool // END_EVENT_ID is NULL
	Timed      bool // the TIMER_* columns are not NULL
}

func (s *Schema) decodeTrx(c []uint64) (TransactionEvent, bool) {
	if c[xState] == 0 {
		return TransactionEvent{}, false
	}
	misc := c[xMisc]
	e := TransactionEvent{
		ThreadID:               c[xThreadID],
		EventID:                c[xEventID],
		EventName:              s.trxClass.name,
		State:                  TransactionState(c[xState]),
		Source:                 s.names.Lookup(c[xSource]),
		TimerStart:             c[xTimerStart],
		AccessMode:             AccessMode(misc & 1),
		IsolationLevel:         IsolationLevel(misc >> 16 & 0xff),
		Autocommit:             misc&2 != 0,
		NumberOfSavepoints:     c[xSavepoints],
		NumberOfRollbackTo:     c[xRollbackTo],
		NumberOfReleaseSavepnt: c[xRelease],
		Statements:             c[xStatements],
		NestingEventID:         c[xNestingID],
		NestingEventType:       NestingType(misc >> 8 & 0xff),
	}
	if end := c[xEndEventID]; end != 0 {
		e.EndEventID = end - 1
		e.TimerEnd = c[xTimerEnd]
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

// EventsTransactionsCurrent returns events_transactions_current: each
// thread's transaction in progress, or its last one.
func (s *Schema) EventsTransactionsCurrent() []TransactionEvent {
	return s.eventsTransactionsCurrent(nil)
}

// eventsTransactionsCurrent is EventsTransactionsCurrent, adding to unread
// the threads whose row it could not copy (when unread is not nil).
func (s *Schema) eventsTransactionsCurrent(unread map[uint64]bool) []TransactionEvent {
	s.beginRead()
	defer s.endRead()
	s.readMu.Lock()
	marks := s.trxMarks
	s.readMu.Unlock()
	var out []TransactionEvent
	var row [trxWidth]uint64
	for _, t := range s.liveThreads() {
		if !t.copyTrx(&row) {
			markUnread(unread, t)
			continue
		}
		if e, ok := s.decodeTrx(row[:]); ok && e.EventID > marks[e.ThreadID] {
			out = append(out, e)
		}
	}
	return out
}

// EventsTransactionsHistory returns events_transactions_history, each
// thread's last transactions, oldest first.
func (s *Schema) EventsTransactionsHistory() []TransactionEvent {
	s.beginRead()
	defer s.endRead()
	var out []TransactionEvent
	var words []uint64
	for _, t := range s.liveThreads() {
		if t.trxHistory != nil {
			words = t.trxHistory.AppendRows(words[:0])
			out = s.appendTrx(out, words)
		}
	}
	return out
}

// EventsTransactionsHistoryLong returns events_transactions_history_long.
func (s *Schema) EventsTransactionsHistoryLong() []TransactionEvent {
	if s.trxLong == nil {
		return nil
	}
	return s.appendTrx(nil, s.trxLong.AppendRows(nil))
}

func (s *Schema) appendTrx(out []TransactionEvent, words []uint64) []TransactionEvent {
	for i := 0; i+trxWidth <= len(words); i += trxWidth {
		if e, ok := s.decodeTrx(words[i : i+trxWidth]); ok {
			out = append(out, e)
		}
	}
	return out
}

// trxStat is a transaction summary row's statistics: read-write and
// read-only transactions apart; COUNT_STAR and the like are both.
type trxStat struct {
	rw, ro statRow
}

func (r trxStat) sub(b trxStat) trxStat { return trxStat{r.rw.sub(b.rw), r.ro.sub(b.ro)} }
func (r trxStat) settled() trxStat      { return trxStat{r.rw.settled(), r.ro.settled()} }
func (r *trxStat) add(o trxStat)        { r.rw.add(o.rw); r.ro.add(o.ro) }

func (r trxStat) view() TransactionStats {
	all := r.rw
	all.add(r.ro)
	all = all.settled()
	return TransactionStats{all.view(),
		r.rw.Count, r.rw.Sum, r.rw.Min, r.rw.Avg(), r.rw.Max,
		r.ro.Count, r.ro.Sum, r.ro.Min, r.ro.Avg(), r.ro.Max}
}

// TransactionStats are the statistics columns of the
// events_transactions_summary_* tables.
type TransactionStats struct {
	WaitStats
	CountReadWrite    uint64 `pfs:"COUNT_READ_WRITE,counter"`
	SumTimerReadWrite uint64 `pfs:"SUM_TIMER_READ_WRITE,timer"`
	MinTimerReadWrite uint64 `pfs:"MIN_TIMER_READ_WRITE,min,ps"`
	AvgTimerReadWrite uint64 `pfs:"AVG_TIMER_READ_WRITE,avg,ps"`
	MaxTimerReadWrite uint64 `pfs:"MAX_TIMER_READ_WRITE,max,ps"`
	CountReadOnly     uint64 `pfs:"COUNT_READ_ONLY,counter"`
	SumTimerReadOnly  uint64 `pfs:"SUM_TIMER_READ_ONLY,timer"`
	MinTimerReadOnly  uint64 `pfs:"MIN_TIMER_READ_ONLY,min,ps"`
	AvgTimerReadOnly  uint64 `pfs:"AVG_TIMER_READ_ONLY,avg,ps"`
	MaxTimerReadOnly  uint64 `pfs:"MAX_TIMER_READ_ONLY,max,ps"`
}

func (t *Thread) threadTrx(tag uint64) trxStat {
	return trxStat{t.trxStats[ReadWrite].load(tag), t.trxStats[ReadOnly].load(tag)}
}

func sharedTrx(st *[2]sharedStat, tag uint64) trxStat {
	return trxStat{st[ReadWrite].load(tag), st[ReadOnly].load(tag)}
}

// trxAt sets dst at each transaction class index in m.idx to st.
func trxAt(dst []trxStat, m members, st trxStat) {
	for _, i := range m.idx {
		dst[i] = st
	}
}

func init() {
	defineRows("events_transactions_current", (*Schema).EventsTransactionsCurrent, func(s *Schema) {
		marks := map[uint64]uint64{}
		var row [trxWidth]uint64
		for _, t := range s.liveThreads() {
			if t.copyTrx(&row) && row[xState] != 0 {
				marks[row[xThreadID]] = row[xEventID]
			}
		}
		s.trxMarks = marks
	})
	defineRows("events_transactions_history", (*Schema).EventsTransactionsHistory, func(s *Schema) {
		for _, t := range s.liveThreads() {
			if t.trxHistory != nil {
				t.trxHistory.Reset()
			}
		}
	})
	defineRows("events_transactions_history_long", (*Schema).EventsTransactionsHistoryLong, func(s *Schema) {
		if s.trxLong != nil {
			s.trxLong.Reset()
		}
	})
	defineFamily(eventFamily[TransactionStats, trxStat]{
		prefix: "events_transactions_summary",
		member: func(c *Class) bool { return c.kind == KindTransaction },
		groups: groupsThreads,
		group:  func(*Class) uint8 { return truncThreads },
		global: func(s *Schema, m members) []trxStat {
			tag := s.extTags[truncThreads].Load()
			s.beginRead()
			defer s.endRead()
			s.endMu.Lock()
			st := sharedTrx(&s.trxEnded, tag)
			live := s.liveThreads()
			s.endMu.Unlock()
			for _, t := range live {
				st.add(t.threadTrx(tag))
			}
			st.add(sharedTrx(&s.trxUnthreaded, tag))
			out := make([]trxStat, len(m.classes))
			trxAt(out, m, st)
			return out
		},
		thread: func(t *Thread, m members, tag uint64, dst []trxStat) {
			trxAt(dst, m, t.threadTrx(tag))
		},
		actor: func(r *actorRow, m members, tag uint64, dst []trxStat) {
			r.mu.Lock()
			st := sharedTrx(&r.trxStats, tag)
			for _, a := range r.accounts {
				st.add(sharedTrx(&a.trxStats, tag))
			}
			live := append([]*Thread(nil), r.live...)
			r.mu.Unlock()
			for _, t := range live {
				st.add(t.threadTrx(tag))
			}
			trxAt(dst, m, st)
		},
	})
}
