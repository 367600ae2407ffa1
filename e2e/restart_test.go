package e2e

import (
	"context"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/e2e/workload"
)

// progress is what the workload goroutine of TestCollectorRestart
// publishes: requests done, and the longest one, in each phase.
type progress struct {
	ops   atomic.Int64
	phase atomic.Int32    // 0 up, 1 Collector down, 2 up again
	worst [3]atomic.Int64 // nanoseconds, per phase
}

// TestCollectorRestart stops the Collector while a service instance keeps
// serving requests and exporting, then starts it again on the same
// addresses. The service must not notice: its requests go on at a similar
// pace and none takes long (the export runs beside the provider, never in
// its way); and the sums the restarted Collector receives are still the
// tables' (they are cumulative: the exports that failed while it was down
// lost nothing). The series continue: same StartTime, no reset.
func TestCollectorRestart(t *testing.T) {
	bin := otelcolBinary(t)
	// One export gives up after 2 s; a provider that waited for exports
	// would take that long per request while the Collector is down.
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
	col := startCollector(t, bin, "", "", "")
	in := newInstance(t, "restart", col.otlp, 100*time.Millisecond)

	var p progress
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		// Bounded: at most 200,000 requests, and stopped by the test.
		for range 200_000 {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			ph := p.phase.Load()
			t0 := time.Now()
			if err := in.svc.Request(context.Background()); err != nil {
				done <- err
				return
			}
			d := int64(time.Since(t0))
			if w := &p.worst[ph]; d > w.Load() {
				w.Store(d) // the only writer
			}
			p.ops.Add(1)
			time.Sleep(time.Millisecond)
		}
		done <- nil
	}()
	stopped := false
	stopWorkload := func() {
		if !stopped {
			stopped = true
			close(stop)
			if err := <-done; err != nil {
				t.Fatalf("request: %v", err)
			}
		}
	}
	t.Cleanup(stopWorkload)

	// Up: wait for the first exports, then measure the pace for a second.
	before := filepath.Join(col.out, "metrics.jsonl")
	waitMetric(t, before, "restart", "pfs.events_waits.count", map[string]string{"pfs.event_name": workload.MutexName})
	o0 := p.ops.Load()
	time.Sleep(time.Second)
	upRate := float64(p.ops.Load() - o0) // in one second

	// Down for 3 s: several collections and a whole export timeout.
	col.stop()
	if c, err := net.DialTimeout("tcp", col.otlp, time.Second); err == nil {
		c.Close()
		t.Fatalf("the Collector exited but %s still accepts connections", col.otlp)
	}
	p.phase.Store(1)
	o1 := p.ops.Load()
	time.Sleep(3 * time.Second)
	downRate := float64(p.ops.Load()-o1) / 3
	p.phase.Store(2)
	t.Logf("requests per second: %.0f with the Collector up, %.0f while it was down", upRate, downRate)
	if downRate < upRate/5 || downRate == 0 {
		t.Errorf("the workload slowed down while the Collector was down: %.0f requests/s, %.0f before", downRate, upRate)
	}

	// Up again, on the same addresses; exports resume by themselves.
	col2 := startCollector(t, bin, col.otlp, col.prom, "")
	after := filepath.Join(col2.out, "metrics.jsonl")
	last := waitMetric(t, before, "restart", "pfs.events_waits.count", map[string]string{"pfs.event_name": workload.MutexName})
	first := waitMetric(t, after, "restart", "pfs.events_waits.count", map[string]string{"pfs.event_name": workload.MutexName})
	time.Sleep(500 * time.Millisecond)
	stopWorkload()
	in.flush(t)

	want, err := expectations(in.svc.Schema())
	if err != nil {
		t.Fatal(err)
	}
	got := waitForTables(t, after, map[string][]expect{"restart": want})
	final := find(got, "restart", "pfs.events_waits.count", map[string]string{"pfs.event_name": workload.MutexName})[0]
	if n := float64(p.ops.Load()); final.value != n {
		t.Errorf("mutex waits after the restart: %v, want %v (one per request)", final.value, n)
	}
	if !first.start.Equal(last.start) || first.value < last.value || final.value <= last.value {
		t.Errorf("the series did not continue across the restart: before (start %v, value %v), after (start %v, value %v), final %v",
			last.start, last.value, first.start, first.value, final.value)
	}
	for ph, name := range []string{"up", "down", "up again"} {
		w := time.Duration(p.worst[ph].Load())
		t.Logf("longest request with the Collector %s: %v", name, w)
		if w > time.Second {
			t.Errorf("a request took %v with the Collector %s: the provider waited", w, name)
		}
	}
}

// waitMetric waits until the metrics file at path holds a point of an
// instance's metric with the given attributes, and returns the latest; it
// fails the test if 30 s pass first.
func waitMetric(t *testing.T, path, inst, metric string, attrs map[string]string) point {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, err := loadMetrics(path)
		if err != nil {
			t.Fatal(err)
		}
		if ps := find(latest(points(ms)), inst, metric, attrs); len(ps) == 1 {
			return ps[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s %v of instance %s in %s after 30 s (%d exports)", metric, attrs, inst, path, len(ms))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
