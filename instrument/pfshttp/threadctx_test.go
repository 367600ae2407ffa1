package pfshttp

import (
	"context"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
)

// Handler's one-allocation path works only with instrument's thread key;
// if instrument changes how ThreadFromContext looks a thread up so that
// the key can no longer be learnt, this fails rather than the package
// silently allocating twice more per request.
func TestThreadKeyLearnt(t *testing.T) {
	if threadKey == nil {
		t.Fatal("instrument's thread key was not learnt: Handler falls back to instrument.ContextWithThread")
	}
	th := new(instrument.Thread)
	var q request
	ctx := q.withThread(context.Background(), th)
	if ctx != &q.ctx || instrument.ThreadFromContext(ctx) != th {
		t.Error("withThread does not use the request's own context")
	}
	if got := (&threadCtx{Context: context.Background()}).String(); got != "context.Background.WithValue(instrument thread)" {
		t.Errorf("String() = %q", got)
	}
}
