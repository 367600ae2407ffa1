//go:build race

package pfssql_test

// The race detector makes sync.Pool drop what it is given, at random:
// allocation counts mean nothing under it.
const raceEnabled = true
