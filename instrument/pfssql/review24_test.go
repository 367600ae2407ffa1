package pfssql_test

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// foreignCtx is a context type the context package does not know: a
// context.WithCancel of it starts a goroutine (propagateCancel) to carry
// its cancellation to the child.
type foreignCtx struct{ done chan struct{} }

func (c foreignCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c foreignCtx) Done() <-chan struct{}       { return c.done }
func (c foreignCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}
func (c foreignCtx) Value(any) any { return nil }

// Failed on 6e6d93f; fixed. propagateGoroutines, which
// TestReview22bNoPropagateCancelGoroutines relies on, must count the
// cancellation goroutines it looks for. The goroutine profile (debug=1)
// begins with a "goroutine profile: total N" line and lists stacks by
// count, largest first: when the cancellation goroutines are the largest
// group (as k rows held open would make them), their record is the first
// one, begins with that header line, and was skipped. The test then could
// not fail.
func TestReview24PropagateGoroutinesCounted(t *testing.T) {
	before := propagateGoroutines()
	parent := foreignCtx{done: make(chan struct{})}
	const k = 50 // more than any other stack of the test binary
	var cancels []context.CancelFunc
	for range k {
		_, cancel := context.WithCancel(parent)
		cancels = append(cancels, cancel)
	}
	got := propagateGoroutines() - before
	for _, c := range cancels {
		c()
	}
	close(parent.done)
	// Let the goroutines exit before the next test counts its own.
	for i := 0; i < 10_000 && propagateGoroutines() > before; i++ {
		runtime.Gosched()
	}
	if got != k {
		t.Errorf("%d cancellation goroutines started, propagateGoroutines counted %d", k, got)
	}
}
