package pfscore

import (
	"strconv"
)

// Summary tables share one shape: some leading key columns and statistics.
// A table's raw function computes the live values; rows subtract the
// table's TRUNCATE baseline, and truncate records the live values as the new
// baseline, for the table and for the tables MySQL truncates with it. The
// records themselves are never reset (see table.go).

// entry is one raw summary row: statistics S (StatRow, or ioStat for the
// file and socket summaries) and the key columns.
type entry[S any] struct {
	key  string // identifies the row across snapshots, for baselines
	lead Row    // the key columns
	stat S
}

type (
	statEntry = entry[StatRow]
	ioEntry   = entry[ioStat]
)

// rebaser is what a summary's statistics must do: subtract a baseline.
type rebaser[S any] interface{ sub(S) S }

// truncators maps each summary table to what TRUNCATE does to it alone:
// record its live values as its baseline. A table's own TRUNCATE also runs
// those of the tables MySQL truncates with it.
var truncators = map[string]func(*Schema){}

// defineSummary defines a summary table: columns, its raw rows, how a row's
// statistics render after the key columns, and the tables whose baselines
// move with this one's (MySQL's implicit truncations). s.readMu is held by
// truncate functions (see Schema.Truncate).
func defineSummary[S rebaser[S]](name string, columns []Column, raw func(*Schema) []entry[S], render func(Row, S) Row, implied ...string) {
	truncators[name] = func(s *Schema) {
		entries := raw(s)
		base := make(map[string]S, len(entries))
		for _, e := range entries {
			base[e.key] = e.stat
		}
		s.baselines[name] = base
	}
	defineTable(&tableDef{
		name:    name,
		columns: columns,
		rows: func(s *Schema) []Row {
			entries := raw(s)
			s.readMu.Lock()
			base, _ := s.baselines[name].(map[string]S)
			s.readMu.Unlock()
			rows := make([]Row, len(entries))
			for i, e := range entries {
				st := e.stat
				if b, ok := base[e.key]; ok {
					st = st.sub(b)
				}
				rows[i] = render(append(Row(nil), e.lead...), st)
			}
			return rows
		},
		truncate: func(s *Schema) {
			for _, n := range append([]string{name}, implied...) {
				if fn := truncators[n]; fn != nil {
					fn(s)
				}
			}
		},
	})
}

// summaryDef defines a summary of waits: key columns, then COUNT_STAR and
// the timer columns.
func summaryDef(name string, lead []any, raw func(*Schema) []statEntry, implied ...string) {
	defineSummary(name, cols(append(lead, statCols("")...)...), raw, func(row Row, st StatRow) Row { return st.values(row) }, implied...)
}

// ioSummaryDef defines a file_summary_* or socket_summary_* table: all
// waits, then READ, WRITE and MISC with bytes for the first two.
func ioSummaryDef(name string, lead []any, raw func(*Schema) []ioEntry, implied ...string) {
	spec := append(lead, statCols("")...)
	spec = append(spec, statCols("READ")...)
	spec = append(spec, "SUM_NUMBER_OF_BYTES_READ", ColUint)
	spec = append(spec, statCols("WRITE")...)
	spec = append(spec, "SUM_NUMBER_OF_BYTES_WRITE", ColUint)
	spec = append(spec, statCols("MISC")...)
	defineSummary(name, cols(spec...), raw, func(row Row, st ioStat) Row {
		row = st.All().values(row)
		row = append(st.Read.values(row), st.ReadBytes)
		row = append(st.Write.values(row), st.WriteBytes)
		return st.Misc.values(row)
	}, implied...)
}

// sub rebases an I/O row (see StatRow.sub).
func (r ioStat) sub(b ioStat) ioStat {
	out := ioStat{Read: r.Read.sub(b.Read), Write: r.Write.sub(b.Write), Misc: r.Misc.sub(b.Misc)}
	if out.Read.Count != 0 {
		out.ReadBytes = r.ReadBytes - b.ReadBytes
	}
	if out.Write.Count != 0 {
		out.WriteBytes = r.WriteBytes - b.WriteBytes
	}
	return out
}

