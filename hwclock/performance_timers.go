package hwclock

// A Row is one row of performance_timers.
type Row struct {
	Name       Timer  // TIMER_NAME
	Frequency  uint64 // TIMER_FREQUENCY: units per second
	Resolution uint64 // TIMER_RESOLUTION: the quantum, in units, by which the timer's readings move
	Overhead   uint64 // TIMER_OVERHEAD: cost of one call (low quartile of batch averages), in the timer's own units, rounded

	// OverheadPicos is the cost of one call in picoseconds, measured against
	// the cycle counter. It is not a column of the table; it lets a reader
	// compare timers whose own units are too coarse to show their cost
	// (MySQL shows that column in cycles).
	OverheadPicos uint64
}

// PerformanceTimers returns the five rows of performance_timers, highest
// frequency first. As WL#2360 says, it recalibrates every time it is read:
// CYCLE's frequency is measured anew (about 10 ms), and every timer's
// resolution and overhead too (a few ms, and TICK's resolution needs a few
// of its 10 ms ticks). The picosecond factors fixed at start-up do not
// change.
//
// A timer that is not native on this platform shows the figures of the timer
// that serves it (see Timer.Effective): the CYCLE row of a machine without a
// cycle counter is NANOSECOND's.
func PerformanceTimers() []Row {
	rows := make([]Row, NumTimers)
	cycleFreq := uint64(1_000_000_000)
	if cycleNative {
		cycleFreq = measureCycleFrequency(tableRounds, tableWindow)
	}
	refCost := cycleCost()
	for t := range Timer(NumTimers) {
		r := measure(t, refCost)
		switch t {
		case Cycle:
			r.Frequency = cycleFreq
		case Nanosecond:
			r.Frequency = 1_000_000_000
		case Microsecond:
			r.Frequency = 1_000_000
		case Millisecond:
			r.Frequency = 1_000
		case Tick:
			r.Frequency = tickFrequency
		}
		rows[t] = r
	}
	return rows
}
