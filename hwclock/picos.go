package hwclock

import (
	"math/bits"
	"time"
)

// Picoseconds are otelpfs's canonical time unit, as WL#2360's: every TIMER_*
// column holds picoseconds since the process's epoch, whatever timer produced
// it, so values from different timers are comparable and sums never mix
// units.
//
// Conversion is raw*factor: one subtraction and one multiplication, no
// division or floating point on the provider path. The factor is an integer,
// round(1e12 / frequency), fixed at start-up; later recalibration (reading
// performance_timers) updates the reported frequency but never the factor,
// so timestamps stay monotonic and comparable for the life of the process.
// The integer factor costs up to 0.5/factor of relative error (0.13% at
// 2.6 GHz, factor 385), as in MySQL.
//
// # Overflow horizon
//
// A uint64 holds 2^64 ps, about 213.5 days. TIMER_* values are therefore
// picoseconds since the epoch modulo 2^64: after 213 days of uptime they wrap
// to small numbers. Durations are computed with wrapping subtraction (end -
// start), which is exact for any interval shorter than the horizon, so
// TIMER_WAIT and every summary of waits is unaffected. To turn a timestamp
// into wall-clock time use WallTime, which places it in the 213-day period
// nearest to now. The raw side cannot overflow first: CYCLE's counter wraps
// after 2^64 cycles, over two centuries at 2.6 GHz.

// Horizon is the span after which picosecond timestamps wrap: 2^64 ps.
const Horizon = time.Duration(1<<63/1000) * 2 // ~213.5 days, rounded down to whole ns

// clock is one timer's conversion to picoseconds. It is written once, in
// init, and only read afterwards (init synchronizes before every use).
type clock struct {
	v0     uint64 // raw reading at the epoch
	factor uint64 // picoseconds per raw unit
}

var (
	clocks    [NumTimers]clock
	epochWall time.Time // wall-clock time (with monotonic reading) at the epoch
)

// FactorFor returns the picoseconds-per-unit factor of a timer of frequency
// freq (units per second): 1e12/freq rounded to the nearest integer, halves
// up, and at least 1. It returns 0 for a frequency of 0.
func FactorFor(freq uint64) uint64 {
	if freq == 0 {
		return 0
	}
	f := (1_000_000_000_000 + freq/2) / freq
	return max(f, 1)
}

// ToPicos converts a raw reading of timer t to picoseconds since the epoch
// (modulo 2^64, see the overflow horizon).
func (t Timer) ToPicos(raw uint64) uint64 {
	return clocks[t].picos(raw)
}

// picos converts a raw reading: modular subtraction and multiplication, so
// the result is the true value modulo 2^64.
func (c *clock) picos(raw uint64) uint64 { return (raw - c.v0) * c.factor }

// Factor returns t's picoseconds per raw unit.
func (t Timer) Factor() uint64 { return clocks[t].factor }

// Now reads timer t and returns picoseconds since the epoch: Raw and ToPicos
// in one. CYCLE, the wait events' timer, and NANOSECOND, the other events',
// skip Raw's switch: about 20 instructions fewer per reading (cachegrind,
// BenchmarkMutexTimed).
func (t Timer) Now() uint64 {
	switch t {
	case Cycle:
		return NowCycle()
	case Nanosecond: // statements', stages' and transactions': Raw's switch skipped too
		c := &clocks[Nanosecond]
		return (nanotime() - c.v0) * c.factor
	}
	return t.now()
}

func (t Timer) now() uint64 {
	c := &clocks[t]
	return (t.Raw() - c.v0) * c.factor
}

// NowCycle is Cycle.Now without the switch, for the hottest paths.
func NowCycle() uint64 {
	c := &clocks[Cycle]
	return (cycles() - c.v0) * c.factor
}

// Cycles returns the cycle counter's raw reading: Cycle.Raw without the
// switch. A difference of two readings times Cycle.Factor() is the
// picoseconds between them, as the difference of two NowCycle readings
// is; a caller that sums many short intervals (a driver's Next calls)
// converts the sum once instead of each reading.
func Cycles() uint64 { return cycles() }

// Epoch returns the wall-clock time of picosecond 0, the moment the package
// was initialized.
func Epoch() time.Time { return epochWall }

// WallTime converts a picosecond timestamp to wall-clock time, placing it in
// the 2^64 ps period nearest to now so that timestamps keep their meaning
// past the overflow horizon. It works from the NANOSECOND scale; a CYCLE
// timestamp carries its factor's rounding error (see Factor).
func WallTime(ps uint64) time.Time {
	return wallTime(ps, time.Since(epochWall)) // monotonic
}

// wallTime is WallTime with the time elapsed since the epoch given.
func wallTime(ps uint64, elapsed time.Duration) time.Time {
	if elapsed < 0 {
		elapsed = 0
	}
	// now in ps as a 128-bit number hi:lo.
	hi, lo := bits.Mul64(uint64(elapsed), 1000)
	// Choose the period of ps: the one that puts it within half a period of
	// now.
	if d := ps - lo; d < 1<<63 { // ps up to half a period after now
		if ps < lo { // ...across a period boundary
			hi++
		}
	} else if ps > lo { // ps up to half a period before now, across a boundary
		hi--
	}
	switch {
	case int64(hi) < 0: // before the epoch: nothing earlier exists
		return epochWall
	case hi >= 1000: // past 584 years of uptime; Div64 would overflow
		return epochWall.Add(1<<63 - 1)
	}
	ns, _ := bits.Div64(hi, ps, 1000)
	return epochWall.Add(time.Duration(ns))
}
