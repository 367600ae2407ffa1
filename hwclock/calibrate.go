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
//   - overhead: the cost of one call (WL#2360: the minimum of repeated
//     back-to-back calls; here a robust version of it, see "Overhead and
//     resolution" below).
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

// # Overhead and resolution
//
// The first version took both figures from extremes of back-to-back reads:
// overhead was the smallest difference between two successive reads (of 64
// pairs), resolution the GCD of 16 successive steps. An extreme is decided by
// its single most unusual sample, and a cycle counter read in a tight loop
// can produce unusual samples: RDTSC is not serialized, so a read may be
// performed before the previous one has finished, and a counter that is
// updated in coarse increments yet returns a distinct value on every read
// (Intel documents RDTSC as returning a unique value each time it executes)
// may answer a read that lands in the same increment as the previous one
// with that value plus one. One such pair among 64 is enough to make the
// overhead 1, and whether a run has one depends on how its reads happen to
// fall. The GCD is as fragile: one odd step makes it 1, and 16 steps that all
// happen to be multiples of the loop's period report that period.
//
// Overhead is now the cost of one call averaged over a batch: read the
// reference counter, call the timer n times, read the reference again, and
// divide the reference's advance by n. A read that completes early, or a
// bumped value, is worth at most a unit or two of the batch's span, a
// thousand units or more (n grows from 64 until a batch spans costMinSpan
// units, so a coarse reference, arm64's 24 MHz counter, is still read
// precisely). Of costBatches batches the lower quartile is kept: a batch
// stretched by an interrupt or a preemption lands above it, and it is the
// cheapest typical call, the robust counterpart of WL#2360's minimum. The
// reference is CYCLE (NANOSECOND where CYCLE is not native), the finest
// counter; a batch timing another timer takes the reference's own call off
// the span. The cost is then expressed in picoseconds (OverheadPicos) and in
// the timer's own units, rounded to the nearest (Overhead): a call costs 0
// MILLISECONDs.
//
// Resolution is the quantum the timer's readings move by, the GCD of the
// steps between successive distinct readings, taken so that a step measures
// the counter and not the loop reading it. Each read comes after a pause of a
// pseudo-random length (pauseMin to pauseMin+pauseSpread-1 rounds of a
// xorshift generator, a few hundred nanoseconds): because the pause is long,
// no read follows another back to back, so a counter's bump to keep values
// distinct never shows as a step of 1; because its length varies, the steps
// differ, and the GCD of resolutionSteps different steps is the counter's
// quantum rather than a period the loop happens to have. (A counter whose
// increments outlast the pause and that bumps its values would still show 1:
// no such counter is known.) A coarse timer
// (MICROSECOND, MILLISECOND, TICK) is read until it changes after the pause,
// so its steps are single units (or a few after a preemption) and its
// resolution is 1.
const (
	costBatches  = 16
	costMinCalls = 64
	costMaxCalls = 1 << 16
	costMinSpan  = 1024 // units of the reference counter

	resolutionSteps = 32
	pauseMin        = 128
	pauseSpread     = 256
	pauseSeed       = 0x9e3779b97f4a7c15
)

// measure returns timer t's row as calibration sees it, less its frequency.
// refCost is the cost of one CYCLE call in CYCLE's units (see callCost); for
// t == Cycle it is the overhead itself.
func measure(t Timer, refCost float64) Row {
	cost := refCost
	if t != Cycle {
		cost = callCost(timerBatch(t), false, refCost)
	}
	r := Row{Name: t, Resolution: resolution(t.Raw, pause)}
	ps := cost * float64(clocks[Cycle].factor)
	r.OverheadPicos = uint64(math.Round(ps))
	if f := clocks[t].factor; f > 0 {
		r.Overhead = uint64(math.Round(ps / float64(f)))
	}
	return r
}

// cycleCost returns the cost of one CYCLE call in CYCLE's units.
func cycleCost() float64 { return callCost(timerBatch(Cycle), true, 0) }

// timerBatch returns a batch for callCost: CYCLE's advance across n calls of
// t. The calls are direct, as the instrumentation makes them.
func timerBatch(t Timer) func(n int) uint64 {
	return func(n int) uint64 {
		a := cycles()
		for range n {
			t.Raw()
		}
		return cycles() - a
	}
}

// callCost returns the cost of one call of a timer in units of a reference
// counter, given batch, which returns the reference's advance across n calls
// of the timer bracketed by two reads of the reference: the lower quartile,
// over costBatches batches, of that advance divided by n. With self, the
// timer is the reference and the two bracketing reads count among the calls;
// otherwise refCost, the cost of one reference read, is taken off each
// batch's advance.
func callCost(batch func(n int) uint64, self bool, refCost float64) float64 {
	n := costMinCalls
	for n < costMaxCalls && batch(n) < costMinSpan {
		n *= 2
	}
	costs := make([]float64, costBatches)
	for i := range costs {
		span := float64(batch(n))
		if self {
			costs[i] = span / float64(n+1)
		} else {
			costs[i] = max(span-refCost, 0) / float64(n)
		}
	}
	slices.Sort(costs)
	return costs[len(costs)/4]
}

// resolution returns the quantum by which read's values advance: the GCD of
// the steps between successive distinct readings, each taken after a pause
// (see the method above). It stops after resolutionSteps steps, or at least 3
// after 5 ms, or after 150 ms (TICK advances every 10 ms).
func resolution(read func() uint64, pause func(uint64) uint64) uint64 {
	start := nanotime()
	// The first read follows a pause too: whatever ran before (a batch of
	// callCost) may have read the counter an instant earlier.
	x := pause(pauseSeed)
	var g uint64
	steps := 0
	prev := read()
	for {
		x = pause(x)
		cur := read()
		for cur == prev && nanotime()-start < 150_000_000 {
			cur = read()
		}
		if cur != prev {
			g = gcd(g, cur-prev)
			steps++
			prev = cur
		}
		el := nanotime() - start
		if steps >= resolutionSteps || (steps >= 3 && el > 5_000_000) || el > 150_000_000 {
			break
		}
	}
	return max(g, 1)
}

// pause spins for pauseMin to pauseMin+pauseSpread-1 rounds of a xorshift
// generator, the count drawn from its state x, and returns the new state.
// Each round is a chain of dependent operations, so the pause lasts at least
// a few hundred cycles.
func pause(x uint64) uint64 {
	for range pauseMin + x%pauseSpread {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
