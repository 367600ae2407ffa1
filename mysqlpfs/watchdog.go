package mysqlpfs

import (
	"context"
	"errors"
	"math"
	"net"
	"runtime/metrics"
	"sync"
	"time"
)

// errMemory is the cause a statement's context is cancelled with when the
// heap has grown past the memory limit under it.
var errMemory = errors.New("mysqlpfs: query memory limit")

// errClientGone is the cause a statement's context is cancelled with when
// its client has closed the connection.
var errClientGone = errors.New("mysqlpfs: the client closed the connection")

// The watchdog's periods: the heap is sampled every heapPeriod while
// statements run (reading two runtime/metrics values costs well under a
// microsecond), the connections are peeked every peekPeriod.
const (
	heapPeriod = 5 * time.Millisecond
	peekPeriod = 50 * time.Millisecond
)

// A watchdog watches the running statements: it cancels those under which
// the Go heap has grown past its limit, and those whose client has closed
// its connection. Its goroutine runs only while statements run.
//
// Why the heap and not a count of rows: the engine's sort, group-by,
// DISTINCT and join iterators buffer rows of their own, out of reach of
// the tables' iterators, and one row's size ranges from a few bytes to
// max_allowed_packet; the heap is what the limit protects, and the engine's
// iterators stop within milliseconds of their context's cancellation.
type watchdog struct {
	limit uint64 // 0: no limit

	mu      sync.Mutex
	stmts   map[*running]struct{}
	looping bool
	samples []metrics.Sample // the loop's, and start's under mu
}

// A running statement.
type running struct {
	cancel context.CancelCauseFunc
	conn   net.Conn // nil: not peeked
	base   uint64   // the heap's size it may grow limit past
}

func newWatchdog(limit int64) *watchdog {
	w := &watchdog{stmts: map[*running]struct{}{}, samples: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/goal:bytes"},
	}}
	if limit > 0 {
		w.limit = uint64(limit)
	}
	return w
}

// heap returns the heap's objects (live or not yet swept) and its goal;
// w.mu is held.
func (w *watchdog) heap() (objects, goal uint64) {
	metrics.Read(w.samples)
	return w.samples[0].Value.Uint64(), w.samples[1].Value.Uint64()
}

// watch registers a statement that cancel cancels, run on conn, until the
// function it returns is called.
func (w *watchdog) watch(cancel context.CancelCauseFunc, conn net.Conn) (stop func()) {
	r := &running{cancel: cancel, conn: conn}
	w.mu.Lock()
	if w.limit > 0 {
		// The heap grows to its goal without any statement's help: the
		// base is the goal, but no further than the limit past the heap
		// (the goal is very large without GOGC).
		objects, goal := w.heap()
		r.base = max(objects, min(goal, satAdd(objects, w.limit)))
	}
	w.stmts[r] = struct{}{}
	if !w.looping {
		w.looping = true
		go w.loop()
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.stmts, r)
		w.mu.Unlock()
	}
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func (w *watchdog) loop() {
	period := peekPeriod
	if w.limit > 0 {
		period = heapPeriod
	}
	tk := time.NewTicker(period)
	defer tk.Stop()
	var lastPeek time.Time
	for now := range tk.C {
		w.mu.Lock()
		if len(w.stmts) == 0 {
			w.looping = false
			w.mu.Unlock()
			return
		}
		if w.limit > 0 {
			objects, _ := w.heap()
			for r := range w.stmts {
				if objects > r.base && objects-r.base > w.limit {
					r.cancel(errMemory)
				}
			}
		}
		if now.Sub(lastPeek) >= peekPeriod {
			lastPeek = now
			for r := range w.stmts {
				if r.conn != nil && peerClosed(r.conn) {
					r.cancel(errClientGone)
				}
			}
		}
		w.mu.Unlock()
	}
}

// running returns the number of statements running.
func (w *watchdog) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.stmts)
}
