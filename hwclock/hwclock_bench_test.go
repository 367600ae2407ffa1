package hwclock

import (
	"testing"
	"time"
)

var benchSink uint64

func BenchmarkNow(b *testing.B) {
	for tm := range Timer(NumTimers) {
		b.Run(tm.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink += tm.Now()
			}
		})
	}
}

func BenchmarkNowCycle(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchSink += NowCycle()
	}
}

func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchSink += uint64(time.Now().UnixNano())
	}
}

// BenchmarkStartupCalibration is what importing the package costs.
func BenchmarkStartupCalibration(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchSink += measureCycleFrequency(startupRounds, startupWindow)
	}
}
