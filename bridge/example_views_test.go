package bridge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/bridge/viewconf"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A view that drops wait/synch/mutex/* turns the mutexes off at record
// time: from then on their waits are not counted at all (ENABLED=NO, so
// the provider pays nothing), and the mutex summary a ManualReader
// collects through the producer stops moving, while the rwlock's goes on.
// A mutex class that registers later is off from the start.
func ExampleApplyViews() {
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
	index := s.NewSyncInstance(s.MustRegister("wait/synch/rwlock/app/index"), "index.go:7")
	work := func(inst *pfscore.SyncInstance, op pfscore.Operation) {
		for range 3 {
			var w pfscore.WaitState
			if inst.BeginWait(&w, nil, op) {
				w.EndWait(-1)
			}
		}
	}
	collect := func(when string) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			panic(err)
		}
		var series []string
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != "pfs.events_waits.count" {
					continue
				}
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					name, _ := dp.Attributes.Value("pfs.event_name")
					series = append(series, fmt.Sprintf("%s=%d", name.AsString(), dp.Value))
				}
			}
		}
		slices.Sort(series)
		fmt.Printf("%s: %s\n", when, strings.Join(series, " "))
	}

	work(cache, pfscore.OpLock)
	work(index, pfscore.OpReadLock)
	collect("before the view")

	drop := metric.NewView(metric.Instrument{Name: "wait/synch/mutex/*"},
		metric.Stream{Aggregation: metric.AggregationDrop{}})
	if err := bridge.ApplyViews(s, drop); err != nil {
		panic(err)
	}
	later := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/later"), "later.go:3")
	work(cache, pfscore.OpLock)
	work(later, pfscore.OpLock)
	work(index, pfscore.OpReadLock)
	collect("after the view")

	for _, r := range s.SetupInstruments() {
		if strings.HasPrefix(r.Name, "wait/synch/mutex/") {
			fmt.Printf("%s ENABLED=%v TIMED=%v\n", r.Name, r.Enabled, *r.Timed)
		}
	}
	// Output:
	// before the view: wait/synch/mutex/app/cache=3 wait/synch/rwlock/app/index=3
	// after the view: wait/synch/mutex/app/cache=3 wait/synch/rwlock/app/index=6
	// wait/synch/mutex/app/cache ENABLED=false TIMED=false
	// wait/synch/mutex/app/later ENABLED=false TIMED=false
}

// Views from a declarative configuration file drive the producer: the
// setup at record time, and the series at export time. Here file waits
// are counted (not timed) and exported by user, not by thread.
func ExampleWithViews() {
	views, err := viewconf.Parse([]byte(`
meter_provider:
  views:
    - selector:
        instrument_name: "wait/io/file/*"
      stream:
        aggregation:
          sum: {}
        attribute_keys:
          included: ["pfs.user"]
`))
	if err != nil {
		panic(err)
	}
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		panic(err)
	}
	log := s.MustRegister("wait/io/file/app/log")
	p, err := bridge.NewProducer(s, bridge.WithViews(views...))
	if err != nil {
		panic(err)
	}
	worker := s.MustRegister("thread/app/worker")
	file := s.FileInstance(log, "/srv/app/app.log", "log.go:10")
	for _, user := range []string{"alice", "alice", "bob"} {
		th := s.NewThread(worker, pfscore.ThreadOptions{User: user, Host: "localhost"})
		var w pfscore.WaitState
		if file.BeginWait(&w, th, pfscore.OpFileWrite) {
			w.EndWait(100)
		}
		th.End()
	}
	sms, err := p.Produce(context.Background())
	if err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range sms[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && strings.HasSuffix(m.Name, ".count") && strings.HasPrefix(m.Name, "pfs.events_waits") {
			for _, dp := range sum.DataPoints {
				user, _ := dp.Attributes.Value("pfs.user")
				lines = append(lines, fmt.Sprintf("%s user=%q: %d", m.Name, user.AsString(), dp.Value))
			}
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	for _, r := range s.SetupInstruments() {
		if r.Name == "wait/io/file/app/log" {
			fmt.Printf("%s ENABLED=%v TIMED=%v\n", r.Name, r.Enabled, *r.Timed)
		}
	}
	// Output:
	// pfs.events_waits.by_account.count user="alice": 2
	// pfs.events_waits.by_account.count user="bob": 1
	// pfs.events_waits.by_user.count user="alice": 2
	// pfs.events_waits.by_user.count user="bob": 1
	// pfs.events_waits.count user="": 3
	// wait/io/file/app/log ENABLED=true TIMED=false
}
