package pfscore

import (
	"reflect"
	"slices"
	"unsafe"
)

// Summary tables and summary families.
//
// A summary table is rows of dimensions D (its key columns: ByEventName,
// ByThread, ...) and statistics S (statRow for waits, ioStat for file and
// socket I/O), whose columns are those of S's view V (WaitStats, IOStats).
// Its raw function computes the live values; rows subtract the table's
// TRUNCATE baseline, and TRUNCATE records the live values as the new
// baseline (see truncateSummary). The records are never reset.
//
// A family is the summaries by event name of one kind of event: the global,
// by_thread, by_account, by_user and by_host tables, declared at once with
// MySQL's TRUNCATE cascade. Adding the summaries of another kind of event is
// one eventFamily value.

// A rowKey identifies a summary row across snapshots, for its baseline: the
// object the row is about (a thread's id, an actor row's id, an instance's
// id; 0 for a class's global row) and the class index. Actor rows are keyed
// by their own id, not by user and host, so a row that TRUNCATE removed and
// a thread made again starts without the old row's baseline.
type rowKey struct {
	obj   uint64
	class int
}

// A sumEntry is one raw summary row: its identity, key columns, statistics,
// and the truncation group of the records it reads. A hidden row (an actor
// row a TRUNCATE removed from the summary until it connects again) is not
// shown, but keeps its baseline.
type sumEntry[D, S any] struct {
	key    rowKey
	dims   D
	stat   S
	grp    uint8
	hidden bool
}

// statistics is what a summary's statistics type provides: a baseline
// subtracted, extremes widened to cover what the counts do (see
// statRow.settled), and the columns the table shows.
type statistics[S, V any] interface {
	sub(S) S
	settled() S
	view() V
}

// defineSummary defines a summary table: its raw rows, the truncation
// groups they read, the thread-group tables its TRUNCATE also truncates,
// and what else its TRUNCATE does. Its columns are D's, then V's.
func defineSummary[D, V any, S statistics[S, V]](name string, groups uint8, implied []string, raw func(*Schema) []sumEntry[D, S], hooks ...func(*Schema)) {
	dims, vals := planOf(reflect.TypeFor[D]()), planOf(reflect.TypeFor[V]())
	summaries[name] = &summary{groups: groups, implied: implied, hooks: hooks,
		rebase: func(s *Schema, groups uint8) {
			// The rows of groups take their live values; the others keep
			// theirs. A row no longer read (an ended thread, a destroyed
			// instance) drops its baseline: its key never comes back.
			old := baseOf[S](s, name)
			entries := raw(s)
			next := &summaryBase[S]{rows: make(map[rowKey]S, len(entries)), tags: old.tags}
			for _, e := range entries {
				if groups&(1<<e.grp) != 0 {
					next.rows[e.key] = e.stat
				} else if b, ok := old.rows[e.key]; ok {
					next.rows[e.key] = b
				}
			}
			s.baselines[name] = next
		},
		retag: func(s *Schema, groups uint8) {
			old := baseOf[S](s, name)
			next := &summaryBase[S]{rows: old.rows, tags: old.tags}
			for g := range numTruncGroups {
				if groups&(1<<g) != 0 {
					next.tags[g] = s.extTags[g].Load()
				}
			}
			s.baselines[name] = next
		}}
	// settle returns the visible raw rows, each with its statistics
	// settled and less its baseline: under readMu, read-locked, so that a
	// TRUNCATE cannot rebase between the raw values and their baselines.
	settle := func(s *Schema) []sumEntry[D, S] {
		s.readMu.RLock()
		defer s.readMu.RUnlock()
		entries := slices.DeleteFunc(raw(s), func(e sumEntry[D, S]) bool { return e.hidden })
		base, _ := s.baselines[name].(*summaryBase[S])
		for i := range entries {
			e := &entries[i]
			if b, ok := base.row(e.key); ok {
				e.stat = e.stat.sub(b)
			} else {
				e.stat = e.stat.settled()
			}
		}
		return entries
	}
	cols := append(append([]Column(nil), dims.cols...), vals.cols...)
	defineTable(&tableDef{
		name:    name,
		columns: cols,
		rows: func(s *Schema) []Row {
			entries := settle(s)
			rows := make([]Row, len(entries))
			cells := make(Row, len(entries)*len(cols)) // every row's cells, in one allocation
			var b boxer
			var v V // one, not one per row: appendRow takes its address
			for i := range entries {
				e := &entries[i]
				v = e.stat.view()
				row := cells[: 0 : len(dims.cols)+len(vals.cols)]
				cells = cells[len(dims.cols)+len(vals.cols):]
				row = dims.appendRow(row, unsafe.Pointer(&e.dims), &b)
				rows[i] = vals.appendRow(row, unsafe.Pointer(&v), &b)
			}
			return rows
		},
		read: func(s *Schema) *Rows {
			// The dimensions stay in the entries, the views go in a slice
			// beside them: nothing is rendered.
			entries := settle(s)
			views := make([]V, len(entries))
			for i := range entries {
				views[i] = entries[i].stat.view()
			}
			var parts [2]rowPart
			if len(entries) > 0 {
				parts[0] = rowPart{unsafe.Pointer(&entries[0].dims), unsafe.Sizeof(entries[0])}
				parts[1] = rowPart{unsafe.Pointer(&views[0]), unsafe.Sizeof(views[0])}
			}
			return newRows(name, cols, len(entries), []*rowPlan{dims, vals}, parts[:])
		},
		truncate: func(s *Schema) { s.truncateSummary(name) },
	})
}

