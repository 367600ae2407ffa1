//go:build !race

package rings_test

const raceEnabled = false
