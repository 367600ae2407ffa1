package hwclock

import (
	_ "unsafe" // for go:linkname
)

// runtimeNanotime is the runtime's monotonic clock in nanoseconds, the one
// behind time.Now's monotonic reading, without time.Now's wall-clock read:
// about half time.Now's cost. The runtime exports it for linkname on purpose
// (runtime/time_nofake.go).
//
//go:linkname runtimeNanotime runtime.nanotime
func runtimeNanotime() int64

// nanotime reads the NANOSECOND timer's raw value. The monotonic clock never
// goes backwards and is positive after boot, so the conversion is exact.
func nanotime() uint64 { return uint64(runtimeNanotime()) }