// summaryBase is a table's TRUNCATE state: baselines by row, and the epoch
// tags its rows restarted at.
type summaryBase[S any] struct {
	rows map[rowKey]S
	tags [numTruncGroups]uint64
}

// baseOf returns the TRUNCATE state of table name, or the initial one if it
// was never truncated. s.readMu is held.
func baseOf[S any](s *Schema, name string) *summaryBase[S] {
	if b, ok := s.baselines[name].(*summaryBase[S]); ok {
		return b
	}
	return &summaryBase[S]{tags: s.initialTags()}
}

// row returns the baseline of key, if any.
func (b *summaryBase[S]) row(key rowKey) (S, bool) {
	if b == nil {
		var zero S
		return zero, false
	}
	v, ok := b.rows[key]
	return v, ok
}

// The key columns of summaries.
type (
	// ByEventName is the key of a *_global_by_event_name or
	// *_summary_by_event_name row.
	ByEventName struct {
		EventName string `pfs:"EVENT_NAME,dim"`
	}
	// ByThread is the key of a *_by_thread_by_event_name row.
	ByThread struct {
		ThreadID  uint64 `pfs:"THREAD_ID,dim"`
		EventName string `pfs:"EVENT_NAME,dim"`
	}
	// ByAccount is the key of a *_by_account_by_event_name row.
	ByAccount struct {
		User      string `pfs:"USER,dim"`
		Host      string `pfs:"HOST,dim"`
		EventName string `pfs:"EVENT_NAME,dim"`
	}
	// ByUser is the key of a *_by_user_by_event_name row.
	ByUser struct {
		User      string `pfs:"USER,dim"`
		EventName string `pfs:"EVENT_NAME,dim"`
	}
	// ByHost is the key of a *_by_host_by_event_name row.
	ByHost struct {
		Host      string `pfs:"HOST,dim"`
		EventName string `pfs:"EVENT_NAME,dim"`
	}
	// ByInstance is the key of a *_by_instance row.
	ByInstance struct {
		EventName           string `pfs:"EVENT_NAME,dim"`
		ObjectInstanceBegin uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
	}
)

// An eventFamily is what the summaries by event name of one kind of event
// need to know: which classes they list, and where a class's statistics
// are kept. The thread group's rows (by thread, account, user and host) read
// the threads' own statistics and the actor rows they roll up into; the
// global row is the family's to compute.
type eventFamily[V any, S statistics[S, V]] struct {
	prefix string            // the tables' common prefix: events_waits_summary
	member func(*Class) bool // the classes the tables list

	// groups are the truncation groups the global table reads, and group
	// the one a class's global row is in.
	groups uint8
	group  func(*Class) uint8

	// global returns the global statistics by class index
	// (len(m.classes) long, the members' filled in); thread and actor set
	// the thread's or the actor row's at each member's index of dst and
	// leave the rest of dst alone, so one dst serves a whole read. The
	// extremes are those of epoch tag, the thread group's.
	global func(s *Schema, m members) []S
	thread func(t *Thread, m members, tag uint64, dst []S)
	actor  func(r *actorRow, m members, tag uint64, dst []S)
}

