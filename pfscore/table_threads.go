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

// threadsRow is a row of threads. The columns that describe a MySQL
// connection otelpfs has no equivalent for are always NULL.
type threadsRow struct {
	ThreadID        uint64   `pfs:"THREAD_ID,dim"`
	Name            string   `pfs:"NAME,attr"`
	Type            string   `pfs:"TYPE,attr"`
	_               struct{} `pfs:"PROCESSLIST_ID,id,uint"`
	ProcesslistUser string   `pfs:"PROCESSLIST_USER,attr,null"`
	ProcesslistHost string   `pfs:"PROCESSLIST_HOST,attr,null"`
	_               struct{} `pfs:"PROCESSLIST_DB,attr,string"`
	_               struct{} `pfs:"PROCESSLIST_COMMAND,attr,string"`
	ProcesslistTime int64    `pfs:"PROCESSLIST_TIME,gauge"` // seconds since the thread started
	_               struct{} `pfs:"PROCESSLIST_STATE,attr,string"`
	_               struct{} `pfs:"PROCESSLIST_INFO,text,string"`
	_               struct{} `pfs:"PARENT_THREAD_ID,id,uint"`
	_               struct{} `pfs:"ROLE,attr,string"`
	Instrumented    bool     `pfs:"INSTRUMENTED,attr"`
	History         bool     `pfs:"HISTORY,attr"`
	_               struct{} `pfs:"CONNECTION_TYPE,attr,string"`
	_               struct{} `pfs:"THREAD_OS_ID,id,uint"`
}

// actorConnections are the statistics columns of accounts, users and hosts.
type actorConnections struct {
	CurrentConnections int64  `pfs:"CURRENT_CONNECTIONS,gauge"`
	TotalConnections   uint64 `pfs:"TOTAL_CONNECTIONS,counter"`
}

// Rows of accounts, users and hosts.
type (
	accountsRow struct {
		User string `pfs:"USER,dim"`
		Host string `pfs:"HOST,dim"`
		actorConnections
	}
	usersRow struct {
		User string `pfs:"USER,dim"`
		actorConnections
	}
	hostsRow struct {
		Host string `pfs:"HOST,dim"`
		actorConnections
	}
)

// connections returns an actor row's connection counts, less TRUNCATE's
// baseline.
func (r *actorRow) connections() actorConnections {
	return actorConnections{r.current.Load(), r.total.Load() - r.totalBase.Load()}
}

// actorTable defines accounts, users or hosts: a row per actor row of m,
// and TRUNCATE as truncate says.
func actorTable[R any](name string, m func(*Schema) map[accountKey]*actorRow, row func(*actorRow) R, truncate func(*Schema)) {
	defineRows(name, func(s *Schema) []R {
		var rows []R
		for _, r := range s.actorSnapshot(m(s)) {
			rows = append(rows, row(r))
		}
		return rows
	}, truncate)
}

// truncateConnections is TRUNCATE of accounts, users or hosts, as MySQL
// has it: first every family's summaries that depend on the table (by
// account and by thread, and by user or by host for users and hosts, which
// summary names: their TRUNCATE cascades to the others), then the actor
// rows without connections go (accounts with them, for users and hosts)
// and TOTAL_CONNECTIONS restarts from CURRENT_CONNECTIONS for the others.
func (s *Schema) truncateConnections(summary func(familyTables) string, actors ...func(*Schema) map[accountKey]*actorRow) {
	for _, f := range families {
		s.truncateSummary(summary(f))
	}
	for _, m := range actors {
		s.truncateActors(m(s))
	}
}

func init() {
	threads := defineRows("threads", func(s *Schema) []threadsRow {
		now := hwclock.Nanosecond.Now()
		var rows []threadsRow
		for _, t := range s.liveThreads() {
			typ := "BACKGROUND"
			if t.user != "" {
				typ = "FOREGROUND"
			}
			rows = append(rows, threadsRow{ThreadID: t.id, Name: t.class.name, Type: typ,
				ProcesslistUser: t.user, ProcesslistHost: t.host,
				ProcesslistTime: int64((max(now, t.start) - t.start) / 1e12),
				Instrumented:    t.Instrumented(), History: t.History()})
		}
		return rows
	}, nil)
	threads.setup = &setupDef{columns: []string{"INSTRUMENTED", "HISTORY"},
		update: func(s *Schema, rows []Row, set map[string]Value) error {
			instrumented, history, err := twoFlags(set, "INSTRUMENTED", "HISTORY")
			if err != nil {
				return err
			}
			ids := map[uint64]bool{}
			for _, r := range rows {
				if id, ok := r[threads.column("THREAD_ID")].(uint64); ok {
					ids[id] = true
				}
			}
			s.beginRead()
			defer s.endRead()
			for _, t := range s.liveThreads() {
				if ids[t.id] {
					if instrumented != nil {
						t.SetInstrumented(*instrumented)
					}
					if history != nil {
						t.SetHistory(*history)
					}
				}
			}
			return nil
		}}
	accounts := func(s *Schema) map[accountKey]*actorRow { return s.accounts }
	users := func(s *Schema) map[accountKey]*actorRow { return s.users }
	hosts := func(s *Schema) map[accountKey]*actorRow { return s.hosts }
	actorTable("accounts", accounts,
		func(r *actorRow) accountsRow { return accountsRow{r.user, r.host, r.connections()} },
		func(s *Schema) { s.truncateConnections(func(f familyTables) string { return f.byAccount }, accounts) })
	actorTable("users", users,
		func(r *actorRow) usersRow { return usersRow{r.user, r.connections()} },
		func(s *Schema) {
			s.truncateConnections(func(f familyTables) string { return f.byUser }, accounts, users)
		})
	actorTable("hosts", hosts,
		func(r *actorRow) hostsRow { return hostsRow{r.host, r.connections()} },
		func(s *Schema) {
			s.truncateConnections(func(f familyTables) string { return f.byHost }, accounts, hosts)
		})
}
