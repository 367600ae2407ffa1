// Package hwclock provides otelpfs's timers: the five timers of WL#2360's
// "Timer and Time Units", their calibration, and the conversion of their
// readings to picoseconds, the canonical unit of every TIMER_* column.
//
// # Timers
//
//	CYCLE        the TSC (plain RDTSC) on amd64, the virtual counter
//	             CNTVCT_EL0 on arm64; elsewhere NANOSECOND serves it
//	NANOSECOND   the runtime's monotonic clock (runtime.nanotime)
//	MICROSECOND  the monotonic clock in microseconds
//	MILLISECOND  the monotonic clock in milliseconds
//	TICK         times(2) clock ticks (USER_HZ, 100 Hz) on Linux; elsewhere
//	             MILLISECOND serves it
//
// Where a timer is not native (Timer.Native), the next-best timer serves it
// (Timer.Effective), its performance_timers row shows the serving timer's
// figures, and setup_timers resolves it to the serving timer. The
// hwclock_portable build tag compiles those fallbacks on any platform so
// they are tested everywhere.
//
// Every timer is monotonic: the readings of one goroutine never decrease.
// The microsecond and millisecond timers are derived from the monotonic clock
// rather than from gettimeofday as in MySQL, so that no timer jumps with the
// wall clock.
//
// # Picoseconds
//
// Timer.Now returns picoseconds since the epoch, the moment the package was
// initialized: (raw - v0) * factor with an integer factor of round(1e12 /
// frequency), one subtraction and one multiplication. The factors are fixed
// at start-up, so timestamps from any timer are comparable and monotonic for
// the life of the process. Picosecond timestamps wrap after 2^64 ps (about
// 213.5 days, Horizon); durations computed by wrapping subtraction are exact
// across the wrap, and WallTime maps a timestamp to wall-clock time in the
// period nearest to now.
//
// # Calibration
//
// At start-up the package measures CYCLE's frequency against the monotonic
// clock: the median of three 0.5 ms windows, each end read inside the
// tightest of several clock brackets (about 1.5 ms of initialization).
// PerformanceTimers recalibrates every time it is read, as WL#2360 has it:
// CYCLE's frequency over longer windows, and every timer's resolution (the
// quantum its readings move by, from steps between reads spaced by pauses of
// varying length) and overhead (the cost of one call: the lower quartile of
// batches of calls, each batch's cost divided by its number of calls, in the
// timer's own units). Recalibration changes the table, never the factors.
// Neither figure is the extreme of a few back-to-back reads, which a single
// early or bumped read of the cycle counter decides (calibrate.go has the
// details).
//
// SetupTimers holds setup_timers: the timer each event class uses, with
// MySQL 5.7's defaults (wait CYCLE, idle MICROSECOND, stage, statement and
// transaction NANOSECOND).
//
// # Concurrency
//
// All exported functions and methods are safe for concurrent use. Timer.Now
// and NowCycle allocate nothing and take no lock; SetupTimers.Timer is one
// atomic load.
//
// # Limitations
//
//   - The integer factor carries up to 0.5/factor of relative error (0.13% at
//     2.6 GHz), so CYCLE and NANOSECOND timestamps drift apart by up to that
//     fraction of uptime. Durations, the figures that matter, carry the same
//     relative error at most.
//   - CYCLE assumes a TSC that is synchronized across cores and runs at a
//     constant rate (constant_tsc, nonstop_tsc in /proc/cpuinfo), as every
//     current x86-64 server and hypervisor provides. Without it, readings
//     taken on different cores are not comparable.
//   - An unserialized RDTSC may be performed a few dozen cycles early or late
//     relative to the code it times (cycles_amd64.go says why it is still the
//     right choice).
//   - arm64's virtual counter runs at a platform-defined rate, from 24 MHz
//     (many cores) to 1 GHz (recent servers): where it is slow, CYCLE is
//     coarser than NANOSECOND and short waits read as 0 or one tick; set the
//     wait row of setup_timers to NANOSECOND there.
//
// # Imports
//
// Standard library only: hwclock is a leaf of otelpfs's dependency graph.
package hwclock
