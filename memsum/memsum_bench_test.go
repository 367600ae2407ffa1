package memsum

import "testing"

// BenchmarkStatAllocFree is the provider's cost: an Alloc and a Free on a
// thread's Stat, with the carries applied when a delta is non-zero (in the
// steady state never).
func BenchmarkStatAllocFree(b *testing.B) {
	var s Stat
	var acct, global Shared
	b.ReportAllocs()
	for b.Loop() {
		if d := s.Alloc(0, 64); !d.IsZero() {
			global.ApplyAllocDelta(acct.ApplyAllocDelta(d))
		}
		if d := s.Free(0, 64); !d.IsZero() {
			global.ApplyFreeDelta(acct.ApplyFreeDelta(d))
		}
	}
}

// BenchmarkStatAllocFreeParallel: one Stat per goroutine, as threads have.
func BenchmarkStatAllocFreeParallel(b *testing.B) {
	var acct, global Shared
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := new(struct {
			Stat
			_ [128]byte // no false sharing between goroutines' Stats
		})
		for pb.Next() {
			if d := s.Alloc(0, 64); !d.IsZero() {
				global.ApplyAllocDelta(acct.ApplyAllocDelta(d))
			}
			if d := s.Free(0, 64); !d.IsZero() {
				global.ApplyFreeDelta(acct.ApplyFreeDelta(d))
			}
		}
	})
}

// BenchmarkSharedAllocFree is the no-thread path: an Alloc and a Free on the
// global Shared, six atomic adds each.
func BenchmarkSharedAllocFree(b *testing.B) {
	var g Shared
	b.ReportAllocs()
	for b.Loop() {
		g.Alloc(64)
		g.Free(64)
	}
}

// BenchmarkStatLoad is a reader's consistent copy of an idle Stat.
func BenchmarkStatLoad(b *testing.B) {
	var s Stat
	s.Alloc(0, 64)
	b.ReportAllocs()
	var sink Row
	for b.Loop() {
		sink.Add(s.Load(0))
	}
	_ = sink
}

// BenchmarkRawPair is the baseline: the same pair of counter updates with
// plain fields, no seqlock.
func BenchmarkRawPair(b *testing.B) {
	var c struct{ n, sz uint64 }
	b.ReportAllocs()
	for b.Loop() {
		c.n++
		c.sz += 64
		c.n--
		c.sz -= 64
	}
}
