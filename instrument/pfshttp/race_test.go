//go:build race

package pfshttp_test

// Allocation counts mean nothing under the race detector.
const raceEnabled = true
