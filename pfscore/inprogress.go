package pfscore

import (
	"runtime"
	"slices"
)

// An EventKey names an event: its thread and EVENT_ID.
type EventKey struct {
	ThreadID uint64
	EventID  uint64
}

// EventsInProgress returns the transactions, statements, stages and waits
// in progress on every live thread, as the events_*_current tables show
// them, and the threads some of whose current rows it could not read: a
// current row is copied without blocking its writer, and a copy fails
// when the row is rewritten through every retry (its goroutine descheduled
// in the middle of a write, say). What such a thread has in progress is
// unknown, not none.
//
// It is for readers that follow the _history_long tables, such as the
// bridge's span reader, and rely on this invariant of the engine: from the
// moment an event has an EVENT_ID until its _history_long row is
// overwritten or truncated, it is in progress in its current row or it is
// in its _history_long table (for a moment both), provided the consumers
// that record it are on. An event a reader finds in neither, on a thread
// whose rows it read, is lost.
func (s *Schema) EventsInProgress() (events []EventKey, unread []uint64) {
	bad := map[uint64]bool{}
	for _, e := range s.eventsTransactionsCurrent(bad) {
		if e.InProgress {
			events = append(events, EventKey{e.ThreadID, e.EventID})
		}
	}
	for _, e := range s.eventsStatementsCurrent(bad) {
		if e.InProgress {
			events = append(events, EventKey{e.ThreadID, e.EventID})
		}
	}
	for _, e := range s.eventsStagesCurrent(bad) {
		if e.InProgress {
			events = append(events, EventKey{e.ThreadID, e.EventID})
		}
	}
	for _, e := range s.eventsWaitsCurrent(bad) {
		if e.InProgress {
			events = append(events, EventKey{e.ThreadID, e.EventID})
		}
	}
	for id := range bad {
		unread = append(unread, id)
	}
	slices.Sort(unread)
	return events, unread
}

// markUnread adds t to unread, if unread is not nil.
func markUnread(unread map[uint64]bool, t *Thread) {
	if unread != nil {
		unread[t.id] = true
	}
}

// copyRetry paces the retries of a current row's seqlock copy, i being the
// attempts made so far: it reports whether to try again. A copy fails when
// the row's writer is in a section or finished one during the copy; a busy
// thread opens a section every few hundred nanoseconds, and a writer
// descheduled inside one holds it for a whole time slice. So the reader
// spins a while, then yields now and then so that a descheduled writer gets
// to finish, and gives up after maxCopyAttempts (the row is then unread:
// see EventsInProgress). Readers only: a writer never waits.
func copyRetry(i int) bool {
	if i >= maxCopyAttempts {
		return false
	}
	if i > 0 && i%64 == 0 {
		runtime.Gosched()
	}
	return true
}

// maxCopyAttempts bounds the attempts to copy one current row.
const maxCopyAttempts = 1024
