package memsum

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStatConcurrentSafe runs owners allocating and freeing on their Stats
// and carrying into an account and a global Shared, a goroutine on the
// global no-thread path, a truncating goroutine, and readers that load every
// source continuously. Every row a reader sees must satisfy the invariants,
// and a source's cumulative columns must never decrease between two reads
// with no TRUNCATE in between. At the end, each CURRENT must equal what its
// writers counted.
//
// Even owners use blocks of one size only (lockstep): every consistent row
// of theirs has each byte column equal to lockstep times its count column,
// which a torn copy (counts from one write, bytes from another) breaks.
func TestStatConcurrentSafe(t *testing.T) {
	const owners = 3
	n := 200000
	if testing.Short() {
		n = 20000
	}
	var (
		stats  [owners]Stat
		acct   Shared
		global Shared
		epoch  atomic.Uint64
		// trunc is odd while a TRUNCATE runs (epoch bumped, Shareds
		// being rebased), so readers know when not to compare.
		trunc atomic.Uint64
		fence [owners]sync.RWMutex // an owner's operation against a TRUNCATE
	)
	type net struct{ count, size int64 }
	var nets [owners + 1]net // per owner, and the no-thread path

	var start, writers, readers sync.WaitGroup
	start.Add(1)
	for o := range owners {
		writers.Add(1)
		go func() {
			defer writers.Done()
			start.Wait()
			r := rand.New(rand.NewPCG(uint64(o), 1))
			s := &stats[o]
			var live []uint64
			var nt net
			for range n {
				// The epoch an owner passes is current while its operation
				// runs (see Stat, "Epochs"): the TRUNCATE waits for the
				// operation, as an engine's does for a thread's write.
				fence[o].RLock()
				e := epoch.Load()
				switch x := r.IntN(10); {
				case x < 5 || len(live) == 0:
					size := 1 + r.Uint64N(4096)
					if o%2 == 0 {
						size = lockstep
					}
					live = append(live, size)
					if d := s.Alloc(e, size); !d.IsZero() {
						global.ApplyAllocDelta(acct.ApplyAllocDelta(d))
					}
					nt.count++
					nt.size += int64(size)
				default:
					size := live[len(live)-1]
					live = live[:len(live)-1]
					if x == 9 {
						size = 1 + r.Uint64N(100) // a block another thread allocated
						if o%2 == 0 {
							size = lockstep
						}
					}
					if d := s.Free(e, size); !d.IsZero() {
						global.ApplyFreeDelta(acct.ApplyFreeDelta(d))
					}
					nt.count--
					nt.size -= int64(size)
				}
				fence[o].RUnlock()
			}
			nets[o] = nt
		}()
	}
	writers.Add(1)
	go func() { // the no-thread path
		defer writers.Done()
		start.Wait()
		r := rand.New(rand.NewPCG(99, 2))
		var nt net
		for range n / 4 {
			size := 1 + r.Uint64N(512)
			global.Alloc(size)
			if r.IntN(3) > 0 {
				global.Free(size)
				nt.count--
				nt.size -= int64(size)
			}
			nt.count++
			nt.size += int64(size)
		}
		nets[owners] = nt
	}()
	var stop atomic.Bool
	readers.Add(1)
	go func() { // TRUNCATE now and then, until the readers stop
		defer readers.Done()
		start.Wait()
		for !stop.Load() {
			for range 20 {
				runtime.Gosched()
			}
			trunc.Add(1)
			for o := range owners {
				fence[o].Lock()
			}
			epoch.Add(1)
			for o := range owners {
				fence[o].Unlock()
			}
			acct.Rebase()
			global.Rebase()
			trunc.Add(1)
		}
	}()

	var reads atomic.Int64
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			start.Wait()
			const sources = owners + 2
			var last [sources]Row
			var lastTrunc [sources]uint64
			for i := range lastTrunc {
				lastTrunc[i] = 1 // odd: nothing to compare with yet
			}
			for !stop.Load() {
				for src := range sources {
					t1 := trunc.Load()
					e := epoch.Load()
					var r Row
					switch {
					case src < owners:
						var ok bool
						if r, ok = stats[src].TryLoad(e); !ok {
							continue
						}
					case src == owners:
						r = acct.Load()
					default:
						r = global.Load()
					}
					t2 := trunc.Load()
					reads.Add(1)
					if !r.Valid() {
						t.Errorf("source %d: torn or invalid row %+v", src, r)
						return
					}
					if src < owners && src%2 == 0 && !inLockstep(r) {
						t.Errorf("source %d: torn row %+v", src, r)
						return
					}
					p := last[src]
					if t1 == t2 && t1&1 == 0 && lastTrunc[src] == t1 &&
						(r.CountAlloc < p.CountAlloc || r.CountFree < p.CountFree ||
							r.SumNumberOfBytesAlloc < p.SumNumberOfBytesAlloc ||
							r.SumNumberOfBytesFree < p.SumNumberOfBytesFree) {
						t.Errorf("source %d: cumulative columns went down with no TRUNCATE:\nbefore %+v\nafter  %+v", src, p, r)
						return
					}
					last[src] = r
					lastTrunc[src] = t1
					if t1 != t2 {
						lastTrunc[src] = 1
					}
				}
			}
		}()
	}
	start.Done()
	writers.Wait()
	for reads.Load() < 1000 && !t.Failed() {
		runtime.Gosched()
	}
	stop.Store(true)
	readers.Wait()

	e := epoch.Load()
	var total net
	for o := range owners {
		r := stats[o].Load(e)
		if r.CurrentCountUsed != nets[o].count || r.CurrentNumberOfBytesUsed != nets[o].size {
			t.Errorf("owner %d: CURRENT %d blocks %d bytes, counted %+v", o, r.CurrentCountUsed, r.CurrentNumberOfBytesUsed, nets[o])
		}
		total.count += nets[o].count
		total.size += nets[o].size
	}
	g := global.Load()
	if g.CurrentCountUsed != nets[owners].count || g.CurrentNumberOfBytesUsed != nets[owners].size {
		t.Errorf("global Shared: CURRENT %d blocks %d bytes, counted %+v", g.CurrentCountUsed, g.CurrentNumberOfBytesUsed, nets[owners])
	}
	if a := acct.Load(); a.CurrentCountUsed != 0 || a.CurrentNumberOfBytesUsed != 0 || !a.Valid() {
		t.Errorf("account Shared holds only carries, yet reads %+v", a)
	}
}

const lockstep = 64

func inLockstep(r Row) bool {
	return r.SumNumberOfBytesAlloc == lockstep*r.CountAlloc && r.SumNumberOfBytesFree == lockstep*r.CountFree &&
		r.LowNumberOfBytesUsed == lockstep*r.LowCountUsed && r.HighNumberOfBytesUsed == lockstep*r.HighCountUsed
}
