package memsum

import "testing"

// row builds a Row from the ten columns in table order.
func row(ca, cf, sa, sf uint64, lc, cc, hc, lb, cb, hb int64) Row {
	return Row{ca, cf, sa, sf, lc, cc, hc, lb, cb, hb}
}

const mb = 1 << 20

// TestStatRules follows the reference's per-thread update rules one
// operation at a time, with the delta each operation must carry.
func TestStatRules(t *testing.T) {
	type step struct {
		name  string
		alloc bool
		size  uint64
		delta [2]uint64 // count, size
		want  Row
	}
	steps := []step{
		{"first alloc is a new high", true, 100, [2]uint64{1, 100}, row(1, 0, 100, 0, 0, 1, 1, 0, 100, 100)},
		{"second alloc raises HIGH", true, 50, [2]uint64{1, 50}, row(2, 0, 150, 0, 0, 2, 2, 0, 150, 150)},
		{"free within LOW", false, 100, [2]uint64{}, row(2, 1, 150, 100, 0, 1, 2, 0, 50, 150)},
		{"alloc below HIGH carries nothing", true, 30, [2]uint64{}, row(3, 1, 180, 100, 0, 2, 2, 0, 80, 150)},
		{"alloc past HIGH carries the excess", true, 80, [2]uint64{1, 10}, row(4, 1, 260, 100, 0, 3, 3, 0, 160, 160)},
		{"free", false, 80, [2]uint64{}, row(4, 2, 260, 180, 0, 2, 3, 0, 80, 160)},
		{"free", false, 30, [2]uint64{}, row(4, 3, 260, 210, 0, 1, 3, 0, 50, 160)},
		{"free to zero", false, 50, [2]uint64{}, row(4, 4, 260, 260, 0, 0, 3, 0, 0, 160)},
		{"free of another thread's block: LOW goes negative", false, 10, [2]uint64{1, 10}, row(4, 5, 260, 270, -1, -1, 3, -10, -10, 160)},
		{"alloc back to zero", true, 10, [2]uint64{}, row(5, 5, 270, 270, -1, 0, 3, -10, 0, 160)},
	}
	var s Stat
	for i, st := range steps {
		var got [2]uint64
		if st.alloc {
			d := s.Alloc(0, st.size)
			got = [2]uint64{d.Count, d.Size}
		} else {
			d := s.Free(0, st.size)
			got = [2]uint64{d.Count, d.Size}
		}
		if got != st.delta {
			t.Errorf("step %d (%s): delta %v, want %v", i, st.name, got, st.delta)
		}
		if r := s.Load(0); r != st.want {
			t.Errorf("step %d (%s):\n got %+v\nwant %+v", i, st.name, r, st.want)
		}
	}
}

// TestSharedRules: the no-thread path and the carries on a Shared.
func TestSharedRules(t *testing.T) {
	var g Shared
	g.Alloc(100)
	g.Alloc(50)
	g.Free(100)
	if want := row(2, 1, 150, 100, 0, 1, 2, 0, 50, 150); g.Load() != want {
		t.Fatalf("after alloc, alloc, free: %+v, want %+v", g.Load(), want)
	}
	// Headroom 1 block, 100 bytes: a delta of 1 block and 30 bytes is
	// absorbed; then 1 block and 100 bytes leave 1 block and 30 bytes.
	if rest := g.ApplyAllocDelta(AllocDelta{1, 30}); !rest.IsZero() {
		t.Fatalf("absorbed delta left %+v", rest)
	}
	if rest := g.ApplyAllocDelta(AllocDelta{1, 100}); rest != (AllocDelta{1, 30}) {
		t.Fatalf("rest %+v, want {1 30}", rest)
	}
	if want := row(2, 1, 150, 100, 0, 1, 1, 0, 50, 50); g.Load() != want {
		t.Fatalf("after carries: %+v, want %+v", g.Load(), want)
	}
	// LOW headroom is 1 block, 50 bytes. A child's new low consumes it:
	// the parent's own LOW rises by what it absorbs, so the group's LOW
	// (children plus parent) falls only by the rest.
	if rest := g.ApplyFreeDelta(FreeDelta{2, 20}); rest != (FreeDelta{1, 0}) {
		t.Fatalf("free rest %+v, want {1 0}", rest)
	}
	if want := row(2, 1, 150, 100, 1, 1, 1, 20, 50, 50); g.Load() != want {
		t.Fatalf("after free carry: %+v, want %+v", g.Load(), want)
	}
	// An alloc past HIGH on the top Shared raises HIGH; a free below LOW
	// lowers LOW.
	g.Alloc(10)
	if want := row(3, 1, 160, 100, 1, 2, 2, 20, 60, 60); g.Load() != want {
		t.Fatalf("after alloc: %+v, want %+v", g.Load(), want)
	}
	g.Free(60)
	g.Free(1)
	if want := row(3, 3, 160, 161, 0, 0, 2, -1, -1, 60); g.Load() != want {
		t.Fatalf("after frees: %+v, want %+v", g.Load(), want)
	}
}

