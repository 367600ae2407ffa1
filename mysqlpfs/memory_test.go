package mysqlpfs_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

// heapBytes is the Go heap's objects, live or not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// historyFixture serves a schema whose events_waits_history_long holds n
// rows.
func historyFixture(t *testing.T, n int, opts ...mysqlpfs.Option) (*pfscore.Schema, *mysqlpfs.Server) {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithWaitsHistoryLongSize(n))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update("setup_consumers", nil, map[string]pfscore.Value{"ENABLED": "YES"}); err != nil {
		t.Fatal(err)
	}
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/cache"), "cache.go:12")
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "app", Host: "localhost"})
	t.Cleanup(th.End)
	for range n {
		var w pfscore.WaitState
		if m.BeginWait(&w, th, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}
	all := append([]mysqlpfs.Option{mysqlpfs.WithUser("pfs", testPassword)}, opts...)
	srv, err := mysqlpfs.Listen("127.0.0.1:0", s, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return s, srv
}

// peakGrowth samples the heap every millisecond until stop, and returns
// its peak growth past where it was; past abort bytes it calls onAbort
// (the test's own safety net).
func peakGrowth(stop <-chan struct{}, abort uint64, onAbort func()) uint64 {
	runtime.GC()
	base := heapBytes()
	var peak uint64
	aborted := false
	tk := time.NewTicker(time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return peak
		case <-tk.C:
		}
		if h := heapBytes(); h > base && h-base > peak {
			peak = h - base
			if peak > abort && !aborted {
				aborted = true
				onAbort()
			}
		}
	}
}

// A statement that makes the engine hold rows (a sort of a cross join of
// three 3,000-row tables, 27 billion rows) is cancelled once the heap has
// grown past the memory limit, long before its timeout, and the heap
// stays near the limit: without the limit, it grows by some 150 MiB a
// second until the timeout.
func TestQueryMemoryLimit(t *testing.T) {
	const limit = 64 << 20
	_, srv := historyFixture(t, 3000, mysqlpfs.WithQueryTimeout(20*time.Second), mysqlpfs.WithQueryMemoryLimit(limit))
	db := (&fixture{srv: srv}).db(t)
	db.SetMaxOpenConns(1)
	if _, rows := queryRows(t, db, "SELECT COUNT(*) FROM events_waits_history_long"); rows[0][0] != "3000" {
		t.Fatalf("history rows: %v", rows)
	}
	for _, q := range []string{
		`SELECT a.EVENT_ID FROM events_waits_history_long a, events_waits_history_long b, events_waits_history_long c ORDER BY a.EVENT_ID, b.EVENT_ID LIMIT 1`,
		`SELECT a.EVENT_ID, b.EVENT_ID, c.EVENT_ID, COUNT(*) FROM events_waits_history_long a, events_waits_history_long b, events_waits_history_long c GROUP BY 1, 2, 3 LIMIT 1`,
	} {
		stop := make(chan struct{})
		done := make(chan uint64)
		var killed atomic.Bool
		// The test's own safety net: past 1 GiB, the server is closed.
		go func() { done <- peakGrowth(stop, 1<<30, func() { killed.Store(true); srv.Close() }) }()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := db.ExecContext(ctx, q)
		cancel()
		d := time.Since(start)
		close(stop)
		peak := <-done
		t.Logf("%v after %v, heap +%d MiB", err, d, peak>>20)
		if killed.Load() {
			t.Fatalf("%.60s...: the heap grew past 1 GiB (limit %d MiB)", q, limit>>20)
		}
		wantErr(t, q, err, mysqlpfs.ErQueryInterrupted)
		// The error is 1317, not the timeout's 3024: the statement was
		// cancelled for its memory. The heap's growth is bounded by its
		// goal when the statement began (at most the limit past its size)
		// plus the limit, plus what the engine allocates between two
		// samples (a map's doubling among it, and more on a loaded
		// machine); without the limit it reaches 1 GiB.
		if peak > 6*limit {
			t.Errorf("%.60s...: the heap grew by %d MiB under a limit of %d MiB", q, peak>>20, limit>>20)
		}
	}
	// The connection still serves.
	if _, rows := queryRows(t, db, "SELECT 1"); len(rows) != 1 {
		t.Errorf("SELECT 1 after the limit: %v", rows)
	}
}
