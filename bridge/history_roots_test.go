package bridge_test

import (
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

// TestHistoryWaitsInRootWait: a wait nested in a wait outside any span is
// dropped with it, uncounted, whether the two arrive in one Read or the
// nested one Reads before the outer one ends; and a thread's waits outside
// any span leave no row pending and count nothing, read directly or
// through Query.
func TestHistoryWaitsInRootWait(t *testing.T) {
	for _, via := range []string{"schema", "tables"} {
		t.Run(via, func(t *testing.T) {
			w := newSpanWorld(t)
			s := w.s
			var tb pfscore.Tables = s
			if via == "tables" {
				tb = hidden{s}
			}
			h, err := bridge.NewHistory(tb)
			if err != nil {
				t.Fatal(err)
			}
			th := s.NewThread(s.MustRegister("thread/app/roots"), pfscore.ThreadOptions{})
			defer th.End()
			outer := s.NewSyncInstance(s.MustRegister("wait/synch/cond/app/ready"), "roots_test.go:1")
			inner := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/inner"), "roots_test.go:2")
			wait := func(in *pfscore.SyncInstance, op pfscore.Operation, nested func()) {
				var ws pfscore.WaitState
				if !in.BeginWait(&ws, th, op) {
					t.Fatal("wait not instrumented")
				}
				if nested != nil {
					nested()
				}
				ws.EndWait(-1)
			}
			// In one Read.
			for range 3 {
				wait(outer, pfscore.OpWait, func() { wait(inner, pfscore.OpLock, nil) })
				wait(inner, pfscore.OpLock, nil)
			}
			for range 3 {
				if spans := read(t, h); len(spans) != 0 {
					t.Fatalf("spans %+v", spans)
				}
			}
			if st := h.Stats(); st.Orphans != 0 || st.Pending != 0 || st.Lost != 0 {
				t.Fatalf("one Read: stats %v", st)
			}
			// The nested wait read while the outer one is in progress.
			var ws pfscore.WaitState
			if !outer.BeginWait(&ws, th, pfscore.OpWait) {
				t.Fatal("wait not instrumented")
			}
			wait(inner, pfscore.OpLock, nil)
			for range 3 {
				read(t, h)
			}
			if st := h.Stats(); st.Pending != 1 {
				t.Fatalf("nested wait read before its outer wait ends: stats %v, want 1 pending", st)
			}
			ws.EndWait(-1)
			for range 3 {
				if spans := read(t, h); len(spans) != 0 {
					t.Fatalf("spans %+v", spans)
				}
			}
			if st := h.Stats(); st.Orphans != 0 || st.Pending != 0 || st.Lost != 0 {
				t.Fatalf("two Reads: stats %v", st)
			}
		})
	}
}
