package digest

// Keywords of up to 8 bytes, which are most keywords in real statements,
// are also kept in a table keyed by the upper-cased name packed into a
// uint64: a lookup is one load, a few ALU operations to upper-case the
// eight bytes at once, one multiply and usually one compare.

type shortEntry struct {
	key      uint64 // the upper-case name, little endian; 0 marks an empty slot
	word     uint64 // tokOut[tok].word
	tok      uint16
	n        uint8 // tokOut[tok].n
	long     bool  // tokOut[tok].long
	funcOnly bool
	special  bool  // tokFlags[tok]&flagSpecial != 0
	hintable bool  // tokFlags[tok]&flagHintable != 0
	sets     uint8 // keywordEntry.sets
}

const shortBits = 11

var shortKeywords [1 << shortBits]shortEntry

// nameMask[n] keeps the low n bytes of a word.
var nameMask = func() (m [9]uint64) {
	for n := 1; n <= 8; n++ {
		m[n] = ^uint64(0) >> (64 - 8*n)
	}
	return m
}()

func shortSlot(key uint64) uint32 { return uint32((key * 0x9E3779B97F4A7C15) >> (64 - shortBits)) }

// upperWord upper-cases the ASCII letters of the 8 bytes in x, which must
// have no byte >= 0x80.
func upperWord(x uint64) uint64 {
	const ones = 0x0101010101010101
	const highs = 0x8080808080808080
	geA := x + (0x80-'a')*ones   // high bit set where byte >= 'a'
	gtZ := x + (0x80-'z'-1)*ones // high bit set where byte > 'z'
	lower := geA &^ gtZ & highs  // exactly the bytes in 'a'..'z'
	return x &^ (lower >> 2)     // clear 0x20 in those bytes
}

func insertShort(name string, tok uint16, funcOnly bool, sets uint8) {
	var key uint64
	for i := len(name) - 1; i >= 0; i-- {
		key = key<<8 | uint64(name[i])
	}
	for i := shortSlot(key); ; i = (i + 1) & (1<<shortBits - 1) {
		if shortKeywords[i].key == 0 {
			shortKeywords[i] = shortEntry{key: key, tok: tok, funcOnly: funcOnly, sets: sets}
			return
		}
	}
}

// findShort looks up name, 1 to 8 bytes long, starting at src[start]. ok
// is false when it is no keyword.
func findShort(src string, start, n int) (e *shortEntry, ok bool) {
	var x uint64
	if start+8 <= len(src) {
		s := src[start : start+8]
		x = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		x &= nameMask[n]
	} else {
		for i := n - 1; i >= 0; i-- {
			x = x<<8 | uint64(src[start+i])
		}
	}
	if x&0x8080808080808080 != 0 {
		return nil, false
	}
	return findShortKey(upperWord(x))
}

// findShortKey looks up the upper-case name packed in x.
func findShortKey(x uint64) (e *shortEntry, ok bool) {
	for i := shortSlot(x); ; i = (i + 1) & (1<<shortBits - 1) {
		e := &shortKeywords[i]
		if e.key == x {
			return e, true
		}
		if e.key == 0 {
			return nil, false
		}
	}
}
