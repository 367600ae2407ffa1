package bridge_test

import (
	"context"
	"fmt"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A ManualReader collects the summaries through the producer: the global
// wait summary becomes pfs.events_waits.count, one series per instrument.
func Example() {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		panic(err)
	}
	p, err := bridge.NewProducer(s)
	if err != nil {
		panic(err)
	}
	reader := metric.NewManualReader(metric.WithProducer(p))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	cache := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:12")
	for range 3 {
		var w pfscore.WaitState
		if cache.BeginWait(&w, nil, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "pfs.events_waits.count" {
				continue
			}
			sum := m.Data.(metricdata.Sum[int64])
			for _, dp := range sum.DataPoints {
				name, _ := dp.Attributes.Value("pfs.event_name")
				fmt.Printf("%s %s{pfs.event_name=%s} = %d (cumulative: %v, monotonic: %v)\n",
					m.Name, m.Unit, name.AsString(), dp.Value, sum.Temporality, sum.IsMonotonic)
			}
		}
	}
	// Output:
	// pfs.events_waits.count {event}{pfs.event_name=wait/synch/mutex/app/cache} = 3 (cumulative: CumulativeTemporality, monotonic: true)
}
