package pfscore

import (
	"sync"
	"sync/atomic"
)

// strtab interns strings that records refer to by number, so records stay
// free of Go pointers: object names (file paths, socket addresses) and
// SOURCE locations. Ids are dense from 1; 0 means NULL. The table is
// append-only and bounded: past its capacity Intern returns 0 and counts the
// loss (Performance_schema_names_lost), and the record shows NULL. Stages,
// statements and transactions ask for their SOURCE's id through their
// class's cache of the last one (Schema.classSource), so a SOURCE the full
// table refused counts once per change of a class's SOURCE, not once per
// event.
//
// Intern takes a mutex only for a string it has not seen; Lookup never locks.
type strtab struct {
	mu    sync.Mutex
	ids   sync.Map // string -> uint64
	chunk [strtabChunks]atomic.Pointer[[strtabChunkSize]string]
	n     atomic.Uint64 // strings interned
	max   uint64
	lost  atomic.Uint64
}

const (
	strtabChunkSize = 1024
	strtabChunks    = 64 // capacity bound: 64Ki strings
)

func newStrtab(max int) *strtab {
	return &strtab{max: uint64(min(max, strtabChunkSize*strtabChunks))}
}

// Intern returns s's id, adding s if it is new. "" is 0.
func (t *strtab) Intern(s string) uint64 {
	if s == "" {
		return 0
	}
	if id, ok := t.ids.Load(s); ok {
		return id.(uint64)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids.Load(s); ok {
		return id.(uint64)
	}
	n := t.n.Load()
	if n >= t.max {
		t.lost.Add(1)
		return 0
	}
	c := t.chunk[n/strtabChunkSize].Load()
	if c == nil {
		c = new([strtabChunkSize]string)
		t.chunk[n/strtabChunkSize].Store(c)
	}
	c[n%strtabChunkSize] = s // published by the Store of n below
	id := n + 1
	t.n.Store(id)
	t.ids.Store(s, id)
	return id
}

// Lookup returns the string of id, or "" (NULL) for 0 or an unknown id.
func (t *strtab) Lookup(id uint64) string {
	if id == 0 || id > t.n.Load() { // the load of n synchronizes with Intern's store
		return ""
	}
	i := id - 1
	return t.chunk[i/strtabChunkSize].Load()[i%strtabChunkSize]
}
