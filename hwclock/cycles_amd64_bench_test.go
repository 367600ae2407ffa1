//go:build amd64 && !hwclock_portable

package hwclock

import "testing"

// The three TSC reads CYCLE could use; cycles_amd64.go says why it uses
// plain RDTSC.

var sink uint64

func BenchmarkRawRDTSC(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink += rdtsc()
	}
}

func BenchmarkRawRDTSCP(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink += rdtscp()
	}
}

func BenchmarkRawLFENCERDTSC(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink += lfenceRdtsc()
	}
}

func TestTSCVariantsAgree(t *testing.T) {
	a := rdtsc()
	b := rdtscp()
	c := lfenceRdtsc()
	d := rdtsc()
	if !(a <= b && b <= c && c <= d) {
		t.Errorf("TSC reads out of order: %d %d %d %d", a, b, c, d)
	}
}
