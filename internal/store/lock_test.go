package store_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/internal/owned"
	"github.com/otelpfs/otelpfs/internal/store"
)

// TestLockTransitions walks the state diagram of Lock's documentation and
// checks the state and version after each step.
func TestLockTransitions(t *testing.T) {
	var l store.Lock
	check := func(step string, state store.LockState, version uint32) {
		t.Helper()
		if l.State() != state || l.Version() != version {
			t.Fatalf("%s: got %v(%d), want %v(%d)", step, l.State(), l.Version(), state, version)
		}
	}
	check("zero", store.LockFree, 0)
	if !l.IsFree() || l.IsPopulated() {
		t.Fatal("zero Lock: IsFree/IsPopulated wrong")
	}
	d, ok := l.FreeToDirty()
	if !ok {
		t.Fatal("FreeToDirty on FREE failed")
	}
	check("FreeToDirty", store.LockDirty, 0)
	if _, ok := l.FreeToDirty(); ok {
		t.Fatal("FreeToDirty on DIRTY succeeded")
	}
	l.DirtyToAllocated(d)
	check("DirtyToAllocated", store.LockAllocated, 1)
	if !l.IsPopulated() {
		t.Fatal("IsPopulated false when ALLOCATED")
	}
	if _, ok := l.FreeToDirty(); ok {
		t.Fatal("FreeToDirty on ALLOCATED succeeded")
	}
	d = l.AllocatedToDirty()
	check("AllocatedToDirty", store.LockDirty, 1)
	l.DirtyToAllocated(d)
	check("rewrite", store.LockAllocated, 2)
	l.AllocatedToFree()
	check("AllocatedToFree", store.LockFree, 2)
	d, _ = l.FreeToDirty()
	l.DirtyToFree(d)
	check("DirtyToFree", store.LockFree, 2)
	for _, s := range []store.LockState{store.LockFree, store.LockDirty, store.LockAllocated, 3} {
		if s.String() == "" {
			t.Fatalf("LockState(%d) has no name", s)
		}
	}
}

// TestLockOptimistic checks EndOptimistic against every kind of interference.
func TestLockOptimistic(t *testing.T) {
	var l store.Lock
	s := l.BeginOptimistic()
	if s.Allocated() || l.EndOptimistic(s) {
		t.Fatal("a FREE record validated")
	}
	d, _ := l.FreeToDirty()
	if s := l.BeginOptimistic(); l.EndOptimistic(s) {
		t.Fatal("a DIRTY record validated")
	}
	l.DirtyToAllocated(d)
	s = l.BeginOptimistic()
	if !s.Allocated() || s.Version() != 1 || !l.EndOptimistic(s) {
		t.Fatal("an untouched ALLOCATED record did not validate")
	}
	l.DirtyToAllocated(l.AllocatedToDirty())
	if l.EndOptimistic(s) {
		t.Fatal("a rewrite during the copy was not detected")
	}
	s = l.BeginOptimistic()
	l.AllocatedToFree()
	d, _ = l.FreeToDirty()
	l.DirtyToAllocated(d)
	if l.EndOptimistic(s) {
		t.Fatal("free and reuse during the copy (ABA) was not detected")
	}
}

// TestLockVersionWraparound runs transitions across the 30-bit version's
// wraparound.
func TestLockVersionWraparound(t *testing.T) {
	var l store.Lock
	const top = 1<<30 - 2
	store.SetLockWordForTest(&l, top<<2|uint32(store.LockAllocated))
	for i := range 5 {
		s := l.BeginOptimistic()
		want := uint32(top+i) % (1 << 30)
		if !s.Allocated() || s.Version() != want {
			t.Fatalf("step %d: version %d, want %d", i, s.Version(), want)
		}
		d := l.AllocatedToDirty()
		if l.State() != store.LockDirty || l.Version() != want {
			t.Fatalf("step %d: AllocatedToDirty gave %v(%d)", i, l.State(), l.Version())
		}
		l.DirtyToAllocated(d)
		if l.EndOptimistic(s) {
			t.Fatalf("step %d: rewrite across wraparound not detected", i)
		}
	}
}

// TestLockFreeToDirtyConcurrentSafe races goroutines on FreeToDirty: in every
// round exactly one wins.
func TestLockFreeToDirtyConcurrentSafe(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	const n = 4
	var l store.Lock
	var wins atomic.Int64
	for range rounds {
		var start, done sync.WaitGroup
		start.Add(1)
		for range n {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				if _, ok := l.FreeToDirty(); ok {
					wins.Add(1)
				}
			}()
		}
		start.Done()
		done.Wait()
		if l.State() != store.LockDirty {
			t.Fatalf("after a round the state is %v", l.State())
		}
		l.DirtyToFree(store.DirtyState(store.LockWordForTest(&l)))
	}
	if wins.Load() != int64(rounds) {
		t.Fatalf("%d winners in %d rounds", wins.Load(), rounds)
	}
}

// sumRec is a record whose invariant a torn copy breaks: sum == mix(a, b, c)
// and start <= end.
type sumRec struct {
	a, b, c    owned.Uint64
	start, end owned.Uint64
	sum        owned.Uint64
}

func mix(a, b, c, start, end uint64) uint64 {
	return (a*0x9E3779B97F4A7C15 ^ b*0xC2B2AE3D27D4EB4F ^ c) + start*31 + end
}

func (r *sumRec) write(x uint64) {
	a, b, c := x, x*3+1, ^x
	start, end := x, x+x%7
	r.a.Set(a)
	r.b.Set(b)
	r.c.Set(c)
	r.start.Set(start)
	r.end.Set(end)
	r.sum.Set(mix(a, b, c, start, end))
}

type sumRow struct{ a, b, c, start, end, sum uint64 }

func (r *sumRec) load(dst *sumRow) {
	*dst = sumRow{r.a.Load(), r.b.Load(), r.c.Load(), r.start.Load(), r.end.Load(), r.sum.Load()}
}

func (w *sumRow) ok() bool { return w.sum == mix(w.a, w.b, w.c, w.start, w.end) && w.start <= w.end }

// TestLockOptimisticConcurrentSafe: one owner rewrites, frees and reallocates
// a record under its Lock while readers copy it; every copy that validates
// satisfies the record's invariant.
func TestLockOptimisticConcurrentSafe(t *testing.T) {
	n := 300000
	if testing.Short() {
		n = 30000
	}
	var l store.Lock
	var rec sumRec
	store.SetLockWordForTest(&l, (1<<30-100)<<2) // FREE, near wraparound
	d, _ := l.FreeToDirty()
	rec.write(0)
	l.DirtyToAllocated(d)

	var start, done sync.WaitGroup
	start.Add(1)
	var stop atomic.Bool
	var valid atomic.Int64
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			var row sumRow
			for !stop.Load() {
				s := l.BeginOptimistic()
				rec.load(&row)
				if !l.EndOptimistic(s) {
					continue
				}
				if !row.ok() {
					t.Errorf("validated copy breaks the invariant: %+v", row)
					return
				}
				valid.Add(1)
			}
		}()
	}
	start.Done()
	for i := 1; i < n; i++ {
		if i%16 == 0 {
			l.AllocatedToFree()
			d, _ := l.FreeToDirty()
			rec.write(uint64(i))
			l.DirtyToAllocated(d)
			continue
		}
		d := l.AllocatedToDirty()
		rec.write(uint64(i))
		l.DirtyToAllocated(d)
	}
	for valid.Load() == 0 && !t.Failed() { // the record is stable now
		runtime.Gosched()
	}
	stop.Store(true)
	done.Wait()
}
