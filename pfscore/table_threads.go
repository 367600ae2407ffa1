package pfscore

import (
	"github.com/otelpfs/otelpfs/hwclock"
)

// threads, accounts, users and hosts.

// liveThreads returns the threads alive now, in slot order. The caller has
// begun a read (see Schema.readers), so their storage stays theirs until it
// ends the read.
func (s *Schema) liveThreads() []*Thread {
	var ts []*Thread
	for i := range s.threads.All() {
		// threadObjs, not Thread.ended, says who is live: End clears a
		// thread's entry under endMu in the step that rolls it up (see
		// endedAndLive); ended is set earlier.
		if t := s.threadObjs[i].Load(); t != nil {
			ts = append(ts, t)
		}
	}
	return ts
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
