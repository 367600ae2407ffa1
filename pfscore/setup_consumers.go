package pfscore

import (
	"errors"
	"fmt"
	"strings"
)

// A Consumer is a row of setup_consumers: a destination for events.
//
// The consumers form a hierarchy; a consumer receives events only if every
// consumer above it is on:
//
//	global_instrumentation                 nothing at all when off
//	├── statements_digest                  the by-digest summary
//	└── thread_instrumentation             per-thread statistics and events
//	    └── events_<kind>_current          the current event of each thread
//	        ├── events_<kind>_history      per thread, last N
//	        └── events_<kind>_history_long global, last M
//
// With global_instrumentation on and thread_instrumentation off, only the
// global and per-instance summaries are kept.
type Consumer uint8

// The consumers, in setup_consumers order.
const (
	ConsumerEventsStagesCurrent Consumer = iota
	ConsumerEventsStagesHistory
	ConsumerEventsStagesHistoryLong
	ConsumerEventsStatementsCPU
	ConsumerEventsStatementsCurrent
	ConsumerEventsStatementsHistory
	ConsumerEventsStatementsHistoryLong
	ConsumerEventsTransactionsCurrent
	ConsumerEventsTransactionsHistory
	ConsumerEventsTransactionsHistoryLong
	ConsumerEventsWaitsCurrent
	ConsumerEventsWaitsHistory
	ConsumerEventsWaitsHistoryLong
	ConsumerGlobalInstrumentation
	ConsumerThreadInstrumentation
	ConsumerStatementsDigest
	numConsumers
)

var consumerNames = [numConsumers]string{
	"events_stages_current", "events_stages_history", "events_stages_history_long",
	"events_statements_cpu", "events_statements_current", "events_statements_history",
	"events_statements_history_long", "events_transactions_current",
	"events_transactions_history", "events_transactions_history_long",
	"events_waits_current", "events_waits_history", "events_waits_history_long",
	"global_instrumentation", "thread_instrumentation", "statements_digest",
}

// defaultConsumers are MySQL 8.0's: statements and transactions current and
// history, the two instrumentation levels and the digest summary.
const defaultConsumers = 1<<ConsumerEventsStatementsCurrent | 1<<ConsumerEventsStatementsHistory |
	1<<ConsumerEventsTransactionsCurrent | 1<<ConsumerEventsTransactionsHistory |
	1<<ConsumerGlobalInstrumentation | 1<<ConsumerThreadInstrumentation | 1<<ConsumerStatementsDigest

// historyConsumers are the bits a thread with HISTORY=NO masks off.
const historyConsumers = 1<<ConsumerEventsStagesHistory | 1<<ConsumerEventsStagesHistoryLong |
	1<<ConsumerEventsStatementsHistory | 1<<ConsumerEventsStatementsHistoryLong |
	1<<ConsumerEventsTransactionsHistory | 1<<ConsumerEventsTransactionsHistoryLong |
	1<<ConsumerEventsWaitsHistory | 1<<ConsumerEventsWaitsHistoryLong

func (c Consumer) String() string {
	if c < numConsumers {
		return consumerNames[c]
	}
	return fmt.Sprintf("Consumer(%d)", uint8(c))
}

// ErrUnknownConsumer is returned for a consumer name that does not exist.
var ErrUnknownConsumer = errors.New("pfs: unknown consumer")

// ErrBadPattern is returned for a NAME pattern that cannot match anything
// sensible (empty, too long, not printable ASCII).
var ErrBadPattern = errors.New("pfs: bad name pattern")

// ParseConsumer returns the consumer named name (case-insensitive).
func ParseConsumer(name string) (Consumer, error) {
	for i, n := range consumerNames {
		if strings.EqualFold(n, name) {
			return Consumer(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownConsumer, name)
}

// SetupConsumersRow is a row of setup_consumers.
type SetupConsumersRow struct {
	Name    Consumer `pfs:"NAME,dim"`
	Enabled bool     `pfs:"ENABLED,attr"`
}

// SetupConsumers returns setup_consumers in MySQL's order.
func (s *Schema) SetupConsumers() []SetupConsumersRow {
	bits := s.consumers.Load()
	rows := make([]SetupConsumersRow, numConsumers)
	for c := range Consumer(numConsumers) {
		rows[c] = SetupConsumersRow{Name: c, Enabled: bits&(1<<c) != 0}
	}
	return rows
}

// UpdateConsumers is UPDATE setup_consumers SET ENABLED=enabled WHERE NAME
// LIKE pattern. It returns the number of rows matched. Effective at once:
// switching global_instrumentation updates every class's effective switch.
func (s *Schema) UpdateConsumers(pattern string, enabled bool) (int, error) {
	if err := CheckPattern(pattern); err != nil {
		return 0, err
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	bits := s.consumers.Load()
	n := 0
	for c := range Consumer(numConsumers) {
		if Like(pattern, consumerNames[c]) {
			n++
			bits = setBit(bits, 1<<c, enabled)
		}
	}
	s.setConsumersLocked(bits)
	return n, nil
}

// SetConsumer sets one consumer; see UpdateConsumers.
func (s *Schema) SetConsumer(c Consumer, enabled bool) {
	if c >= numConsumers {
		panic(fmt.Sprintf("pfs: BUG: SetConsumer(%d)", c))
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	s.setConsumersLocked(setBit(s.consumers.Load(), 1<<c, enabled))
}

// setConsumersLocked publishes a new consumer word and re-derives every
// class's effective switch. s.setupMu is held.
func (s *Schema) setConsumersLocked(bits uint32) {
	old := s.consumers.Swap(bits)
	if (old^bits)&(1<<ConsumerGlobalInstrumentation) == 0 {
		return
	}
	global := bits&(1<<ConsumerGlobalInstrumentation) != 0
	for _, c := range s.Classes() {
		c.flags.Store(deriveClassFlags(c.flags.Load(), global))
	}
}

// consumerOn reports a consumer's ENABLED.
func (s *Schema) consumerOn(c Consumer) bool { return s.consumers.Load()&(1<<c) != 0 }

// ConsumerEnabled reports whether consumer c is on in setup_consumers
// (without regard to the consumers above it).
func (s *Schema) ConsumerEnabled(c Consumer) bool { return s.consumerOn(c) }