// TestAccountExample is the reference's example: thread 1 uses 1 to 2 MB,
// thread 2 uses 10 to 12 MB; their account shows 11 to 14 MB.
func TestAccountExample(t *testing.T) {
	var epoch uint64
	var t1, t2 Stat
	var acct, global Shared
	carry := func(d AllocDelta) { global.ApplyAllocDelta(acct.ApplyAllocDelta(d)) }
	carryFree := func(d FreeDelta) { global.ApplyFreeDelta(acct.ApplyFreeDelta(d)) }

	carry(t1.Alloc(epoch, 1*mb))
	carry(t2.Alloc(epoch, 10*mb))
	epoch++ // TRUNCATE: the marks start at the current usage
	acct.Rebase()
	global.Rebase()
	carry(t1.Alloc(epoch, 1*mb))
	carryFree(t1.Free(epoch, 1*mb))
	carry(t2.Alloc(epoch, 2*mb))
	carryFree(t2.Free(epoch, 2*mb))

	r1, r2 := t1.Load(epoch), t2.Load(epoch)
	if r1.LowNumberOfBytesUsed != 1*mb || r1.HighNumberOfBytesUsed != 2*mb {
		t.Fatalf("thread 1: %+v", r1)
	}
	if r2.LowNumberOfBytesUsed != 10*mb || r2.HighNumberOfBytesUsed != 12*mb {
		t.Fatalf("thread 2: %+v", r2)
	}
	sum := acct.Load()
	sum.Add(r1)
	sum.Add(r2)
	want := row(4, 2, 14*mb, 3*mb, 2, 2, 4, 11*mb, 11*mb, 14*mb)
	if sum != want {
		t.Fatalf("account:\n got %+v\nwant %+v", sum, want)
	}
}