// waitClasses returns the classes whose events are waits.
func (s *Schema) waitClasses() []*Class {
	var out []*Class
	for _, c := range s.Classes() {
		if c.kind.IsWait() {
			out = append(out, c)
		}
	}
	return out
}

// instanceStats returns, by class index, the statistics of the live
// instances plus those of destroyed ones.
//
// It reads under instMu, as Destroy rolls an instance up, so an instance
// destroyed during the read is counted once.
func (s *Schema) instanceStats() []StatRow {
	s.instMu.Lock()
	defer s.instMu.Unlock()
	classes := s.Classes()
	out := make([]StatRow, len(classes))
	for i := range out {
		out[i] = s.destroyed[i].load()
	}
	for _, c := range []*Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
		for _, r := range c.All() {
			if ci := int(r.value.class.Load()); ci < len(out) {
				out[ci].add(r.value.stat.load())
				out[ci].add(r.value.shared.load())
			}
		}
	}
	for _, c := range []*Container[ioInstance]{s.fileInsts, s.socketInsts} {
		for _, r := range c.All() {
			if ci := int(r.value.class.Load()); ci < len(out) {
				out[ci].add(r.value.load().All())
			}
		}
	}
	return out
}

// loadStats copies statistics by class index into n rows (classes past the
// end of src, registered since it was sized, are zero).
func loadStats[S any, P interface {
	*S
	load() StatRow
}](src []S, n int) []StatRow {
	out := make([]StatRow, n)
	for i := range min(n, len(src)) {
		out[i] = P(&src[i]).load()
	}
	return out
}

// threadStats returns a thread's statistics by class index.
func (t *Thread) threadStats(n int) []StatRow { return loadStats(*t.stats.Load(), n) }

// actorStats returns an account, user or host row's stored statistics.
func (r *actorRow) actorStats(n int) []StatRow { return loadStats(*r.waits.Load(), n) }

func init() {
	summaryDef("events_waits_summary_global_by_event_name", []any{"EVENT_NAME", ColString},
		func(s *Schema) []statEntry {
			inst := s.instanceStats()
			n := len(inst)
			// Ended and live threads under actorsMu, as End moves a thread
			// from one to the other (see actorSummary).
			s.actorsMu.Lock()
			ended := *s.threadsEnded.Load()
			var live [][]StatRow
			for _, t := range s.liveThreads() {
				live = append(live, t.threadStats(n))
			}
			s.actorsMu.Unlock()
			var out []statEntry
			for _, c := range s.waitClasses() {
				st := inst[c.index]
				if c.kind == KindIdle { // no instances: threads carry it
					st = StatRow{}
					if c.index < len(ended) {
						st = ended[c.index].load()
					}
					for _, l := range live {
						st.add(l[c.index])
					}
				}
				out = append(out, statEntry{key: c.name, lead: Row{c.name}, stat: st})
			}
			return out
		},
		"events_waits_summary_by_instance", "events_waits_summary_by_thread_by_event_name",
		"events_waits_summary_by_account_by_event_name", "events_waits_summary_by_user_by_event_name",
		"events_waits_summary_by_host_by_event_name")

	summaryDef("events_waits_summary_by_thread_by_event_name", []any{"THREAD_ID", ColUint, "EVENT_NAME", ColString},
		func(s *Schema) []statEntry {
			classes := s.waitClasses()
			n := len(s.Classes())
			var out []statEntry
			for _, t := range s.liveThreads() {
				id := t.id
				st := t.threadStats(n)
				for _, c := range classes {
					out = append(out, statEntry{key: strconv.FormatUint(id, 10) + "/" + c.name, lead: Row{id, c.name}, stat: st[c.index]})
				}
			}
			return out
		})

	summaryDef("events_waits_summary_by_account_by_event_name", []any{"USER", ColString, "HOST", ColString, "EVENT_NAME", ColString},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.accounts, func(t *Thread) *actorRow { return t.acct }, nil,
				func(r *actorRow) Row { return Row{r.user, r.host} })
		})
	summaryDef("events_waits_summary_by_user_by_event_name", []any{"USER", ColString, "EVENT_NAME", ColString},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.users, func(t *Thread) *actorRow { return t.usr },
				func(a *actorRow) accountKey { return accountKey{user: a.user} },
				func(r *actorRow) Row { return Row{r.user} })
		})
	summaryDef("events_waits_summary_by_host_by_event_name", []any{"HOST", ColString, "EVENT_NAME", ColString},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.hosts, func(t *Thread) *actorRow { return t.hst },
				func(a *actorRow) accountKey { return accountKey{host: a.host} },
				func(r *actorRow) Row { return Row{r.host} })
		})

	// MySQL: truncating an actor summary also removes the rows of actors
	// with no connection.
	addTruncateHook("events_waits_summary_by_account_by_event_name", func(s *Schema) { s.hideIdleActors(s.accounts) })
	addTruncateHook("events_waits_summary_by_user_by_event_name", func(s *Schema) { s.hideIdleActors(s.users) })
	addTruncateHook("events_waits_summary_by_host_by_event_name", func(s *Schema) { s.hideIdleActors(s.hosts) })

	summaryDef("events_waits_summary_by_instance", []any{"EVENT_NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint},
		func(s *Schema) []statEntry {
			classes := s.Classes()
			var out []statEntry
			add := func(ci uint64, id uint64, st StatRow) {
				if ci < uint64(len(classes)) {
					out = append(out, statEntry{key: strconv.FormatUint(id, 10), lead: Row{classes[ci].name, id}, stat: st})
				}
			}
			for _, c := range []*Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
				type snap struct {
					ci, id uint64
					st     StatRow
				}
				for _, v := range AppendRows(c, nil, func(d *snap, _ uint64, r *syncInstance) {
					d.ci, d.id = r.class.Load(), r.id.Load()
					d.st = r.stat.load()
					d.st.add(r.shared.load())
				}) {
					add(v.ci, v.id, v.st)
				}
			}
			for _, c := range []*Container[ioInstance]{s.fileInsts, s.socketInsts} {
				type snap struct {
					ci, id uint64
					st     StatRow
				}
				for _, v := range AppendRows(c, nil, func(d *snap, _ uint64, r *ioInstance) {
					d.ci, d.id, d.st = r.class.Load(), r.id.Load(), r.load().All()
				}) {
					add(v.ci, v.id, v.st)
				}
			}
			return out
		})
}

