package digest

// Optimizer hints. A /*+ ... */ comment right after SELECT, INSERT, REPLACE,
// UPDATE or DELETE is scanned by a lexer of its own (sql/sql_lex_hints.cc in
// MySQL), whose tokens go into the digest between "/*+" and "*/": hint
// keywords by name, numbers and strings as ?, identifiers as identifiers,
// table@query_block with no space before '@'. The digest gets the tokens even
// when the hint is not valid, up to the closing "*/". Anywhere else /*+ is an
// ordinary comment.

// Hint token kinds.
const (
	hEOF = iota
	hError
	hClose
	hNumber
	hIdent
	hQBName
	hText
	hKeyword
	hChar
)

// Hint character classes.
const (
	hcChar uint8 = iota
	hcSpace
	hcIdent
	hcDigit
	hcMB
	hcQuote
	hcBackQuote
	hcDQuote
	hcStar
	hcSlash
	hcAt
	hcDot
	hcEOF
)

var hintClass [256]uint8

func init() {
	for i := 0; i < 256; i++ {
		c := byte(i)
		switch {
		case c >= 0x80:
			hintClass[i] = hcMB
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$':
			hintClass[i] = hcIdent
		case c >= '0' && c <= '9':
			hintClass[i] = hcDigit
		case c == ' ', c >= '\t' && c <= '\r':
			hintClass[i] = hcSpace
		}
	}
	hintClass['\''] = hcQuote
	hintClass['`'] = hcBackQuote
	hintClass['"'] = hcDQuote
	hintClass['*'] = hcStar
	hintClass['/'] = hcSlash
	hintClass['@'] = hcAt
	hintClass['.'] = hcDot
}

type hintScanner struct {
	src    string
	pos    int
	end    int
	ansi   bool
	prev   int // previous token kind
	textS  int // identifier text of the current token
	textE  int
	quote  byte
	kwTok  uint16
	char   byte
	spaces int
	start  int // where the current token starts
}

func (h *hintScanner) class(i int) uint8 {
	if i >= h.end {
		return hcEOF
	}
	return hintClass[h.src[i]]
}

func (h *hintScanner) identEnd(i int) int {
	for {
		switch h.class(i) {
		case hcIdent, hcDigit, hcMB:
			i++
		default:
			return i
		}
	}
}

// scan returns the next hint token kind.
func (h *hintScanner) scan() int {
	h.spaces = 0
	h.quote = 0
	for {
		start := h.pos
		h.start = start
		switch h.class(start) {
		case hcSpace:
			h.pos++
			h.spaces++
			continue
		case hcEOF:
			return hEOF
		case hcDigit:
			i := start
			for h.class(i) == hcDigit {
				i++
			}
			switch h.class(i) {
			case hcDot:
				h.pos = i
				return h.fraction()
			case hcIdent:
				if c := h.src[i]; (c == 'K' || c == 'M' || c == 'G') &&
					h.class(i+1) != hcIdent && h.class(i+1) != hcDigit {
					h.pos = i + 1
					return hNumber
				}
				fallthrough
			case hcMB:
				h.pos = h.identEnd(i)
				h.textS, h.textE = start, h.pos
				return hIdent
			}
			h.pos = i
			return hNumber
		case hcIdent:
			i := start
			for k := h.class(i); k == hcIdent || k == hcDigit; k = h.class(i) {
				i++
			}
			if h.class(i) == hcMB {
				h.pos = h.identEnd(i)
				h.textS, h.textE = start, h.pos
				return hIdent
			}
			h.pos = i
			h.textS, h.textE = start, i
			if e := hintKeywords.find(h.src[start:i]); e != nil {
				h.kwTok = e.tok
				return hKeyword
			}
			return hIdent
		case hcMB:
			h.pos = h.identEnd(start)
			h.textS, h.textE = start, h.pos
			return hIdent
		case hcQuote:
			return h.quoted('\'', false)
		case hcBackQuote:
			return h.quoted('`', true)
		case hcDQuote:
			return h.quoted('"', h.ansi)
		case hcStar:
			if h.class(start+1) == hcSlash {
				h.pos = start + 2
				return hClose
			}
		case hcAt:
			if h.prev == '(' || (h.prev == hIdent && h.spaces == 0) {
				return h.queryBlockName()
			}
		case hcDot:
			return h.fraction()
		}
		h.pos = start + 1
		h.char = h.src[start]
		return hChar
	}
}

