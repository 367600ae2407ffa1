package pfscore_test

import (
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/pfscore"
)

// waitRec is shaped like an events_waits_current row: twelve words a reader
// may see mid-write (thread, event and nesting ids, event name, timer start,
// end and wait, source, object instance, operation, bytes, flags).
type waitRec struct {
	w [12]owned.Uint64
}

// waitRecAtomic is the same record with atomic words, the alternative the
// owned cells replace.
type waitRecAtomic struct {
	w [12]atomic.Uint64
}

func BenchmarkContainerAllocFree(b *testing.B) {
	c := pfscore.MustNewContainer[waitRec]("bench", pfscore.ContainerConfig{PageSize: 256, MaxPages: 16})
	r, _ := c.Allocate() // create the first page outside the timed loop
	c.Free(r)
	b.ReportAllocs()
	for b.Loop() {
		r, _ := c.Allocate()
		c.Free(r)
	}
}

// BenchmarkContainerAllocFreeHalfFull allocates and frees in a container whose
// pages are half full of long-lived records.
func BenchmarkContainerAllocFreeHalfFull(b *testing.B) {
	c := pfscore.MustNewContainer[waitRec]("bench", pfscore.ContainerConfig{PageSize: 256, MaxPages: 16})
	for range 4 * 256 / 2 {
		c.Allocate()
	}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := c.Allocate()
		c.Free(r)
	}
}

func BenchmarkContainerAllocFreeParallel(b *testing.B) {
	c := pfscore.MustNewContainer[waitRec]("bench", pfscore.ContainerConfig{PageSize: 256, MaxPages: 64})
	r, _ := c.Allocate()
	c.Free(r)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, _ := c.Allocate()
			c.Free(r)
		}
	})
}

// BenchmarkRecordWriteOwned is one record write of the hot path: DIRTY, twelve
// plain stores, ALLOCATED.
func BenchmarkRecordWriteOwned(b *testing.B) {
	c := pfscore.MustNewContainer[waitRec]("bench", pfscore.ContainerConfig{PageSize: 16, MaxPages: 1})
	r, d := c.Allocate()
	r.Lock().DirtyToAllocated(d)
	v := r.Value()
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		d := r.Lock().AllocatedToDirty()
		for j := range v.w {
			v.w[j].Set(i + uint64(j))
		}
		r.Lock().DirtyToAllocated(d)
	}
}

// BenchmarkRecordWriteAtomic is the same write with atomic stores.
func BenchmarkRecordWriteAtomic(b *testing.B) {
	c := pfscore.MustNewContainer[waitRecAtomic]("bench", pfscore.ContainerConfig{PageSize: 16, MaxPages: 1})
	r, d := c.Allocate()
	r.Lock().DirtyToAllocated(d)
	v := r.Value()
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		d := r.Lock().AllocatedToDirty()
		for j := range v.w {
			v.w[j].Store(i + uint64(j))
		}
		r.Lock().DirtyToAllocated(d)
	}
}

// BenchmarkRecordRead is a reader's validated copy of the same record.
func BenchmarkRecordRead(b *testing.B) {
	c := pfscore.MustNewContainer[waitRec]("bench", pfscore.ContainerConfig{PageSize: 16, MaxPages: 1})
	r, d := c.Allocate()
	r.Lock().DirtyToAllocated(d)
	v := r.Value()
	var row [12]uint64
	b.ReportAllocs()
	for b.Loop() {
		s := r.Lock().BeginOptimistic()
		for j := range v.w {
			row[j] = v.w[j].Load()
		}
		if !r.Lock().EndOptimistic(s) {
			b.Fatal("torn")
		}
	}
	_ = row
}
