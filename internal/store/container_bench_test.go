package store_test

import (
	"testing"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/internal/store"
)

// waitRec is shaped like an events_waits_current row: twelve words a reader
// may see mid-write (thread, event and nesting ids, event name, timer start,
// end and wait, source, object instance, operation, bytes, flags).
type waitRec struct {
	w [12]owned.Uint64
}

// The container's budgeted benchmarks (allocate+free, uncontended and
// parallel; a record write with owned cells and with atomics) are in bench/
// under DESIGN.md's names; these are the variants that need nothing else.

// BenchmarkContainerAllocFreeHalfFull allocates and frees in a container whose
// pages are half full of long-lived records.
func BenchmarkContainerAllocFreeHalfFull(b *testing.B) {
	c := store.MustNewContainer[waitRec]("bench", store.ContainerConfig{PageSize: 256, MaxPages: 16})
	for range 4 * 256 / 2 {
		c.Allocate()
	}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := c.Allocate()
		c.Free(r)
	}
}

// BenchmarkRecordRead is a reader's validated copy of the same record.
func BenchmarkRecordRead(b *testing.B) {
	c := store.MustNewContainer[waitRec]("bench", store.ContainerConfig{PageSize: 16, MaxPages: 1})
	r, d := c.Allocate()
	r.Lock.DirtyToAllocated(d)
	v := &r.Value
	var row [12]uint64
	b.ReportAllocs()
	for b.Loop() {
		s := r.Lock.BeginOptimistic()
		for j := range v.w {
			row[j] = v.w[j].Load()
		}
		if !r.Lock.EndOptimistic(s) {
			b.Fatal("torn")
		}
	}
	_ = row
}
