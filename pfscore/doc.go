// Package pfscore is the otelpfs engine: pfs_lock, lock-free paged containers
// of records, instrument classes, setup tables, threads and actors, object
// instances, event records, summaries, the digest table, lost counters and the
// virtual tables that readers query.
//
// # Storage
//
// Every record lives in a Container: pages of fixed-size record arrays,
// created on demand up to a maximum and retired by Reclaim when they stay
// empty. A record is guarded by its Lock (pfs_lock, whose documentation draws
// the state diagram): its owner (the goroutine that allocated it) writes it
// with plain stores of owned cells between two transitions of the Lock, and
// readers copy it with atomic loads, keeping the copy only if the Lock's
// version did not change. Records hold no Go pointers, and their addresses
// are stable while they are allocated.
//
// Concurrency: all exported functions are safe for concurrent use unless
// stated; a record is written and freed only by its owner. Allocate and Free
// take no lock and allocate no memory; Allocate takes a mutex only to create
// a page. Readers never write anything a writer reads, so writers never wait
// for readers; readers skip records that are being written.
//
// Loss: an allocation that finds no FREE record and cannot create a page
// returns nil at once and is counted (Container.Lost, MySQL's
// Performance_schema_*_lost). An allocation fails only if every record was
// in use when it looked at it: allocation walks every page and every record
// at most once with an index of its own, so no record is skipped, and a live
// set that fits in K pages keeps the container within K+1 pages. A reader's
// scan returns each record that stayed ALLOCATED and unchanged while it was
// copied; rows written, freed or reused during the copy are dropped, never
// returned torn.
//
// Memory: each container reports its pages as
// memory/performance_schema/<name> (Container.Stats).
//
// # Imports
//
// pfscore imports the standard library and otelpfs's leaves (hwclock, rings,
// memsum, digest). It never imports OpenTelemetry: the provider path stays free
// of it.
package pfscore
