//go:build !hwclock_portable

package hwclock

// The three ways to read the TSC; cycles is the one CYCLE uses.
//
// Choice: plain RDTSC. RDTSCP and LFENCE;RDTSC order the read after the
// instructions before it, which matters when timing a handful of
// instructions; a wait event times a lock acquisition or a system call, and
// the skew of an unserialized read (the reorder window, a few dozen cycles at
// most, on each side) is below the timer's own overhead. Serializing costs
// more than that on every read, twice per event, out of a 200-cycle budget:
// BenchmarkRawCycles* in hwclock and the closing note of the foundation issue
// have the figures for these machines. MySQL's my_timer_cycles reads plain
// RDTSC too.
//
// Every x86-64 processor has a TSC and the Go runtime itself reads it, so no
// CPUID check is made. Whether it is invariant (constant_tsc, nonstop_tsc) is
// the platform's business; the calibrated frequency shows when it is not.

func rdtsc() uint64
func rdtscp() uint64
func lfenceRdtsc() uint64

// cycles reads the CYCLE timer's raw value.
func cycles() uint64 { return rdtsc() }

// cycleNative reports that CYCLE reads a hardware counter on this build.
const cycleNative = true
