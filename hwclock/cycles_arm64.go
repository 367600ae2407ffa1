//go:build !hwclock_portable

package hwclock

// cntvct reads the arm64 virtual counter. Its frequency (CNTFRQ_EL0, usually
// 24 MHz to 1 GHz) is measured like the TSC's, so no privileged register is
// read.
func cntvct() uint64

// cycles reads the CYCLE timer's raw value.
func cycles() uint64 { return cntvct() }

const cycleNative = true
