// Package ctxkey holds the key under which a context carries an
// instrument.Thread, shared by instrument and its subpackages: pfshttp
// builds the context a request's thread travels in itself, in the one
// allocation it makes per request, and must answer
// instrument.ThreadFromContext as instrument.ContextWithThread's contexts
// do.
package ctxkey

// Thread is the context key of a thread: a context's Value(Thread{}) is
// its *instrument.Thread, or nil for none.
type Thread struct{}
