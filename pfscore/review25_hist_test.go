package pfscore

import (
	"math"
	"testing"
)

// TestReview25HistBucketBounds checks histBucket against the search at
// every bound and one either side of it, at histBaseTimer's neighbours and
// at the top of the range (bucket 449 up to math.MaxUint64).
func TestReview25HistBucketBounds(t *testing.T) {
	check := func(ps uint64) {
		t.Helper()
		if got, want := histBucket(ps), histBucketSearch(ps, 0, histBuckets); got != want {
			t.Fatalf("histBucket(%d) = %d, want %d", ps, got, want)
		}
	}
	for i := 1; i < histBuckets; i++ {
		b := histBounds[i]
		for _, d := range []int64{-2, -1, 0, 1, 2} {
			check(uint64(int64(b) + d))
		}
	}
	for _, ps := range []uint64{0, 1, histBaseTimer - 1, histBaseTimer, histBaseTimer + 1,
		math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1} {
		check(ps)
	}
	if histBucket(math.MaxUint64) != histBuckets-1 || histBucket(histBounds[histBuckets-1]) != histBuckets-1 ||
		histBucket(histBounds[histBuckets-1]-1) != histBuckets-2 {
		t.Fatal("bucket 449's edges")
	}
	// Every power of two and its neighbours.
	for n := 0; n < 64; n++ {
		p := uint64(1) << n
		check(p - 1)
		check(p)
		check(p + 1)
	}
}
