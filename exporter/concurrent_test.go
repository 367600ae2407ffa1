package exporter_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
)

// TestHandlerConcurrentSafe reads every table, changes the setup and
// truncates while threads keep waiting, all released together; every
// request must succeed and the summaries stay consistent.
func TestHandlerConcurrentSafe(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 2 { // the workload, on threads of its own
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := instrument.NewThread(threadName, instrument.WithSchema(f.s))
			defer th.End()
			mu := instrument.NewMutex(fmt.Sprintf("wait/synch/mutex/test/worker_%d", w), instrument.WithSchema(f.s))
			guarded := 0
			<-start
			for range rounds * 50 {
				mu.For(th).Lock()
				guarded++
				mu.For(th).Unlock()
			}
		}()
	}
	get := func(path string) error {
		resp, err := http.Get(f.base + path)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d", path, resp.StatusCode)
		}
		return nil
	}
	wg.Add(3)
	go func() { // a reader of every table in every format
		defer wg.Done()
		<-start
		for i := range rounds {
			for _, n := range f.s.TableNames() {
				if n == "performance_timers" {
					continue // calibrates on every read: slow, and not what is tested
				}
				if err := get("/tables/" + n + "?format=" + []string{"json", "text", "html"}[i%3]); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	go func() { // a setup changer
		defer wg.Done()
		<-start
		for i := range rounds {
			for _, p := range []struct{ path, body string }{
				{"/setup/instruments", fmt.Sprintf(`{"name":"wait/synch/mutex/test/worker_%%","enabled":%v}`, i%2 == 0)},
				{"/setup/consumers", fmt.Sprintf(`{"name":"events_waits_history%%","enabled":%v}`, i%2 == 1)},
				{"/setup/threads", fmt.Sprintf(`{"name":"thread/test/%%","history":%v}`, i%2 == 0)},
			} {
				r := f.post(p.path, p.body)
				if r.status != http.StatusOK {
					errs <- fmt.Errorf("POST %s: %d %s", p.path, r.status, r.body)
					return
				}
			}
		}
	}()
	go func() { // a truncater
		defer wg.Done()
		<-start
		for range rounds {
			for _, n := range []string{"events_waits_history_long", "events_waits_summary_global_by_event_name", "events_waits_summary_by_thread_by_event_name"} {
				if r := f.post("/tables/"+n+"/truncate", ""); r.status != http.StatusOK {
					errs <- fmt.Errorf("truncate %s: %d %s", n, r.status, r.body)
					return
				}
			}
		}
	}()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// After the storm: the index still lists every table and every summary
	// row is consistent (MIN <= AVG <= MAX when counted).
	res := f.table("events_waits_summary_global_by_event_name", "where", "COUNT_STAR > 0 AND SUM_TIMER_WAIT > 0")
	for _, row := range res.Rows {
		mn, avg, mx := row[3].(uint64), row[4].(uint64), row[5].(uint64)
		if mn > avg || avg > mx {
			t.Errorf("inconsistent row %v", row)
		}
	}
}
