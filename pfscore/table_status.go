package pfscore

// global_status: the Performance_schema_* status variables, every loss the
// schema counted, and the memory its containers hold.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// StatusVariable is a row of global_status.
type StatusVariable struct {
	Name  string `pfs:"VARIABLE_NAME,dim"`
	Value uint64 `pfs:"VARIABLE_VALUE,counter"`
}

// Status returns the Performance_schema_* status variables, in name order:
// each *_lost counter MySQL has for what otelpfs keeps, and two of
// otelpfs's own: Performance_schema_thread_events_lost (events whose
// per-thread part was dropped: their Thread was being written by another
// goroutine, or had ended) and Performance_schema_instrument_errors
// (instruments a service asked for that could not register).
func (s *Schema) Status() []StatusVariable {
	var long, stagesLong, stmtsLong, trxLong uint64
	if s.waitsLong != nil {
		long = s.waitsLong.Lost()
	}
	if s.stagesLong != nil {
		stagesLong = s.stagesLong.Lost()
	}
	if s.trxLong != nil {
		trxLong = s.trxLong.Lost()
	}
	if s.stmtsLong != nil {
		stmtsLong = s.stmtsLong.Lost()
	}
	rows := []StatusVariable{
		{"Performance_schema_accounts_lost", s.accountsLost.Load()},
		{"Performance_schema_classes_lost", s.classesLost.Load()},
		{"Performance_schema_cond_instances_lost", s.conds.Lost()},
		{"Performance_schema_digest_lost", s.digestLost.Load()},
		{"Performance_schema_events_stages_history_long_lost", stagesLong},
		{"Performance_schema_events_statements_history_long_lost", stmtsLong},
		{"Performance_schema_events_transactions_history_long_lost", trxLong},
		{"Performance_schema_events_waits_history_long_lost", long},
		{"Performance_schema_file_instances_lost", s.fileInsts.Lost()},
		{"Performance_schema_hosts_lost", s.hostsLost.Load()},
		{"Performance_schema_instrument_errors", s.instrumentErrors.Load()},
		{"Performance_schema_mutex_instances_lost", s.mutexes.Lost()},
		{"Performance_schema_names_lost", s.names.lost.Load()},
		{"Performance_schema_nested_statement_lost", s.nestedStatementLost.Load()},
		{"Performance_schema_nested_wait_lost", s.nestedWaitLost.Load()},
		{"Performance_schema_rwlock_instances_lost", s.rwlocks.Lost()},
		{"Performance_schema_socket_instances_lost", s.socketInsts.Lost()},
		{"Performance_schema_thread_events_lost", s.threadEventsLost.Load()},
		{"Performance_schema_thread_instances_lost", s.threads.Lost()},
		{"Performance_schema_users_lost", s.usersLost.Load()},
	}
	if extra := s.extraStatus.Load(); extra != nil {
		for _, x := range *extra {
			rows = append(rows, StatusVariable{x.name, x.read()})
		}
		slices.SortFunc(rows, func(a, b StatusVariable) int { return strings.Compare(a.Name, b.Name) })
	}
	return rows
}

// extraStatus is a status variable another package added (AddStatus).
type extraStatus struct {
	name string
	read func() uint64
}

// AddStatus adds a row to global_status: name, and read, which returns its
// VARIABLE_VALUE and is called at each read of the table (from any
// goroutine; it must be cheap and must not block). A counter must never go
// down: exporters read the table as cumulative. It is an error to add a name
// global_status already has, or an empty one. The exporter adds its own
// losses this way (spans dropped from a full queue, say).
func (s *Schema) AddStatus(name string, read func() uint64) error {
	if name == "" || read == nil {
		return errors.New("pfscore: AddStatus needs a name and a read function")
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	for _, r := range s.Status() {
		if r.Name == name {
			return fmt.Errorf("pfscore: global_status already has %s", name)
		}
	}
	var next []extraStatus
	if old := s.extraStatus.Load(); old != nil {
		next = slices.Clone(*old)
	}
	next = append(next, extraStatus{name, read})
	s.extraStatus.Store(&next)
	return nil
}

func init() {
	defineRows("global_status", (*Schema).Status, nil)
}
