package rings_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/rings"
)

// A ring that Reset cuts while a reader scans it: the read returns the rows
// from before the Reset (it is ordered before it) or those from after (it is
// ordered after it), never both. The writer appends rows tagged with the
// number of Resets so far, so a read holding two tags mixes the two sides.
// This is what AppendRows' second load of base is for.

type resetRing interface {
	Append(row []uint64)
	AppendRows(dst []uint64) []uint64
	Reset()
}

func TestReadNeverMixesResetConcurrentSafe(t *testing.T) {
	const width = 2
	for _, tc := range []struct {
		name string
		mk   func() (resetRing, error)
	}{
		{"PerThread", func() (resetRing, error) { return rings.NewPerThread(64, width) }},
		{"Global", func() (resetRing, error) { return rings.NewGlobal(64, width) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.mk()
			if err != nil {
				t.Fatal(err)
			}
			budget := time.Second
			if testing.Short() {
				budget = 300 * time.Millisecond
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // the ring's one writer; it resets the ring too
				defer wg.Done()
				row := make([]uint64, width)
				for epoch := uint64(1); !stop.Load(); epoch++ {
					for i := range 8 {
						row[0], row[1] = epoch, uint64(i)
						r.Append(row)
					}
					r.Reset()
				}
			}()
			defer wg.Wait()
			defer stop.Store(true)
			var buf []uint64
			reads, mixed := 0, 0
			for deadline := time.Now().Add(budget); time.Now().Before(deadline); reads++ {
				buf = r.AppendRows(buf[:0])
				for i := width; i+width <= len(buf); i += width {
					if buf[i] != buf[0] {
						mixed++
						t.Errorf("one read holds rows of Reset epochs %d and %d", buf[0], buf[i])
						break
					}
				}
				if mixed > 3 {
					break
				}
			}
			t.Logf("%d reads", reads)
		})
	}
}
