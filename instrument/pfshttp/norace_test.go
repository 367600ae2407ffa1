//go:build !race

package pfshttp_test

const raceEnabled = false
