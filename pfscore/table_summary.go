package pfscore

import (
	"strconv"

	"github.com/otelpfs/otelpfs/internal/store"
)

// Summary tables share one shape: some leading key columns and statistics.
// A table's raw function computes the live values; rows subtract the
// table's TRUNCATE baseline, and truncate records the live values as the new
// baseline. The records themselves are never reset (see table.go).
//
// # Truncation groups
//
// Several tables read the same records: an instance's statistics are its
// events_waits_summary_by_instance row and part of its class's global row
// (and of file_summary_* or socket_summary_*); a thread's are its
// by_thread rows and part of its account's, user's, host's and, for idle,
// the global row. MIN and MAX restart by an epoch per record group (see
// stat.go):
//
//	truncSync     mutex, rwlock and cond instances, and their destroyed totals
//	truncFile     file instances, and their destroyed totals
//	truncSocket   socket instances, and their destroyed totals
//	truncThreads  threads, the actor rows they roll up into, ended threads
//
// A TRUNCATE advances the epochs of the groups its table reads, and
// rebases:
//
//   - for the instance groups, the rows of those groups in every summary:
//     as in MySQL, where the by-event-name tables are computed from the
//     instances, truncating a by_instance table restarts the instance rows of
//     the tables above it, and counts, sums and extremes always describe
//     the same events;
//   - for the thread group, the table itself and those MySQL truncates with
//     it (global: all; by_host and by_user: by_account and by_thread;
//     by_account: by_thread). The others keep their counts, as MySQL's
//     parents do, while their extremes restart with the epoch: such a row's
//     MIN and MAX then cover the events since the other table's TRUNCATE,
//     widened to include AVG (see StatRow.settled).

// Truncation groups; see above.
const (
	truncSync = iota
	truncFile
	truncSocket
	truncThreads
	numTruncGroups
)

const (
	groupsSync      = 1 << truncSync
	groupsFile      = 1 << truncFile
	groupsSocket    = 1 << truncSocket
	groupsThreads   = 1 << truncThreads
	groupsInstances = groupsSync | groupsFile | groupsSocket
	groupsAll       = 1<<numTruncGroups - 1
)

// groupOf returns the truncation group of a class's records.
func groupOf(k Kind) uint8 {
	switch k {
	case KindFile:
		return truncFile
	case KindSocket:
		return truncSocket
	case KindMutex, KindRWLock, KindCond:
		return truncSync
	}
	return truncThreads
}

// entry is one raw summary row: statistics S (StatRow, or ioStat for the
// file and socket summaries), the key columns, and the truncation group of
// the records it reads.
type entry[S any] struct {
	key  string // identifies the row across snapshots, for baselines
	lead Row    // the key columns
	stat S
	grp  uint8
}

type (
	statEntry = entry[StatRow]
	ioEntry   = entry[ioStat]
)

// rebaser is what a summary's statistics must do: subtract a baseline, or
// widen extremes that cover fewer events than the counts.
type rebaser[S any] interface {
	sub(S) S
	settled() S
}

// A summary is a summary table's TRUNCATE side.
type summary struct {
	groups  uint8    // the record groups its rows read
	implied []string // thread-group tables MySQL truncates with it
	hooks   []func(*Schema)
	// rebase records the live values of the rows of groups as their
	// baselines; retag records the groups' current epochs as the table's.
	// s.readMu is held.
	rebase, retag func(s *Schema, groups uint8)
}

// summaries holds every summary table by name; filled by init functions.
var summaries = map[string]*summary{}

// truncateSummary is TRUNCATE of a summary table (see above): it rebases
// rows, advances epochs, then runs the hooks of the table and of the tables
// truncated with it. s.readMu is held, and a read begun.
func (s *Schema) truncateSummary(name string) {
	def := summaries[name]
	rebase := map[string]uint8{}
	if inst := def.groups & groupsInstances; inst != 0 {
		for n, d := range summaries {
			if d.groups&inst != 0 {
				rebase[n] |= inst
			}
		}
	}
	if def.groups&groupsThreads != 0 {
		for _, n := range append([]string{name}, def.implied...) {
			rebase[n] |= groupsThreads
		}
	}
	// Baselines first, then the epochs: an event that ends in between
	// counts in the new totals, its extremes in the old epoch, so MIN and
	// MAX never cover an event the counts do not (see StatRow.sub).
	for n, groups := range rebase {
		summaries[n].rebase(s, groups)
	}
	for g := range numTruncGroups {
		if def.groups&(1<<g) != 0 {
			s.advanceEpoch(g)
		}
	}
	for n, groups := range rebase {
		summaries[n].retag(s, groups)
	}
	for _, h := range def.hooks {
		h(s)
	}
	for _, n := range def.implied {
		for _, h := range summaries[n].hooks {
			h(s)
		}
	}
}

