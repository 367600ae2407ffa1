package pfscore

import (
	"sync/atomic"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Statistics of timed events: MySQL's PFS_single_stat. All values are
// picoseconds.
//
// # Extremes and TRUNCATE
//
// TRUNCATE never touches a record (see table.go): counts and sums restart
// by a baseline the reader subtracts. MIN and MAX cannot be rebased, so they
// restart by epoch instead. A MIN or MAX word holds the value in its low
// extBits bits and, above them, the tag of the truncation epoch it was
// written in. Each group of tables that read the same records (see
// the trunc* groups of table_summary.go) has an epoch, which TRUNCATE advances. A writer that finds a
// word of an older epoch replaces it whatever its value; a reader takes a
// word of an older epoch for "no event since the TRUNCATE". So the extremes
// cover exactly the events since the TRUNCATE, less those that ended while it
// ran (they count in the new totals; the reader keeps MIN <= AVG <= MAX
// then, see statRow.sub). A value above extMask (a wait of more than 20
// hours) is stored as extMask. Epochs start at 1 and skip tag 0, so a zeroed
// word is never current. Tags wrap after 255 truncations: a record untouched
// for a multiple of that many shows its old extremes again, which matters
// little, since a rebased row without events since its TRUNCATE shows zeros,
// and a row that was not rebased counts those old events anyway.

const (
	extBits = 56
	extMask = 1<<extBits - 1
)

// statRow is the statistics of a wait summary row as the engine adds and
// rebases them (WaitStats is what the table shows). Untimed events count in
// Count only; the timer columns cover timed
// events, and are 0 when there are none.
type statRow struct {
	Count uint64 // COUNT_STAR
	Sum   uint64 // SUM_TIMER_WAIT
	Min   uint64 // MIN_TIMER_WAIT
	Max   uint64 // MAX_TIMER_WAIT

	ext bool // Min and Max cover at least one event
}

// Avg returns AVG_TIMER_WAIT: Sum over the events counted, as MySQL computes
// it (count includes untimed events).
func (r statRow) Avg() uint64 {
	if r.Count == 0 {
		return 0
	}
	return r.Sum / r.Count
}

// add accumulates o into r (a roll-up on the reader's side).
func (r *statRow) add(o statRow) {
	if o.ext {
		if r.ext {
			r.Min, r.Max = min(r.Min, o.Min), max(r.Max, o.Max)
		} else {
			r.Min, r.Max = o.Min, o.Max
		}
		r.ext = true
	}
	r.Count += o.Count
	r.Sum += o.Sum
}

// sub returns r minus a baseline taken earlier (TRUNCATE): counts and sums
// subtract; MIN and MAX come from the epoch the TRUNCATE started (see
// above), settled.
func (r statRow) sub(base statRow) statRow {
	if r.Count <= base.Count {
		return statRow{}
	}
	return statRow{Count: r.Count - base.Count, Sum: r.Sum - base.Sum, Min: r.Min, Max: r.Max, ext: r.ext}.settled()
}

// settled returns r as a summary row shows it: MIN and MAX widened to
// include AVG, so that MIN <= AVG <= MAX <= SUM holds in every row. They can
// cover fewer events than the counts: events that ended while a TRUNCATE
// ran, or since another table's TRUNCATE restarted the extremes of the same
// records (see table_summary.go); and untimed events count in COUNT_STAR,
// lowering AVG, but not in MIN. A row with timed events and no extremes of
// the current epoch shows AVG for both.
func (r statRow) settled() statRow {
	if r.Sum == 0 && !r.ext {
		return r
	}
	avg := r.Avg()
	if !r.ext {
		r.Min, r.Max, r.ext = avg, avg, true
		return r
	}
	r.Min, r.Max = min(r.Min, avg), max(r.Max, avg)
	return r
}

// ownedStat is a statistic with one writer at a time: a thread's own
// statistics, or an instance's whose updates the instrumented lock itself
// serializes (a mutex's stats are written while it is held).
type ownedStat struct {
	count owned.Uint64
	sum   owned.Uint64
	min   owned.Uint64 // epoch tag | MIN
	max   owned.Uint64 // epoch tag | MAX
}

// An epoch is the epoch tag a writer loaded for a record's group, and where
// it loaded it from. A writer replaces an extreme of another epoch only if
// its own is still current (stale reports whether it is not): a writer that
// loaded its tag before a TRUNCATE and writes after it must not put the old
// epoch back over the new one's extremes.
type epoch struct {
	cur *atomic.Uint64
	tag uint64
}

// epochOf returns the current epoch of truncation group g.
func (s *Schema) epochOf(g uint8) epoch {
	cur := &s.extTags[g]
	return epoch{cur, cur.Load()}
}

// stale reports whether a TRUNCATE advanced the epoch since e was loaded.
func (e epoch) stale() bool { return e.cur.Load() != e.tag }

// aggregate counts one event; timed events add their wait to the extremes
// of epoch e (see above).
func (s *ownedStat) aggregate(e epoch, timed bool, wait uint64) {
	s.count.Add(1)
	if !timed {
		return
	}
	s.sum.Add(wait)
	v, tag := min(wait, extMask), e.tag
	mn, mx := s.min.Load(), s.max.Load()
	if (mn&^extMask != tag || mx&^extMask != tag) && e.stale() {
		return // the extremes of a newer epoch, or to be replaced by it
	}
	if mn&^extMask != tag || v < mn&extMask {
		s.min.Set(tag | v)
	}
	if mx&^extMask != tag || v > mx&extMask {
		s.max.Set(tag | v)
	}
}

// load returns the statistic, with extremes of epoch tag. It loads the
// words in the reverse of the order aggregate stores them, so the count it
// returns covers every event whose sum or extremes it returns (it may cover
// more): never COUNT_STAR 0 with a SUM.
func (s *ownedStat) load(tag uint64) statRow {
	mx, mn := s.max.Load(), s.min.Load()
	sum := s.sum.Load()
	return makeStatRow(s.count.Load(), sum, mn, mx, tag)
}

// makeStatRow builds a statRow from loaded words.
func makeStatRow(count, sum, mn, mx, tag uint64) statRow {
	r := statRow{Count: count, Sum: sum}
	if mn&^extMask == tag && mx&^extMask == tag {
		r.Min, r.Max, r.ext = mn&extMask, mx&extMask, true
	}
	return r
}

// copyFrom copies o exactly; the caller is the only writer of both.
func (s *ownedStat) copyFrom(o *ownedStat) {
	s.count.Set(o.count.Load())
	s.sum.Set(o.sum.Load())
	s.min.Set(o.min.Load())
	s.max.Set(o.max.Load())
}

// sharedStat is a statistic any number of goroutines update at once (a
// read-write lock's readers, a file used by several goroutines): atomic adds,
// and compare-and-swap for MIN and MAX only when they change. The epoch tag
// is part of the word the compare-and-swap replaces, so the first event of an
// epoch and a concurrent one cannot lose each other's extreme.
type sharedStat struct {
	count atomic.Uint64
	sum   atomic.Uint64
	min   atomic.Uint64 // epoch tag | MIN
	max   atomic.Uint64 // epoch tag | MAX
}

func (s *sharedStat) aggregate(e epoch, timed bool, wait uint64) {
	s.count.Add(1)
	if !timed {
		return
	}
	s.sum.Add(wait)
	s.extremes(e, wait, wait)
}

// extremes merges lo and hi into MIN and MAX of epoch e. A word of another
// epoch is replaced only while e is current (see epoch).
func (s *sharedStat) extremes(e epoch, lo, hi uint64) {
	tag := e.tag
	lo, hi = min(lo, extMask), min(hi, extMask)
	for m := s.min.Load(); m&^extMask != tag || lo < m&extMask; m = s.min.Load() {
		if m&^extMask != tag && e.stale() {
			return
		}
		if s.min.CompareAndSwap(m, tag|lo) {
			break
		}
	}
	for m := s.max.Load(); m&^extMask != tag || hi > m&extMask; m = s.max.Load() {
		if m&^extMask != tag && e.stale() {
			return
		}
		if s.max.CompareAndSwap(m, tag|hi) {
			break
		}
	}
}

// addRow adds a whole row (a roll-up) whose extremes are of epoch e.
func (s *sharedStat) addRow(e epoch, r statRow) {
	if r.Count == 0 {
		return
	}
	s.count.Add(r.Count)
	s.sum.Add(r.Sum)
	if r.ext {
		s.extremes(e, r.Min, r.Max)
	}
}

// load is ownedStat.load for shared statistics.
func (s *sharedStat) load(tag uint64) statRow {
	mx, mn := s.max.Load(), s.min.Load()
	sum := s.sum.Load()
	return makeStatRow(s.count.Load(), sum, mn, mx, tag)
}

// reset zeroes the statistic; the owner calls it on a record it is
// (re)initializing.
func (s *ownedStat) reset() {
	s.count.Set(0)
	s.sum.Set(0)
	s.min.Set(0)
	s.max.Set(0)
}

// reset zeroes the statistic (a record being initialized).
func (s *sharedStat) reset() {
	s.count.Store(0)
	s.sum.Store(0)
	s.min.Store(0)
	s.max.Store(0)
}

// ioStat is a file_summary or socket_summary row's statistics: READ, WRITE
// and MISC waits and the bytes read and written.
type ioStat struct {
	Read, Write, Misc     statRow
	ReadBytes, WriteBytes uint64
}

// All returns the COUNT_STAR … columns: READ, WRITE and MISC together.
func (r ioStat) All() statRow {
	a := r.Read
	a.add(r.Write)
	a.add(r.Misc)
	return a
}

func (r *ioStat) add(o ioStat) {
	r.Read.add(o.Read)
	r.Write.add(o.Write)
	r.Misc.add(o.Misc)
	r.ReadBytes += o.ReadBytes
	r.WriteBytes += o.WriteBytes
}

// load returns the instance's I/O statistics. The bytes are loaded before
// the waits, which aggregate counts before it adds the bytes (see
// ownedStat.load).
func (io *ioInstance) load(tag uint64) ioStat {
	rb, wb := io.readBytes.Load(), io.writeBytes.Load()
	return ioStat{Read: io.read.load(tag), Write: io.write.load(tag), Misc: io.misc.load(tag),
		ReadBytes: rb, WriteBytes: wb}
}

// ioSummary accumulates the I/O statistics of destroyed instances.
type ioSummary struct {
	read, write, misc     sharedStat
	readBytes, writeBytes atomic.Uint64
}

func (d *ioSummary) add(e epoch, v *ioInstance) {
	st := v.load(e.tag)
	d.read.addRow(e, st.Read)
	d.write.addRow(e, st.Write)
	d.misc.addRow(e, st.Misc)
	d.readBytes.Add(st.ReadBytes)
	d.writeBytes.Add(st.WriteBytes)
}

func (d *ioSummary) load(tag uint64) ioStat {
	rb, wb := d.readBytes.Load(), d.writeBytes.Load()
	return ioStat{Read: d.read.load(tag), Write: d.write.load(tag), Misc: d.misc.load(tag),
		ReadBytes: rb, WriteBytes: wb}
}
