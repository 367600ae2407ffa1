//go:build invariants || race

package store

// invariants turns on checks of the container's own bookkeeping (double
// frees, records freed into the wrong container). They panic with a "pfs: BUG:"
// prefix: they report programmer errors in otelpfs, never bad input. Build
// with -tags invariants, or -race, to enable them.
const invariants = true
