package store_test

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/internal/store"
)

func newSumContainer(t testing.TB, cfg store.ContainerConfig) *store.Container[sumRec] {
	t.Helper()
	c, err := store.NewContainer[sumRec]("test_records", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewContainerErrors(t *testing.T) {
	for name, cfg := range map[string]store.ContainerConfig{
		"negative page size": {PageSize: -1},
		"negative max pages": {MaxPages: -1},
		"too many records":   {PageSize: 1 << 20, MaxPages: 1 << 13},
		"negative idle":      {ReclaimIdle: -time.Second},
		"negative min pages": {MinPages: -1},
	} {
		if _, err := store.NewContainer[sumRec]("x", cfg); !errors.Is(err, store.ErrContainerConfig) {
			t.Errorf("%s: err = %v, want ErrContainerConfig", name, err)
		}
	}
	if _, err := store.NewContainer[sumRec]("", store.ContainerConfig{}); !errors.Is(err, store.ErrContainerConfig) {
		t.Errorf("empty name: err = %v", err)
	}
	type withPointer struct {
		n uint64
		s []byte
	}
	_ = withPointer{n: 1, s: nil}
	if _, err := store.NewContainer[withPointer]("x", store.ContainerConfig{}); !errors.Is(err, store.ErrContainerConfig) {
		t.Errorf("record with a pointer: err = %v", err)
	}
	if _, err := store.NewContainer[[4]sumRec]("x", store.ContainerConfig{}); err != nil {
		t.Errorf("pointer-free array record: %v", err)
	}
	c := store.MustNewContainer[sumRec]("mutex_instances", store.ContainerConfig{})
	if c.Name() != "memory/performance_schema/mutex_instances" || c.PageSize() != 256 {
		t.Errorf("defaults: name %q, page size %d", c.Name(), c.PageSize())
	}
}

// TestContainerFillAndLose fills a container to its last record: no
// allocation fails before it is full, the next ones are lost, and a freed
// record is found again whichever it is.
func TestContainerFillAndLose(t *testing.T) {
	const pageSize, maxPages = 8, 3
	c := newSumContainer(t, store.ContainerConfig{PageSize: pageSize, MaxPages: maxPages})
	var recs []*store.Record[sumRec]
	seen := map[uint64]bool{}
	for i := range pageSize * maxPages {
		r, d := c.Allocate()
		if r == nil {
			t.Fatalf("allocation %d failed with room left", i)
		}
		if seen[r.Index()] {
			t.Fatalf("index %d handed out twice", r.Index())
		}
		seen[r.Index()] = true
		r.Value.write(uint64(i))
		r.Lock.DirtyToAllocated(d)
		recs = append(recs, r)
		if want := i/pageSize + 1; c.Pages() != want {
			t.Fatalf("after %d allocations: %d pages, want %d", i+1, c.Pages(), want)
		}
	}
	for i := range 3 {
		if r, _ := c.Allocate(); r != nil {
			t.Fatal("allocation succeeded in a full container")
		}
		if c.Lost() != uint64(i+1) {
			t.Fatalf("lost = %d, want %d", c.Lost(), i+1)
		}
	}
	for _, k := range []int{0, 13, 23, 7} {
		c.Free(recs[k])
		r, d := c.Allocate()
		if r != recs[k] {
			t.Fatalf("after freeing record %d the allocation got %v", k, r)
		}
		r.Lock.DirtyToAllocated(d)
	}
	if c.InUse() != pageSize*maxPages {
		t.Fatalf("InUse = %d", c.InUse())
	}
	st := c.Stats()
	if st.Lost != 3 || st.CurrentCountUsed != maxPages || st.HighCountUsed != maxPages || st.CountAlloc != maxPages ||
		st.CurrentBytesUsed != maxPages*st.PageBytes || st.RecordCapacity != pageSize*maxPages || st.PageBytes < pageSize*st.RecordSize {
		t.Fatalf("stats: %+v", st)
	}
}

// TestContainerRead checks All, AppendRows and Get against the records
// written, including DIRTY and freed ones, which readers must not return.
func TestContainerRead(t *testing.T) {
	c := newSumContainer(t, store.ContainerConfig{PageSize: 4, MaxPages: 4})
	want := map[uint64]uint64{} // index -> a
	var recs []*store.Record[sumRec]
	for i := range 10 {
		r, d := c.Allocate()
		r.Value.write(uint64(100 + i))
		r.Lock.DirtyToAllocated(d)
		recs = append(recs, r)
		want[r.Index()] = uint64(100 + i)
	}
	c.Free(recs[3])
	delete(want, recs[3].Index())
	dirty, _ := c.Allocate() // allocated, never published
	rows := store.AppendRows(c, nil, func(dst *sumRow, _ uint64, src *sumRec) { src.load(dst) })
	if len(rows) != len(want) {
		t.Fatalf("AppendRows returned %d rows, want %d", len(rows), len(want))
	}
	n := 0
	last := int64(-1)
	for idx, r := range c.All() {
		if int64(idx) <= last {
			t.Fatalf("All not in index order: %d after %d", idx, last)
		}
		last = int64(idx)
		var row sumRow
		s := r.Lock.BeginOptimistic()
		r.Value.load(&row)
		if !r.Lock.EndOptimistic(s) || !row.ok() || want[idx] != row.a {
			t.Fatalf("All: index %d row %+v", idx, row)
		}
		if c.Get(idx) != r {
			t.Fatalf("Get(%d) is not the record All returned", idx)
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("All visited %d records, want %d", n, len(want))
	}
	for range c.All() {
		break // early exit must not panic
	}
	if c.Get(dirty.Index()) != nil || c.Get(recs[3].Index()) != nil || c.Get(1<<40) != nil {
		t.Fatal("Get returned a record that is not ALLOCATED")
	}
}

// TestContainerZeroAllocs pins the write side at 0 allocations per
// operation once the pages exist.
func TestContainerZeroAllocs(t *testing.T) {
	c := newSumContainer(t, store.ContainerConfig{PageSize: 64, MaxPages: 2})
	r, d := c.Allocate()
	r.Lock.DirtyToAllocated(d)
	c.Free(r)
	if n := testing.AllocsPerRun(1000, func() {
		r, d := c.Allocate()
		r.Value.write(7)
		r.Lock.DirtyToAllocated(d)
		d = r.Lock.AllocatedToDirty()
		r.Value.write(8)
		r.Lock.DirtyToAllocated(d)
		c.Free(r)
	}); n != 0 {
		t.Fatalf("allocate/write/free: %v allocs per run", n)
	}
	rows := make([]sumRow, 0, 16)
	if n := testing.AllocsPerRun(100, func() {
		rows = store.AppendRows(c, rows[:0], func(dst *sumRow, _ uint64, src *sumRec) { src.load(dst) })
	}); n != 0 {
		t.Fatalf("AppendRows into a large enough slice: %v allocs per run", n)
	}
}

// TestContainerConcurrentSafe: writers allocate, publish, rewrite and free
// records while readers scan with AppendRows and All and a reclaimer retires
// idle pages; every row a reader returns satisfies the record's invariant,
// and every record a writer holds stays in a published page. Versions and
// frees counters start near their wraparound.
func TestContainerConcurrentSafe(t *testing.T) {
	dur := 2 * time.Second
	if testing.Short() {
		dur = 200 * time.Millisecond
	}
	c := newSumContainer(t, store.ContainerConfig{PageSize: 16, MaxPages: 12, ReclaimIdle: time.Millisecond, KeepEmpty: -1})
	store.StartNearWraparoundForTest(c, 1<<30-50, 1<<62-20)

	var start, done sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	var rows, writes atomic.Int64
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		stop.Store(true)
	}
	for w := range 4 {
		done.Add(1)
		go func() {
			defer done.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var held []*store.Record[sumRec]
			limit := 8
			start.Wait()
			for !stop.Load() {
				if rng.IntN(2000) == 0 { // bursts grow the container; calm lets Reclaim shrink it
					limit = 48 - limit
				}
				switch op := rng.IntN(10); {
				case op < 4 && len(held) < limit:
					r, d := c.Allocate()
					if r == nil {
						continue
					}
					r.Value.write(rng.Uint64())
					if rng.IntN(8) == 0 {
						c.Free(r) // abandon while DIRTY
						continue
					}
					r.Lock.DirtyToAllocated(d)
					held = append(held, r)
				case op < 7 && len(held) > 0:
					r := held[rng.IntN(len(held))]
					d := r.Lock.AllocatedToDirty()
					r.Value.write(rng.Uint64())
					r.Lock.DirtyToAllocated(d)
				case len(held) > 0:
					k := rng.IntN(len(held))
					if !store.PublishedForTest(c, held[k]) {
						fail("a held record's page was retired")
						return
					}
					c.Free(held[k])
					held[k] = held[len(held)-1]
					held = held[:len(held)-1]
				}
				writes.Add(1)
			}
			for _, r := range held {
				c.Free(r)
			}
		}()
	}
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			var buf []sumRow
			start.Wait()
			for !stop.Load() {
				buf = store.AppendRows(c, buf[:0], func(dst *sumRow, _ uint64, src *sumRec) { src.load(dst) })
				for i := range buf {
					if !buf[i].ok() {
						fail("AppendRows returned a torn row: %+v", buf[i])
						return
					}
				}
				for _, r := range c.All() {
					var row sumRow
					s := r.Lock.BeginOptimistic()
					r.Value.load(&row)
					if r.Lock.EndOptimistic(s) && !row.ok() {
						fail("All: validated copy is torn: %+v", row)
						return
					}
				}
				rows.Add(int64(len(buf)))
			}
		}()
	}
	done.Add(1)
	go func() {
		defer done.Done()
		now := time.Unix(0, 0)
		start.Wait()
		for !stop.Load() {
			now = now.Add(time.Millisecond)
			c.Reclaim(now)
			_ = c.Stats()
			runtime.Gosched()
		}
	}()
	start.Done()
	time.Sleep(dur)
	stop.Store(true)
	done.Wait()
	if rows.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("no progress: %d rows read, %d writes", rows.Load(), writes.Load())
	}
	if n := c.InUse(); n != 0 {
		t.Fatalf("%d records in use after every writer freed its own", n)
	}
	st := c.Stats()
	t.Logf("writes %d, rows read %d, pages created %d, retired %d, lost %d",
		writes.Load(), rows.Load(), st.CountAlloc, st.CountFree, st.Lost)
}

