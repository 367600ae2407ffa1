package pfshttp

import (
	"context"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
)

// A request's own context carries its thread as instrument's contexts do:
// ThreadFromContext finds it, a nil thread hides the parent's, other keys
// pass through to the parent.
func TestThreadCtx(t *testing.T) {
	a, b := new(instrument.Thread), new(instrument.Thread)
	type otherKey struct{}
	parent := context.WithValue(instrument.ContextWithThread(context.Background(), a), otherKey{}, b)
	var q request
	ctx := q.withThread(parent, b)
	if ctx != &q.ctx || instrument.ThreadFromContext(ctx) != b {
		t.Error("withThread does not carry its thread in the request's own context")
	}
	if instrument.ThreadFromContext(q.withThread(parent, nil)) != nil {
		t.Error("a nil thread does not hide the parent's")
	}
	if q.withThread(parent, a).Value(otherKey{}) != b {
		t.Error("another key does not reach the parent")
	}
	if got := (&threadCtx{Context: context.Background()}).String(); got != "context.Background.WithValue(instrument thread)" {
		t.Errorf("String() = %q", got)
	}
}