// summaryBase is a table's TRUNCATE state: baselines by row key, and the
// epoch tags its rows restarted at.
type summaryBase[S any] struct {
	rows map[string]S
	tags [numTruncGroups]uint64
}

// defineSummary defines a summary table: columns, its raw rows, how a row's
// statistics render after the key columns, the groups its rows read, the
// thread-group tables its TRUNCATE also truncates, and what else its
// TRUNCATE does.
func defineSummary[S rebaser[S]](name string, columns []Column, groups uint8, implied []string, raw func(*Schema) []entry[S], render func(Row, S) Row, hooks ...func(*Schema)) {
	summaries[name] = &summary{groups: groups, implied: implied, hooks: hooks,
		rebase: func(s *Schema, groups uint8) {
			next := s.summaryBase(name, func() any { return &summaryBase[S]{} }).(*summaryBase[S])
			rows := make(map[string]S, len(next.rows))
			for k, v := range next.rows {
				rows[k] = v
			}
			for _, e := range raw(s) {
				if groups&(1<<e.grp) != 0 {
					rows[e.key] = e.stat
				}
			}
			s.baselines[name] = &summaryBase[S]{rows: rows, tags: next.tags}
		},
		retag: func(s *Schema, groups uint8) {
			b := s.summaryBase(name, func() any { return &summaryBase[S]{} }).(*summaryBase[S])
			next := &summaryBase[S]{rows: b.rows, tags: b.tags}
			for g := range numTruncGroups {
				if groups&(1<<g) != 0 {
					next.tags[g] = s.extTags[g].Load()
				}
			}
			s.baselines[name] = next
		}}
	defineTable(&tableDef{
		name:    name,
		columns: columns,
		rows: func(s *Schema) []Row {
			// Under readMu, read-locked: a TRUNCATE cannot rebase between the
			// raw values and their baselines.
			s.readMu.RLock()
			defer s.readMu.RUnlock()
			entries := raw(s)
			base, _ := s.baselines[name].(*summaryBase[S])
			rows := make([]Row, len(entries))
			for i, e := range entries {
				st := e.stat.settled()
				if b, ok := base.row(e.key); ok {
					st = e.stat.sub(b)
				}
				rows[i] = render(append(Row(nil), e.lead...), st)
			}
			return rows
		},
		truncate: func(s *Schema) { s.truncateSummary(name) },
	})
}

// summaryBase returns the TRUNCATE state of table name, made by mk with the
// initial epochs if there is none yet. s.readMu is held.
func (s *Schema) summaryBase(name string, mk func() any) any {
	if b, ok := s.baselines[name]; ok {
		return b
	}
	b := mk()
	b.(interface{ init([numTruncGroups]uint64) }).init(s.initialTags())
	return b
}

func (b *summaryBase[S]) init(tags [numTruncGroups]uint64) { b.tags = tags }

// row returns the baseline of key, if any.
func (b *summaryBase[S]) row(key string) (S, bool) {
	if b == nil {
		var zero S
		return zero, false
	}
	v, ok := b.rows[key]
	return v, ok
}

// initialTags returns the epoch tags every group starts at.
func (s *Schema) initialTags() [numTruncGroups]uint64 {
	var t [numTruncGroups]uint64
	for g := range t {
		t[g] = 1 << extBits
	}
	return t
}

// summaryDef defines a summary of waits: key columns, then COUNT_STAR and
// the timer columns.
func summaryDef(name string, lead []any, groups uint8, implied []string, raw func(*Schema) []statEntry, hooks ...func(*Schema)) {
	defineSummary(name, cols(append(lead, statCols("")...)...), groups, implied, raw, func(row Row, st StatRow) Row { return st.values(row) }, hooks...)
}

// ioSummaryDef defines a file_summary_* or socket_summary_* table: all
// waits, then READ, WRITE and MISC with bytes for the first two.
func ioSummaryDef(name string, lead []any, groups uint8, raw func(*Schema) []ioEntry) {
	spec := append(lead, statCols("")...)
	spec = append(spec, statCols("READ")...)
	spec = append(spec, "SUM_NUMBER_OF_BYTES_READ", ColUint)
	spec = append(spec, statCols("WRITE")...)
	spec = append(spec, "SUM_NUMBER_OF_BYTES_WRITE", ColUint)
	spec = append(spec, statCols("MISC")...)
	defineSummary(name, cols(spec...), groups, nil, raw, func(row Row, st ioStat) Row {
		row = st.All().values(row)
		row = append(st.Read.values(row), st.ReadBytes)
		row = append(st.Write.values(row), st.WriteBytes)
		return st.Misc.values(row)
	})
}

