package rings

import "testing"

var sink uint64

// BenchmarkModDiv and BenchmarkModMagic compare the DIV instruction with the
// divisor's multiply for the global ring's slot arithmetic.
func BenchmarkModDiv(b *testing.B) {
	d := uint64(10000)
	if sink == 1 {
		d++ // keep d a variable, as a ring's size is
	}
	for i := uint64(1 << 40); b.Loop(); i++ {
		sink += i % d
	}
}

func BenchmarkModMagic(b *testing.B) {
	v := newDivisor(10000)
	for i := uint64(1 << 40); b.Loop(); i++ {
		sink += v.mod(i)
	}
}
