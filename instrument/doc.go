// Package instrument is the provider API a Go service imports: drop-in Mutex,
// RWMutex and Cond, wrapped files and sockets, stages, statements,
// transactions, memory pools and explicit threads (actors) carried in a
// context.Context.
//
// # Imports
//
// instrument imports pfscore and the standard library, never OpenTelemetry;
// trace and span ids reach it as [16]byte and [8]byte.
package instrument
