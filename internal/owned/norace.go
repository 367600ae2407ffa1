//go:build !race

package owned

// raceEnabled is false in ordinary builds: owners store cells with plain
// stores.
const raceEnabled = false
