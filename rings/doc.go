// Package rings holds the history rings behind the events_*_history and
// events_*_history_long tables.
//
// # What it is
//
// A per-thread ring (one writer, many readers) keeps the last N events of one
// actor; a global ring (many writers through one atomic index) keeps the last M
// events of the whole process. Every slot is guarded by its own version word,
// so a reader never returns a half-written row. Sizes are fixed at construction
// and nothing allocates on the write side.
//
// # Imports
//
// Standard library only: rings is a leaf of otelpfs's dependency graph.
package rings
