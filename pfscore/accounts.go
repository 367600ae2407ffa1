package pfscore

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/memsum"
)

// accounts, users and hosts: one actorRow per row, in maps bounded by
// WithAccountsSize, WithUsersSize and WithHostsSize.
//
// # Locks, and why a summary never counts a thread twice
//
// A by_account/by_user/by_host summary row is the statistics of the threads
// that ended under the row (rolled up by End) plus those of its live threads
// (read from their storage). End moves a thread from the second to the
// first; a reader must see it in exactly one. So each row has a mutex, mu,
// and:
//
//   - a row's live list and its stored statistics change only under its mu;
//     an account's stored statistics, which its user's and host's rows add,
//     change only under the account's, its user's and its host's mu (End and
//     TRUNCATE accounts take all three, in that order);
//   - a reader copies a row's stored statistics, those of its accounts, and
//     its live list under the row's mu alone, then reads the live threads'
//     storage without any lock (Schema.readers keeps that storage theirs).
//
// A thread that ends after the copy is counted live, with values no greater
// than those it will roll up: the next read is never lower. No lock is held
// while more than one row's statistics are copied, and Schema.actorsMu,
// which NewThread takes to find its rows, is held only to copy the maps'
// bounded lists of rows.
//
// Lock order: Schema.actorsMu, then account, user, host mu. End takes the
// rows' mu without actorsMu.

// actorRow is a row of accounts, users or hosts, with its per-event-name
// statistics.
type actorRow struct {
	user, host string
	id         uint64        // unique per row made: a row TRUNCATE removed and made again is a new row
	current    atomic.Int64  // CURRENT_CONNECTIONS
	total      atomic.Uint64 // TOTAL_CONNECTIONS, since the row was made
	totalBase  atomic.Uint64 // TOTAL_CONNECTIONS at the last TRUNCATE
	// hideUntil, when not 0, hides the row from its by_account/by_user/
	// by_host summary while TOTAL_CONNECTIONS is still hideUntil-1: a
	// TRUNCATE of the summary removes the rows of actors without
	// connections, until they connect again.
	hideUntil atomic.Uint64

	mu sync.Mutex
	// waits, indexed by class, holds the statistics of the threads that
	// ended under the row (an account's; a user's or host's of threads
	// without an account row), and of accounts TRUNCATE removed (users',
	// hosts'). Grown by copy; written under mu (see above); loaded by
	// anyone.
	waits atomic.Pointer[[]sharedStat]
	// stmts is waits' statement counters, by statement class kind index.
	stmts atomic.Pointer[[]sharedCounts]
	// trxStats is waits' transaction statistics, read-write and read-only.
	trxStats [2]sharedStat
	// live is the threads alive under the row, under mu; a Thread knows
	// its place (Thread.live).
	live []*Thread
	// accounts is, for a user or host row, its accounts, under mu.
	accounts []*actorRow
	// mem is the row's memory statistics, by memory class kind index: the
	// carries of its threads' water marks, the roll-ups of ended threads
	// and removed accounts (memory.go).
	mem pages[memsum.Shared]
	// memRemoved says a TRUNCATE removed the row and moved mem where the
	// rows above it sum it: an account's to memUser and memHost (as found
	// then, maybe not its threads' own rows), a host's to the global
	// statistics; a user's was a copy of what its hosts hold, and went
	// nowhere. Under Schema.memMoveMu.
	memRemoved       bool
	memUser, memHost *actorRow
}

type accountKey struct{ user, host string }

// actorRowIDs numbers actor rows, for baselines (see actorKey).
var actorRowIDs atomic.Uint64

func newActorRow(k accountKey) *actorRow {
	r := &actorRow{user: k.user, host: k.host, id: actorRowIDs.Add(1)}
	empty := []sharedStat{}
	r.waits.Store(&empty)
	noCounts := []sharedCounts{}
	r.stmts.Store(&noCounts)
	return r
}

