package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// BenchmarkCollect10k is one collection, through a ManualReader, of about
// 10,000 summary rows into metric data (budget: < 5 ms): 60 mutex classes
// waited on once by each of 160 live threads of 4 users, so
// events_waits_summary_by_thread_by_event_name holds 9,600 rows and the
// global, by_instance, by_account, by_user and by_host tables the rest.
// Every row is non-zero, so every one becomes data points (4 each: count,
// time, min, max). It reports the summary rows read and the data points
// made per collection.
//
// On the 2-core 2.8 GHz Xeon VM, lightly loaded, it took 12-15 ms a
// collection (about 12.7 ms of CPU, the garbage collector's included), 8.0
// MB and 1,006 allocations; it was 31 ms, 26.6 MB and 67,200 allocations
// before a family's tables loaded only their own classes, table reads
// boxed their cells in chunks, rows found their series by position and
// AVG_ columns stopped being exported.
//
// The producer now reads a Schema's tables in place (Schema.ReadRows), so
// a collection makes no Row of Values: 6.0 MB and 971 allocations, and
// under callgrind (GOMAXPROCS=1, the difference of 30 and 10 collections)
// 40.9 million instructions where it was 61.9 million. On the 2-core AMD
// EPYC VM, idle, 6 interleaved rounds against the previous build
// (2026-11-27): 4.92 ms -> 4.42 ms, within the budget. What is left, from
// its profile: about half the engine's read (the by_thread table's
// entries, and the by_account, by_user and by_host tables each summing
// every live thread's statistics again), a third the bridge (41,000 data
// points of about 100 bytes each, half of them pointers: 4 MB a
// collection, which the SDK's Producer interface gives no way to reuse),
// the rest the garbage collector.
func BenchmarkCollect10k(b *testing.B) {
	const classes, threads, users = 60, 160, 4
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxThreads(threads+16))
	if err != nil {
		b.Fatal(err)
	}
	insts := make([]*pfscore.SyncInstance, classes)
	for i := range insts {
		insts[i] = s.NewSyncInstance(s.MustRegister(fmt.Sprintf("wait/synch/mutex/bench/m%02d", i)), "bench.go:1")
	}
	tc := s.MustRegister("thread/bench/worker")
	for i := range threads {
		t := s.NewThread(tc, pfscore.ThreadOptions{User: fmt.Sprintf("user%d", i%users), Host: "localhost"})
		if t == nil {
			b.Fatal("thread lost")
		}
		defer t.End()
		for _, m := range insts {
			var w pfscore.WaitState
			if m.BeginWait(&w, t, pfscore.OpLock) {
				w.EndWait(-1)
			}
		}
	}
	// Every table: the by_thread rows are the 10,000 (the default export
	// leaves them out).
	p, err := bridge.NewProducer(s, bridge.WithTables(bridge.AllTables))
	if err != nil {
		b.Fatal(err)
	}
	rows := 0
	for _, name := range p.Tables() {
		res, err := s.Query(name, pfscore.Query{Where: []string{"COUNT_STAR > 0"}})
		if err != nil {
			continue // tables without COUNT_STAR: memory, actors, status
		}
		rows += len(res.Rows)
	}
	reader := metric.NewManualReader(metric.WithProducer(p))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	ctx := context.Background()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil { // the producer's series, made once
		b.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				points += len(d.DataPoints)
			case metricdata.Sum[float64]:
				points += len(d.DataPoints)
			case metricdata.Gauge[int64]:
				points += len(d.DataPoints)
			case metricdata.Gauge[float64]:
				points += len(d.DataPoints)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := reader.Collect(ctx, &rm); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(points), "points")
}
