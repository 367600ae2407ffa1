//go:build hwclock_portable || !(amd64 || arm64)

package hwclock

// Where no cycle counter is read (other architectures, or the
// hwclock_portable build tag that tests this path on amd64), CYCLE is the
// next-best timer, the runtime's monotonic clock: its row in
// performance_timers shows NANOSECOND's figures, as WL#2360 asks, and
// setup_timers resolves CYCLE to NANOSECOND.
func cycles() uint64 { return nanotime() }

const cycleNative = false
