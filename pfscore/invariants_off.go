//go:build !invariants && !race

package pfscore

// invariants is off in ordinary builds; see invariants.go.
const invariants = false
