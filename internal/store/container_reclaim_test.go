package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/internal/store"
)

func allocN(t *testing.T, c *store.Container[sumRec], n int) []*store.Record[sumRec] {
	t.Helper()
	var rs []*store.Record[sumRec]
	for range n {
		r, d := c.Allocate()
		if r == nil {
			t.Fatal("allocation failed")
		}
		r.Value.write(r.Index())
		r.Lock.DirtyToAllocated(d)
		rs = append(rs, r)
	}
	return rs
}

// TestContainerReclaim checks the policy: idle time measured across Reclaim
// calls, MinPages, KeepEmpty, pages in use kept, and the memory statistics.
func TestContainerReclaim(t *testing.T) {
	const idle = 10 * time.Second
	c := newSumContainer(t, store.ContainerConfig{PageSize: 4, MaxPages: 8, ReclaimIdle: idle, MinPages: 1})
	rs := allocN(t, c, 16) // pages 0..3, full
	for _, r := range rs[4:] {
		c.Free(r) // pages 1..3 empty
	}
	t0 := time.Unix(1000, 0)
	if n := c.Reclaim(t0); n != 0 {
		t.Fatalf("first Reclaim retired %d pages: the idle clock only starts", n)
	}
	if n := c.Reclaim(t0.Add(idle - time.Nanosecond)); n != 0 {
		t.Fatalf("Reclaim before the idle time retired %d pages", n)
	}
	if n := c.Reclaim(t0.Add(idle)); n != 2 {
		t.Fatalf("Reclaim after the idle time retired %d pages, want 2 (one empty page kept)", n)
	}
	if c.Pages() != 2 {
		t.Fatalf("%d pages left, want 2", c.Pages())
	}
	st := c.Stats()
	if st.CountAlloc != 4 || st.CountFree != 2 || st.CurrentCountUsed != 2 || st.HighCountUsed != 4 ||
		st.SumBytesFree != 2*st.PageBytes || st.HighBytesUsed != 4*st.PageBytes {
		t.Fatalf("stats after reclaim: %+v", st)
	}
	for _, r := range rs[:4] {
		if !store.PublishedForTest(c, r) {
			t.Fatal("a page with live records was retired")
		}
	}
	rows := store.AppendRows(c, nil, func(dst *sumRow, _ uint64, src *sumRec) { src.load(dst) })
	if len(rows) != 4 {
		t.Fatalf("%d rows after reclaim, want 4", len(rows))
	}

	// The remaining empty page is used and emptied between two Reclaims:
	// its clock restarts.
	more := allocN(t, c, 1)
	if more[0].Index()/4 == 0 {
		t.Fatalf("allocation went to the full page 0")
	}
	c.Free(more[0])
	t1 := t0.Add(2 * idle)
	if n := c.Reclaim(t1); n != 0 {
		t.Fatalf("a page used since the last Reclaim was retired (%d)", n)
	}
	// With the live records gone, only MinPages and KeepEmpty bound it.
	for _, r := range rs[:4] {
		c.Free(r)
	}
	n := c.Reclaim(t1.Add(idle)) // the used page's clock started at t1
	if n += c.Reclaim(t1.Add(2 * idle)); n != 1 || c.Pages() != 1 {
		t.Fatalf("retired %d, %d pages left; want 1 retired and MinPages=1 left", n, c.Pages())
	}

	// The container grows again into the freed slots, with distinct
	// indexes, and never hands out a record twice.
	rs = allocN(t, c, 32)
	idx := make([]uint64, len(rs))
	for i, r := range rs {
		idx[i] = r.Index()
	}
	slices.Sort(idx)
	if len(slices.Compact(idx)) != 32 || c.Pages() != 8 {
		t.Fatalf("after regrowth: %d distinct indexes, %d pages", len(slices.Compact(idx)), c.Pages())
	}
	if r, _ := c.Allocate(); r != nil || c.Lost() != 1 {
		t.Fatal("a full container after regrowth did not lose the allocation")
	}
}

