package digest

import "unicode/utf8"

// maxIdentRender is the longest identifier, in bytes, DIGEST_TEXT prints:
// MySQL converts identifiers to utf8mb3 into a NAME_LEN (64 characters, 192
// bytes) buffer and prints "..." for one whose worst-case conversion would
// not fit, that is one longer than 64 bytes.
const maxIdentRender = 64

// renderText appends the DIGEST_TEXT of the token stream toks to dst, the way
// MySQL 8.0's compute_digest_text prints it: tokens separated by one space
// (none after '@', none after an identifier before "@query_block"),
// identifiers back-quoted and unescaped, no trailing space. A token or
// identifier cut by the end of toks is not printed.
func renderText(dst, toks []byte) []byte {
	space := false
	for i := 0; i+2 <= len(toks); {
		tok := uint16(toks[i]) | uint16(toks[i+1])<<8
		i += 2
		if tok == tokIdent || tok == tokIdentAt {
			if i+2 > len(toks) {
				return dst
			}
			n := int(toks[i]) | int(toks[i+1])<<8
			i += 2
			if i+n > len(toks) {
				return dst
			}
			name := toks[i : i+n]
			i += n
			if n > maxIdentRender {
				if space {
					dst = append(dst, ' ')
					space = false
				}
				dst = append(dst, "..."...)
				continue
			}
			if n == 0 || !utf8mb3(name) {
				continue // MySQL skips what it cannot convert to utf8mb3
			}
			if space {
				dst = append(dst, ' ')
			}
			dst = append(dst, '`')
			dst = append(dst, name...)
			dst = append(dst, '`')
			space = tok == tokIdent
			continue
		}
		if int(tok) >= maxToken {
			return dst
		}
		if space {
			dst = append(dst, ' ')
		}
		dst = append(dst, tokText[tok]...)
		space = tokFlags[tok]&flagAppendSpace != 0
	}
	return dst
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
