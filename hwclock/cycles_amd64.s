//go:build !hwclock_portable

#include "textflag.h"

// func rdtsc() uint64
// The time-stamp counter, unserialized: the CPU may execute it a few dozen
// cycles early or late relative to neighbouring instructions.
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func rdtscp() uint64
// RDTSCP waits until every earlier instruction has executed before reading
// the counter (later ones may still start early).
TEXT ·rdtscp(SB), NOSPLIT, $0-8
	RDTSCP
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func lfenceRdtsc() uint64
// LFENCE;RDTSC: as RDTSCP on the earlier side, the sequence Intel and AMD
// document for an ordered read.
TEXT ·lfenceRdtsc(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET
