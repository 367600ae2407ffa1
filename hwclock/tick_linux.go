//go:build linux && !hwclock_portable

package hwclock

import "syscall"

// ticks reads the TICK timer: times(2), clock ticks since an arbitrary point,
// at USER_HZ, which Linux fixes at 100 for user space whatever the kernel's
// own HZ. It is a real system call: the slowest timer by far, kept because
// WL#2360 lists it.
func ticks() uint64 {
	var tms syscall.Tms
	t, _ := syscall.Times(&tms)
	return uint64(t)
}

const (
	tickNative    = true
	tickFrequency = 100
)