// settled widens an I/O row's extremes (see StatRow.settled), and shows
// bytes only with the waits that moved them (the load order already keeps
// them so, see ioInstance.load; roll-ups of destroyed instances too).
func (r ioStat) settled() ioStat {
	r.Read, r.Write, r.Misc = r.Read.settled(), r.Write.settled(), r.Misc.settled()
	if r.Read.Count == 0 {
		r.ReadBytes = 0
	}
	if r.Write.Count == 0 {
		r.WriteBytes = 0
	}
	return r
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

// instanceStats returns, by class index for classes, the statistics of the
// live instances plus those of destroyed ones.
//
// It reads under instMu, as Destroy rolls an instance up, so an instance
// destroyed during the read is counted once.
func (s *Schema) instanceStats(classes []*Class) []StatRow {
	var tags [numTruncGroups]uint64
	for g := range tags {
		tags[g] = s.extTags[g].Load()
	}
	tagOf := func(ci uint64) uint64 { return tags[groupOf(classes[ci].kind)] }
	s.instMu.Lock()
	defer s.instMu.Unlock()
	out := make([]StatRow, len(classes))
	for i, c := range classes {
		out[i] = s.destroyed[i].load(tags[groupOf(c.kind)])
	}
	for _, c := range []*store.Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
		for _, r := range c.All() {
			if ci := r.Value.class.Load(); ci < uint64(len(out)) {
				out[ci].add(r.Value.stat.load(tagOf(ci)))
				out[ci].add(r.Value.shared.load(tagOf(ci)))
			}
		}
	}
	for _, c := range []*store.Container[ioInstance]{s.fileInsts, s.socketInsts} {
		for _, r := range c.All() {
			if ci := r.Value.class.Load(); ci < uint64(len(out)) {
				out[ci].add(r.Value.load(tagOf(ci)).All())
			}
		}
	}
	return out
}

// loadStats copies owned statistics by class index into n rows (classes
// past the end of src, registered since it was sized, are zero).
func loadStats(src []ownedStat, n int, tag uint64) []StatRow {
	out := make([]StatRow, n)
	for i := range min(n, len(src)) {
		out[i] = src[i].load(tag)
	}
	return out
}

// loadShared is loadStats for shared statistics.
func loadShared(src []sharedStat, n int, tag uint64) []StatRow {
	out := make([]StatRow, n)
	for i := range min(n, len(src)) {
		out[i] = src[i].load(tag)
	}
	return out
}

// threadStats returns a thread's statistics by class index.
func (t *Thread) threadStats(n int, tag uint64) []StatRow { return loadStats(*t.stats.Load(), n, tag) }

// endedAndLive returns, under endMu, the ended threads' totals by class (n
// long) and the live threads: End moves a thread from one to the other
// under endMu, so a reader that adds the live threads' statistics to the
// totals counts each thread once. The caller has begun a read.
func (s *Schema) endedAndLive(n int, tag uint64) ([]StatRow, []*Thread) {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return loadShared(*s.threadsEnded.Load(), n, tag), s.liveThreads()
}