// actorsConnect finds or creates the rows of a new thread's account, user
// and host, counts the connection, and lists the thread as live in them. A
// full table leaves the thread without that row and counts it lost
// (Performance_schema_accounts_lost, _users_lost, _hosts_lost).
func (s *Schema) actorsConnect(t *Thread) {
	user, host := t.user, t.host
	if user == "" && host == "" {
		return
	}
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	get := func(m map[accountKey]*actorRow, k accountKey, size int, lost *atomic.Uint64) (*actorRow, bool) {
		if r := m[k]; r != nil {
			return r, false
		}
		if len(m) >= size {
			lost.Add(1)
			return nil, false
		}
		r := newActorRow(k)
		m[k] = r
		return r, true
	}
	var newAcct, newUsr, newHst bool
	if user != "" && host != "" {
		t.acct, newAcct = get(s.accounts, accountKey{user, host}, s.cfg.accountsSize, &s.accountsLost)
	}
	if user != "" {
		t.usr, newUsr = get(s.users, accountKey{user: user}, s.cfg.usersSize, &s.usersLost)
	}
	if host != "" {
		t.hst, newHst = get(s.hosts, accountKey{host: host}, s.cfg.hostsSize, &s.hostsLost)
	}
	// A new user or host row adds the accounts that exist already (made
	// while its table was full); a new account joins its user and host.
	if newUsr || newHst {
		for _, a := range s.accounts {
			if newUsr && a.user == user {
				t.usr.attach(a)
			}
			if newHst && a.host == host {
				t.hst.attach(a)
			}
		}
	}
	if newAcct {
		for _, up := range []*actorRow{t.usr, t.hst} {
			if up != nil {
				up.attach(t.acct)
			}
		}
	}
	for i, r := range [3]*actorRow{t.acct, t.usr, t.hst} {
		if r == nil {
			continue
		}
		r.mu.Lock()
		t.live[i] = len(r.live)
		r.live = append(r.live, t)
		r.current.Add(1)
		r.total.Add(1)
		r.mu.Unlock()
	}
}

// attach adds account a to user or host row r.
func (r *actorRow) attach(a *actorRow) {
	r.mu.Lock()
	if !slices.Contains(r.accounts, a) {
		r.accounts = append(r.accounts, a)
	}
	r.mu.Unlock()
}

// actorsDisconnect rolls an ending thread's statistics up, as MySQL's
// aggregate_thread does: into its account if it has one, else into its
// user and its host; and takes the thread off its rows' live lists. All of
// it under the rows' mu, so readers see the thread either live or rolled
// up (see above).
func (s *Schema) actorsDisconnect(t *Thread, stats []ownedStat, x []ownedCounts) {
	rows := [3]*actorRow{t.acct, t.usr, t.hst}
	if rows == [3]*actorRow{} {
		return
	}
	for _, r := range rows {
		if r != nil {
			r.mu.Lock()
		}
	}
	e := s.epochOf(truncThreads)
	targets := rows[:1]
	if t.acct == nil {
		targets = rows[1:]
	}
	for _, r := range targets {
		if r != nil {
			r.rollUp(e, stats, x, t.threadCore, &t.trxStats)
		}
	}
	for i, r := range rows {
		if r == nil {
			continue
		}
		r.removeLive(t, i)
		r.current.Add(-1)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i] != nil {
			rows[i].mu.Unlock()
		}
	}
}

// removeLive takes t off r's live list; r.mu is held.
func (r *actorRow) removeLive(t *Thread, which int) {
	i := t.live[which]
	last := len(r.live) - 1
	if i > last || r.live[i] != t {
		panic("pfs: BUG: a thread is not where its live list index says")
	}
	moved := r.live[last]
	r.live[i] = moved
	moved.live[which] = i
	r.live[last] = nil
	r.live = r.live[:last]
}

// rollUp adds an ended thread's statistics to the row's stored ones: by
// class, its statement counters, its transactions. The writers' locks are
// held (see above). The thread has ended, so its statistics no longer
// change: they are loaded where they are added, allocating nothing, and only
// the classes it used (c's usedSets) are visited.
func (r *actorRow) rollUp(e epoch, st []ownedStat, x []ownedCounts, c *threadCore, trx *[2]ownedStat) {
	w := growShared(&r.waits, len(st))
	for _, i := range c.statsUsed.list {
		w[i].addRow(e, st[i].load(e.tag)) // addRow skips a zero count
	}
	addOwnedCounts(&r.stmts, x, c.stmtUsed.list)
	for i := range trx {
		r.trxStats[i].addRow(e, trx[i].load(e.tag))
	}
}

// addWaits adds statistics by class to the row's stored ones. The writers'
// locks are held (see above).
func (r *actorRow) addWaits(e epoch, st []statRow) {
	w := growShared(&r.waits, len(st))
	for i := range st {
		w[i].addRow(e, st[i])
	}
}

// rollUpEndedLocked adds an ended thread's statistics (by class, its
// statement counters, its transactions) to the ended threads' totals,
// which the global summaries add for the event names that have no instances
// (idle, stages, statements, transactions). s.endMu is held.
func (s *Schema) rollUpEndedLocked(stats []ownedStat, x []ownedCounts, c *threadCore, trx *[2]ownedStat) {
	e := s.epochOf(truncThreads)
	g := growShared(&s.threadsEnded, len(stats))
	for _, i := range c.statsUsed.list {
		g[i].addRow(e, stats[i].load(e.tag)) // addRow skips a zero count
	}
	addOwnedCounts(&s.stmtEnded, x, c.stmtUsed.list)
	for i := range trx {
		s.trxEnded[i].addRow(e, trx[i].load(e.tag))
	}
}

