package pfscore

import "unicode/utf8"

// Like reports whether s matches the SQL LIKE pattern, as MySQL evaluates
// NAME LIKE 'pattern' on the setup tables: '%' matches any run of
// characters (including none), '_' exactly one character (a whole UTF-8
// sequence), and '\' makes the next character literal (a trailing '\'
// matches itself). Letters compare case-insensitively (ASCII), as under
// MySQL's default collation.
//
// It runs in O(len(s)*len(pattern)) at worst and allocates nothing.
func Like(pattern, s string) bool { return like(pattern, s, fold) }

// likeBinary is Like for a column of binary collation: letters compare as
// they are.
func likeBinary(pattern, s string) bool { return like(pattern, s, same) }

func same(c byte) byte { return c }

func like(pattern, s string, fold func(byte) byte) bool {
	// Greedy matching with one backtrack point, the classic wildcard
	// algorithm: on a mismatch, let the most recent '%' swallow one more
	// character of s and retry from there. One backtrack point suffices
	// because a later '%' can always absorb what an earlier one would.
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '%':
				starP, starI = p, i
				p++
				continue
			case '_':
				p++
				i += runeLen(s, i)
				continue
			case '\\':
				if p+1 < len(pattern) {
					if fold(pattern[p+1]) == fold(s[i]) {
						p += 2
						i++
						continue
					}
				} else if s[i] == '\\' {
					p++
					i++
					continue
				}
			default:
				if fold(c) == fold(s[i]) {
					p++
					i++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starI += runeLen(s, starI)
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '%' {
		p++
	}
	return p == len(pattern)
}

// runeLen is the length of the UTF-8 sequence at s[i] (1 for an ASCII
// byte or an invalid one).
func runeLen(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}

// fold lower-cases an ASCII letter.
func fold(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isPattern reports whether pattern has an unescaped wildcard.
func isPattern(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '%', '_':
			return true
		}
	}
	return false
}