func init() {
	const (
		global   = "events_waits_summary_global_by_event_name"
		byThread = "events_waits_summary_by_thread_by_event_name"
		byAcct   = "events_waits_summary_by_account_by_event_name"
		byUser   = "events_waits_summary_by_user_by_event_name"
		byHost   = "events_waits_summary_by_host_by_event_name"
	)
	summaryDef(global, []any{"EVENT_NAME", ColString}, groupsAll, []string{byThread, byAcct, byUser, byHost},
		func(s *Schema) []statEntry {
			// One load of the class list sizes and indexes everything: a
			// class registering during the read is left for the next.
			classes := s.Classes()
			n := len(classes)
			inst := s.instanceStats(classes)
			tag := s.extTags[truncThreads].Load()
			s.beginRead()
			defer s.endRead()
			ended, live := s.endedAndLive(n, tag)
			var out []statEntry
			for _, c := range classes {
				if !c.kind.IsWait() {
					continue
				}
				st := inst[c.index]
				if c.kind == KindIdle { // no instances: threads carry it
					st = ended[c.index]
					for _, t := range live {
						if ts := *t.stats.Load(); c.index < len(ts) {
							st.add(ts[c.index].load(tag))
						}
					}
				}
				out = append(out, statEntry{key: c.name, lead: Row{c.name}, stat: st, grp: groupOf(c.kind)})
			}
			return out
		})

	summaryDef(byThread, []any{"THREAD_ID", ColUint, "EVENT_NAME", ColString}, groupsThreads, nil,
		func(s *Schema) []statEntry {
			classes := s.Classes()
			n := len(classes)
			tag := s.extTags[truncThreads].Load()
			s.beginRead()
			defer s.endRead()
			var out []statEntry
			for _, t := range s.liveThreads() {
				id := t.id
				st := t.threadStats(n, tag)
				for _, c := range classes {
					if c.kind.IsWait() {
						out = append(out, statEntry{key: strconv.FormatUint(id, 10) + "/" + c.name, lead: Row{id, c.name}, stat: st[c.index], grp: truncThreads})
					}
				}
			}
			return out
		})

	summaryDef(byAcct, []any{"USER", ColString, "HOST", ColString, "EVENT_NAME", ColString}, groupsThreads, []string{byThread},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.accounts, func(r *actorRow) Row { return Row{r.user, r.host} })
		},
		func(s *Schema) { s.hideIdleActors(s.accounts) })
	summaryDef(byUser, []any{"USER", ColString, "EVENT_NAME", ColString}, groupsThreads, []string{byThread, byAcct},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.users, func(r *actorRow) Row { return Row{r.user} })
		},
		func(s *Schema) { s.hideIdleActors(s.users) })
	summaryDef(byHost, []any{"HOST", ColString, "EVENT_NAME", ColString}, groupsThreads, []string{byThread, byAcct},
		func(s *Schema) []statEntry {
			return s.actorSummary(s.hosts, func(r *actorRow) Row { return Row{r.host} })
		},
		func(s *Schema) { s.hideIdleActors(s.hosts) })

	summaryDef("events_waits_summary_by_instance", []any{"EVENT_NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint}, groupsInstances, nil,
		func(s *Schema) []statEntry {
			classes := s.Classes()
			var tags [numTruncGroups]uint64
			for g := range tags {
				tags[g] = s.extTags[g].Load()
			}
			var out []statEntry
			type snap struct {
				ci, id uint64
				st     StatRow
			}
			add := func(v snap) {
				if v.ci < uint64(len(classes)) {
					c := classes[v.ci]
					out = append(out, statEntry{key: strconv.FormatUint(v.id, 10), lead: Row{c.name, v.id}, stat: v.st, grp: groupOf(c.kind)})
				}
			}
			tag := func(ci uint64) uint64 {
				if ci < uint64(len(classes)) {
					return tags[groupOf(classes[ci].kind)]
				}
				return 0
			}
			for _, c := range []*store.Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
				for _, v := range store.AppendRows(c, nil, func(d *snap, _ uint64, r *syncInstance) {
					d.ci, d.id = r.class.Load(), r.id.Load()
					d.st = r.stat.load(tag(d.ci))
					d.st.add(r.shared.load(tag(d.ci)))
				}) {
					add(v)
				}
			}
			for _, c := range []*store.Container[ioInstance]{s.fileInsts, s.socketInsts} {
				for _, v := range store.AppendRows(c, nil, func(d *snap, _ uint64, r *ioInstance) {
					d.ci, d.id = r.class.Load(), r.id.Load()
					d.st = r.load(tag(d.ci)).All()
				}) {
					add(v)
				}
			}
			return out
		})
}

// actorSummary computes a by_account/by_user/by_host summary: for each row
// not hidden by a TRUNCATE, its statistics by wait class (see actorStats).
func (s *Schema) actorSummary(m map[accountKey]*actorRow, lead func(*actorRow) Row) []statEntry {
	classes := s.Classes()
	n := len(classes)
	tag := s.extTags[truncThreads].Load()
	s.beginRead()
	defer s.endRead()
	var out []statEntry
	for _, r := range s.actorSnapshot(m) {
		if r.hiddenInSummary() {
			continue
		}
		sums := r.actorStats(n, tag)
		for _, c := range classes {
			if c.kind.IsWait() {
				out = append(out, statEntry{key: actorKey(r) + c.name, lead: append(lead(r), c.name), stat: sums[c.index], grp: truncThreads})
			}
		}
	}
	return out
}

// actorKey identifies an actor row in baselines: by the row's own id, so
// that a row TRUNCATE removed and a thread made again starts without the old
// row's baseline, and no two rows share a key.
func actorKey(r *actorRow) string {
	return strconv.FormatUint(r.id, 10) + "/"
}
