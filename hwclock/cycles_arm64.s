//go:build !hwclock_portable

#include "textflag.h"

// func cntvct() uint64
// The virtual counter (CNTVCT_EL0), readable from user space on Linux and
// macOS. No ISB before it: like RDTSC on amd64, the read may be performed a
// little early, which is below the timer's overhead for a wait event.
TEXT ·cntvct(SB), NOSPLIT, $0-8
	MRS	CNTVCT_EL0, R0
	MOVD	R0, ret+0(FP)
	RET
