//go:build race

package rings_test

const raceEnabled = true
