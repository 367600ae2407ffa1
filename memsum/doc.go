// Package memsum keeps memory statistics as the performance_schema memory
// summary tables show them: allocation and free counts and bytes, current
// values with low and high water marks, roll-ups from threads to accounts,
// users, hosts and the global row, and TRUNCATE semantics.
//
// # Imports
//
// Standard library only: memsum is a leaf of otelpfs's dependency graph.
package memsum