// TestTruncate checks TRUNCATE's effect on each column, for a Stat whose
// owner has not written since (the reader rebases its copy), after the
// owner's next write (the owner rebased), and for a Shared.
func TestTruncate(t *testing.T) {
	cases := []struct {
		name string
		ops  []int64 // > 0 alloc, < 0 free
		want Row     // after TRUNCATE
	}{
		{"nothing", nil, Row{}},
		{"net allocation", []int64{100, 200, -100}, row(1, 0, 200, 0, 1, 1, 1, 200, 200, 200)},
		{"balanced", []int64{100, -100, 5, -5}, row(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"more freed than allocated", []int64{10, -10, -30, -7}, row(0, 2, 0, 37, -2, -2, -2, -37, -37, -37)},
		// Counts and bytes are rebased separately: 2 allocations of 10 and
		// 1 free of 30 leave 1 block but -10 bytes.
		{"counts and bytes apart", []int64{10, 10, -30}, row(1, 0, 0, 10, 1, 1, 1, -10, -10, -10)},
	}
	for _, c := range cases {
		var s Stat
		var g Shared
		for _, op := range c.ops {
			if op > 0 {
				s.Alloc(0, uint64(op))
				g.Alloc(uint64(op))
			} else {
				s.Free(0, uint64(-op))
				g.Free(uint64(-op))
			}
		}
		before := s.Load(0)
		if got := before.Rebase(); got != c.want {
			t.Errorf("%s: Row.Rebase\n got %+v\nwant %+v", c.name, got, c.want)
		}
		if got := s.Load(1); got != c.want {
			t.Errorf("%s: reader of a Stat not rebased yet\n got %+v\nwant %+v", c.name, got, c.want)
		}
		if got := s.Load(0); got != before {
			t.Errorf("%s: reader with the old epoch must see the old row\n got %+v\nwant %+v", c.name, got, before)
		}
		g.Rebase()
		if got := g.Load(); got != c.want {
			t.Errorf("%s: Shared.Rebase\n got %+v\nwant %+v", c.name, got, c.want)
		}
		// The owner rebases on its next write, then counts it: an alloc
		// and a free of 1 byte leave CURRENT as TRUNCATE left it and the
		// marks one block and one byte around it.
		s.Alloc(1, 1)
		s.Free(1, 1)
		w := c.want
		w.CountAlloc++
		w.CountFree++
		w.SumNumberOfBytesAlloc++
		w.SumNumberOfBytesFree++
		w.HighCountUsed++
		w.HighNumberOfBytesUsed++
		if got := s.Load(1); got != w {
			t.Errorf("%s: after the owner's catch-up\n got %+v\nwant %+v", c.name, got, w)
		}
		// A reader still on epoch 0 sees the Stat as it is: its epoch is
		// newer, not to be rebased again.
		if got := s.Load(0); got != w {
			t.Errorf("%s: reader behind the owner\n got %+v\nwant %+v", c.name, got, w)
		}
	}
}

// TestOwnershipMoving: thread A allocates, thread B frees. B's CURRENT and
// LOW go negative; the global row, the sum of every source, does not.
func TestOwnershipMoving(t *testing.T) {
	var a, b Stat
	var global Shared
	for range 3 {
		global.ApplyAllocDelta(a.Alloc(0, 100))
	}
	for range 3 {
		global.ApplyFreeDelta(b.Free(0, 100))
	}
	ra, rb := a.Load(0), b.Load(0)
	if want := row(3, 0, 300, 0, 0, 3, 3, 0, 300, 300); ra != want {
		t.Errorf("thread A\n got %+v\nwant %+v", ra, want)
	}
	if want := row(0, 3, 0, 300, -3, -3, 0, -300, -300, 0); rb != want {
		t.Errorf("thread B\n got %+v\nwant %+v", rb, want)
	}
	var sum Row
	sum.Add(ra)
	sum.Add(rb)
	sum.Add(global.Load())
	if want := row(3, 3, 300, 300, -3, 0, 3, -300, 0, 300); sum != want {
		t.Errorf("sum\n got %+v\nwant %+v", sum, want)
	}
	if want := row(3, 3, 300, 300, 0, 0, 3, 0, 0, 300); sum.Global() != want {
		t.Errorf("global row\n got %+v\nwant %+v", sum.Global(), want)
	}
	// A sum read at different moments can be negative for an instant:
	// Global never raises LOW above CURRENT.
	if g := row(0, 1, 0, 5, -3, -1, 0, -9, -5, 0).Global(); g.LowCountUsed != -1 || g.LowNumberOfBytesUsed != -5 || !g.Valid() {
		t.Errorf("Global of a negative CURRENT: %+v", g)
	}
}

// TestReassign ends threads and rolls them up, with rows computed by hand.
func TestReassign(t *testing.T) {
	// Thread: alloc 100 x3, free 100 x2, alloc 200, alloc 100, free 200:
	// CURRENT 2 blocks 200 bytes, LOW 0, HIGH 3 blocks 400 bytes.
	var s Stat
	for _, op := range []int64{100, 100, 100, -100, -100, 200, 100, -200} {
		if op > 0 {
			s.Alloc(0, uint64(op))
		} else {
			s.Free(0, uint64(-op))
		}
	}
	want := Counts{AllocCount: 5, FreeCount: 3, AllocSize: 600, FreeSize: 400,
		AllocCountCapacity: 1, AllocSizeCapacity: 200, FreeCountCapacity: 2, FreeSizeCapacity: 200}
	c := s.Drain(0)
	if c != want {
		t.Fatalf("Drain\n got %+v\nwant %+v", c, want)
	}
	if r := s.Load(0); r != (Row{}) {
		t.Fatalf("a drained Stat reads %+v", r)
	}
	toParents, toGlobal := c.Reassign()
	// Net 2 blocks and 200 bytes go to the global bucket with as much LOW
	// headroom; the parents keep 3 balanced blocks and 400 balanced bytes
	// and the HIGH headroom.
	if w := (Counts{AllocCount: 3, FreeCount: 3, AllocSize: 400, FreeSize: 400,
		AllocCountCapacity: 1, AllocSizeCapacity: 200}); toParents != w {
		t.Errorf("toParents\n got %+v\nwant %+v", toParents, w)
	}
	if w := (Counts{AllocCount: 2, AllocSize: 200, FreeCountCapacity: 2, FreeSizeCapacity: 200}); toGlobal != w {
		t.Errorf("toGlobal\n got %+v\nwant %+v", toGlobal, w)
	}
	var acct, global Shared
	acct.Aggregate(toParents)
	global.Aggregate(toGlobal)
	if w := row(3, 3, 400, 400, 0, 0, 1, 0, 0, 200); acct.Load() != w {
		t.Errorf("account row\n got %+v\nwant %+v", acct.Load(), w)
	}
	if w := row(2, 0, 200, 0, 0, 2, 2, 0, 200, 200); global.Load() != w {
		t.Errorf("global Shared row\n got %+v\nwant %+v", global.Load(), w)
	}
	sum := acct.Load()
	sum.Add(global.Load())
	if sum != c.Row() {
		t.Errorf("the global row changed: %+v, was %+v", sum, c.Row())
	}

	// A thread that freed more than it allocated: everything to the parents.
	nominal := Counts{AllocCount: 2, FreeCount: 4, AllocSize: 20, FreeSize: 90, AllocCountCapacity: 3, FreeSizeCapacity: 7}
	if p, g := nominal.Reassign(); p != nominal || g != (Counts{}) {
		t.Errorf("nominal reassign: %+v %+v", p, g)
	}
	// Net larger than the low headroom (after a TRUNCATE): all the headroom
	// goes to the global bucket. Counts and bytes apart: blocks balanced,
	// bytes net.
	leak := Counts{AllocCount: 4, FreeCount: 4, AllocSize: 500, FreeSize: 100, FreeCountCapacity: 1, FreeSizeCapacity: 50}
	p, g := leak.Reassign()
	if w := (Counts{AllocCount: 4, FreeCount: 4, AllocSize: 100, FreeSize: 100, FreeCountCapacity: 1}); p != w {
		t.Errorf("leak toParents %+v, want %+v", p, w)
	}
	if w := (Counts{AllocSize: 400, FreeSizeCapacity: 50}); g != w {
		t.Errorf("leak toGlobal %+v, want %+v", g, w)
	}
}

// TestPartial: MySQL's partial aggregate of a live source, and
// Shared.MoveBalanced doing it on a Shared.
func TestPartial(t *testing.T) {
	c := Counts{AllocCount: 7, FreeCount: 3, AllocSize: 50, FreeSize: 80,
		AllocCountCapacity: 1, AllocSizeCapacity: 2, FreeCountCapacity: 3, FreeSizeCapacity: 4}
	moved, kept := c.Partial()
	if w := (Counts{AllocCount: 3, FreeCount: 3, AllocSize: 50, FreeSize: 50,
		AllocCountCapacity: 1, AllocSizeCapacity: 2, FreeCountCapacity: 3, FreeSizeCapacity: 4}); moved != w {
		t.Errorf("moved %+v, want %+v", moved, w)
	}
	if w := (Counts{AllocCount: 4, FreeSize: 30}); kept != w {
		t.Errorf("kept %+v, want %+v", kept, w)
	}
	if kept != c.Rebase() || c.Rebase().Row() != c.Row().Rebase() {
		t.Errorf("Rebase differs from Partial's kept part")
	}
	var s Shared
	s.Aggregate(c)
	if m := s.MoveBalanced(); m != moved || s.LoadCounts() != kept {
		t.Errorf("MoveBalanced moved %+v kept %+v", m, s.LoadCounts())
	}
}

// TestRowValid: Valid catches each broken invariant.
func TestRowValid(t *testing.T) {
	good := row(5, 2, 50, 20, 1, 3, 4, 10, 30, 40)
	if !good.Valid() {
		t.Fatal("a good row is not Valid")
	}
	for i, bad := range []Row{
		row(5, 2, 50, 20, 1, 2, 4, 10, 30, 40),
		row(5, 2, 50, 20, 1, 3, 4, 10, 31, 40),
		row(5, 2, 50, 20, 4, 3, 4, 10, 30, 40),
		row(5, 2, 50, 20, 1, 3, 2, 10, 30, 40),
		row(5, 2, 50, 20, 1, 3, 4, 31, 30, 40),
		row(5, 2, 50, 20, 1, 3, 4, 10, 30, 29),
	} {
		if bad.Valid() {
			t.Errorf("bad row %d is Valid: %+v", i, bad)
		}
	}
}

// TestHotPathAllocs pins the provider path at zero allocations.
func TestHotPathAllocs(t *testing.T) {
	var s Stat
	var g Shared
	if n := testing.AllocsPerRun(100, func() {
		g.ApplyAllocDelta(s.Alloc(0, 64))
		g.ApplyFreeDelta(s.Free(0, 64))
		g.Alloc(64)
		g.Free(64)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}
