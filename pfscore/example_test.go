package pfscore_test

import (
	"fmt"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A schema records a thread's mutex waits; Query filters and orders the
// global summary and Scan reads it as typed rows.
func Example() {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		panic(err)
	}
	cache := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:12")
	queue := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/queue"), "queue.go:40")
	worker := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "app", Host: "localhost"})
	defer worker.End()

	for i := range 5 {
		m := cache
		if i%2 == 1 {
			m = queue
		}
		var w pfscore.WaitState
		if m.BeginWait(&w, worker, pfscore.OpLock) {
			// ... the lock is taken here ...
			w.EndWait(-1)
		}
	}

	res, err := s.Query("events_waits_summary_global_by_event_name", pfscore.Query{
		Where: []string{"EVENT_NAME LIKE 'wait/synch/mutex/app/%' AND COUNT_STAR > 0"},
		Order: "COUNT_STAR desc",
	})
	if err != nil {
		panic(err)
	}
	type row struct {
		pfscore.ByEventName
		pfscore.WaitStats
	}
	rows, err := pfscore.Scan[row](res)
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Printf("%s: %d waits, MIN <= AVG <= MAX: %v\n", r.EventName, r.CountStar,
			r.MinTimerWait <= r.AvgTimerWait && r.AvgTimerWait <= r.MaxTimerWait)
	}
	// Output:
	// wait/synch/mutex/app/cache: 3 waits, MIN <= AVG <= MAX: true
	// wait/synch/mutex/app/queue: 2 waits, MIN <= AVG <= MAX: true
}

// Setup changes are UPDATE, INSERT and DELETE on the setup tables, with
// MySQL's rules.
func ExampleSchema_Update() {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		panic(err)
	}
	s.MustRegister("wait/synch/mutex/app/cache")
	s.MustRegister("wait/io/file/app/log")
	n, err := s.Update("setup_instruments", []string{"NAME LIKE 'wait/synch/%'"}, map[string]pfscore.Value{"ENABLED": "NO"})
	if err != nil {
		panic(err)
	}
	fmt.Println("rows matched:", n)

	res, err := s.Query("setup_instruments", pfscore.Query{Where: []string{"NAME LIKE 'wait/%'"}, Order: "NAME"})
	if err != nil {
		panic(err)
	}
	rows, err := pfscore.Scan[pfscore.SetupInstrumentsRow](res)
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Println(r.Name, r.Enabled)
	}
	// Output:
	// rows matched: 1
	// wait/io/file/app/log true
	// wait/synch/mutex/app/cache false
}
