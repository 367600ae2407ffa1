package pfscore

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// setupOf returns a class's ENABLED and TIMED as setup_instruments shows
// them ("YES", "NO", "NULL").
func setupOf(t *testing.T, s *Schema, name string) string {
	t.Helper()
	for _, r := range s.SetupInstruments() {
		if r.Name != name {
			continue
		}
		timed := "NULL"
		if r.Timed != nil {
			timed = yn(*r.Timed)
		}
		return yn(r.Enabled) + "/" + timed
	}
	t.Fatalf("no class %s", name)
	return ""
}

func yn(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// mutexesOff disables the mutexes, counts the rwlocks, and decides
// nothing else.
func mutexesOff(name string, kind Kind) (enabled, timed, ok bool) {
	switch {
	case kind == KindMutex:
		return false, false, true
	case strings.HasPrefix(name, "wait/synch/rwlock/"):
		return true, false, true
	case kind == KindMemory, kind == KindThread:
		return true, false, true
	}
	return false, false, false
}

func TestSetInstrumentPolicy(t *testing.T) {
	s := newTestSchema(t, WithInstrument("wait/synch/mutex/app/b=COUNTED"))
	s.MustRegister("wait/synch/mutex/app/a")
	s.MustRegister("wait/synch/mutex/app/b")
	s.MustRegister("wait/io/file/app/log")
	s.MustRegister("memory/app/buf")
	s.MustRegister("thread/app/worker")
	if got := setupOf(t, s, "wait/synch/mutex/app/b"); got != "YES/NO" {
		t.Fatalf("start-up rule: %s", got)
	}
	if n := s.SetInstrumentPolicy(mutexesOff); n != 4 { // a, b, buf, worker
		t.Errorf("SetInstrumentPolicy decided %d classes, want 4", n)
	}
	// Later classes follow the policy over the start-up rules.
	s.MustRegister("wait/synch/mutex/app/c")
	s.MustRegister("wait/synch/rwlock/app/map")
	s.MustRegister("memory/app/later")
	s.MustRegister("thread/app/later")
	for name, want := range map[string]string{
		"wait/synch/mutex/app/a":    "NO/NO",
		"wait/synch/mutex/app/b":    "NO/NO",
		"wait/synch/mutex/app/c":    "NO/NO",
		"wait/synch/rwlock/app/map": "YES/NO",
		"wait/io/file/app/log":      "YES/YES", // not decided: as it was
		"memory/app/buf":            "YES/NULL",
		"memory/app/later":          "YES/NULL",
		"idle":                      "YES/YES",
	} {
		if got := setupOf(t, s, name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	// A thread class's HISTORY is not the policy's.
	for _, name := range []string{"thread/app/worker", "thread/app/later"} {
		if c := s.Class(name); !c.Enabled() || c.flags.Load()&flagHistory == 0 {
			t.Errorf("%s: enabled %v, history %v; want both", name, c.Enabled(), c.flags.Load()&flagHistory != 0)
		}
	}
	// An explicit change wins until the policy is set again.
	yes := true
	s.UpdateInstruments("wait/synch/mutex/app/a", &yes, &yes)
	if got := setupOf(t, s, "wait/synch/mutex/app/a"); got != "YES/YES" {
		t.Errorf("after UpdateInstruments: %s", got)
	}
	s.SetInstrumentPolicy(mutexesOff)
	if got := setupOf(t, s, "wait/synch/mutex/app/a"); got != "NO/NO" {
		t.Errorf("after SetInstrumentPolicy again: %s", got)
	}
	// The effective switch follows global_instrumentation.
	if s.Class("wait/synch/rwlock/app/map").On() != true || s.Class("wait/synch/mutex/app/a").On() {
		t.Error("effective switches do not follow ENABLED")
	}
	// nil removes it: later classes are as the start-up rules say.
	if n := s.SetInstrumentPolicy(nil); n != 0 {
		t.Errorf("SetInstrumentPolicy(nil) = %d", n)
	}
	s.MustRegister("wait/synch/mutex/app/d")
	if got := setupOf(t, s, "wait/synch/mutex/app/d"); got != "YES/YES" {
		t.Errorf("after removing the policy: %s", got)
	}
}

func TestWithInstrumentPolicy(t *testing.T) {
	off := func(name string, kind Kind) (bool, bool, bool) { return false, false, name == "idle" }
	s := newTestSchema(t, WithInstrumentPolicy(off), WithInstrument("idle=ON"))
	if got := setupOf(t, s, "idle"); got != "NO/NO" {
		t.Errorf("idle: %s, want NO/NO (the policy beats start-up rules)", got)
	}
	if got := setupOf(t, s, "transaction"); got != "YES/YES" {
		t.Errorf("transaction: %s", got)
	}
}

// TestSetInstrumentPolicyConcurrentSafe registers classes while policies
// change. Invariant (see SetInstrumentPolicy): once every call has
// returned, each class has the setup of the last policy set, whether it
// registered before or after that policy.
func TestSetInstrumentPolicyConcurrentSafe(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	s := newTestSchema(t)
	policies := []InstrumentPolicy{
		func(string, Kind) (bool, bool, bool) { return false, false, true },
		func(string, Kind) (bool, bool, bool) { return true, false, true },
		func(string, Kind) (bool, bool, bool) { return true, true, true },
	}
	last := policies[len(policies)-1]
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range n {
				s.MustRegister(fmt.Sprintf("wait/synch/mutex/g%d/m%d", g, i))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for i := range n {
			s.SetInstrumentPolicy(policies[i%(len(policies)-1)])
		}
		s.SetInstrumentPolicy(last) // the last one, possibly before some registrations
	}()
	close(start)
	wg.Wait()
	for _, c := range s.Classes() {
		e, tm, _ := last(c.name, c.kind)
		if c.Enabled() != e || c.Timed() != tm || c.On() != e {
			t.Fatalf("%s: enabled %v timed %v on %v; want the last policy's %v %v", c.name, c.Enabled(), c.Timed(), c.On(), e, tm)
		}
	}
	if got := len(s.Classes()); got != 2*n+builtinClasses {
		t.Errorf("%d classes, want %d", got, 2*n+builtinClasses)
	}
}
