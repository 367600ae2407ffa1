package mysqlpfs_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// TestQueriesConcurrentSafe runs writers (waits on their own mutexes),
// SQL readers and SQL setup changes at once, released together.
//
// Invariants: a reader's COUNT_STAR of the writers' class never goes down
// between two of its reads (no TRUNCATE runs: cumulative columns only
// grow); once the writers stop, COUNT_STAR over the wire equals the waits
// that began, exactly; and the setup changes, all on another class, never
// stop a writer's wait from beginning.
func TestQueriesConcurrentSafe(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	s := f.s
	class := s.MustRegister("wait/synch/mutex/app/hot")
	s.MustRegister("wait/synch/mutex/app/toggled")
	writers, rounds, readers := 4, 2000, 2
	if testing.Short() {
		rounds = 300
	}
	var begun atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := s.NewThread(s.MustRegister("thread/app/writer"), pfscore.ThreadOptions{User: "app", Host: "localhost"})
			defer th.End()
			m := s.NewSyncInstance(class, fmt.Sprintf("writer%d", w))
			<-start
			for range rounds {
				var ws pfscore.WaitState
				if !m.BeginWait(&ws, th, pfscore.OpLock) {
					t.Error("a wait on the hot class did not begin")
					return
				}
				begun.Add(1)
				ws.EndWait(-1)
			}
		}()
	}
	var rwg sync.WaitGroup
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			db := f.db(t)
			<-start
			last := int64(-1)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if r == 0 && i%2 == 1 {
					if _, err := db.Exec("UPDATE setup_instruments SET ENABLED = IF(ENABLED = 'YES', 'NO', 'YES') WHERE NAME = 'wait/synch/mutex/app/toggled'"); err != nil {
						t.Errorf("toggle: %v", err)
						return
					}
					continue
				}
				var n int64
				if err := db.QueryRow("SELECT COUNT_STAR FROM events_waits_summary_global_by_event_name WHERE EVENT_NAME = 'wait/synch/mutex/app/hot'").Scan(&n); err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if n < last {
					t.Errorf("COUNT_STAR went down from %d to %d", last, n)
				}
				last = n
			}
		}()
	}
	close(start)
	wg.Wait()
	close(stop)
	rwg.Wait()
	_, rows := queryRows(t, f.db(t), "SELECT COUNT_STAR FROM events_waits_summary_global_by_event_name WHERE EVENT_NAME = 'wait/synch/mutex/app/hot'")
	if got, want := rows[0][0], strconv.FormatInt(begun.Load(), 10); got != want {
		t.Errorf("COUNT_STAR %s, want %s (the waits that began)", got, want)
	}
}
