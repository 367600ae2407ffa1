package pfscore

import "testing"

// TestFamilyTruncateCascade truncates each table of the wait family in turn
// and checks which tables restart, as MySQL's TRUNCATE does: global
// truncates all five; by_host and by_user truncate by_account and
// by_thread; by_account truncates by_thread; by_thread only itself. The
// thread-group tables a TRUNCATE does not cascade to keep their counts.
func TestFamilyTruncateCascade(t *testing.T) {
	const p = "events_waits_summary_"
	tables := []string{p + "global_by_event_name", p + "by_thread_by_event_name",
		p + "by_account_by_event_name", p + "by_user_by_event_name", p + "by_host_by_event_name"}
	cascade := map[string][]string{
		tables[0]: tables,
		tables[1]: {tables[1]},
		tables[2]: {tables[2], tables[1]},
		tables[3]: {tables[3], tables[2], tables[1]},
		tables[4]: {tables[4], tables[2], tables[1]},
	}
	for _, truncated := range tables {
		t.Run(truncated[len(p):], func(t *testing.T) {
			f := newFixture(t)
			th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
			defer th.End()
			for range 3 {
				waitOnce(f.m, th)
			}
			where := map[string]map[string]Value{
				tables[0]: {"EVENT_NAME": f.mutex.Name()},
				tables[1]: {"THREAD_ID": th.ID(), "EVENT_NAME": f.mutex.Name()},
				tables[2]: {"USER": "u", "HOST": "h", "EVENT_NAME": f.mutex.Name()},
				tables[3]: {"USER": "u", "EVENT_NAME": f.mutex.Name()},
				tables[4]: {"HOST": "h", "EVENT_NAME": f.mutex.Name()},
			}
			if err := f.s.Truncate(truncated); err != nil {
				t.Fatal(err)
			}
			restarted := map[string]bool{}
			for _, n := range cascade[truncated] {
				restarted[n] = true
			}
			for _, n := range tables {
				want := uint64(3)
				if restarted[n] {
					want = 0
				}
				if got := count(t, f.s, n, where[n]); got != want {
					t.Errorf("after TRUNCATE %s: %s COUNT_STAR = %d, want %d", truncated, n, got, want)
				}
			}
		})
	}
}

// TestHiddenActorKeepsBaseline: an idle account that a TRUNCATE of
// by_account hid keeps its baseline through a second TRUNCATE, so when it
// connects again its row counts only the events since.
func TestHiddenActorKeepsBaseline(t *testing.T) {
	const byAcct = "events_waits_summary_by_account_by_event_name"
	f := newFixture(t)
	a := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h"})
	for range 3 {
		waitOnce(f.m, a)
	}
	a.End()
	for range 2 { // the first hides alice@h; the second rebases while it is hidden
		if err := f.s.Truncate(byAcct); err != nil {
			t.Fatal(err)
		}
	}
	where := map[string]Value{"USER": "alice", "HOST": "h", "EVENT_NAME": f.mutex.Name()}
	if rows := findRows(t, f.s, byAcct, where); len(rows) != 0 {
		t.Fatalf("idle account shown after TRUNCATE: %v", rows)
	}
	b := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "h"})
	defer b.End()
	waitOnce(f.m, b)
	if n := count(t, f.s, byAcct, where); n != 1 {
		t.Errorf("alice@h after reconnecting: COUNT_STAR %d, want 1 (the wait since the TRUNCATE)", n)
	}
}