// members are the classes one read of a family's table lists: the class
// list, loaded once (a class registering during the read is left for the
// next), and the indexes of the family's classes in it. The loaders read
// only these: a family's tables would otherwise walk every class of every
// kind for every thread and actor.
type members struct {
	classes []*Class
	idx     []int
}

func (f *eventFamily[V, S]) members(s *Schema) members {
	m := members{classes: s.Classes()}
	for _, c := range m.classes {
		if f.member(c) {
			m.idx = append(m.idx, c.index)
		}
	}
	return m
}

// familyTables are the names of a family's actor summaries, which TRUNCATE
// of accounts, users and hosts truncate too.
type familyTables struct {
	byAccount, byUser, byHost string
}

// families lists every family's tables; filled by defineFamily.
var families []familyTables

// defineFamily defines the five tables of family f. TRUNCATE cascades as in
// MySQL: global truncates all five; by_host and by_user truncate by_account
// and by_thread; by_account truncates by_thread; and truncating an actor
// table removes its rows without live threads. TRUNCATE of the connection
// tables (accounts, users, hosts) truncates the family's tables that depend
// on them (see truncateConnections).
func defineFamily[V any, S statistics[S, V]](f eventFamily[V, S]) {
	var (
		global   = f.prefix + "_global_by_event_name"
		byThread = f.prefix + "_by_thread_by_event_name"
		byAcct   = f.prefix + "_by_account_by_event_name"
		byUser   = f.prefix + "_by_user_by_event_name"
		byHost   = f.prefix + "_by_host_by_event_name"
	)
	families = append(families, familyTables{byAcct, byUser, byHost})
	defineSummary(global, f.groups, []string{byThread, byAcct, byUser, byHost},
		func(s *Schema) []sumEntry[ByEventName, S] {
			m := f.members(s)
			st := f.global(s, m)
			out := make([]sumEntry[ByEventName, S], 0, len(m.idx))
			for _, i := range m.idx {
				c := m.classes[i]
				out = append(out, sumEntry[ByEventName, S]{key: rowKey{class: i},
					dims: ByEventName{c.name}, stat: st[i], grp: f.group(c)})
			}
			return out
		})
	defineSummary(byThread, groupsThreads, nil,
		func(s *Schema) []sumEntry[ByThread, S] {
			m := f.members(s)
			tag := s.extTags[truncThreads].Load()
			s.beginRead()
			defer s.endRead()
			live := s.liveThreads()
			st := make([]S, len(m.classes))
			out := make([]sumEntry[ByThread, S], 0, len(live)*len(m.idx))
			for _, t := range live {
				f.thread(t, m, tag, st)
				for _, i := range m.idx {
					out = append(out, sumEntry[ByThread, S]{key: rowKey{t.id, i},
						dims: ByThread{t.id, m.classes[i].name}, stat: st[i], grp: truncThreads})
				}
			}
			return out
		})
	defineSummary(byAcct, groupsThreads, []string{byThread},
		actorRows(&f, func(s *Schema) map[accountKey]*actorRow { return s.accounts },
			func(r *actorRow, c *Class) ByAccount { return ByAccount{r.user, r.host, c.name} }),
		func(s *Schema) { s.hideIdleActors(s.accounts) })
	defineSummary(byUser, groupsThreads, []string{byThread, byAcct},
		actorRows(&f, func(s *Schema) map[accountKey]*actorRow { return s.users },
			func(r *actorRow, c *Class) ByUser { return ByUser{r.user, c.name} }),
		func(s *Schema) { s.hideIdleActors(s.users) })
	defineSummary(byHost, groupsThreads, []string{byThread, byAcct},
		actorRows(&f, func(s *Schema) map[accountKey]*actorRow { return s.hosts },
			func(r *actorRow, c *Class) ByHost { return ByHost{r.host, c.name} }),
		func(s *Schema) { s.hideIdleActors(s.hosts) })
}

// actorRows returns the raw rows of a family's by_account, by_user or
// by_host table: for each actor row of table m not hidden by a TRUNCATE,
// its statistics by class.
func actorRows[D, V any, S statistics[S, V]](f *eventFamily[V, S], m func(*Schema) map[accountKey]*actorRow, dims func(*actorRow, *Class) D) func(*Schema) []sumEntry[D, S] {
	return func(s *Schema) []sumEntry[D, S] {
		mem := f.members(s)
		tag := s.extTags[truncThreads].Load()
		s.beginRead()
		defer s.endRead()
		actors := s.actorSnapshot(m(s))
		st := make([]S, len(mem.classes))
		out := make([]sumEntry[D, S], 0, len(actors)*len(mem.idx))
		for _, r := range actors {
			hidden := r.hiddenInSummary()
			f.actor(r, mem, tag, st)
			for _, i := range mem.idx {
				out = append(out, sumEntry[D, S]{key: rowKey{r.id, i}, dims: dims(r, mem.classes[i]), stat: st[i], grp: truncThreads, hidden: hidden})
			}
		}
		return out
	}
}

