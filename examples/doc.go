// Package examples holds runnable programs that show otelpfs in a service.
// Each program lives in a directory of its own and is run with go run; make
// demo runs the main one.
//
// # Imports
//
// Examples may import any otelpfs package.
package examples
