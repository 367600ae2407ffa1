package exporter

// Review 18: adversarial reproducers for the review17 fixes (commit
// 12adc37). Every test here FAILS on that code; each says what it shows
// and how it fails.

import (
	"context"
	"testing"
	"time"
)

// TestReview18DisabledHidesOptionErrors: startOTLP now returns the idle
// OTLP before looking at c.errs when OTEL_SDK_DISABLED=true, so that a
// malformed variable beside it does not matter. But c.errs also holds the
// errors of the program's own options (WithExportInterval(-1s),
// WithEndpoint("ftp://x"), WithSpanQueueSize(0)): those are swallowed too.
// A program whose tests or staging run with OTEL_SDK_DISABLED=true never
// sees its bad option, and StartOTLP fails in the first environment that
// enables the SDK. The variables are the deployment's; the options are the
// code's, and their errors should not depend on the environment.
// Fails: "OTEL_SDK_DISABLED=true: StartOTLP took WithExportInterval(-1s), WithEndpoint(ftp://nowhere): no error".
func TestReview18DisabledHidesOptionErrors(t *testing.T) {
	w := newOTLPWorkload(t)
	env := map[string]string{"OTEL_SDK_DISABLED": "true"}
	opts := []OTLPOption{WithExportInterval(-time.Second), WithEndpoint("ftp://nowhere")}
	if _, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), opts)); err == nil {
		t.Error("OTEL_SDK_DISABLED=true: StartOTLP took WithExportInterval(-1s), WithEndpoint(ftp://nowhere): no error")
	}
	delete(env, "OTEL_SDK_DISABLED")
	if _, err := startOTLP(context.Background(), w.s, newOTLPConfig(envOf(env), opts)); err == nil {
		t.Fatal("the options are not even refused when enabled: the test is wrong")
	}
}
