package pfscore

import (
	"sort"

	"github.com/otelpfs/otelpfs/hwclock"
)

// threads, accounts, users and hosts.

// liveThreads returns the threads alive now, in slot order.
func (s *Schema) liveThreads() []*Thread {
	var ts []*Thread
	for i := range s.threads.All() {
		if t := s.threadObjs[i].Load(); t != nil && !t.ended.Load() {
			ts = append(ts, t)
		}
	}
	return ts
}

// actorSnapshot copies the account, user or host rows under actorsMu.
func (s *Schema) actorSnapshot(m map[accountKey]*actorRow) []*actorRow {
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	return actorSnapshotLocked(m)
}

// actorSnapshotLocked is actorSnapshot with s.actorsMu held.
func actorSnapshotLocked(m map[accountKey]*actorRow) []*actorRow {
	rows := make([]*actorRow, 0, len(m))
	for _, r := range m {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].user != rows[j].user {
			return rows[i].user < rows[j].user
		}
		return rows[i].host < rows[j].host
	})
	return rows
}

func init() {
	defineTable(&tableDef{
		name: "threads",
		columns: cols("THREAD_ID", ColUint, "NAME", ColString, "TYPE", ColString, "PROCESSLIST_ID", ColUint,
			"PROCESSLIST_USER", ColString, "PROCESSLIST_HOST", ColString, "PROCESSLIST_DB", ColString,
			"PROCESSLIST_COMMAND", ColString, "PROCESSLIST_TIME", ColInt, "PROCESSLIST_STATE", ColString,
			"PROCESSLIST_INFO", ColString, "PARENT_THREAD_ID", ColUint, "ROLE", ColString,
			"INSTRUMENTED", ColString, "HISTORY", ColString, "CONNECTION_TYPE", ColString, "THREAD_OS_ID", ColUint),
		rows: func(s *Schema) []Row {
			now := hwclock.Nanosecond.Now()
			var rows []Row
			for _, t := range s.liveThreads() {
				typ := "BACKGROUND"
				if t.user != "" {
					typ = "FOREGROUND"
				}
				rows = append(rows, Row{t.id, t.class.name, typ, nil,
					nullString(t.user), nullString(t.host), nil,
					nil, int64((max(now, t.start) - t.start) / 1e12), nil,
					nil, nil, nil,
					yesNo(t.Instrumented()), yesNo(t.History()), nil, nil})
			}
			return rows
		},
	})
	for _, a := range []struct {
		name string
		cols []Column
		m    func(*Schema) map[accountKey]*actorRow
		key  func(*actorRow) Row
	}{
		{"accounts", cols("USER", ColString, "HOST", ColString, "CURRENT_CONNECTIONS", ColInt, "TOTAL_CONNECTIONS", ColUint),
			func(s *Schema) map[accountKey]*actorRow { return s.accounts }, func(r *actorRow) Row { return Row{r.user, r.host} }},
		{"users", cols("USER", ColString, "CURRENT_CONNECTIONS", ColInt, "TOTAL_CONNECTIONS", ColUint),
			func(s *Schema) map[accountKey]*actorRow { return s.users }, func(r *actorRow) Row { return Row{r.user} }},
		{"hosts", cols("HOST", ColString, "CURRENT_CONNECTIONS", ColInt, "TOTAL_CONNECTIONS", ColUint),
			func(s *Schema) map[accountKey]*actorRow { return s.hosts }, func(r *actorRow) Row { return Row{r.host} }},
	} {
		defineTable(&tableDef{
			name:    a.name,
			columns: a.cols,
			rows: func(s *Schema) []Row {
				var rows []Row
				for _, r := range s.actorSnapshot(a.m(s)) {
					rows = append(rows, append(a.key(r), r.current.Load(), r.total.Load()-r.totalBase.Load()))
				}
				return rows
			},
			truncate: func(s *Schema) { s.truncateActors(a.m(s)) },
		})
	}
}

// truncateActors is TRUNCATE accounts, users or hosts, as MySQL has it: rows
// with no current connection are removed (their statistics moving up into
// their user and host, for accounts), and TOTAL_CONNECTIONS restarts from
// CURRENT_CONNECTIONS for the others.
func (s *Schema) truncateActors(m map[accountKey]*actorRow) {
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	for k, r := range m {
		cur := r.current.Load()
		if cur > 0 {
			r.totalBase.Store(r.total.Load() - uint64(cur))
			continue
		}
		if r.user != "" && r.host != "" { // an account: keep its statistics in by_user and by_host
			for _, up := range []*actorRow{s.users[accountKey{user: r.user}], s.hosts[accountKey{host: r.host}]} {
				if up == nil {
					continue
				}
				stats := *r.waits.Load()
				w := up.growWaits(len(stats))
				for i := range stats {
					w[i].addRow(stats[i].load())
				}
			}
		}
		delete(m, k)
	}
}
