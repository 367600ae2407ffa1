package bridge

// Review 18: adversarial reproducers for the review17 fixes (commit
// 12adc37). Every test here FAILS on that code; each says what it shows
// and how it fails.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// r18flaky is a Schema whose Query of one table fails while fail is set.
type r18flaky struct {
	*pfscore.Schema
	table string
	fail  atomic.Bool
}

func (f *r18flaky) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	if table == f.table && f.fail.Load() {
		return nil, errors.New("r18: read failed")
	}
	return f.Schema.Query(table, q)
}

// TestReview18MergedSumDownAfterFailedRead: keepMonotonic (views.go)
// forgets a merged series' state (last value, StartTime) at the first
// collection that does not export it (export's deferred loop: st.gen !=
// vs.gen). A table whose read fails for one collection exports nothing,
// but the producer keeps its members' series as they were ("they did not
// reset"), with their old StartTimes. If a member leaves meanwhile (a
// thread ends), the next collection's merged sum is smaller, and with no
// state keepMonotonic takes it as new: the merged series goes 3 -> 1
// under the same StartTime, the very defect review17 fixed.
// Fails: "merged count 3 -> 1 under the same StartTime ...".
func TestReview18MergedSumDownAfterFailedRead(t *testing.T) {
	c := &r17clock{t: time.Unix(1_700_000_000, 0)}
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	const table = "events_waits_summary_by_thread_by_event_name"
	f := &r18flaky{Schema: s, table: table}
	p, err := NewProducer(f, withClock(c.now), WithViews(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "pfs.events_waits.by_thread.count"},
		sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("thread.id")})))
	if err != nil {
		t.Fatal(err)
	}
	h := &r17{t: t, s: s, p: p}
	cls := s.MustRegister("wait/synch/mutex/app/m", pfscore.WithDefault(true, true))
	m := s.NewSyncInstance(cls, "r18.go:1")
	tc := s.MustRegister("thread/app/worker")
	a := s.NewThread(tc, pfscore.ThreadOptions{})
	defer a.End()
	b := s.NewThread(tc, pfscore.ThreadOptions{})
	r17wait(m, a)
	r17wait(m, b)
	r17wait(m, b)
	const name = "pfs.events_waits.by_thread.count"
	v1, st1, ok := r17sum(t, h.collect(), name, "pfs.event_name", "wait/synch/mutex/app/m")
	if !ok || v1 != 3 {
		t.Fatalf("first collection: %v %v, want 3", v1, ok)
	}
	f.fail.Store(true)
	if _, err := p.Produce(context.Background()); err == nil {
		t.Fatal("the failing read returned no error")
	}
	f.fail.Store(false)
	b.End()
	v2, st2, ok := r17sum(t, h.collect(), name, "pfs.event_name", "wait/synch/mutex/app/m")
	if !ok {
		t.Fatal("merged series gone")
	}
	if st2.Equal(st1) && v2 < v1 {
		t.Errorf("merged count %v -> %v under the same StartTime %v (one collection failed to read the table between)", v1, v2, st1)
	}
}
