package pfscore

import (
	"slices"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Statement statistics by event name: a statement class's count and times
// are its statRow, kept where every class's are (a thread's stats, the
// actor rows' and the ended threads' roll-ups); its counters (errors, rows,
// the client-side times) are kept beside them, indexed by the class's
// kindIndex, with the same owners, locks and roll-ups. Statements without a
// thread, or whose thread part was dropped, count in their class's
// stmtShared.

// ownedCounts are a thread's counters of one statement class (one writer).
type ownedCounts [numStmtCounters]owned.Uint64

// sharedCounts are counters any goroutine adds to.
type sharedCounts [numStmtCounters]atomic.Uint64

// addResult adds what one statement did: the counters of r that are not
// zero. It reads r's fields in place rather than through a stmtCounts, which
// a statement's End would build and walk twice.
func (c *ownedCounts) addResult(r *StatementResult) {
	c.addAt(xErrors, r.Errors)
	c.addAt(xWarnings, r.Warnings)
	c.addAt(xRowsAffected, r.RowsAffected)
	c.addAt(xRowsSent, r.RowsSent)
	c.addAt(xRowsExamined, r.RowsExamined)
	c.addAt(xPoolTime, r.PoolTime)
	c.addAt(xDriverTime, r.DriverTime)
	c.addAt(xFetchTime, r.FetchTime)
	c.addAt(xRetries, r.Retries)
	if r.Cancelled {
		c.addAt(xCancelled, 1)
	}
}

func (c *ownedCounts) addAt(i stmtCounter, v uint64) {
	if v != 0 {
		c[i].Set(c[i].Load() + v)
	}
}

func (c *ownedCounts) load() (out stmtCounts) {
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}

func (c *ownedCounts) reset() {
	for i := range c {
		c[i].Set(0)
	}
}

func (c *sharedCounts) add(x *stmtCounts) {
	for i, v := range x {
		if v != 0 {
			c[i].Add(v)
		}
	}
}

// addResult is ownedCounts.addResult for shared counters.
func (c *sharedCounts) addResult(r *StatementResult) {
	c.addAt(xErrors, r.Errors)
	c.addAt(xWarnings, r.Warnings)
	c.addAt(xRowsAffected, r.RowsAffected)
	c.addAt(xRowsSent, r.RowsSent)
	c.addAt(xRowsExamined, r.RowsExamined)
	c.addAt(xPoolTime, r.PoolTime)
	c.addAt(xDriverTime, r.DriverTime)
	c.addAt(xFetchTime, r.FetchTime)
	c.addAt(xRetries, r.Retries)
	if r.Cancelled {
		c.addAt(xCancelled, 1)
	}
}

func (c *sharedCounts) addAt(i stmtCounter, v uint64) {
	if v != 0 {
		c[i].Add(v)
	}
}

func (c *sharedCounts) load() (out stmtCounts) {
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}

// stmtShared is a statement class's statistics of statements counted
// without a thread.
type stmtShared struct {
	stat sharedStat
	x    sharedCounts
}

// stmtCounts returns the thread's counters of statement class kind index
// k, growing the table if the class registered after the last growth. In a
// write section only.
func (t *Thread) stmtCounts(k int) *ownedCounts {
	t.stmtUsed.mark(k)
	if x := *t.stmtX.Load(); k < len(x) {
		return &x[k]
	}
	return t.growStmtCounts(k)
}

//go:noinline
func (c *threadCore) growStmtCounts(k int) *ownedCounts {
	old := *c.stmtX.Load()
	next := make([]ownedCounts, max(k+1, 2*len(old)))
	for j := range old { // the only writer: a plain copy is exact
		for i := range old[j] {
			next[j][i].Set(old[j][i].Load())
		}
	}
	c.stmtX.Store(&next)
	return &next[k]
}

func loadSharedCounts(src []sharedCounts) []stmtCounts {
	out := make([]stmtCounts, len(src))
	for i := range src {
		out[i] = src[i].load()
	}
	return out
}

// addOwnedCounts is addCounts of an ended thread's counters of the kinds
// in used, loaded where they are added (they no longer change), allocating
// nothing.
func addOwnedCounts(p *atomic.Pointer[[]sharedCounts], x []ownedCounts, used []int32) {
	dst := growCounts(p, len(x))
	for _, j := range used {
		c := x[j].load()
		dst[j].add(&c)
	}
}

// addCounts adds counters by kind index into a shared table, growing it by
// copy first if it is shorter. The caller serializes writers of p (an
// actor row's mu, Schema.endMu).
func addCounts(p *atomic.Pointer[[]sharedCounts], x []stmtCounts) {
	dst := growCounts(p, len(x))
	for j := range x {
		dst[j].add(&x[j])
	}
}

// growCounts returns the table p points to, replaced by a copy n long if it
// is shorter. The caller serializes writers.
func growCounts(p *atomic.Pointer[[]sharedCounts], n int) []sharedCounts {
	old := *p.Load()
	if len(old) >= n {
		return old
	}
	next := make([]sharedCounts, n)
	for j := range old {
		for i := range old[j] {
			next[j][i].Store(old[j][i].Load())
		}
	}
	p.Store(&next)
	return next
}

// stmtStat is a statement summary row's statistics as the engine adds and
// rebases them.
type stmtStat struct {
	statRow
	x stmtCounts
}

func (r *stmtStat) addCounts(x stmtCounts) {
	for i, v := range x {
		r.x[i] += v
	}
}

func (r stmtStat) sub(base stmtStat) stmtStat {
	out := stmtStat{statRow: r.statRow.sub(base.statRow)}
	if out.Count == 0 {
		return out
	}
	for i := range r.x {
		if r.x[i] > base.x[i] {
			out.x[i] = r.x[i] - base.x[i]
		}
	}
	return out
}

func (r stmtStat) settled() stmtStat { r.statRow = r.statRow.settled(); return r }

func (r stmtStat) view() StatementStats {
	return StatementStats{r.statRow.view(), r.x.counts(), r.x.client()}
}

func (x *stmtCounts) counts() StatementCounts {
	return StatementCounts{x[xErrors], x[xWarnings], x[xRowsAffected], x[xRowsSent], x[xRowsExamined]}
}

func (x *stmtCounts) client() ClientTimes {
	return ClientTimes{x[xPoolTime], x[xDriverTime], x[xFetchTime], x[xRetries], x[xCancelled]}
}

// StatementStats are the statistics columns of the
// events_statements_summary_*_by_event_name tables.
type StatementStats struct {
	WaitStats
	StatementCounts
	ClientTimes
}

// StatementCounts are MySQL's per-statement sums that apply to a Go
// service: what the application reports when the statement ends.
type StatementCounts struct {
	SumErrors       uint64 `pfs:"SUM_ERRORS,counter"`
	SumWarnings     uint64 `pfs:"SUM_WARNINGS,counter"`
	SumRowsAffected uint64 `pfs:"SUM_ROWS_AFFECTED,counter"`
	SumRowsSent     uint64 `pfs:"SUM_ROWS_SENT,counter"`
	SumRowsExamined uint64 `pfs:"SUM_ROWS_EXAMINED,counter"`
}

// ClientTimes are otelpfs's own statement columns: where a client spent a
// statement's time, which the database server cannot see (the pool, the
// driver's round trips, the application iterating rows), and the retries
// and cancellations.
type ClientTimes struct {
	SumPoolTime    uint64 `pfs:"SUM_POOL_TIME,timer"`
	SumDriverTime  uint64 `pfs:"SUM_DRIVER_TIME,timer"`
	SumFetchTime   uint64 `pfs:"SUM_FETCH_TIME,timer"`
	CountRetries   uint64 `pfs:"COUNT_RETRIES,counter"`
	CountCancelled uint64 `pfs:"COUNT_CANCELLED,counter"`
}

// threadStmtStatsAt sets dst[i], for each statement class index i in
// m.idx, to the thread's statistics and counters of class i.
func (t *Thread) threadStmtStatsAt(m members, tag uint64, dst []stmtStat) {
	src, xs := *t.stats.Load(), *t.stmtX.Load()
	for _, i := range m.idx {
		var st stmtStat
		if i < len(src) {
			st.statRow = src[i].load(tag)
		}
		if k := m.classes[i].kindIndex; k < len(xs) {
			st.x = xs[k].load()
		}
		dst[i] = st
	}
}

// addStmtStatsAt adds the thread's statistics and counters to dst at each
// statement class index in m.idx.
func (t *Thread) addStmtStatsAt(m members, tag uint64, dst []stmtStat) {
	src, xs := *t.stats.Load(), *t.stmtX.Load()
	for _, i := range m.idx {
		if i < len(src) {
			dst[i].add(src[i].load(tag))
		}
		if k := m.classes[i].kindIndex; k < len(xs) {
			dst[i].addCounts(xs[k].load())
		}
	}
}

// sharedStmtAt sets (or, with add, adds to) dst at each statement class
// index in m.idx shared statistics src by class index and counters xs by
// kind index.
func sharedStmtAt(dst []stmtStat, src []sharedStat, xs []sharedCounts, m members, tag uint64, add bool) {
	for _, i := range m.idx {
		var st stmtStat
		if i < len(src) {
			st.statRow = src[i].load(tag)
		}
		if k := m.classes[i].kindIndex; k < len(xs) {
			st.x = xs[k].load()
		}
		if add {
			dst[i].add(st.statRow)
			dst[i].addCounts(st.x)
		} else {
			dst[i] = st
		}
	}
}

// actorStmtStatsAt is actorStatsAt with the counters.
func (r *actorRow) actorStmtStatsAt(m members, tag uint64, dst []stmtStat) {
	r.mu.Lock()
	sharedStmtAt(dst, *r.waits.Load(), *r.stmts.Load(), m, tag, false)
	for _, a := range r.accounts {
		sharedStmtAt(dst, *a.waits.Load(), *a.stmts.Load(), m, tag, true)
	}
	live := slices.Clone(r.live)
	r.mu.Unlock()
	for _, t := range live {
		t.addStmtStatsAt(m, tag, dst)
	}
}

// globalStatements returns the global statement statistics by class
// index: the ended threads', the live threads' and those counted without a
// thread.
func (s *Schema) globalStatements(m members) []stmtStat {
	tag := s.extTags[truncThreads].Load()
	s.beginRead()
	defer s.endRead()
	out := make([]stmtStat, len(m.classes))
	s.endMu.Lock()
	sharedStmtAt(out, *s.threadsEnded.Load(), *s.stmtEnded.Load(), m, tag, false)
	live := s.liveThreads()
	s.endMu.Unlock()
	for _, t := range live {
		t.addStmtStatsAt(m, tag, out)
	}
	for _, i := range m.idx {
		if c := m.classes[i]; c.stmt != nil {
			out[i].add(c.stmt.stat.load(tag))
			out[i].addCounts(c.stmt.x.load())
		}
	}
	return out
}
