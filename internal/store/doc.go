// Package store is the storage of otelpfs's engine (package pfscore): Lock,
// MySQL's pfs_lock, and Container, MySQL's PFS_buffer_scalable_container, a
// lock-free paged container of records that readers copy optimistically. It
// is a mechanism, not an API: pfscore keeps its instruments, threads and
// instances here, and exposes their rows as tables.
//
// # Records
//
// Every record lives in a Container: pages of fixed-size record arrays,
// created on demand up to a maximum and retired by Reclaim when they stay
// empty. A record is guarded by its Lock (pfs_lock, whose documentation draws
// the state diagram): its owner (the goroutine that allocated it) writes its
// Value with plain stores of owned cells (internal/owned) between two
// transitions of the Lock, and readers copy it with atomic loads, keeping the
// copy only if the Lock's version did not change. Records hold no Go
// pointers, and their addresses are stable while they are allocated.
//
// # Concurrency
//
// All exported functions are safe for concurrent use unless stated; a record
// is written and freed only by its owner. Allocate and Free take no lock and
// allocate no memory; Allocate takes a mutex only to create a page. Readers
// never write anything a writer reads, so writers never wait for readers;
// readers skip records that are being written.
//
// # Loss
//
// An allocation that finds no FREE record and cannot create a page returns
// nil at once and is counted (Container.Lost, MySQL's
// Performance_schema_*_lost). An allocation fails only if every record was
// in use when it looked at it: allocation walks every page and every record
// at most once with an index of its own, so no record is skipped, and a live
// set that fits in K pages keeps the container within K+1 pages. A reader's
// scan returns each record that stayed ALLOCATED and unchanged while it was
// copied; rows written, freed or reused during the copy are dropped, never
// returned torn.
//
// # Memory
//
// Each container reports its pages as memory/performance_schema/<name>
// (Container.Stats), the rows pfscore shows in
// memory_summary_global_by_event_name.
//
// # Invariant checks
//
// Built with -tags invariants, or with -race, the container checks its own
// bookkeeping (double frees, records freed into the wrong container) and
// panics with a "pfs: BUG:" prefix on a violation.
package store
