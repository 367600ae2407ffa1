package main

import (
	"bytes"
	"context"
	"testing"
)

// TestReview20_HugeRate shows that a -rate above a billion requests per
// second per client makes the clients' ticker interval 0, and
// time.NewTicker panics in a client's goroutine: the demo crashes
// instead of refusing the flag.
func TestReview20_HugeRate(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-rate", "2000000000", "-clients", "1", "-duration", "1s",
		"-addr", "", "-sql-addr", "", "-report", "1h"}, &out, &errOut)
	if err == nil {
		t.Errorf("-rate 2000000000 -clients 1: no error")
	}
}

// TestReview20_InterruptedEarly shows that a Ctrl-C (the context done)
// before the load generator's first answer makes the demo exit 1 with
// "the load generator sent no request": stopping it is not a failure.
func TestReview20_InterruptedEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"-duration", "0", "-addr", "", "-sql-addr", ""}, &out, &errOut); err != nil {
		t.Errorf("run interrupted before any request: %v", err)
	}
}
