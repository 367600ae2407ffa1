package hwclock

import (
	"math"
	"slices"
	"time"
)

// Calibration, as WL#2360's "Timer and Time Units" describes it:
//
//   - frequency: CYCLE is measured against the monotonic clock; the other
//     timers have fixed frequencies by construction (NANOSECOND 1e9,
//     MICROSECOND 1e6, MILLISECOND 1e3, TICK USER_HZ).
//   - resolution: the step by which a timer is seen to advance.
//   - overhead: the minimum of repeated back-to-back calls.
//
// The frequency is measured once at start-up to fix the picosecond factors,
// and again, with resolution and overhead, every time performance_timers is
// read.

// Start-up calibration costs about startupRounds*startupWindow of wall time
// (1.5 ms) in package initialization.
const (
	startupRounds = 3
	startupWindow = 500 * time.Microsecond
	tableRounds   = 5
	tableWindow   = 2 * time.Millisecond
)

func init() {
	calibrateStartup()
}

// calibrateStartup fixes the epoch and every timer's factor. The epoch
// readings are taken back to back so the timers agree on picosecond 0 to
// within a few hundred nanoseconds.
func calibrateStartup() {
	freq := uint64(1_000_000_000)
	if cycleNative {
		freq = measureCycleFrequency(startupRounds, startupWindow)
	}
	epochWall = time.Now()
	for t := range Timer(NumTimers) {
		clocks[t].v0 = t.Raw()
	}
	clocks[Cycle].factor = FactorFor(freq)
	clocks[Nanosecond].factor = 1_000
	clocks[Microsecond].factor = 1_000_000
	clocks[Millisecond].factor = 1_000_000_000
	clocks[Tick].factor = FactorFor(tickFrequency)
}

// measureCycleFrequency measures the cycle counter against the monotonic
// clock over rounds windows of the given length and returns the median, so
// one window stretched by preemption or a noisy neighbour does not skew it.
// Each window's ends are read in a bracket (nanotime, cycles, nanotime) and
// the tightest of a few brackets is kept, so the cost of the reads does not
// enter the ratio. It returns 0 if the monotonic clock does not advance.
func measureCycleFrequency(rounds int, window time.Duration) uint64 {
	freqs := make([]float64, 0, rounds)
	for range rounds {
		n0, c0 := bracket()
		deadline := n0 + uint64(window)
		for nanotime() < deadline {
		}
		n1, c1 := bracket()
		if n1 <= n0 || c1 <= c0 {
			continue
		}
		freqs = append(freqs, float64(c1-c0)*1e9/float64(n1-n0))
	}
	if len(freqs) == 0 {
		return 0
	}
	slices.Sort(freqs)
	return uint64(math.Round(freqs[len(freqs)/2]))
}

// bracket returns a monotonic-clock reading and a cycle reading taken at the
// same moment: the cycle read sits between two clock reads, and of several
// tries the one with the shortest bracket wins; its clock value is the
// bracket's midpoint.
func bracket() (ns, cyc uint64) {
	best := uint64(math.MaxUint64)
	for range 8 {
		a := nanotime()
		c := cycles()
		b := nanotime()
		if b-a < best {
			best = b - a
			ns, cyc = a+(b-a)/2, c
		}
	}
	return ns, cyc
}

// resolution returns the step by which timer t is seen to advance: the
// greatest common divisor of the non-zero differences between consecutive
// readings. A clock whose readings step by a thousand shows 1000 even if it
// counts nanoseconds; one that steps by the cost of a call shows 1 (steps of
// 27, 31 and 29 share no divisor). It samples until it has 16 steps, or at
// least 3 after 5 ms, or 150 ms have passed (TICK advances every 10 ms).
func resolution(t Timer) uint64 {
	start := nanotime()
	var g uint64
	steps := 0
	prev := t.Raw()
	for {
		cur := t.Raw()
		if cur != prev {
			g = gcd(g, cur-prev)
			steps++
			prev = cur
		}
		el := nanotime() - start
		if steps >= 16 || (steps >= 3 && el > 5_000_000) || el > 150_000_000 {
			break
		}
	}
	return max(g, 1)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// overheadSamples is how many back-to-back pairs overhead takes the minimum
// of (WL#2360: 20).
const overheadSamples = 64

// overhead returns the minimum, over repeated back-to-back calls, of the
// difference between two readings of t, in t's own units. A timer that
// costs less than one of its units (MICROSECOND, MILLISECOND, TICK) shows 0.
func overhead(t Timer) uint64 {
	best := uint64(math.MaxUint64)
	for range overheadSamples {
		a := t.Raw()
		b := t.Raw()
		best = min(best, b-a)
	}
	return best
}

// overheadPicos returns the cost of one call of t in picoseconds, measured
// as MySQL's my_timer_init does: the minimum over repeated samples of a
// cycle-timer bracket around one call, less the bracket's own cost.
func overheadPicos(t Timer) uint64 {
	base := uint64(math.MaxUint64)
	for range overheadSamples {
		a := cycles()
		b := cycles()
		base = min(base, b-a)
	}
	best := uint64(math.MaxUint64)
	for range overheadSamples {
		a := cycles()
		t.Raw()
		b := cycles()
		best = min(best, b-a)
	}
	if best < base {
		return 0
	}
	return (best - base) * clocks[Cycle].factor
}
