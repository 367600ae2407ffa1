package store

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// lostRec is a minimal record; its cell is written so the record is not empty.
type lostRec struct{ a owned.Uint64 }

// TestNoSpuriousLostDuringRetire: with the page table at its maximum, an
// allocator that meets a page being retired must wait for the reclaimer and
// look again, not count the allocation lost: the live set (one page and a
// record) always fits in the container's two pages.
func TestNoSpuriousLostDuringRetire(t *testing.T) {
	const ps = 8192
	c := MustNewContainer[lostRec]("lost", ContainerConfig{PageSize: ps, MaxPages: 2, ReclaimIdle: time.Nanosecond, KeepEmpty: -1})
	for range ps { // one page held for good
		r, d := c.Allocate()
		r.Lock.DirtyToAllocated(d)
	}
	dur := time.Second
	if testing.Short() {
		dur = 200 * time.Millisecond
	}
	var stop atomic.Bool
	var allocs atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // one more record, allocated and freed again and again
		defer wg.Done()
		for !stop.Load() {
			r, d := c.Allocate()
			if r == nil {
				continue
			}
			allocs.Add(1)
			r.Value.a.Set(uint64(allocs.Load()))
			r.Lock.DirtyToAllocated(d)
			c.Free(r)
		}
	}()
	go func() { // the reclaimer, retiring the second page whenever it is empty
		defer wg.Done()
		now := time.Unix(0, 0)
		for !stop.Load() {
			now = now.Add(time.Millisecond)
			c.Reclaim(now)
		}
	}()
	time.Sleep(dur)
	stop.Store(true)
	wg.Wait()
	st := c.Stats()
	t.Logf("%d allocations, %d pages created, %d retired", allocs.Load(), st.CountAlloc, st.CountFree)
	if c.Lost() != 0 {
		t.Errorf("%d allocations lost though the live set always fits", c.Lost())
	}
}

func TestContainerConfigBounds(t *testing.T) {
	if ^uint(0)>>32 == 0 {
		t.Skip("an int cannot hold 2^32 here")
	}
	shift := 32
	big := 1 << shift // a shift at run time: the constant would not compile on 32-bit
	for _, cfg := range []ContainerConfig{{PageSize: big, MaxPages: 1}, {PageSize: 1, MaxPages: big}} {
		if _, err := NewContainer[lostRec]("big", cfg); err == nil {
			t.Errorf("%+v accepted: its sizes do not fit in 32 bits", cfg)
		}
	}
}
