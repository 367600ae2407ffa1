package rings_test

import (
	"testing"

	"github.com/otelpfs/otelpfs/rings"
)

// benchWidth is a wait event's row: event id, end event id, thread id,
// instrument index, object instance, operation, timer start, end and wait,
// nesting event id and type, bytes.
const benchWidth = 12

func benchRow() []uint64 {
	row := make([]uint64, benchWidth)
	for i := range row {
		row[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	return row
}

func BenchmarkPerThreadAppend(b *testing.B) {
	r, _ := rings.NewPerThread(10, benchWidth)
	row := benchRow()
	b.ReportAllocs()
	for b.Loop() {
		r.Append(row)
	}
}

func BenchmarkPerThreadBeginCommit(b *testing.B) {
	r, _ := rings.NewPerThread(10, benchWidth)
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		s := r.Begin()
		for j := range benchWidth {
			s.Set(j, i+uint64(j))
		}
		s.Commit()
	}
}

func BenchmarkGlobalAppend(b *testing.B) {
	g, _ := rings.NewGlobal(10000, benchWidth)
	row := benchRow()
	b.ReportAllocs()
	for b.Loop() {
		g.Append(row)
	}
}

func BenchmarkGlobalBeginCommit(b *testing.B) {
	g, _ := rings.NewGlobal(10000, benchWidth)
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		s := g.Begin()
		for j := range benchWidth {
			s.Set(j, i+uint64(j))
		}
		s.Commit()
	}
}

func BenchmarkGlobalAppendParallel(b *testing.B) {
	g, _ := rings.NewGlobal(10000, benchWidth)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		row := benchRow()
		for pb.Next() {
			g.Append(row)
		}
	})
	b.ReportMetric(float64(g.Lost())/float64(b.N), "lost/op")
}

func BenchmarkPerThreadCopyOut(b *testing.B) {
	r, _ := rings.NewPerThread(10, benchWidth)
	row := benchRow()
	for range 25 {
		r.Append(row)
	}
	buf := make([]uint64, 0, 10*benchWidth)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendRows(buf[:0])
	}
}

func BenchmarkGlobalCopyOut(b *testing.B) {
	g, _ := rings.NewGlobal(10000, benchWidth)
	row := benchRow()
	for range 25000 {
		g.Append(row)
	}
	buf := make([]uint64, 0, 10000*benchWidth)
	b.ReportAllocs()
	for b.Loop() {
		buf = g.AppendRows(buf[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/row")
}
