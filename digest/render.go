package digest

import (
	"encoding/binary"
	"unicode/utf8"
)

// maxIdentRender is the longest identifier, in bytes, DIGEST_TEXT prints:
// MySQL converts identifiers to utf8mb3 into a NAME_LEN (64 characters, 192
// bytes) buffer and prints "..." for one whose worst-case conversion would
// not fit, that is one longer than 64 bytes.
const maxIdentRender = 64

// maxTextPerByte bounds how many bytes of DIGEST_TEXT one byte of token
// stream can print: the longest token text plus its space, for a 2-byte
// token (identifiers print at most their length plus 3).
var maxTextPerByte int

// tokOut is each token's printed form with its trailing space, when it has
// one: the first 8 bytes as one word (stored in one move), the length, and
// whether it ends in a space. Longer forms are copied from tokText.
type outForm struct {
	word   uint64
	n      uint8
	spaced bool
	long   bool
}

var tokOut [maxToken]outForm

func initRender() {
	longest := 0
	for t := range tokText {
		s := tokText[t]
		if tokFlags[t]&flagAppendSpace != 0 && s != "" {
			s += " "
		}
		var w [8]byte
		copy(w[:], s)
		tokOut[t] = outForm{
			word:   binary.LittleEndian.Uint64(w[:]),
			n:      uint8(len(s)),
			spaced: len(s) > 0 && s[len(s)-1] == ' ',
			long:   len(s) > 8,
		}
		longest = max(longest, len(s))
	}
	maxTextPerByte = (longest + 1) / 2
	if longest+8 > textSlack {
		panic("digest: BUG: textSlack too small")
	}
}

// renderText appends the DIGEST_TEXT of the token stream toks to dst, the way
// MySQL 8.0's compute_digest_text prints it: tokens separated by one space
// (none after '@', none after an identifier before "@query_block"),
// identifiers back-quoted and unescaped, no trailing space. A token or
// identifier cut by the end of toks is not printed.
//
// Every token is written with its trailing space, and the last space is cut
// at the end; this prints exactly what MySQL's "space before the next
// token" rule prints, with fewer branches. Short tokens and identifiers are
// moved in 8-byte words: out has room for that, since every byte of toks
// prints at most maxTextPerByte bytes and out ends 16 bytes past that bound.
func renderText(dst, toks []byte) []byte {
	base := len(dst)
	need := base + len(toks)*maxTextPerByte + 16
	if cap(dst) < need {
		grown := make([]byte, base, need)
		copy(grown, dst)
		dst = grown
	}
	out := dst[:need]
	w := base
	spaced := false // out[w-1] is a trailing space written by the last token
	for i := 0; i+2 <= len(toks); {
		tok := binary.LittleEndian.Uint16(toks[i:])
		i += 2
		if tok != tokIdent && tok != tokIdentAt {
			if int(tok) >= maxToken {
				break
			}
			f := &tokOut[tok]
			if w+8 > len(out) {
				break // cannot happen: see maxTextPerByte
			}
			binary.LittleEndian.PutUint64(out[w:], f.word)
			if f.long {
				copy(out[w:], tokText[tok])
				if f.spaced {
					out[w+int(f.n)-1] = ' '
				}
			}
			w += int(f.n)
			spaced = f.spaced
			continue
		}
		if i+2 > len(toks) {
			break
		}
		n := int(binary.LittleEndian.Uint16(toks[i:]))
		i += 2
		if i+n > len(toks) {
			break
		}
		if n > maxIdentRender {
			i += n
			w += copy(out[w:], "...")
			spaced = false
			continue
		}
		if n == 0 || w+n+3 > len(out) {
			i += n
			continue // MySQL prints nothing for an empty name
		}
		if n <= 16 && i+16 <= len(toks) && w+17 <= len(out) {
			a := binary.LittleEndian.Uint64(toks[i:])
			b := binary.LittleEndian.Uint64(toks[i+8:])
			hi := a
			if n < 8 {
				hi &= nameMask[n]
			} else {
				hi |= b & nameMask[n-8]
			}
			if hi&0x8080808080808080 != 0 && !utf8mb3(toks[i:i+n]) {
				i += n
				continue // MySQL skips what it cannot convert to utf8mb3
			}
			binary.LittleEndian.PutUint64(out[w+1:], a)
			binary.LittleEndian.PutUint64(out[w+9:], b)
		} else {
			name := toks[i : i+n]
			if !utf8mb3(name) {
				i += n
				continue
			}
			copy(out[w+1:], name)
		}
		i += n
		out[w] = '`'
		out[w+n+1] = '`'
		out[w+n+2] = ' '
		w += n + 2
		spaced = tok == tokIdent
		if spaced {
			w++
		}
	}
	if spaced {
		w--
	}
	return dst[:w]
}

// putTokText writes tok's printed form, with its trailing space if it has
// one, at out[w:], which has textSlack bytes of room, and returns the new
// length.
func putTokText(out []byte, w int, tok uint16) int {
	f := &tokOut[tok]
	binary.LittleEndian.PutUint64(out[w:], f.word)
	if f.long {
		copy(out[w:], tokText[tok])
		if f.spaced {
			out[w+int(f.n)-1] = ' '
		}
	}
	return w + int(f.n)
}

// putIdentText writes the printed form of the identifier name (tokIdent
// or tokIdentAt) at out[w:], which has textSlack+len(name) bytes of room,
// and returns the new length: as renderText prints it.
func putIdentText(out []byte, w int, tok uint16, name string) int {
	n := len(name)
	if n > maxIdentRender {
		return w + copy(out[w:], "...")
	}
	if n == 0 || !utf8mb3String(name) {
		return w
	}
	out[w] = '`'
	copy(out[w+1:], name)
	out[w+n+1] = '`'
	out[w+n+2] = ' '
	if tok == tokIdent {
		return w + n + 3
	}
	return w + n + 2
}

// utf8mb3String is utf8mb3 for a string.
func utf8mb3String(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r > 0xFFFF {
			return false
		}
	}
	return true
}

// utf8mb3 reports whether b is valid UTF-8 without 4-byte sequences.
func utf8mb3(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || size == 4 {
			return false
		}
		i += size
	}
	return true
}