// fraction scans ".digits" at h.pos.
func (h *hintScanner) fraction() int {
	h.pos++ // '.'
	if h.class(h.pos) != hcDigit {
		return hError
	}
	for h.class(h.pos) == hcDigit {
		h.pos++
	}
	if k := h.class(h.pos); k == hcIdent || k == hcMB {
		return hError
	}
	return hNumber
}

// quoted scans a quoted string or identifier at h.pos.
func (h *hintScanner) quoted(q byte, ident bool) int {
	h.pos++
	start := h.pos
	doubled := false
	for {
		switch h.class(h.pos) {
		case hcEOF:
			return hError
		case hcStar:
			if h.class(h.pos+1) == hcSlash {
				return hError // "*/" cannot be quoted in a hint
			}
		default:
			if h.src[h.pos] == q {
				if h.pos+1 < h.end && h.src[h.pos+1] == q {
					h.pos += 2
					doubled = true
					continue
				}
				if h.pos == start {
					return hError // empty
				}
				h.textS, h.textE = start, h.pos
				h.pos++
				if doubled {
					h.quote = q
				}
				if ident {
					return hIdent
				}
				return hText
			}
		}
		h.pos++
	}
}

// queryBlockName scans "@name" at h.pos.
func (h *hintScanner) queryBlockName() int {
	h.pos++ // '@'
	switch h.class(h.pos) {
	case hcIdent, hcDigit, hcMB:
		start := h.pos
		h.pos = h.identEnd(start)
		h.textS, h.textE = start, h.pos
		return hQBName
	case hcBackQuote:
		if h.quoted('`', true) == hIdent {
			return hQBName
		}
	case hcDQuote:
		if h.quoted('"', h.ansi) == hIdent {
			return hQBName
		}
	}
	return hError
}

// hints scans optimizer hints after a hintable keyword, if there are any,
// adding their tokens to the stream. It reports false when the statement
// ends inside the hint comment (MySQL rejects the statement then).
func (lx *mysqlLexer) hints() bool {
	i := lx.pos
	for i < len(lx.src) && isSpace[lx.src[i]] {
		i++
	}
	if i+2 >= len(lx.src) || lx.src[i] != '/' || lx.src[i+1] != '*' || lx.src[i+2] != '+' {
		return true
	}
	h := hintScanner{src: lx.src, pos: i + 3, end: len(lx.src), ansi: lx.mode&ANSIQuotes != 0}
	st := lx.st
	open := false
	for {
		k := h.scan()
		prev := k
		if k == hChar {
			prev = int(h.char)
		}
		switch k {
		case hEOF:
			lx.pos = len(lx.src)
			return false
		case hError:
		case hClose:
			if open {
				st.addToken(tokHintClose)
			}
			lx.pos = h.pos
			return true
		default:
			if !open {
				st.addToken(tokHintOpen)
				open = true
			}
			switch k {
			case hNumber:
				st.addNumber()
				lx.noteLiteral(h.start, h.pos)
			case hText:
				st.addValue()
				lx.noteLiteral(h.start, h.pos)
			case hIdent:
				tok := tokIdent
				if h.class(h.pos) == hcAt {
					tok = tokIdentAt
				}
				st.addIdent(tok, h.src[h.textS:h.textE], h.quote)
			case hQBName:
				st.addToken('@')
				st.addIdent(tokIdent, h.src[h.textS:h.textE], h.quote)
			case hKeyword:
				st.addToken(h.kwTok)
			case hChar:
				st.addToken(uint16(h.char))
			}
		}
		h.prev = prev
	}
}

func (l *mysqlLexer) noteLiteral(s, e int) {
	if l.literals != nil {
		*l.literals = append(*l.literals, [2]int{s, e})
	}
}
