package bridge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
)

// querySchema is a *pfscore.Schema the producer cannot tell is one: it
// reads it through Query, as it reads a remote service's tables, while
// the schema's other methods (DigestBuckets) stay.
type querySchema struct{ *pfscore.Schema }

// TestProducerReadRowsAsQuery: a producer that reads a Schema in place
// (ReadRows) makes the same data, collection after collection, as one that
// reads it through Query: series found by position and by hash, digests in
// and out of the top N and the overflow series, a TRUNCATE, rows that go
// away and come back, NULLs and negative gauges.
func TestProducerReadRowsAsQuery(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))
	if err != nil {
		t.Fatal(err)
	}
	// The engine's and the Go runtime's memory rows change with every
	// read, and so would differ between the two producers' reads.
	keep := func(table string) bool { return !strings.HasPrefix(table, "memory_") && AllTables(table) }
	type side struct {
		p *Producer
		r *sdkmetric.ManualReader
	}
	var sides [2]side
	for i, tb := range []pfscore.Tables{s, querySchema{s}} {
		c := &r16clock{t: time.Unix(1_700_000_000, 0)}
		p, err := NewProducer(tb, withClock(c.now), WithTopDigests(3), WithTables(keep))
		if err != nil {
			t.Fatal(err)
		}
		r := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
		t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		sides[i] = side{p, r}
	}
	tc := s.MustRegister("thread/rr/worker")
	classes := []*pfscore.Class{s.MustRegister("wait/synch/mutex/rr/a"), s.MustRegister("wait/synch/mutex/rr/b")}
	file := s.MustRegister("wait/io/file/rr/data")
	mem := s.MustRegister("memory/rr/buf")
	f := s.FileInstance(file, "/rr/data", "readrows_test.go:1")
	var threads []*pfscore.Thread
	work := func(round int) {
		th := s.NewThread(tc, pfscore.ThreadOptions{User: fmt.Sprintf("u%d", round%2), Host: "localhost"})
		threads = append(threads, th)
		for i, c := range classes {
			m := s.NewSyncInstance(c, "readrows_test.go:2")
			for range i + round {
				var w pfscore.WaitState
				if m.BeginWait(&w, th, pfscore.OpLock) {
					w.EndWait(-1)
				}
			}
		}
		var w pfscore.WaitState
		if f.BeginWait(&w, th, pfscore.OpFileRead) {
			w.EndWait(int64(100 * round))
		}
		for d := range 3 + round {
			st := s.StartSQL(th, pfscore.StatementInfo{Text: fmt.Sprintf("SELECT c%d FROM t%d", d, d), Schema: "shop"})
			st.EndAt(st.Start()+uint64(d*(round+1))*1_000_000, pfscore.StatementResult{RowsSent: 1})
		}
		s.MemoryFree(mem, 1<<20, s.MemoryAlloc(th, mem, 1<<20)) // freed on another account: negative gauges
	}
	for round := range 6 {
		switch round {
		case 2:
			if err := s.Truncate("events_waits_summary_by_thread_by_event_name"); err != nil {
				t.Fatal(err)
			}
		case 3:
			threads[0].End() // its by_thread rows go
			if err := s.Truncate("events_statements_summary_by_digest"); err != nil {
				t.Fatal(err)
			}
		}
		work(round)
		var got [2]metricdata.ResourceMetrics
		for i := range sides {
			if err := sides[i].r.Collect(context.Background(), &got[i]); err != nil {
				t.Fatal(err)
			}
		}
		if len(got[0].ScopeMetrics) != 1 || len(got[0].ScopeMetrics[0].Metrics) < 20 {
			t.Fatalf("round %d: %d scopes, want 1 of 20 metrics or more", round, len(got[0].ScopeMetrics))
		}
		if !metricdatatest.AssertEqual(t, got[1].ScopeMetrics[0], got[0].ScopeMetrics[0]) {
			t.Fatalf("round %d: ReadRows and Query made different data", round)
		}
	}
	for _, th := range threads[1:] {
		th.End()
	}
}
