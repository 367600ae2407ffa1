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
	funcOnly bool  // a keyword only when '(' follows directly
	sets     uint8 // the keyword sets it belongs to (setMySQL80, setOtelpfs)
}

// Keyword sets: a Numbering recognizes the keywords of one set; a word of
// another set is an identifier to it.
const (
	setMySQL80 uint8 = 1 << iota // sql/lex.h of MySQL 8.0
	setOtelpfs                   // mysqlKeywords, NumberingOtelpfs's list
)

// A mysqlSymbol is one entry of MySQL's sql/lex.h (tokens_mysql_gen.go).
type mysqlSymbol struct {
	name  string
	tok   uint16
	group symGroup
}

type symGroup uint8

const (
	symKeyword  symGroup = iota // SYM: a keyword
	symHintable                 // SYM_HK: a keyword optimizer hints may follow
	symFunction                 // SYM_FN: a keyword only where '(' follows
	symHint                     // SYM_H: an optimizer-hint keyword
)

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

func (t *keywordTable) insert(name string, tok uint16, funcOnly bool, sets uint8) {
	if len(name) > t.maxLen {
		t.maxLen = len(name)
	}
	h := keywordHash(name)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].name == "" {
			t.slots[i] = keywordEntry{name: name, tok: tok, funcOnly: funcOnly, sets: sets}
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

// initKeywords fills the keyword tables: MySQL 8.0's symbols with their
// MySQL token numbers, then the words of NumberingOtelpfs's list that 8.0
// does not have, numbered from firstLaterToken. A token prints as the last
// spelling sql/lex.h gives it, as in MySQL (CHAR, CHARACTER: CHARACTER).
func initKeywords() {
	mainKeywords = newKeywordTable(4096)
	for _, s := range mysql80Symbols {
		if !isWordStart(s.name[0]) {
			continue // an operator: the lexer has rules for them
		}
		funcOnly := s.group == symFunction
		mainKeywords.insert(s.name, s.tok, funcOnly, setMySQL80)
		tokText[s.tok] = s.name
		tokFlags[s.tok] = flagAppendSpace
		if s.group == symHintable {
			tokFlags[s.tok] |= flagHintable
		}
	}
	later := uint16(firstLaterToken)
	for _, group := range mysqlKeywords {
		spellings := strings.Split(group, "|")
		var tok uint16
		for _, sp := range spellings {
			name, funcOnly := strings.CutSuffix(sp, "()")
			if e := mainKeywords.find(name); e != nil {
				if e.funcOnly != funcOnly || (tok != 0 && e.tok != tok) {
					panic("digest: BUG: keyword " + name + " differs from MySQL 8.0's")
				}
				e.sets |= setOtelpfs
				tok = e.tok
				continue
			}
			if tok == 0 {
				tok = later
				later++
			}
			mainKeywords.insert(name, tok, funcOnly, setOtelpfs)
		}
		if tok >= firstLaterToken {
			last, _ := strings.CutSuffix(spellings[len(spellings)-1], "()")
			tokText[tok] = last
			tokFlags[tok] = flagAppendSpace
		}
	}
	if later > maxToken {
		panic("digest: BUG: too many keywords")
	}
	for _, e := range mainKeywords.slots {
		if e.name != "" && len(e.name) <= 8 {
			insertShort(e.name, e.tok, e.funcOnly, e.sets)
		}
	}
	hintKeywords = newKeywordTable(256)
	for _, s := range mysql80HintSymbols {
		hintKeywords.insert(s.name, s.tok, false, setMySQL80|setOtelpfs)
		tokText[s.tok] = s.name
		tokFlags[s.tok] = flagAppendSpace
	}
	charsets = newKeywordTable(256)
	for _, name := range mysqlCharsets {
		charsets.insert(strings.ToUpper(name), tokUnderscoreCharset, false, setMySQL80|setOtelpfs)
	}
}

func isWordStart(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }
