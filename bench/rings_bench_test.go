package bench

import (
	"testing"

	"github.com/otelpfs/otelpfs/rings"
)

// ringWidth is a wait event's history row in words: event id, end event id,
// thread id, instrument index, object instance, operation, timer start, end
// and wait, nesting event id and type, bytes.
const ringWidth = 12

func ringRow() []uint64 {
	row := make([]uint64, ringWidth)
	for i := range row {
		row[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	return row
}

// BenchmarkRingAppendPerThread is one append to events_waits_history (10
// rows per thread, MySQL's default).
func BenchmarkRingAppendPerThread(b *testing.B) {
	r, err := rings.NewPerThread(10, ringWidth)
	if err != nil {
		b.Fatal(err)
	}
	row := ringRow()
	b.ReportAllocs()
	for b.Loop() {
		r.Append(row)
	}
}

// BenchmarkRingAppendGlobal is one append to events_waits_history_long
// (10,000 rows, MySQL's default) from one goroutine.
func BenchmarkRingAppendGlobal(b *testing.B) {
	g, err := rings.NewGlobal(10000, ringWidth)
	if err != nil {
		b.Fatal(err)
	}
	row := ringRow()
	b.ReportAllocs()
	for b.Loop() {
		g.Append(row)
	}
}

// BenchmarkRingAppendGlobalParallel is the same from every P at once: all
// appends take their ticket from one counter.
func BenchmarkRingAppendGlobalParallel(b *testing.B) {
	g, err := rings.NewGlobal(10000, ringWidth)
	if err != nil {
		b.Fatal(err)
	}
	row := ringRow() // read-only, shared
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g.Append(row)
		}
	})
	b.ReportMetric(float64(g.Lost())/float64(b.N), "lost/op")
}

// BenchmarkRingCopyOut reads a full 10,000-row history_long into a buffer
// with room: what a SELECT of events_waits_history_long costs before rows
// are decoded.
func BenchmarkRingCopyOut(b *testing.B) {
	g, err := rings.NewGlobal(10000, ringWidth)
	if err != nil {
		b.Fatal(err)
	}
	row := ringRow()
	for range 25000 {
		g.Append(row)
	}
	buf := make([]uint64, 0, 10000*ringWidth)
	b.ReportAllocs()
	for b.Loop() {
		buf = g.AppendRows(buf[:0])
	}
}