// pageGrowth runs n goroutines that each allocate up to share records and
// free them all, again and again, so that the live set never exceeds
// n*share records, and returns the container's page high-water mark.
func pageGrowth(t *testing.T, c *store.Container[sumRec], n, share int, dur time.Duration) uint64 {
	var start, done sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	for g := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			held := make([]*store.Record[sumRec], 0, share)
			start.Wait()
			for !stop.Load() {
				k := share - rng.IntN(share/4+1) // most rounds fill the share
				for len(held) < k {
					r, d := c.Allocate()
					if r == nil {
						t.Error("allocation lost with room for the whole live set")
						return
					}
					r.Lock.DirtyToAllocated(d)
					held = append(held, r)
				}
				rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
				m := 1 + rng.IntN(len(held))
				for _, r := range held[:m] {
					c.Free(r)
				}
				held = append(held[:0], held[m:]...)
			}
		}()
	}
	start.Done()
	time.Sleep(dur)
	stop.Store(true)
	done.Wait()
	return c.Stats().HighCountUsed
}

// TestContainerPageGrowthConcurrentSafe is the page-growth guarantee: with
// more allocating goroutines than cores and a live set that always fits in K
// pages, the container never holds more than K+1 pages.
func TestContainerPageGrowthConcurrentSafe(t *testing.T) {
	const pageSize, k, n = 32, 4, 8 // n goroutines share k pages
	dur := time.Second
	if testing.Short() {
		dur = 150 * time.Millisecond
	}
	c := newSumContainer(t, store.ContainerConfig{PageSize: pageSize, MaxPages: 64})
	high := pageGrowth(t, c, n, k*pageSize/n, dur)
	t.Logf("live set <= %d pages of %d records, %d goroutines on %d CPUs: high-water %d pages", k, pageSize, n, runtime.NumCPU(), high)
	if high > k+1 {
		t.Fatalf("the container grew to %d pages; the live set fits in %d", high, k)
	}
}

