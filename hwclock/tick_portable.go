//go:build !linux || hwclock_portable

package hwclock

// Where times(2) is not used, TICK is the next-best timer, MILLISECOND: its
// row shows MILLISECOND's figures and setup_timers resolves TICK to
// MILLISECOND.
func ticks() uint64 { return nanotime() / 1_000_000 }

const (
	tickNative    = false
	tickFrequency = 1000
)
