package bench

import (
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/internal/store"
)

// waitRecord is shaped like an events_waits_current row: twelve words a
// reader may see mid-write.
type waitRecord struct {
	w [12]owned.Uint64
}

// waitRecordAtomic is the same row with atomic words.
type waitRecordAtomic struct {
	w [12]atomic.Uint64
}

func newWaitContainer[T any](b *testing.B, pages int) *store.Container[T] {
	c := store.MustNewContainer[T]("bench_records", store.ContainerConfig{PageSize: 256, MaxPages: pages})
	r, _ := c.Allocate() // the first page is created outside the timed loop
	c.Free(r)
	return c
}

// BenchmarkContainerAllocFree is one allocation and one free from one
// goroutine (budget: <= 30 ns, 0 allocs).
func BenchmarkContainerAllocFree(b *testing.B) {
	c := newWaitContainer[waitRecord](b, 16)
	b.ReportAllocs()
	for b.Loop() {
		r, _ := c.Allocate()
		c.Free(r)
	}
}

// BenchmarkContainerAllocFreeParallel is the same from every P at once.
func BenchmarkContainerAllocFreeParallel(b *testing.B) {
	c := newWaitContainer[waitRecord](b, 64)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, _ := c.Allocate()
			c.Free(r)
		}
	})
}

// BenchmarkContainerRecordWrite is one rewrite of a twelve-word record under
// its pfs_lock with owned cells (plain stores): the shape of every event
// write on the hot path.
func BenchmarkContainerRecordWrite(b *testing.B) {
	c := newWaitContainer[waitRecord](b, 1)
	r, d := c.Allocate()
	r.Lock.DirtyToAllocated(d)
	v := &r.Value
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		d := r.Lock.AllocatedToDirty()
		for j := range v.w {
			v.w[j].Set(i + uint64(j))
		}
		r.Lock.DirtyToAllocated(d)
	}
}

// BenchmarkContainerRecordWriteAtomic is the same rewrite with atomic stores,
// the design owned cells replace.
func BenchmarkContainerRecordWriteAtomic(b *testing.B) {
	c := newWaitContainer[waitRecordAtomic](b, 1)
	r, d := c.Allocate()
	r.Lock.DirtyToAllocated(d)
	v := &r.Value
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		d := r.Lock.AllocatedToDirty()
		for j := range v.w {
			v.w[j].Store(i + uint64(j))
		}
		r.Lock.DirtyToAllocated(d)
	}
}
