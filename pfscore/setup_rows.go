package pfscore

import (
	"fmt"
	"sync/atomic"
)

// setup_actors and setup_objects are copy-on-write slices: readers (every
// NewThread, every new file or socket) load one pointer; changes, serialized
// by setupMu, publish a new slice.

// rowsInsert appends r to the table p points to, unless a row with the same
// key (same reports it) exists or the table holds maxSetupRows.
func rowsInsert[R any](s *Schema, p *atomic.Pointer[[]R], r R, same func(a, b *R) bool, table string) error {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	old := *p.Load()
	for i := range old {
		if same(&old[i], &r) {
			return fmt.Errorf("%w: %s %v", ErrDuplicateRow, table, r)
		}
	}
	if len(old) >= maxSetupRows {
		return fmt.Errorf("%w: %s holds at most %d rows", ErrTableFull, table, maxSetupRows)
	}
	next := append(append([]R(nil), old...), r)
	p.Store(&next)
	return nil
}

// rowsUpdate applies change to the rows match selects and returns how many
// it changed.
func rowsUpdate[R any](s *Schema, p *atomic.Pointer[[]R], match func(*R) bool, change func(*R)) int {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	next := append([]R(nil), *p.Load()...)
	n := 0
	for i := range next {
		if match(&next[i]) {
			n++
			change(&next[i])
		}
	}
	p.Store(&next)
	return n
}

// rowsDelete removes the rows match selects and returns how many.
func rowsDelete[R any](s *Schema, p *atomic.Pointer[[]R], match func(*R) bool) int {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	old := *p.Load()
	next := []R{}
	for i := range old {
		if !match(&old[i]) {
			next = append(next, old[i])
		}
	}
	p.Store(&next)
	return len(old) - len(next)
}

// rowsTruncate empties the table.
func rowsTruncate[R any](s *Schema, p *atomic.Pointer[[]R]) {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	p.Store(&[]R{})
}
