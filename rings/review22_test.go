package rings_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/otelpfs/otelpfs/rings"
)

// review22: copyOut now sizes its buffer by the rows the ring holds at the
// first head load and grows it (more) when appends during the scan add
// rows. These tests start reads on an empty or just-truncated ring while
// writers fill it, so that the buffer must grow, across the 256-row stack
// keys, with a caller prefix in dst and dstRefs, and check every row and
// ref, the prefix, and per-writer order.

var review22Vals [8][64]uint64

func init() {
	for w := range review22Vals {
		for j := range review22Vals[w] {
			review22Vals[w][j] = uint64(w)<<32 | uint64(j)
		}
	}
}

func review22Refs(w, seq uint64) []unsafe.Pointer {
	return []unsafe.Pointer{unsafe.Pointer(&review22Vals[w][seq%64]), unsafe.Pointer(&review22Vals[w][(seq+1)%64])}
}

func review22Check(t *testing.T, rowsBuf []uint64, refs []unsafe.Pointer, prefix int, rowsMax int) bool {
	t.Helper()
	for i := range prefix {
		if rowsBuf[i] != 0xdead || refs[i] != unsafe.Pointer(&review22Vals[7][63]) {
			t.Errorf("prefix clobbered at %d: %#x %p", i, rowsBuf[i], refs[i])
			return false
		}
	}
	body, rbody := rowsBuf[prefix:], refs[prefix:]
	n := len(body) / testWidth
	if len(rbody) != 2*n {
		t.Errorf("%d rows, %d refs", n, len(rbody))
		return false
	}
	if checkRows(t, body, rowsMax) != n {
		return false
	}
	seen := map[[2]uint64]bool{}
	for i := range n {
		w, seq := body[i*testWidth], body[i*testWidth+1]
		if seen[[2]uint64{w, seq}] {
			t.Errorf("row %d/%d twice", w, seq)
			return false
		}
		seen[[2]uint64{w, seq}] = true
		want := review22Refs(w, seq)
		if rbody[2*i] != want[0] || rbody[2*i+1] != want[1] {
			t.Errorf("row %d (writer %d seq %d): refs %p %p, want %p %p", i, w, seq, rbody[2*i], rbody[2*i+1], want[0], want[1])
			return false
		}
	}
	return true
}

func TestReview22GlobalGrowDuringScan(t *testing.T) {
	for _, size := range []int{17, 300, 1000} {
		g, err := rings.NewGlobalRefs(size, testWidth, 2)
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				row := make([]uint64, testWidth)
				for seq := uint64(1); !stop.Load(); seq++ {
					fillRow(row, uint64(w), seq)
					g.AppendRefs(row, review22Refs(uint64(w), seq))
					if seq%512 == 0 {
						runtime.Gosched()
					}
				}
			}()
		}
		reads := 3000
		if testing.Short() {
			reads = 300
		}
		grew := 0
		for i := range reads {
			if i%2 == 0 {
				g.Reset()
			}
			prefix := i % 3
			dst := make([]uint64, prefix, prefix+i%5)
			refs := make([]unsafe.Pointer, prefix, prefix+i%7)
			for j := range prefix {
				dst[j], refs[j] = 0xdead, unsafe.Pointer(&review22Vals[7][63])
			}
			out, outRefs := g.AppendRowsRefs(dst, refs)
			if (len(out)-prefix)/testWidth > 16 {
				grew++
			}
			if !review22Check(t, out, outRefs, prefix, size) {
				break
			}
		}
		stop.Store(true)
		wg.Wait()
		t.Logf("size %d: %d of %d reads returned more than 16 rows", size, grew, reads)
	}
}

func TestReview22PerThreadGrowDuringScan(t *testing.T) {
	for _, size := range []int{5, 300, 1000} {
		r, err := rings.NewPerThreadRefs(size, testWidth, 2)
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := make([]uint64, testWidth)
			for seq := uint64(1); !stop.Load(); seq++ {
				fillRow(row, 0, seq)
				r.AppendRefs(row, review22Refs(0, seq))
				if seq%512 == 0 {
					runtime.Gosched()
				}
			}
		}()
		reads := 3000
		if testing.Short() {
			reads = 300
		}
		for i := range reads {
			if i%2 == 0 {
				r.Reset()
			}
			prefix := i % 3
			dst := make([]uint64, prefix)
			refs := make([]unsafe.Pointer, prefix)
			for j := range prefix {
				dst[j], refs[j] = 0xdead, unsafe.Pointer(&review22Vals[7][63])
			}
			out, outRefs := r.AppendRowsRefs(dst, refs)
			if !review22Check(t, out, outRefs, prefix, size) {
				break
			}
			// AppendRows alone, into a reused buffer.
			words := r.AppendRows(out[:0])
			if checkRows(t, words, size) != len(words)/testWidth {
				break
			}
		}
		stop.Store(true)
		wg.Wait()
	}
}
