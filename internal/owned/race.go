//go:build race

package owned

// raceEnabled is true when built with -race: cells are stored atomically so
// the race detector sees every access to them as synchronized.
const raceEnabled = true
