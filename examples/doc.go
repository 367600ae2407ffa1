// Package examples holds runnable programs that show otelpfs in a service,
// and the service they run. examples/notes is the demo's service, a notes
// API built plain or instrumented from the same handlers (bench/ compares
// the two); examples/demo, a module of its own because it serves the MySQL
// protocol (mysqlpfs), is the demo program that make demo runs.
//
// # Imports
//
// Examples may import any otelpfs package.
package examples
