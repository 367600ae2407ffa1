package pfscore

import (
	"sync/atomic"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Statistics of timed events: MySQL's PFS_single_stat. All values are
// picoseconds. The minimum is stored inverted (^min) so that the zero value
// means "no event yet" and a wait of 0 ps (a coarse timer) still counts.

// StatRow is the COUNT_STAR, SUM/MIN/AVG/MAX_TIMER_WAIT columns of a summary
// row. Untimed events count in Count only; the timer columns cover timed
// events, and are 0 when there are none.
type StatRow struct {
	Count uint64 // COUNT_STAR
	Sum   uint64 // SUM_TIMER_WAIT
	Min   uint64 // MIN_TIMER_WAIT
	Max   uint64 // MAX_TIMER_WAIT
}

// Avg returns AVG_TIMER_WAIT: Sum over the events counted, as MySQL computes
// it (count includes untimed events).
func (r StatRow) Avg() uint64 {
	if r.Count == 0 {
		return 0
	}
	return r.Sum / r.Count
}

// add accumulates o into r (a roll-up on the reader's side).
func (r *StatRow) add(o StatRow) {
	if o.Count == 0 {
		return
	}
	switch {
	case !r.timed():
		r.Min = o.Min
	case o.timed():
		r.Min = min(r.Min, o.Min)
	}
	r.Count += o.Count
	r.Sum += o.Sum
	r.Max = max(r.Max, o.Max)
}

// timed reports whether the row covers any timed event.
func (r StatRow) timed() bool { return r.Sum != 0 || r.Max != 0 }

// sub returns r minus a baseline taken earlier (TRUNCATE): counts and sums
// subtract; MIN and MAX cannot be rebased, so they are kept while events
// happened since the baseline and zero otherwise.
func (r StatRow) sub(base StatRow) StatRow {
	if r.Count <= base.Count {
		return StatRow{}
	}
	return StatRow{Count: r.Count - base.Count, Sum: r.Sum - base.Sum, Min: r.Min, Max: r.Max}
}

// ownedStat is a statistic with one writer at a time: a thread's own
// statistics, or an instance's whose updates the instrumented lock itself
// serializes (a mutex's stats are written while it is held).
type ownedStat struct {
	count  owned.Uint64
	sum    owned.Uint64
	minInv owned.Uint64
	max    owned.Uint64
}

// aggregate counts one event; timed events add their wait.
func (s *ownedStat) aggregate(timed bool, wait uint64) {
	s.count.Add(1)
	if !timed {
		return
	}
	s.sum.Add(wait)
	if ^wait > s.minInv.Load() {
		s.minInv.Set(^wait)
	}
	if wait > s.max.Load() {
		s.max.Set(wait)
	}
}

func (s *ownedStat) load() StatRow {
	r := StatRow{Count: s.count.Load(), Sum: s.sum.Load(), Max: s.max.Load()}
	if inv := s.minInv.Load(); inv != 0 {
		r.Min = ^inv
	}
	return r
}

// sharedStat is a statistic any number of goroutines update at once (a
// read-write lock's readers, a file used by several goroutines): atomic adds,
// and compare-and-swap for MIN and MAX only when they change.
type sharedStat struct {
	count  atomic.Uint64
	sum    atomic.Uint64
	minInv atomic.Uint64
	max    atomic.Uint64
}

func (s *sharedStat) aggregate(timed bool, wait uint64) {
	s.count.Add(1)
	if !timed {
		return
	}
	s.sum.Add(wait)
	for inv := s.minInv.Load(); ^wait > inv; inv = s.minInv.Load() {
		if s.minInv.CompareAndSwap(inv, ^wait) {
			break
		}
	}
	for m := s.max.Load(); wait > m; m = s.max.Load() {
		if s.max.CompareAndSwap(m, wait) {
			break
		}
	}
}

// addRow adds a whole row (a roll-up).
func (s *sharedStat) addRow(r StatRow) {
	if r.Count == 0 {
		return
	}
	s.count.Add(r.Count)
	s.sum.Add(r.Sum)
	if r.Min != 0 {
		for inv := s.minInv.Load(); ^r.Min > inv; inv = s.minInv.Load() {
			if s.minInv.CompareAndSwap(inv, ^r.Min) {
				break
			}
		}
	}
	for m := s.max.Load(); r.Max > m; m = s.max.Load() {
		if s.max.CompareAndSwap(m, r.Max) {
			break
		}
	}
}

func (s *sharedStat) load() StatRow {
	r := StatRow{Count: s.count.Load(), Sum: s.sum.Load(), Max: s.max.Load()}
	if inv := s.minInv.Load(); inv != 0 {
		r.Min = ^inv
	}
	return r
}

// reset zeroes the statistic; the owner calls it on a record it is
// (re)initializing.
func (s *ownedStat) reset() {
	s.count.Set(0)
	s.sum.Set(0)
	s.minInv.Set(0)
	s.max.Set(0)
}

// reset zeroes the statistic (a record being initialized).
func (s *sharedStat) reset() {
	s.count.Store(0)
	s.sum.Store(0)
	s.minInv.Store(0)
	s.max.Store(0)
}

// ioStat is a file_summary or socket_summary row's statistics: READ, WRITE
// and MISC waits and the bytes read and written.
type ioStat struct {
	Read, Write, Misc     StatRow
	ReadBytes, WriteBytes uint64
}

// All returns the COUNT_STAR … columns: READ, WRITE and MISC together.
func (r ioStat) All() StatRow {
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

func (io *ioInstance) load() ioStat {
	return ioStat{Read: io.read.load(), Write: io.write.load(), Misc: io.misc.load(),
		ReadBytes: io.readBytes.Load(), WriteBytes: io.writeBytes.Load()}
}

// ioSummary accumulates the I/O statistics of destroyed instances.
type ioSummary struct {
	read, write, misc     sharedStat
	readBytes, writeBytes atomic.Uint64
}

func (d *ioSummary) add(v *ioInstance) {
	st := v.load()
	d.read.addRow(st.Read)
	d.write.addRow(st.Write)
	d.misc.addRow(st.Misc)
	d.readBytes.Add(st.ReadBytes)
	d.writeBytes.Add(st.WriteBytes)
}

func (d *ioSummary) load() ioStat {
	return ioStat{Read: d.read.load(), Write: d.write.load(), Misc: d.misc.load(),
		ReadBytes: d.readBytes.Load(), WriteBytes: d.writeBytes.Load()}
}
