package instrument

import (
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

func benchSchema(b *testing.B, history bool) *pfscore.Schema {
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, history),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, history))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkMutexRaw(b *testing.B) {
	var mu sync.Mutex
	b.ReportAllocs()
	for b.Loop() {
		mu.Lock()
		critical++
		mu.Unlock()
	}
}

func BenchmarkMutexDisabled(b *testing.B) {
	s := benchSchema(b, false)
	m := NewMutex("wait/synch/mutex/bench/m", WithSchema(s))
	no := false
	s.UpdateInstruments("%", &no, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Lock()
		critical++
		m.Unlock()
	}
}

func benchTimed(b *testing.B, history bool) {
	s := benchSchema(b, history)
	m := NewMutex("wait/synch/mutex/bench/m", WithSchema(s))
	t := NewThread("thread/bench/worker", WithSchema(s))
	h := m.For(t)
	b.ReportAllocs()
	for b.Loop() {
		h.Lock()
		critical++
		h.Unlock()
	}
}

func BenchmarkMutexTimed(b *testing.B)        { benchTimed(b, false) }
func BenchmarkMutexTimedHistory(b *testing.B) { benchTimed(b, true) }

// critical is the work inside every benchmarked critical section: the same
// increment for the raw and the instrumented locks.
var critical int