// actorSummary computes a by_account/by_user/by_host summary: each row's
// stored statistics (threads that ended under it), plus its live threads,
// plus, for users and hosts, the stored statistics of their accounts.
//
// It reads under actorsMu, as Thread.End rolls a thread up, so a thread
// ending during the read is counted once, live or rolled up: the sums never
// go down between two reads.
func (s *Schema) actorSummary(m map[accountKey]*actorRow, of func(*Thread) *actorRow,
	parent func(account *actorRow) accountKey, lead func(*actorRow) Row) []statEntry {
	s.actorsMu.Lock()
	defer s.actorsMu.Unlock()
	n := len(s.Classes())
	rows := actorSnapshotLocked(m)
	sums := map[*actorRow][]StatRow{}
	for _, r := range rows {
		sums[r] = r.actorStats(n)
	}
	addTo := func(r *actorRow, st []StatRow) {
		if sum, ok := sums[r]; ok {
			for i := range st {
				sum[i].add(st[i])
			}
		}
	}
	if parent != nil {
		byKey := map[accountKey]*actorRow{}
		for _, r := range rows {
			byKey[accountKey{r.user, r.host}] = r
		}
		for _, a := range actorSnapshotLocked(s.accounts) {
			if r := byKey[parent(a)]; r != nil {
				addTo(r, a.actorStats(n))
			}
		}
	}
	for _, t := range s.liveThreads() {
		if r := of(t); r != nil {
			addTo(r, t.threadStats(n))
		}
	}
	classes := s.waitClasses()
	var out []statEntry
	for _, r := range rows {
		if r.hiddenInSummary() {
			continue
		}
		for _, c := range classes {
			out = append(out, statEntry{key: r.user + "@" + r.host + "/" + c.name, lead: append(lead(r), c.name), stat: sums[r][c.index]})
		}
	}
	return out
}

// addTruncateHook makes TRUNCATE of table (itself or implied) also run hook.
func addTruncateHook(table string, hook func(*Schema)) {
	prev := truncators[table]
	truncators[table] = func(s *Schema) {
		prev(s)
		hook(s)
	}
}
