package instrument_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// hookLocker is a sync.Locker whose Lock runs hook first once armed:
// sync.Cond.Wait calls Lock on its way out, after the wait but before the
// instrumented Cond's EndWait.
type hookLocker struct {
	mu    sync.Mutex
	armed bool // under mu
	hook  func()
}

func (l *hookLocker) Lock() {
	l.mu.Lock()
	if l.armed {
		l.armed = false
		l.mu.Unlock()
		l.hook()
		l.mu.Lock()
	}
}

func (l *hookLocker) Unlock() { l.mu.Unlock() }

// condsLive returns the cond instances of class name.
func condsLive(t *testing.T, s *pfscore.Schema, name string) int {
	t.Helper()
	res, err := s.Select("cond_instances")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Rows {
		if r[0] == name {
			n++
		}
	}
	return n
}

// keep holds the second Cond of TestCondNotCollectedInWait.
var keep *instrument.Cond

// TestCondNotCollectedInWait (defect F): a Cond nobody else references may
// be garbage collected while a goroutine is inside its Wait. Its cleanup
// must not destroy the instance before Wait's EndWait, or the wait is
// written into a freed record that a new instance reuses.
func TestCondNotCollectedInWait(t *testing.T) {
	s := ioSchema(t)
	const name = "wait/synch/cond/test/gc"
	lk := &hookLocker{}
	var collected bool
	lk.hook = func() {
		// Inside Wait, on its way out: give the collector every chance to
		// free the Cond, then make a new instance that may reuse its record.
		deadline := time.Now().Add(300 * time.Millisecond)
		for time.Now().Before(deadline) {
			runtime.GC()
			if condsLive(t, s, name) == 0 {
				collected = true
				break
			}
			time.Sleep(time.Millisecond)
		}
		keep = instrument.NewCond(name, &sync.Mutex{}, instrument.WithSchema(s))
	}
	c := instrument.NewCond(name, lk, instrument.WithSchema(s))
	started, done := make(chan struct{}), make(chan struct{})
	go func(c *instrument.Cond) {
		lk.mu.Lock()
		close(started)
		c.Wait()
		lk.mu.Unlock()
		close(done)
	}(c)
	<-started
	lk.mu.Lock() // the waiter released it inside Wait: it waits
	lk.armed = true
	c.Signal()
	c = nil // the waiter's frames hold the last reference
	lk.mu.Unlock()
	<-done
	if collected {
		t.Error("the Cond was collected while a goroutine was in its Wait")
	}
	res, err := s.Select("events_waits_summary_by_instance")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows { // EVENT_NAME, OBJECT_INSTANCE_BEGIN, COUNT_STAR, ...
		if r[0] == name && r[2].(uint64) != 0 && condsLive(t, s, name) == 1 {
			t.Errorf("the new Cond's instance counts the old Cond's wait: %v", r)
		}
	}
	runtime.KeepAlive(keep)
}
