package hwclock

import (
	"errors"
	"fmt"
	"strings"
)

// A Timer names one of the five timers of performance_timers. The order is
// WL#2360's: highest frequency first.
type Timer uint8

const (
	Cycle       Timer = iota // CYCLE: the TSC on amd64, the virtual counter on arm64
	Nanosecond               // NANOSECOND: the runtime's monotonic clock
	Microsecond              // MICROSECOND: the monotonic clock in microseconds
	Millisecond              // MILLISECOND: the monotonic clock in milliseconds
	Tick                     // TICK: times(2) clock ticks on Linux

	// NumTimers is the number of timers; Timer values are below it.
	NumTimers = 5
)

var timerNames = [NumTimers]string{"CYCLE", "NANOSECOND", "MICROSECOND", "MILLISECOND", "TICK"}

// String returns the TIMER_NAME: "CYCLE", "NANOSECOND", …
func (t Timer) String() string {
	if t < NumTimers {
		return timerNames[t]
	}
	return fmt.Sprintf("Timer(%d)", uint8(t))
}

// ErrUnknownTimer is returned for a timer name that is not one of the five.
var ErrUnknownTimer = errors.New("hwclock: unknown timer")

// ParseTimer returns the timer named name, case-insensitively, as MySQL's
// ENUM column accepts it.
func ParseTimer(name string) (Timer, error) {
	for t, n := range timerNames {
		if strings.EqualFold(name, n) {
			return Timer(t), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want one of %s)", ErrUnknownTimer, name, strings.Join(timerNames[:], ", "))
}

// Native reports whether t reads its own source on this platform. A timer
// that is not native is served by the next-best one (see Effective).
func (t Timer) Native() bool {
	switch t {
	case Cycle:
		return cycleNative
	case Tick:
		return tickNative
	}
	return t < NumTimers
}

// Effective returns the timer that actually serves t: t itself where it is
// native, else the closest timer that is. CYCLE falls back to NANOSECOND,
// TICK to MILLISECOND.
func (t Timer) Effective() Timer {
	switch {
	case t == Cycle && !cycleNative:
		return Nanosecond
	case t == Tick && !tickNative:
		return Millisecond
	}
	return t
}

// Raw reads timer t in its own units. Values of different timers are not
// comparable; use Now for picoseconds.
func (t Timer) Raw() uint64 {
	switch t {
	case Cycle:
		return cycles()
	case Nanosecond:
		return nanotime()
	case Microsecond:
		return nanotime() / 1_000
	case Millisecond:
		return nanotime() / 1_000_000
	case Tick:
		return ticks()
	}
	return 0
}
