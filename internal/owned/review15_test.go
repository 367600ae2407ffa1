package owned

// Review of 725c9e7 (owned.Pointer). PASSES: a claim attacked without
// finding a bug, kept for coverage.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// PASSES. Claim 1: a reader that loaded a pointer the owner then
// overwrote (with nil, or with objects of other size classes, from tiny to
// large) keeps a live object: the write barrier shades the overwritten
// pointer. The reader holds the pointer across two collections with no
// validation at all (the case the barrier alone must cover), then checks
// the bytes: every byte of an object of sizes[k] is 0xA0+k, so the first
// byte says the size, and anything else is reused memory.
func TestReview15PointerOverwrittenKeptAliveConcurrentSafe(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	sizes := []int{1, 8, 24, 100, 1000, 40000}
	var cell Pointer
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				p := cell.Load()
				if p == nil {
					continue
				}
				runtime.GC()
				runtime.GC()
				k := int(*(*byte)(p)) - 0xA0
				if k < 0 || k >= len(sizes) {
					t.Errorf("an overwritten pointer's object was reused: first byte %#x", *(*byte)(p))
					return
				}
				s := unsafe.Slice((*byte)(p), sizes[k])
				for i := range s {
					if s[i] != byte(0xA0+k) {
						t.Errorf("an overwritten pointer's %d-byte object was reused: byte %d is %#x", sizes[k], i, s[i])
						return
					}
				}
			}
		}()
	}
	for i := range n {
		if i%3 == 2 {
			cell.Set(nil)
			continue
		}
		k := i % len(sizes)
		b := make([]byte, sizes[k])
		for j := range b {
			b[j] = byte(0xA0 + k)
		}
		cell.Set(unsafe.Pointer(&b[0]))
	}
	stop.Store(true)
	wg.Wait()
}
