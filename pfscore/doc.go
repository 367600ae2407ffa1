// Package pfscore is the otelpfs engine: pfs_lock, lock-free paged containers
// of records, instrument classes, setup tables, threads and actors, object
// instances, event records, summaries, the digest table, lost counters and the
// virtual tables that readers query.
//
// # Imports
//
// pfscore imports the standard library and otelpfs's leaves (hwclock, rings,
// memsum, digest). It never imports OpenTelemetry: the provider path stays free
// of it.
package pfscore
