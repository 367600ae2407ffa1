package bridge

import (
	"fmt"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A source reads what History needs: the consumers, the live threads, the
// events in progress and the _history_long tables. tablesSource reads any
// pfscore.Tables through Query and Scan; schemaSource reads a *Schema's
// rows directly, without the boxing Query does.
type source interface {
	consumers() (map[pfscore.Consumer]bool, error)
	liveThreads() ([]uint64, error)
	// inProgress returns the events in progress, and the threads whose
	// events in progress it could not read (see
	// pfscore.Schema.EventsInProgress).
	inProgress() ([]key, map[uint64]bool, error)
	history() (snapshot, error)
}

// key names an event: its thread and EVENT_ID.
type key struct{ thread, event uint64 }

// snapshot is one read of the _history_long tables. Transactions are not
// spans; their ids count for the EVENT_ID accounting only.
type snapshot struct {
	trx    []key
	stmts  []pfscore.StatementEvent
	stages []pfscore.StageEvent
	waits  []pfscore.WaitEvent
	// outer are the ended waits outside any event (NESTING_EVENT_ID
	// NULL), by key alone: History sends no span for them, and needs only
	// their ids (see pfscore.Schema.EventsWaitsHistoryLongNested).
	outer []key
}

// The tables History reads, outermost events first: a statement ends after
// the stages and waits inside it, so a statement found in its table has its
// stages and waits in theirs, read later (unless the ring overwrote them).
var (
	currentTables = []string{"events_transactions_current", "events_statements_current",
		"events_stages_current", "events_waits_current"}
	historyTables = []string{"events_transactions_history_long", "events_statements_history_long",
		"events_stages_history_long", "events_waits_history_long"}
)

// idRow is the part of an event row the accounting needs.
type idRow struct {
	ThreadID   uint64 `pfs:"THREAD_ID"`
	EventID    uint64 `pfs:"EVENT_ID"`
	EndEventID uint64 `pfs:"END_EVENT_ID"` // NULL (0) while in progress
}

type tablesSource struct{ t pfscore.Tables }

func (s tablesSource) query(table string) (*pfscore.Result, error) {
	res, err := s.t.Query(table, pfscore.Query{})
	if err != nil {
		return nil, fmt.Errorf("bridge: reading %s: %w", table, err)
	}
	return res, nil
}

func scanTable[R any](s tablesSource, table string) ([]R, *pfscore.Result, error) {
	res, err := s.query(table)
	if err != nil {
		return nil, nil, err
	}
	rows, err := pfscore.Scan[R](res)
	if err != nil {
		return nil, nil, fmt.Errorf("bridge: reading %s: %w", table, err)
	}
	return rows, res, nil
}

func (s tablesSource) consumers() (map[pfscore.Consumer]bool, error) {
	rows, _, err := scanTable[pfscore.SetupConsumersRow](s, "setup_consumers")
	if err != nil {
		return nil, err
	}
	m := make(map[pfscore.Consumer]bool, len(rows))
	for _, r := range rows {
		m[r.Name] = r.Enabled
	}
	return m, nil
}

func (s tablesSource) liveThreads() ([]uint64, error) {
	rows, _, err := scanTable[struct {
		ThreadID uint64 `pfs:"THREAD_ID"`
	}](s, "threads")
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = r.ThreadID
	}
	return out, nil
}

// inProgress reads the current tables, which do not say which rows they
// could not copy: a thread whose row was being rewritten through every
// retry looks like one with nothing in progress.
func (s tablesSource) inProgress() ([]key, map[uint64]bool, error) {
	var out []key
	for _, table := range currentTables {
		rows, _, err := scanTable[idRow](s, table)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rows {
			if r.EndEventID == 0 {
				out = append(out, key{r.ThreadID, r.EventID})
			}
		}
	}
	return out, nil, nil
}

// nullColumn returns whether column name of res is NULL in row i.
func nullColumn(res *pfscore.Result, name string) func(i int) bool {
	col := -1
	for j, c := range res.Columns {
		if c.Name == name {
			col = j
		}
	}
	return func(i int) bool {
		return col < 0 || col >= len(res.Rows[i]) || res.Rows[i][col] == nil
	}
}

func (s tablesSource) history() (snapshot, error) {
	var snap snapshot
	trx, _, err := scanTable[idRow](s, historyTables[0])
	if err != nil {
		return snap, err
	}
	for _, r := range trx {
		snap.trx = append(snap.trx, key{r.ThreadID, r.EventID})
	}
	stmts, _, err := scanTable[pfscore.StatementEvent](s, historyTables[1])
	if err != nil {
		return snap, err
	}
	for i := range stmts {
		e := &stmts[i]
		e.Timed = e.TimerStart != 0
		e.InProgress = e.EndEventID == 0
	}
	snap.stmts = stmts
	stages, res, err := scanTable[pfscore.StageEvent](s, historyTables[2])
	if err != nil {
		return snap, err
	}
	noProgress := nullColumn(res, "WORK_COMPLETED")
	for i := range stages {
		e := &stages[i]
		e.Timed = e.TimerStart != 0
		e.InProgress = e.EndEventID == 0
		e.HasProgress = !noProgress(i)
	}
	snap.stages = stages
	waits, res, err := scanTable[pfscore.WaitEvent](s, historyTables[3])
	if err != nil {
		return snap, err
	}
	noBytes := nullColumn(res, "NUMBER_OF_BYTES")
	nested := waits[:0]
	for i := range waits {
		e := waits[i]
		e.Timed = e.TimerStart != 0
		e.InProgress = e.EndEventID == 0
		e.HasBytes = !noBytes(i)
		if e.NestingEventID == 0 && !e.InProgress {
			snap.outer = append(snap.outer, key{e.ThreadID, e.EventID})
		} else {
			nested = append(nested, e)
		}
	}
	snap.waits = nested
	return snap, nil
}

// schemaSource reads a *Schema's typed rows; the consumers and threads
// through Query, as tablesSource does.
type schemaSource struct {
	tablesSource
	s *pfscore.Schema
}

func (s schemaSource) consumers() (map[pfscore.Consumer]bool, error) {
	rows := s.s.SetupConsumers()
	m := make(map[pfscore.Consumer]bool, len(rows))
	for _, r := range rows {
		m[r.Name] = r.Enabled
	}
	return m, nil
}

func (s schemaSource) inProgress() ([]key, map[uint64]bool, error) {
	events, unread := s.s.EventsInProgress()
	out := make([]key, len(events))
	for i, e := range events {
		out[i] = key{e.ThreadID, e.EventID}
	}
	var bad map[uint64]bool
	if len(unread) > 0 {
		bad = make(map[uint64]bool, len(unread))
		for _, th := range unread {
			bad[th] = true
		}
	}
	return out, bad, nil
}

func (s schemaSource) history() (snapshot, error) {
	var snap snapshot
	for _, e := range s.s.EventsTransactionsHistoryLong() {
		snap.trx = append(snap.trx, key{e.ThreadID, e.EventID})
	}
	snap.stmts = s.s.EventsStatementsHistoryLong()
	snap.stages = s.s.EventsStagesHistoryLong()
	waits, outer := s.s.EventsWaitsHistoryLongNested(nil, nil)
	snap.waits = waits
	snap.outer = make([]key, len(outer))
	for i, k := range outer {
		snap.outer[i] = key{k.ThreadID, k.EventID}
	}
	return snap, nil
}
