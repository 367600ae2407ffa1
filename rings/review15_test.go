package rings_test

// Review of 725c9e7 (ref cells as owned.Pointer: plain stores through the
// write barrier). PASSES: a claim attacked without finding a bug, kept for
// coverage.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/otelpfs/otelpfs/rings"
)

// r15Bytes returns a fresh allocation of n bytes, each byte(n): a pointer
// the collector failed to keep alive would show reused memory.
func r15Bytes(n int) unsafe.Pointer {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(n)
	}
	return unsafe.Pointer(&b[0])
}

// PASSES. Claim 1 for the rings: several writers of a Global ring with refs
// (slots change writers across laps; Begin'd rows clear the refs, nil refs
// rows too), PerThread owners, readers validating every row against its
// refs while the collector runs: a returned row's refs are exactly those
// appended with it (word 0 is the length of ref 0's bytes, word 1 of ref
// 1's; 0 for nil) and their bytes are intact.
func TestReview15RefsWritersGCConcurrentSafe(t *testing.T) {
	g, err := rings.NewGlobalRefs(8, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rings.NewPerThreadRefs(4, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	write := func(w int, appendRefs func([]uint64, []unsafe.Pointer), appendRow func([]uint64), begin func() rings.Slot) {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			a, b := 1+(i+w)%200, 1+(i*7+w)%250
			switch i % 5 {
			case 3:
				appendRow([]uint64{0, 0})
			case 4:
				s := begin()
				s.Set(0, 0)
				s.Set(1, 0)
				s.Commit()
			default:
				var refs [2]unsafe.Pointer
				refs[0], refs[1] = r15Bytes(a), r15Bytes(b)
				appendRefs([]uint64{uint64(a), uint64(b)}, refs[:])
			}
		}
	}
	for w := range 2 {
		wg.Add(1)
		go write(w, g.AppendRefs, g.Append, g.Begin)
	}
	wg.Add(1)
	go write(7, p.AppendRefs, p.Append, p.Begin)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			runtime.GC()
		}
	}()
	check := func(rows []uint64, refs []unsafe.Pointer) string {
		for k := 0; 2*k < len(rows); k++ {
			for j := range 2 {
				n, ref := rows[2*k+j], refs[2*k+j]
				if n == 0 {
					if ref != nil {
						return "a row without refs shows a ref"
					}
					continue
				}
				if ref == nil {
					return "a row with refs shows nil"
				}
				s := unsafe.String((*byte)(ref), int(n))
				for i := range len(s) {
					if s[i] != byte(n) {
						return "a ref's bytes are not the row's"
					}
				}
			}
		}
		return ""
	}
	deadline := time.Now().Add(2 * time.Second)
	var rows []uint64
	var refs []unsafe.Pointer
	for time.Now().Before(deadline) {
		rows, refs = g.AppendRowsRefs(rows[:0], refs[:0])
		if bad := check(rows, refs); bad != "" {
			stop.Store(true)
			wg.Wait()
			t.Fatal("Global:", bad)
		}
		rows, refs = p.AppendRowsRefs(rows[:0], refs[:0])
		if bad := check(rows, refs); bad != "" {
			stop.Store(true)
			wg.Wait()
			t.Fatal("PerThread:", bad)
		}
	}
	stop.Store(true)
	wg.Wait()
}