// growShared returns the statistics p points to, replaced by a copy n long
// if they are shorter. The caller serializes writers; readers load p and
// read whichever table they got.
func growShared(p *atomic.Pointer[[]sharedStat], n int) []sharedStat {
	old := *p.Load()
	if len(old) >= n {
		return old
	}
	next := make([]sharedStat, n)
	for i := range old {
		next[i].copyFrom(&old[i])
	}
	p.Store(&next)
	return next
}

// copyFrom copies o; the caller is the only writer of both.
func (s *sharedStat) copyFrom(o *sharedStat) {
	s.count.Store(o.count.Load())
	s.sum.Store(o.sum.Load())
	s.min.Store(o.min.Load())
	s.max.Store(o.max.Load())
}

// actorSnapshot copies the rows of an account, user or host map under
// actorsMu, sorted by user and host.
func (s *Schema) actorSnapshot(m map[accountKey]*actorRow) []*actorRow {
	s.actorsMu.Lock()
	rows := make([]*actorRow, 0, len(m))
	for _, r := range m {
		rows = append(rows, r)
	}
	s.actorsMu.Unlock()
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].user != rows[j].user {
			return rows[i].user < rows[j].user
		}
		return rows[i].host < rows[j].host
	})
	return rows
}

// actorStatsAt sets dst[i], for each class index i in idx, to the row's
// statistics as a summary shows them: its stored statistics, its accounts'
// (for a user or host), and its live threads'. The caller has begun a read
// (see Schema.readers).
func (r *actorRow) actorStatsAt(idx []int, tag uint64, dst []statRow) {
	r.mu.Lock()
	sharedAt(dst, *r.waits.Load(), idx, tag)
	for _, a := range r.accounts {
		addSharedAt(dst, *a.waits.Load(), idx, tag)
	}
	live := slices.Clone(r.live)
	r.mu.Unlock()
	for _, t := range live {
		addStatsAt(dst, *t.stats.Load(), idx, tag)
	}
}

// hiddenInSummary reports whether a TRUNCATE of the row's summary removed
// it and it has not connected since.
func (r *actorRow) hiddenInSummary() bool {
	h := r.hideUntil.Load()
	return h != 0 && r.total.Load() == h-1
}

// hideIdleActors is the part of TRUNCATE of a by_account/by_user/by_host
// summary that removes the rows of actors with no connection.
func (s *Schema) hideIdleActors(m map[accountKey]*actorRow) {
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	for _, r := range m {
		r.mu.Lock()
		if r.current.Load() == 0 {
			r.hideUntil.Store(r.total.Load() + 1)
		}
		r.mu.Unlock()
	}
}

// truncateActors is TRUNCATE accounts, users or hosts, as MySQL has it: rows
// with no current connection are removed (their statistics moving up into
// their user and host, for accounts), and TOTAL_CONNECTIONS restarts from
// CURRENT_CONNECTIONS for the others.
func (s *Schema) truncateActors(m map[accountKey]*actorRow) {
	s.memMoveBegin() // a removed account's memory moves (memory.go)
	defer s.memMoveEnd()
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	e := s.epochOf(truncThreads)
	for k, r := range m {
		var up [2]*actorRow
		if r.user != "" && r.host != "" { // an account
			up = [2]*actorRow{s.users[accountKey{user: r.user}], s.hosts[accountKey{host: r.host}]}
		}
		locked := append([]*actorRow{r}, up[0], up[1])
		for _, l := range locked {
			if l != nil {
				l.mu.Lock()
			}
		}
		if cur := r.current.Load(); cur > 0 {
			r.totalBase.Store(r.total.Load() - uint64(cur))
		} else {
			// An account's statistics stay in by_user and by_host: they
			// move into the rows that showed them through r.
			st := loadShared(*r.waits.Load(), len(*r.waits.Load()), e.tag)
			x := loadSharedCounts(*r.stmts.Load())
			s.memRemoveActor(r, up[0], up[1])
			for _, u := range up {
				if u != nil {
					u.addWaits(e, st)
					addCounts(&u.stmts, x)
					for i := range r.trxStats {
						u.trxStats[i].addRow(e, r.trxStats[i].load(e.tag))
					}
					u.accounts = slices.DeleteFunc(u.accounts, func(a *actorRow) bool { return a == r })
				}
			}
			delete(m, k)
		}
		for i := len(locked) - 1; i >= 0; i-- {
			if locked[i] != nil {
				locked[i].mu.Unlock()
			}
		}
	}
}
