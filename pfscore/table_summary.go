package pfscore

import (
	"github.com/otelpfs/otelpfs/internal/store"
)

// The TRUNCATE side of summary tables (see family.go for their shape), and
// the wait and I/O summaries.
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
//     widened to include AVG (see statRow.settled).

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
	// MAX never cover an event the counts do not (see statRow.sub).
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

// initialTags returns the epoch tags every group starts at.
func (s *Schema) initialTags() [numTruncGroups]uint64 {
	var t [numTruncGroups]uint64
	for g := range t {
		t[g] = 1 << extBits
	}
	return t
}

// settled widens an I/O row's extremes (see statRow.settled), and shows
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

// sub rebases an I/O row (see statRow.sub).
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
func (s *Schema) instanceStats(classes []*Class) []statRow {
	var tags [numTruncGroups]uint64
	for g := range tags {
		tags[g] = s.extTags[g].Load()
	}
	tagOf := func(ci uint64) uint64 { return tags[groupOf(classes[ci].kind)] }
	s.instMu.Lock()
	defer s.instMu.Unlock()
	out := make([]statRow, len(classes))
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

// loadShared copies shared statistics by class index into n rows (classes
// past the end of src, registered since it was sized, are zero).
func loadShared(src []sharedStat, n int, tag uint64) []statRow {
	out := make([]statRow, n)
	for i := range min(n, len(src)) {
		out[i] = src[i].load(tag)
	}
	return out
}

// statsAt sets dst[i], for each class index i in idx, to src[i]'s
// statistics (zero where src is shorter: a class registered after the
// thread grew its table last).
func statsAt(dst []statRow, src []ownedStat, idx []int, tag uint64) {
	for _, i := range idx {
		if i < len(src) {
			dst[i] = src[i].load(tag)
		} else {
			dst[i] = statRow{}
		}
	}
}

// addStatsAt adds src[i]'s statistics to dst[i] for each i in idx.
func addStatsAt(dst []statRow, src []ownedStat, idx []int, tag uint64) {
	for _, i := range idx {
		if i < len(src) {
			dst[i].add(src[i].load(tag))
		}
	}
}

// sharedAt and addSharedAt are statsAt and addStatsAt for shared statistics.
func sharedAt(dst []statRow, src []sharedStat, idx []int, tag uint64) {
	for _, i := range idx {
		if i < len(src) {
			dst[i] = src[i].load(tag)
		} else {
			dst[i] = statRow{}
		}
	}
}

func addSharedAt(dst []statRow, src []sharedStat, idx []int, tag uint64) {
	for _, i := range idx {
		if i < len(src) {
			dst[i].add(src[i].load(tag))
		}
	}
}

// threadStatRows and actorStatRows are the thread and actor statistics of
// the families whose statistics are statRows.
func threadStatRows(t *Thread, m members, tag uint64, dst []statRow) {
	statsAt(dst, *t.stats.Load(), m.idx, tag)
}

func actorStatRows(r *actorRow, m members, tag uint64, dst []statRow) {
	r.actorStatsAt(m.idx, tag, dst)
}

// endedAndLive returns, under endMu, the ended threads' totals by class (n
// long) and the live threads: End moves a thread from one to the other
// under endMu, so a reader that adds the live threads' statistics to the
// totals counts each thread once. The caller has begun a read.
func (s *Schema) endedAndLive(n int, tag uint64) ([]statRow, []*Thread) {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return loadShared(*s.threadsEnded.Load(), n, tag), s.liveThreads()
}

// globalWaits returns the global wait statistics by class: the instances',
// live and destroyed, and for idle, which has no instances, the threads',
// live and ended.
func (s *Schema) globalWaits(m members) []statRow {
	classes := m.classes
	n := len(classes)
	out := s.instanceStats(classes)
	tag := s.extTags[truncThreads].Load()
	s.beginRead()
	defer s.endRead()
	ended, live := s.endedAndLive(n, tag)
	for _, c := range classes {
		if c.kind != KindIdle {
			continue
		}
		st := ended[c.index]
		for _, t := range live {
			if ts := *t.stats.Load(); c.index < len(ts) {
				st.add(ts[c.index].load(tag))
			}
		}
		out[c.index] = st
	}
	return out
}

func init() {
	defineFamily(eventFamily[WaitStats, statRow]{
		prefix: "events_waits_summary",
		member: func(c *Class) bool { return c.kind.IsWait() },
		groups: groupsAll,
		group:  func(c *Class) uint8 { return groupOf(c.kind) },
		global: (*Schema).globalWaits,
		thread: threadStatRows,
		actor:  actorStatRows,
	})

	defineSummary("events_waits_summary_by_instance", groupsInstances, nil,
		func(s *Schema) []sumEntry[ByInstance, statRow] {
			classes := s.Classes()
			var tags [numTruncGroups]uint64
			for g := range tags {
				tags[g] = s.extTags[g].Load()
			}
			type snap struct {
				ci, id uint64
				st     statRow
			}
			tag := func(ci uint64) uint64 {
				if ci < uint64(len(classes)) {
					return tags[groupOf(classes[ci].kind)]
				}
				return 0
			}
			var snaps []snap
			for _, c := range []*store.Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
				snaps = store.AppendRows(c, snaps, func(d *snap, _ uint64, r *syncInstance) {
					d.ci, d.id = r.class.Load(), r.id.Load()
					d.st = r.stat.load(tag(d.ci))
					d.st.add(r.shared.load(tag(d.ci)))
				})
			}
			for _, c := range []*store.Container[ioInstance]{s.fileInsts, s.socketInsts} {
				snaps = store.AppendRows(c, snaps, func(d *snap, _ uint64, r *ioInstance) {
					d.ci, d.id = r.class.Load(), r.id.Load()
					d.st = r.load(tag(d.ci)).All()
				})
			}
			var out []sumEntry[ByInstance, statRow]
			for _, v := range snaps {
				if v.ci < uint64(len(classes)) {
					c := classes[v.ci]
					out = append(out, sumEntry[ByInstance, statRow]{key: rowKey{obj: v.id},
						dims: ByInstance{c.name, v.id}, stat: v.st, grp: groupOf(c.kind)})
				}
			}
			return out
		})
}
