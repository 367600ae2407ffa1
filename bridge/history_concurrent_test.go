package bridge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"go.opentelemetry.io/otel/trace"
)

// TestHistoryConcurrentSafe: goroutines run requests on threads of their
// own while a reader calls Read and Stats. The invariant: over all Reads,
// every request is sent exactly once, with its four spans and two waits,
// every child's parent is a span sent, and nothing is lost (the rings hold
// more than the test writes), whatever the interleaving.
func TestHistoryConcurrentSafe(t *testing.T) {
	workers, requests := 4, 200
	if testing.Short() {
		requests = 50
	}
	w := newSpanWorld(t)
	h := w.history()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
			defer th.End()
			<-start
			for range requests {
				w.request(ctx)
			}
		}()
	}
	var all []bridge.Span
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-start
		for {
			spans, err := h.Read()
			if err != nil {
				t.Error(err)
				return
			}
			all = append(all, spans...)
			_ = h.Stats()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	close(start)
	wg.Wait()
	close(stop)
	<-done
	for range 3 { // the last requests, and anything a Read held back
		all = append(all, read(t, h)...)
	}

	ids := map[trace.SpanID]bridge.Span{}
	for _, sp := range all {
		if _, dup := ids[sp.SpanID]; dup {
			t.Fatalf("span %s (%v) sent twice", sp.Name, sp.SpanID)
		}
		ids[sp.SpanID] = sp
	}
	roots, waits := 0, 0
	for _, sp := range all {
		waits += len(sp.Events)
		if !sp.Parent.IsValid() {
			roots++
			continue
		}
		if p, ok := ids[sp.Parent]; !ok || p.TraceID != sp.TraceID {
			t.Errorf("%s: parent %v not sent in its trace", sp.Name, sp.Parent)
		}
	}
	n := workers * requests
	if len(all) != 4*n || roots != n || waits != 2*n {
		t.Errorf("%d spans, %d roots, %d waits; want %d, %d, %d", len(all), roots, waits, 4*n, n, 2*n)
	}
	if st := h.Stats(); st.Lost != 0 || st.Orphans != 0 || st.Dropped != 0 || st.Pending != 0 {
		t.Errorf("stats %v", st)
	}
}
