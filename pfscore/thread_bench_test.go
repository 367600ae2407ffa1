package pfscore

import "testing"

// BenchmarkThreadLifecycle is one request's thread: NewThread, one wait, End.
func BenchmarkThreadLifecycle(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		t := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
		waitOnce(f.m, t)
		t.End()
	}
}
