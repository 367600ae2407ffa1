package bench

import (
	"fmt"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// BenchmarkSelectSummary10k reads a 10,000-row summary table
// (events_waits_summary_by_thread_by_event_name: 100 threads x 100 mutex
// classes), the size DESIGN.md's collection budget names: what one scrape
// of the table layer costs before any exporter work.
func BenchmarkSelectSummary10k(b *testing.B) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxClasses(256))
	if err != nil {
		b.Fatal(err)
	}
	tc := s.MustRegister("thread/bench/worker")
	var insts []*pfscore.SyncInstance
	for i := range 100 {
		c := s.MustRegister(fmt.Sprintf("wait/synch/mutex/bench/m%d", i))
		insts = append(insts, s.NewSyncInstance(c, "bench.go:1"))
	}
	for range 100 {
		t := s.NewThread(tc, pfscore.ThreadOptions{User: "u", Host: "h"})
		defer t.End()
		for _, m := range insts {
			var w pfscore.WaitState
			if m.BeginWait(&w, t, pfscore.OpLock) {
				w.EndWait(-1)
			}
		}
	}
	const table = "events_waits_summary_by_thread_by_event_name"
	res, err := s.Select(table)
	if err != nil || len(res.Rows) < 10_000 {
		b.Fatalf("%v, %d rows", err, len(res.Rows))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Select(table); err != nil {
			b.Fatal(err)
		}
	}
}
