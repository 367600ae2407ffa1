package bench

import (
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/hwclock"
)

// Each timer read and converted to picoseconds (what an instrument does at
// each end of an event) against time.Now and time.Since, what a Go service
// would use without otelpfs.

var timerSink uint64

func benchmarkTimer(b *testing.B, t hwclock.Timer) {
	b.ReportAllocs()
	for b.Loop() {
		timerSink += t.Now()
	}
}

func BenchmarkTimerCycle(b *testing.B)       { benchmarkTimer(b, hwclock.Cycle) }
func BenchmarkTimerNanosecond(b *testing.B)  { benchmarkTimer(b, hwclock.Nanosecond) }
func BenchmarkTimerMicrosecond(b *testing.B) { benchmarkTimer(b, hwclock.Microsecond) }
func BenchmarkTimerMillisecond(b *testing.B) { benchmarkTimer(b, hwclock.Millisecond) }
func BenchmarkTimerTick(b *testing.B)        { benchmarkTimer(b, hwclock.Tick) }

func BenchmarkTimerNowCycle(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		timerSink += hwclock.NowCycle()
	}
}

func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		timerSink += uint64(time.Now().UnixNano())
	}
}

func BenchmarkTimeSince(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		timerSink += uint64(time.Since(start))
	}
}