// TestContainerPageGrowthSharedCounter runs the same load against MySQL's
// allocation (a shared counter advanced by every failure, test-only) to show
// that the K+1 test catches that flaw. The flaw needs an unlucky interleaving,
// so the test runs short rounds until one exceeds K+1 pages, for a bounded
// time. On amd64 it takes a few rounds (6 to 11 pages); on a machine busy
// with other work, or under emulation, the interleaving may not come within
// the bound, and the test skips, saying so: that is no evidence either way.
func TestContainerPageGrowthSharedCounter(t *testing.T) {
	const pageSize, k, n = 32, 4, 8
	budget, dur := 10*time.Second, 250*time.Millisecond
	if testing.Short() {
		budget, dur = 3*time.Second, 100*time.Millisecond
	}
	var highs []uint64
	for deadline := time.Now().Add(budget); time.Now().Before(deadline); {
		c := newSumContainer(t, store.ContainerConfig{PageSize: pageSize, MaxPages: 64})
		store.UseSharedCounterForTest(c)
		high := pageGrowth(t, c, n, k*pageSize/n, dur)
		highs = append(highs, high)
		if high > k+1 {
			t.Logf("shared counter: high-water %d pages for a live set of %d pages (round %d)", high, k, len(highs))
			return
		}
	}
	t.Skipf("the flawed allocation stayed within %d pages in every round for %v (%v): inconclusive on this machine now (%s)", k+1, budget, highs, runtime.GOARCH)
}
