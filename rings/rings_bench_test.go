package rings_test

import (
	"fmt"
	"testing"
	"unsafe"

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

// A statement's history row: 16 words and 4 refs (SQL text, digest text,
// schema name, one spare). The AppendRefs benchmarks cycle through 7 sets of
// refs, so that every append changes every ref cell of its slot (7 is prime
// to both rings' sizes); the AppendRefsSame ones append the same refs every
// time, so that no ref cell changes, as when a thread runs one statement
// over and over. The Width16 ones append the same words to a ring without
// refs, for comparison.
const (
	refsWidth = 16
	refsCount = 4
	refsSets  = 7
)

func benchRefs() ([]uint64, [][]unsafe.Pointer) {
	row := make([]uint64, refsWidth)
	for i := range row {
		row[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	sets := make([][]unsafe.Pointer, refsSets)
	for i := range sets {
		sql := fmt.Sprintf("SELECT * FROM t%d WHERE id = 1", i)
		digest := fmt.Sprintf("SELECT * FROM `t%d` WHERE `id` = ?", i)
		schema := fmt.Sprintf("schema%d", i)
		sets[i] = []unsafe.Pointer{
			unsafe.Pointer(unsafe.StringData(sql)),
			unsafe.Pointer(unsafe.StringData(digest)),
			unsafe.Pointer(unsafe.StringData(schema)),
			unsafe.Pointer(&row[i]),
		}
	}
	return row, sets
}

func BenchmarkPerThreadAppendWidth16(b *testing.B) {
	r, _ := rings.NewPerThread(10, refsWidth)
	row, _ := benchRefs()
	b.ReportAllocs()
	for b.Loop() {
		r.Append(row)
	}
}

func BenchmarkPerThreadAppendRefs(b *testing.B) {
	r, _ := rings.NewPerThreadRefs(10, refsWidth, refsCount)
	row, sets := benchRefs()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i == refsSets {
			i = 0
		}
		r.AppendRefs(row, sets[i])
	}
}

func BenchmarkPerThreadAppendRefsSame(b *testing.B) {
	r, _ := rings.NewPerThreadRefs(10, refsWidth, refsCount)
	row, sets := benchRefs()
	b.ReportAllocs()
	for b.Loop() {
		r.AppendRefs(row, sets[0])
	}
}

func BenchmarkGlobalAppendWidth16(b *testing.B) {
	g, _ := rings.NewGlobal(10000, refsWidth)
	row, _ := benchRefs()
	b.ReportAllocs()
	for b.Loop() {
		g.Append(row)
	}
}

func BenchmarkGlobalAppendRefs(b *testing.B) {
	g, _ := rings.NewGlobalRefs(10000, refsWidth, refsCount)
	row, sets := benchRefs()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i == refsSets {
			i = 0
		}
		g.AppendRefs(row, sets[i])
	}
}

func BenchmarkGlobalAppendRefsSame(b *testing.B) {
	g, _ := rings.NewGlobalRefs(10000, refsWidth, refsCount)
	row, sets := benchRefs()
	b.ReportAllocs()
	for b.Loop() {
		g.AppendRefs(row, sets[0])
	}
}

func BenchmarkGlobalCopyOutRefs(b *testing.B) {
	g, _ := rings.NewGlobalRefs(10000, refsWidth, refsCount)
	row, sets := benchRefs()
	for i := range 25000 {
		g.AppendRefs(row, sets[i%refsSets])
	}
	buf := make([]uint64, 0, 10000*refsWidth)
	bufRefs := make([]unsafe.Pointer, 0, 10000*refsCount)
	b.ReportAllocs()
	for b.Loop() {
		buf, bufRefs = g.AppendRowsRefs(buf[:0], bufRefs[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/row")
}
