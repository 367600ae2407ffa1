//go:build !race

package pfssql_test

const raceEnabled = false
