//go:build !race

package pfscore

const raceBuild = false
