package exporter

// Review 17: adversarial reproducers for the OTLP configuration and
// pipeline. Every test here FAILS on the code it was written against
// (commit 40cfb08); each says what it shows and how it fails.

import (
	"context"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

// TestReview17MillisOverflow: envMillis (and the TIMEOUT parsing in
// signalEnv) accept any 63-bit number of milliseconds and multiply it by
// time.Millisecond, which overflows int64 silently. 288230376151711745 ms
// (2^58+1) wraps to exactly 1 ms: OTEL_METRIC_EXPORT_INTERVAL and
// OTELPFS_SPAN_INTERVAL set to "a very long time" make the periodic reader
// collect every table and the span reader read every _history_long table
// 1,000 times a second, with no error; 76480200929599801 wraps to 64 ns.
// 9223372036855 wraps negative, and the SDK and traceDefaults then quietly
// use their defaults. DESIGN: bad input gets a clear error or a
// well-defined result.
// Fails: "OTEL_METRIC_EXPORT_INTERVAL=288230376151711745: 1ms, no error" (and
// 64ns, and -2562047h47m16.854551616s, for each of the four variables).
func TestReview17MillisOverflow(t *testing.T) {
	for _, v := range []string{"288230376151711745", "76480200929599801", "9223372036855"} {
		env := map[string]string{
			"OTEL_METRIC_EXPORT_INTERVAL": v,
			"OTELPFS_SPAN_INTERVAL":       v,
			"OTEL_METRIC_EXPORT_TIMEOUT":  v,
			"OTEL_EXPORTER_OTLP_TIMEOUT":  v,
		}
		c := newOTLPConfig(func(k string) string { return env[k] }, nil)
		if len(c.errs) > 0 {
			continue // rejected: fine
		}
		for name, d := range map[string]time.Duration{
			"OTEL_METRIC_EXPORT_INTERVAL": c.interval,
			"OTELPFS_SPAN_INTERVAL":       c.spanInterval,
			"OTEL_METRIC_EXPORT_TIMEOUT":  c.exportTimeout,
			"OTEL_EXPORTER_OTLP_TIMEOUT":  c.metrics.timeout,
		} {
			if d < time.Hour {
				t.Errorf("%s=%s: %v, no error", name, v, d)
			}
		}
	}
}

// TestReview17ForceFlushHangsAfterShutdown: forceFlush waits (drain) until
// p.finished reaches the spans enqueued when it began. shutdown, after its
// own drain gives up, drops what is left in the queue (p.n = 0, counted
// lost) without moving p.finished or closing p.progress, and stops the
// sender: a ForceFlush running meanwhile waits for spans that no one will
// ever finish, until its context ends, for ever with
// context.Background(). Here the endpoint refuses connections (the sender
// retries in backoff), 1,000 spans are queued (two batches), a
// ForceFlush(context.Background()) starts, then Shutdown with 200 ms.
// Fails: "ForceFlush still waiting 5s after Shutdown returned".
func TestReview17ForceFlushHangsAfterShutdown(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	p, err := startTraces(s, traceConfig{endpoint: "127.0.0.1:1", insecure: true, interval: time.Hour,
		timeout: 200 * time.Millisecond, retryInitial: 500 * time.Millisecond, retryMax: 500 * time.Millisecond,
		retryElapsed: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p.enqueue(make([]bridge.Span, 1000))
	flushed := make(chan error, 1)
	go func() { flushed <- p.forceFlush(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = p.shutdown(ctx)
	select {
	case <-flushed:
	case <-time.After(5 * time.Second):
		t.Error("ForceFlush still waiting 5s after Shutdown returned")
	}
}
