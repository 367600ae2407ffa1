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

// keywordHash is FNV-1a over the ASCII upper-case bytes of s. ok is false
// when s holds a byte no keyword has, which ends the lookup early.
func keywordHash(s string) (h uint32, ok bool) {
	h = 2166136261
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		} else if c >= 0x80 {
			return 0, false
		}
		h = (h ^ uint32(c)) * 16777619
	}
	return h, true
}

func (t *keywordTable) insert(name string, tok uint16, funcOnly bool) {
	if len(name) > t.maxLen {
		t.maxLen = len(name)
	}
	h, _ := keywordHash(name)
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
	h, ok := keywordHash(s)
	if !ok {
		return nil
	}
	return t.findHashed(s, h)
}

// findHashed is find for an ASCII s whose keywordHash is h.
func (t *keywordTable) findHashed(s string, h uint32) *keywordEntry {
	if len(s) == 0 || len(s) > t.maxLen {
		return nil
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
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
