//go:build race

package pfscore

// raceBuild: the race detector is on (sync.Pool then drops Puts at random,
// so allocation counts are not what the code makes).
const raceBuild = true
