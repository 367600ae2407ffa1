package rings

import "math/bits"

// divisor computes n mod d for tickets n < 2^63 without a DIV instruction,
// which costs 5-15 ns on the machines otelpfs targets, more than the rest of
// an append's slot arithmetic.
//
// For d a power of two it masks. Otherwise it uses the round-up method of
// Granlund and Montgomery ("Division by invariant integers using
// multiplication", PLDI 1994, theorem 4.2) with N = 63-bit numerators: with
// l = ceil(log2 d) and m = ceil(2^(63+l) / d), m fits in 64 bits because
// 2^(l-1) < d, m*d - 2^(63+l) < d <= 2^l, and therefore
// floor(n/d) = floor(m*n / 2^(63+l)) = hi64(m*n) >> (l-1) for every n < 2^63.
type divisor struct {
	d     uint64
	m     uint64 // the magic multiplier, 0 when d is a power of two
	shift uint   // l-1
	mask  uint64 // d-1 when d is a power of two
}

func newDivisor(d uint64) divisor {
	if d == 0 {
		panic("pfs: BUG: rings: divisor of zero")
	}
	if d&(d-1) == 0 {
		return divisor{d: d, mask: d - 1}
	}
	l := uint(bits.Len64(d - 1)) // ceil(log2 d), >= 2 here
	q, r := bits.Div64(1<<(l-1), 0, d)
	if r != 0 {
		q++
	}
	return divisor{d: d, m: q, shift: l - 1}
}

// mod returns n mod d. n must be below 2^63.
func (v *divisor) mod(n uint64) uint64 {
	if v.m == 0 {
		return n & v.mask
	}
	hi, _ := bits.Mul64(n, v.m)
	return n - (hi>>v.shift)*v.d
}
