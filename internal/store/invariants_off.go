//go:build !invariants && !race

package store

// invariants is off in ordinary builds; see invariants.go.
const invariants = false
