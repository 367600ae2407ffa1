package pfshttp

import (
	"sync"

	"github.com/otelpfs/otelpfs/instrument"
)

// threadPool keeps a Handler's idle request threads for later requests of
// the same user and host (WithThreadPool), as a connection pool keeps its
// connections: starting and ending a thread (its rows, its account's
// connection counts, the roll-up of its statistics) is most of what a
// request thread costs, and a pooled thread pays it once for many requests.
//
// Invariants, under mu:
//   - every thread in idle was live and settled (pfscore's Thread.Settle:
//     no event in progress) when put, is in no request's context, and is
//     in idle once, with the mark its settling returned; get checks that
//     nothing has happened to it since (Thread.Settled), or settles it
//     again, before a request uses it (a handle kept past its request may
//     have begun an event since);
//   - n is the number of threads in idle, at most max;
//   - an empty list's capacity is at most smallList once get emptied it,
//     so the lists hold O(max) slots;
//   - a list in idle is the threads of its actor: their user and host are
//     the key's, fixed when they started;
//   - a list is dropped (dropped set) exactly when it leaves idle, and a
//     dropped list is empty and stays so: put never adds to one.
//
// A request takes a thread out of idle for its whole run, so one goroutine
// at a time drives it (pfscore's Thread); the hand-over between requests
// goes through mu, which orders the last request's writes before the next
// one's.
type threadPool struct {
	mu   sync.Mutex
	idle map[actor]*idleList
	n    int // threads in idle
	max  int // bound of n

	// lists is how many lists idle may hold before put drops the empty
	// ones: a service whose hosts are its clients' IPs meets many actors,
	// and an actor's list stays (empty) after its last thread is taken so
	// that the next put does not make a new one.
	lists int
}

// actor is a pool's key: a thread's user and host.
type actor struct{ user, host string }

// idleList is an actor's idle threads, the most recently used last.
// dropped is set, under mu, when the list leaves idle: a request that took
// its thread from it (get) gives the thread back to the list without
// looking its actor up again, unless the list was dropped meanwhile.
type idleList struct {
	ts      []idleThread
	dropped bool
}

// idleThread is an idle thread and the mark of its settling (SettleMark).
type idleThread struct {
	t    *instrument.Thread
	mark uint64
}

func newThreadPool(max int) *threadPool {
	return &threadPool{idle: make(map[actor]*idleList), max: max, lists: 2*max + 16}
}

// get returns an idle thread of user@host, or nil if there is none, and
// the actor's list, if it has one, for put. A thread that no longer
// settles (an event begun while it was idle, through a handle kept past
// its request: a misuse, see WithThreadPool) is ended, not returned: a
// request never starts on another request's event in progress.
func (p *threadPool) get(user, host string) (*instrument.Thread, *idleList) {
	for {
		it, l := p.pop(user, host)
		if t := it.t; t == nil || t.Settled(it.mark) || t.Settle() {
			return t, l
		}
		it.t.End()
	}
}

// pop takes the most recently used idle thread of user@host, if any.
func (p *threadPool) pop(user, host string) (idleThread, *idleList) {
	p.mu.Lock()
	var t idleThread
	l := p.idle[actor{user, host}]
	if l != nil && len(l.ts) > 0 {
		last := len(l.ts) - 1
		t = l.ts[last]
		l.ts[last] = idleThread{}
		l.ts = l.ts[:last]
		if last == 0 && cap(l.ts) > smallList {
			l.ts = nil // an empty list keeps no burst's array: O(max) slots in all
		}
		p.n--
	}
	p.mu.Unlock()
	return t, l
}

// smallList is the capacity an empty list keeps.
const smallList = 4

// evict ends one idle thread, of any actor, and reports whether there was
// one: a request that found the thread table full (its threads are
// pfscore.WithMaxThreads) takes the slot of an idle thread rather than run
// without a thread while idle ones hold slots.
func (p *threadPool) evict() bool {
	p.mu.Lock()
	var t *instrument.Thread
	for _, l := range p.idle {
		if n := len(l.ts); n > 0 {
			t = l.ts[0].t // the least recently used of its list
			copy(l.ts, l.ts[1:])
			l.ts[n-1] = idleThread{}
			l.ts = l.ts[:n-1]
			p.n--
			break
		}
	}
	p.mu.Unlock()
	if t == nil {
		return false
	}
	t.End()
	return true
}

// put returns t, a thread of user@host whose request is over, to the pool,
// or ends it: when it did not settle (a wait, statement or transaction the
// request left in progress), when it has ended, or when the pool is full.
// The caller has taken t out of the request's context first. l is what get
// returned for user@host, if anything.
func (p *threadPool) put(l *idleList, user, host string, t *instrument.Thread) {
	mark, settled := t.SettleMark()
	if !settled {
		t.End() // nil, ended: nothing; unsettled: its events end with it
		return
	}
	p.mu.Lock()
	if p.n >= p.max {
		p.mu.Unlock()
		t.End()
		return
	}
	if l == nil || l.dropped {
		k := actor{user, host}
		if l = p.idle[k]; l == nil {
			if len(p.idle) >= p.lists {
				p.dropEmptyLocked()
			}
			l = new(idleList)
			p.idle[k] = l
		}
	}
	l.ts = append(l.ts, idleThread{t, mark})
	p.n++
	p.mu.Unlock()
}

// dropEmptyLocked forgets the actors without idle threads. p.mu is held.
// There are at most max lists with threads, and put calls it only when
// there are lists (2*max+16) of them, so it frees at least max+16 lists
// for each walk: amortized, a constant cost per put.
func (p *threadPool) dropEmptyLocked() {
	for k, l := range p.idle {
		if len(l.ts) == 0 {
			l.dropped = true
			delete(p.idle, k)
		}
	}
}

// closeIdle ends the pool's idle threads.
func (p *threadPool) closeIdle() {
	p.mu.Lock()
	var ts []idleThread
	for k, l := range p.idle {
		ts = append(ts, l.ts...)
		l.ts, l.dropped = nil, true
		delete(p.idle, k)
	}
	p.n = 0
	p.mu.Unlock()
	for _, it := range ts {
		it.t.End()
	}
}
