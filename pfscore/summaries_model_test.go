package pfscore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSummariesAgainstModel drives random waits by random threads (users
// and hosts from small sets, some missing) on random instances, ending
// threads at random, and compares every wait summary with a sequential
// model of what MySQL's roll-ups say each row must hold: events by live and
// ended threads, per account, user and host, per instance and globally.
func TestSummariesAgainstModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { summariesModel(t, seed) })
	}
}

func summariesModel(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 99))
	s := newTestSchema(t)
	tc := s.MustRegister("thread/test/t")
	var classes []*Class
	for i := range 3 {
		classes = append(classes, s.MustRegister(fmt.Sprintf("wait/synch/mutex/test/c%d", i)))
	}
	type inst struct {
		m     *SyncInstance
		class int
	}
	var insts []inst
	for i := range 6 {
		c := i % len(classes)
		insts = append(insts, inst{s.NewSyncInstance(classes[c], ""), c})
	}
	users := []string{"", "alice", "bob"}
	hosts := []string{"", "web1", "web2"}
	type thr struct {
		th         *Thread
		user, host string
	}
	var live []thr

	type key struct{ a, b, class string }
	global := map[string]uint64{}
	byInst := map[uint64]uint64{}
	byThread := map[key]uint64{}
	byAcct := map[key]uint64{}
	byUser := map[key]uint64{}
	byHost := map[key]uint64{}

	for range 2000 {
		switch r := rnd.IntN(100); {
		case r < 10 || len(live) == 0:
			u, h := users[rnd.IntN(3)], hosts[rnd.IntN(3)]
			live = append(live, thr{s.NewThread(tc, ThreadOptions{User: u, Host: h}), u, h})
		case r < 15:
			i := rnd.IntN(len(live))
			live[i].th.End()
			live = append(live[:i], live[i+1:]...)
		default:
			var who thr
			if rnd.IntN(5) > 0 {
				who = live[rnd.IntN(len(live))]
			}
			in := insts[rnd.IntN(len(insts))]
			waitOnce(in.m, who.th)
			name := classes[in.class].name
			global[name]++
			byInst[in.m.id]++
			if who.th == nil {
				continue
			}
			byThread[key{fmt.Sprint(who.th.ID()), "", name}]++
			if who.user != "" && who.host != "" {
				byAcct[key{who.user, who.host, name}]++
			}
			if who.user != "" {
				byUser[key{who.user, "", name}]++
			}
			if who.host != "" {
				byHost[key{who.host, "", name}]++
			}
		}
	}

	check := func(table string, want map[key]uint64, keyOf func(map[string]Value) key) {
		t.Helper()
		got := map[key]uint64{}
		for _, r := range selectMap(t, s, table) {
			if c := r["COUNT_STAR"].(uint64); c != 0 {
				got[keyOf(r)] = c
			}
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s %v: COUNT_STAR %d, want %d", table, k, got[k], w)
			}
		}
		for k, g := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s %v: COUNT_STAR %d, want no events", table, k, g)
			}
		}
	}
	str := func(v Value) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	wantGlobal := map[key]uint64{}
	for n, c := range global {
		wantGlobal[key{class: n}] = c
	}
	check("events_waits_summary_global_by_event_name", wantGlobal, func(r map[string]Value) key { return key{class: str(r["EVENT_NAME"])} })
	wantInst := map[key]uint64{}
	for id, c := range byInst {
		wantInst[key{a: fmt.Sprint(id)}] = c
	}
	check("events_waits_summary_by_instance", wantInst, func(r map[string]Value) key { return key{a: str(r["OBJECT_INSTANCE_BEGIN"])} })
	liveIDs := map[string]bool{}
	for _, l := range live {
		liveIDs[fmt.Sprint(l.th.ID())] = true
	}
	for k := range byThread {
		if !liveIDs[k.a] {
			delete(byThread, k) // ended threads leave by_thread
		}
	}
	check("events_waits_summary_by_thread_by_event_name", byThread, func(r map[string]Value) key {
		return key{str(r["THREAD_ID"]), "", str(r["EVENT_NAME"])}
	})
	check("events_waits_summary_by_account_by_event_name", byAcct, func(r map[string]Value) key {
		return key{str(r["USER"]), str(r["HOST"]), str(r["EVENT_NAME"])}
	})
	check("events_waits_summary_by_user_by_event_name", byUser, func(r map[string]Value) key {
		return key{str(r["USER"]), "", str(r["EVENT_NAME"])}
	})
	check("events_waits_summary_by_host_by_event_name", byHost, func(r map[string]Value) key {
		return key{str(r["HOST"]), "", str(r["EVENT_NAME"])}
	})
}
