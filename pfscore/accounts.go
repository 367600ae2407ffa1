package pfscore

import (
	"sync/atomic"
)

// actorRow is a row of accounts, users or hosts, with its per-event-name
// statistics: the sums of the threads that ended under it. The tables add
// the live threads on read.
type actorRow struct {
	user, host string
	current    atomic.Int64  // CURRENT_CONNECTIONS
	total      atomic.Uint64 // TOTAL_CONNECTIONS, since the row was made
	totalBase  atomic.Uint64 // TOTAL_CONNECTIONS at the last TRUNCATE
	// hideUntil, when not 0, hides the row from its by_account/by_user/
	// by_host summary while TOTAL_CONNECTIONS is still hideUntil-1: a
	// TRUNCATE of the summary removes the rows of actors without
	// connections, until they connect again.
	hideUntil atomic.Uint64
	// waits is indexed by class; grown under Schema.actorsMu.
	waits atomic.Pointer[[]sharedStat]
}

type accountKey struct{ user, host string }

// actorsConnect finds or creates the rows of a new thread's account, user
// and host, and counts the connection.
func (s *Schema) actorsConnect(user, host string) (acct, usr, hst *actorRow) {
	if user == "" && host == "" {
		return nil, nil, nil
	}
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	get := func(m map[accountKey]*actorRow, k accountKey) *actorRow {
		r := m[k]
		if r == nil {
			r = &actorRow{user: k.user, host: k.host}
			empty := []sharedStat{}
			r.waits.Store(&empty)
			m[k] = r
		}
		r.current.Add(1)
		r.total.Add(1)
		return r
	}
	if user != "" && host != "" {
		acct = get(s.accounts, accountKey{user, host})
	}
	if user != "" {
		usr = get(s.users, accountKey{user: user})
	}
	if host != "" {
		hst = get(s.hosts, accountKey{host: host})
	}
	return acct, usr, hst
}

// rollUpLocked rolls an ending thread's statistics up, as MySQL's
// aggregate_thread does: into its account if it has one, else into its user
// and its host; a thread with neither rolls into the global rows of the
// event names that have no instances (idle). Connections drop by one.
// s.actorsMu is held.
func (s *Schema) rollUpLocked(t *Thread, stats []ownedStat) {
	var targets []*actorRow
	switch {
	case t.acct != nil:
		targets = []*actorRow{t.acct}
	case t.usr != nil || t.hst != nil:
		for _, r := range []*actorRow{t.usr, t.hst} {
			if r != nil {
				targets = append(targets, r)
			}
		}
	}
	for _, r := range []*actorRow{t.acct, t.usr, t.hst} {
		if r != nil {
			r.current.Add(-1)
		}
	}
	for _, r := range targets {
		w := r.growWaits(len(stats))
		for i := range stats {
			w[i].addRow(stats[i].load())
		}
	}
	// Events without an instance (idle) reach the global summary only
	// through threads: keep those of ended threads.
	g := s.endedThreadWaits(len(stats))
	for i := range stats {
		if st := stats[i].load(); st.Count != 0 {
			g[i].addRow(st)
		}
	}
}

// growWaits returns r's statistics, at least n long. s.actorsMu is held.
func (r *actorRow) growWaits(n int) []sharedStat { return growShared(&r.waits, n) }

// endedThreadWaits returns the statistics of ended threads by class, at
// least n long. s.actorsMu is held.
func (s *Schema) endedThreadWaits(n int) []sharedStat { return growShared(&s.threadsEnded, n) }

// growShared returns the statistics p points to, replaced by a copy n long
// if they are shorter. The caller serializes growers (s.actorsMu); readers
// load p and read whichever table they got.
func growShared(p *atomic.Pointer[[]sharedStat], n int) []sharedStat {
	old := *p.Load()
	if len(old) >= n {
		return old
	}
	next := make([]sharedStat, n)
	for i := range old {
		next[i].addRow(old[i].load())
	}
	p.Store(&next)
	return next
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
		if r.current.Load() == 0 {
			r.hideUntil.Store(r.total.Load() + 1)
		}
	}
}
