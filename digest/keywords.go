package digest

import "strings"

// A keywordTable maps upper-case spellings to tokens with open addressing.
// Lookups hash and compare case-insensitively in place, so they neither
// allocate nor copy the identifier.
type keywordTable struct {
	slots  []keywordEntry
	mask   uint32
	maxLen int
}

type keywordEntry struct {
	name     string // upper case; "" marks an empty slot
	tok      uint16
	funcOnly bool // a keyword only when '(' follows directly
}

var (
	mainKeywords keywordTable
	hintKeywords keywordTable
	charsets     keywordTable
)

// keywordHash hashes s by its length and three of its bytes in ASCII upper
// case: cheap enough to compute after an identifier is scanned, spread
// enough for the keyword tables (see TestKeywordTableProbes). Non-ASCII
// names still hash; they simply never compare equal to a keyword.
func keywordHash(s string) uint32 {
	n := len(s)
	if n == 0 {
		return 0
	}
	h := uint32(n) * 0x9E3779B1
	h ^= uint32(upper[s[0]]) * 0x85EBCA77
	h ^= uint32(upper[s[n-1]]) * 0xC2B2AE3D
	h ^= uint32(upper[s[n/2]]) * 0x27D4EB2F
	h ^= uint32(upper[s[(n-1)/3]]) * 0x165667B1
	return h ^ h>>15
}

func (t *keywordTable) insert(name string, tok uint16, funcOnly bool) {
	if len(name) > t.maxLen {
		t.maxLen = len(name)
	}
	h := keywordHash(name)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].name == "" {
			t.slots[i] = keywordEntry{name: name, tok: tok, funcOnly: funcOnly}
			return
		}
		if t.slots[i].name == name {
			panic("digest: BUG: duplicate keyword " + name)
		}
	}
}

// find returns the entry spelled s in any letter case, or nil.
func (t *keywordTable) find(s string) *keywordEntry {
	if len(s) == 0 || len(s) > t.maxLen {
		return nil
	}
	for i := keywordHash(s) & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.name == "" {
			return nil
		}
		if len(e.name) == len(s) && equalFoldUpper(e.name, s) {
			return e
		}
	}
}

// equalFoldUpper reports whether s equals the upper-case ASCII string upper
// ignoring ASCII case; both have the same length.
func equalFoldUpper(upper, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

func newKeywordTable(size int) keywordTable {
	return keywordTable{slots: make([]keywordEntry, size), mask: uint32(size - 1)}
}

func initKeywords() {
	mainKeywords = newKeywordTable(4096)
	tok := uint16(firstKeywordToken)
	for _, group := range mysqlKeywords {
		if tok == firstHintToken {
			tok = keywordGap
		}
		spellings := strings.Split(group, "|")
		for _, s := range spellings {
			name, funcOnly := strings.CutSuffix(s, "()")
			mainKeywords.insert(name, tok, funcOnly)
			if len(name) <= 8 {
				insertShort(name, tok, funcOnly)
			}
		}
		last, _ := strings.CutSuffix(spellings[len(spellings)-1], "()")
		tokText[tok] = last
		tokFlags[tok] = flagAppendSpace
		tok++
	}
	if tok > maxToken {
		panic("digest: BUG: too many keywords")
	}
	hintKeywords = newKeywordTable(256)
	for i, name := range mysqlHintKeywords {
		t := uint16(firstHintToken + i)
		hintKeywords.insert(name, t, false)
		tokText[t] = name
		tokFlags[t] = flagAppendSpace
	}
	charsets = newKeywordTable(256)
	for _, name := range mysqlCharsets {
		charsets.insert(strings.ToUpper(name), tokUnderscoreCharset, false)
	}
}