// TestContainerReclaimOff checks that ReclaimIdle 0 retires nothing.
func TestContainerReclaimOff(t *testing.T) {
	c := newSumContainer(t, store.ContainerConfig{PageSize: 2, MaxPages: 4, KeepEmpty: -1})
	for _, r := range allocN(t, c, 8) {
		c.Free(r)
	}
	for i := range 3 {
		if n := c.Reclaim(time.Unix(int64(i)*1e6, 0)); n != 0 {
			t.Fatalf("Reclaim retired %d pages with reclamation off", n)
		}
	}
}

// FuzzContainer drives one goroutine's random allocate, rewrite, free and
// reclaim sequences against a sequential model: an allocation fails exactly
// when every record is live (nothing is skipped), a page is created only when
// all others are full, no live record's page is retired, and readers return
// exactly the live records.
func FuzzContainer(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 3, 3, 3, 0, 1})
	f.Add([]byte{0, 1, 0, 1, 0, 0, 3, 200, 3, 200, 2, 3, 250, 0, 0})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, ops []byte) {
		const pageSize, maxPages = 3, 4
		c := newSumContainer(t, store.ContainerConfig{PageSize: pageSize, MaxPages: maxPages, ReclaimIdle: 4 * time.Second, KeepEmpty: -1})
		store.StartNearWraparoundForTest(c, 1<<30-3, 1<<62-3)
		type live struct {
			r *store.Record[sumRec]
			x uint64
		}
		var model []live
		var lost uint64
		now := time.Unix(0, 0)
		for i := 0; i < len(ops); i++ {
			op, arg := ops[i]%4, 0
			if i+1 < len(ops) {
				arg = int(ops[i+1])
			}
			switch op {
			case 0: // allocate
				before := c.Pages()
				r, d := c.Allocate()
				if r == nil {
					lost++
					if len(model) != pageSize*maxPages {
						t.Fatalf("allocation failed with %d of %d records live", len(model), pageSize*maxPages)
					}
					continue
				}
				if c.Pages() > before && len(model) != before*pageSize {
					t.Fatalf("a page was created with %d records live in %d pages", len(model), before)
				}
				x := uint64(i)
				r.Value.write(x)
				r.Lock.DirtyToAllocated(d)
				model = append(model, live{r, x})
			case 1: // free
				if len(model) == 0 {
					continue
				}
				k := arg % len(model)
				c.Free(model[k].r)
				model = slices.Delete(model, k, k+1)
			case 2: // rewrite
				if len(model) == 0 {
					continue
				}
				k := arg % len(model)
				d := model[k].r.Lock.AllocatedToDirty()
				model[k].x += 1000
				model[k].r.Value.write(model[k].x)
				model[k].r.Lock.DirtyToAllocated(d)
			case 3: // time passes, reclaim
				now = now.Add(time.Duration(arg%8) * time.Second)
				c.Reclaim(now)
			}
			for _, l := range model {
				if !store.PublishedForTest(c, l.r) {
					t.Fatalf("op %d: a live record's page is not published", i)
				}
			}
		}
		if c.Lost() != lost {
			t.Fatalf("Lost = %d, model %d", c.Lost(), lost)
		}
		rows := store.AppendRows(c, nil, func(dst *sumRow, _ uint64, src *sumRec) { src.load(dst) })
		got := make([]uint64, 0, len(rows))
		for _, w := range rows {
			if !w.ok() {
				t.Fatalf("row breaks its invariant: %+v", w)
			}
			got = append(got, w.a)
		}
		want := make([]uint64, 0, len(model))
		for _, l := range model {
			want = append(want, l.x)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("readers see %v, live set is %v", got, want)
		}
		if st := c.Stats(); st.CurrentCountUsed != uint64(c.Pages()) || st.CountAlloc-st.CountFree != st.CurrentCountUsed {
			t.Fatalf("stats disagree with the page table: %+v, %d pages", st, c.Pages())
		}
	})
}