// WaitStats are the statistics columns of a wait summary, in picoseconds:
// the events counted (timed or not) and the times of the timed ones.
type WaitStats struct {
	CountStar    uint64 `pfs:"COUNT_STAR,counter"`
	SumTimerWait uint64 `pfs:"SUM_TIMER_WAIT,timer"`
	MinTimerWait uint64 `pfs:"MIN_TIMER_WAIT,min,ps"`
	AvgTimerWait uint64 `pfs:"AVG_TIMER_WAIT,avg,ps"`
	MaxTimerWait uint64 `pfs:"MAX_TIMER_WAIT,max,ps"`
}

func (r statRow) view() WaitStats { return WaitStats{r.Count, r.Sum, r.Min, r.Avg(), r.Max} }

// IOStats are the statistics columns of file_summary_* and
// socket_summary_*: all waits, then reads, writes (with the bytes they
// moved) and the other operations.
type IOStats struct {
	CountStar             uint64 `pfs:"COUNT_STAR,counter"`
	SumTimerWait          uint64 `pfs:"SUM_TIMER_WAIT,timer"`
	MinTimerWait          uint64 `pfs:"MIN_TIMER_WAIT,min,ps"`
	AvgTimerWait          uint64 `pfs:"AVG_TIMER_WAIT,avg,ps"`
	MaxTimerWait          uint64 `pfs:"MAX_TIMER_WAIT,max,ps"`
	CountRead             uint64 `pfs:"COUNT_READ,counter"`
	SumTimerRead          uint64 `pfs:"SUM_TIMER_READ,timer"`
	MinTimerRead          uint64 `pfs:"MIN_TIMER_READ,min,ps"`
	AvgTimerRead          uint64 `pfs:"AVG_TIMER_READ,avg,ps"`
	MaxTimerRead          uint64 `pfs:"MAX_TIMER_READ,max,ps"`
	SumNumberOfBytesRead  uint64 `pfs:"SUM_NUMBER_OF_BYTES_READ,counter"`
	CountWrite            uint64 `pfs:"COUNT_WRITE,counter"`
	SumTimerWrite         uint64 `pfs:"SUM_TIMER_WRITE,timer"`
	MinTimerWrite         uint64 `pfs:"MIN_TIMER_WRITE,min,ps"`
	AvgTimerWrite         uint64 `pfs:"AVG_TIMER_WRITE,avg,ps"`
	MaxTimerWrite         uint64 `pfs:"MAX_TIMER_WRITE,max,ps"`
	SumNumberOfBytesWrite uint64 `pfs:"SUM_NUMBER_OF_BYTES_WRITE,counter"`
	CountMisc             uint64 `pfs:"COUNT_MISC,counter"`
	SumTimerMisc          uint64 `pfs:"SUM_TIMER_MISC,timer"`
	MinTimerMisc          uint64 `pfs:"MIN_TIMER_MISC,min,ps"`
	AvgTimerMisc          uint64 `pfs:"AVG_TIMER_MISC,avg,ps"`
	MaxTimerMisc          uint64 `pfs:"MAX_TIMER_MISC,max,ps"`
}

func (r ioStat) view() IOStats {
	// The total of settled parts may still have its AVG below its MIN:
	// an untimed wait of one part counts with no time, and its part has no
	// extremes to widen. Settled again, MIN <= AVG <= MAX holds here too.
	a := r.All().settled()
	return IOStats{
		a.Count, a.Sum, a.Min, a.Avg(), a.Max,
		r.Read.Count, r.Read.Sum, r.Read.Min, r.Read.Avg(), r.Read.Max, r.ReadBytes,
		r.Write.Count, r.Write.Sum, r.Write.Min, r.Write.Avg(), r.Write.Max, r.WriteBytes,
		r.Misc.Count, r.Misc.Sum, r.Misc.Min, r.Misc.Avg(), r.Misc.Max,
	}
}
