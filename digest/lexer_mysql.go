package digest

// The MySQL 8.0 lexer. It follows sql/sql_lex.cc (lex_one_token) for a
// utf8mb4 client: the same character classes, the same states carried from
// one token to the next (after "ident.", after "@", after "@@"), the same
// comment rules, including version comments and the NUL that ends a query.
// It produces only what the digest needs: a token number, or "a number",
// "a literal", "NULL", "an identifier" with its bytes.

// Token kinds returned by the lexer.
const (
	kEnd    uint8 = iota // end of the statement
	kToken               // keyword, operator or punctuation: tok
	kNumber              // numeric literal (folds unary signs)
	kValue               // string, hex, bit, placeholder, @name
	kNull                // the NULL keyword: a literal or not, by context
	kIdent               // identifier: src[s:e], quote for doubled quotes
	kAbort               // the server would stop with a syntax error here
)

type token struct {
	kind  uint8
	quote byte
	tok   uint16
	s, e  int
}

// Lexer states kept between tokens (MySQL's next_state).
const (
	stStart uint8 = iota
	stIdentSep
	stIdentStart
	stSystemVar
	stIdentOrKeyword
	stHostname
)

// Character classes (MySQL's state_map for a utf8mb4 connection).
const (
	cChar uint8 = iota
	cSkip
	cIdent
	cDigit
	cNChar  // N, n: N'text'
	cHex    // X, x: X'1F'
	cBin    // B, b: B'101'
	cQuote  // '
	cDQuote // "
	cBackQuote
	cPoint
	cCmp     // = ! >
	cLongCmp // <
	cBool    // & |
	cHash    // #
	cColon
	cSlash
	cStar
	cAt
	cEOL // NUL
)

var (
	charClass [256]uint8
	identChar [256]bool
	isSpace   [256]bool
)

func init() {
	for i := 0; i < 256; i++ {
		c := byte(i)
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$', c >= 0x80:
			charClass[i] = cIdent
			identChar[i] = true
		case c >= '0' && c <= '9':
			charClass[i] = cDigit
			identChar[i] = true
		case c == ' ', c >= '\t' && c <= '\r':
			charClass[i] = cSkip
			isSpace[i] = true
		}
	}
	for c, cls := range map[byte]uint8{
		'N': cNChar, 'n': cNChar, 'X': cHex, 'x': cHex, 'B': cBin, 'b': cBin,
		'\'': cQuote, '"': cDQuote, '`': cBackQuote, '.': cPoint,
		'=': cCmp, '!': cCmp, '>': cCmp, '<': cLongCmp, '&': cBool, '|': cBool,
		'#': cHash, ':': cColon, '/': cSlash, '*': cStar, '@': cAt, 0: cEOL,
	} {
		charClass[c] = cls
	}
}

type mysqlLexer struct {
	src           string
	pos           int
	state         uint8
	mode          SQLMode
	serverVersion int
	inVersion     bool // inside an executed /*!NNNNN ... */
}

func (l *mysqlLexer) reset(src string, mode SQLMode, serverVersion int) {
	*l = mysqlLexer{src: src, mode: mode, serverVersion: serverVersion}
}

// at returns the byte at i, or 0 past the end (MySQL's buffer is
// NUL-terminated).
func (l *mysqlLexer) at(i int) byte {
	if i < len(l.src) {
		return l.src[i]
	}
	return 0
}

func (l *mysqlLexer) identEnd(i int) int {
	for i < len(l.src) && identChar[l.src[i]] {
		i++
	}
	return i
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isXDigit(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
func isAlnum(c byte) bool  { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func (l *mysqlLexer) tok(t uint16) token { return token{kind: kToken, tok: t} }

// next returns the next token.
func (l *mysqlLexer) next() token {
	state := l.state
	l.state = stStart
	switch state {
	case stIdentSep:
		return l.identSep()
	case stIdentStart:
		return l.identStart(l.pos)
	case stSystemVar:
		l.pos++ // the second '@'
		if l.at(l.pos) != '`' {
			l.state = stIdentOrKeyword
		}
		return l.tok('@')
	case stIdentOrKeyword:
		start := l.pos
		end := l.identEnd(start)
		l.pos = end
		if l.at(end) == '.' {
			l.state = stIdentSep
		}
		if end == start {
			return token{kind: kAbort}
		}
		if e := mainKeywords.find(l.src[start:end]); e != nil && !e.funcOnly {
			return l.keyword(e.tok)
		}
		return token{kind: kIdent, s: start, e: end}
	case stHostname:
		i := l.pos
		for c := l.at(i); isAlnum(c) || c == '.' || c == '_' || c == '$'; c = l.at(i) {
			i++
		}
		l.pos = i
		return token{kind: kValue}
	}

	for {
		for l.pos < len(l.src) && isSpace[l.src[l.pos]] {
			l.pos++
		}
		if l.pos >= len(l.src) {
			return token{kind: kEnd}
		}
		start := l.pos
		c := l.src[start]
		l.pos++
		switch charClass[c] {
		case cEOL:
			return token{kind: kEnd}
		case cIdent:
			return l.ident(start)
		case cNChar:
			if l.at(l.pos) == '\'' {
				l.pos++
				return l.text('\'')
			}
			return l.ident(start)
		case cHex:
			if l.at(l.pos) == '\'' {
				i := l.pos + 1
				for isXDigit(l.at(i)) {
					i++
				}
				if l.at(i) != '\'' || (i-l.pos-1)%2 != 0 {
					return token{kind: kAbort}
				}
				l.pos = i + 1
				return token{kind: kNumber}
			}
			return l.ident(start)
		case cBin:
			if l.at(l.pos) == '\'' {
				i := l.pos + 1
				for l.at(i) == '0' || l.at(i) == '1' {
					i++
				}
				if l.at(i) != '\'' {
					return token{kind: kAbort}
				}
				l.pos = i + 1
				return token{kind: kNumber}
			}
			return l.ident(start)
		case cDigit:
			return l.number(start)
		case cQuote:
			return l.text('\'')
		case cDQuote:
			if l.mode&ANSIQuotes != 0 {
				return l.quotedIdent('"')
			}
			return l.text('"')
		case cBackQuote:
			return l.quotedIdent('`')
		case cPoint:
			if isDigit(l.at(l.pos)) {
				return l.real()
			}
			l.pos = start
			return l.identSep()
		case cCmp, cLongCmp:
			// "=", "!=", ">=", ">>", "<", "<=", "<>", "<<", "<=>".
			i := l.pos
			if k := charClass[l.at(i)]; k == cCmp || k == cLongCmp {
				i++
				if c == '<' && charClass[l.at(i)] == cCmp {
					i++
				}
			}
			l.pos = i
			if t := operatorToken(l.src[start:i]); t != tokNone {
				return l.tok(t)
			}
			return l.tok(uint16(c)) // MySQL returns the first character
		case cBool:
			if l.at(l.pos) != c {
				return l.tok(uint16(c))
			}
			l.pos++
			if c == '&' {
				return l.tok(tokAndAnd)
			}
			if l.mode&PipesAsConcat != 0 {
				return l.tok(tokOrOr)
			}
			return l.tok(tokOr2)
		case cHash:
			l.skipLine()
			continue
		case cColon:
			if l.at(l.pos) == '=' {
				l.pos++
				return l.tok(tokSetVar)
			}
			return l.tok(':')
		case cSlash:
			if l.at(l.pos) != '*' {
				return l.tok('/')
			}
			if !l.comment() {
				return token{kind: kAbort}
			}
			continue
		case cStar:
			if l.inVersion && l.at(l.pos) == '/' {
				l.pos++
				l.inVersion = false
				continue
			}
			return l.tok('*')
		case cAt:
			switch charClass[l.at(l.pos)] {
			case cQuote, cDQuote, cBackQuote:
			case cAt:
				l.state = stSystemVar
			default:
				l.state = stHostname
			}
			return l.tok('@')
		}
		// Single-character tokens, and the special cases of '-' and '?'.
		switch c {
		case '-':
			if n := l.at(l.pos); n == '-' {
				if a := l.at(l.pos + 1); isSpace[a] || a < 0x20 || a == 0x7f {
					l.skipLine()
					continue
				}
			} else if n == '>' {
				l.pos++
				if l.at(l.pos) == '>' {
					l.pos++
					return l.tok(tokJSONUnquoted)
				}
				return l.tok(tokJSONSep)
			}
		case '?':
			if !identChar[l.at(l.pos)] {
				return token{kind: kValue}
			}
		}
		return l.tok(uint16(c))
	}
}

func operatorToken(op string) uint16 {
	switch op {
	case "=":
		return tokEQ
	case "!=", "<>":
		return tokNE
	case "<":
		return tokLT
	case "<=":
		return tokLE
	case ">":
		return tokGT
	case ">=":
		return tokGE
	case "<<":
		return tokShiftLeft
	case ">>":
		return tokShiftRight
	case "<=>":
		return tokEqualNull
	}
	return tokNone
}

func (l *mysqlLexer) skipLine() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' && l.src[l.pos] != 0 {
		l.pos++
	}
}

// comment consumes a comment that starts at l.pos-1 ("/*"). A version
// comment whose version the server has is opened instead, so its body is
// lexed as SQL. It reports false for a comment that never closes.
func (l *mysqlLexer) comment() bool {
	l.pos++ // '*'
	if l.at(l.pos) == '!' {
		l.pos++
		i := l.pos
		for i < l.pos+5 && isDigit(l.at(i)) {
			i++
		}
		if i-l.pos < 5 {
			// "/*!" without a version: always SQL.
			l.inVersion = true
			return true
		}
		n := 5
		if isDigit(l.at(i)) && isSpace[l.at(i+1)] {
			n = 6
		}
		version := 0
		for j := 0; j < n; j++ {
			version = version*10 + int(l.src[l.pos+j]-'0')
		}
		if version <= l.serverVersion {
			l.pos += n
			l.inVersion = true
			return true
		}
		return l.skipComment(1)
	}
	return l.skipComment(0)
}

// skipComment consumes up to and including "*/"; nested "/*...*/" pairs are
// consumed whole while nest > 0 (MySQL allows one level inside a version
// comment it skips).
func (l *mysqlLexer) skipComment(nest int) bool {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		l.pos++
		if nest > 0 && c == '/' && l.at(l.pos) == '*' {
			l.pos++
			if !l.skipComment(nest - 1) {
				return false
			}
			continue
		}
		if c == '*' && l.at(l.pos) == '/' {
			l.pos++
			return true
		}
	}
	return false
}

// ident lexes an identifier or keyword that starts at start (MY_LEX_IDENT).
func (l *mysqlLexer) ident(start int) token {
	end := l.identEnd(l.pos)
	l.pos = end
	after := end
	if l.mode&IgnoreSpace != 0 {
		for after < len(l.src) && isSpace[l.src[after]] {
			after++
		}
	}
	if after == end && l.at(end) == '.' && identChar[l.at(end+1)] {
		l.state = stIdentSep
		return token{kind: kIdent, s: start, e: end}
	}
	name := l.src[start:end]
	if e := mainKeywords.find(name); e != nil && (!e.funcOnly || l.at(after) == '(') {
		return l.keyword(e.tok)
	}
	if name[0] == '_' && charsets.find(name[1:]) != nil {
		return l.tok(tokUnderscoreCharset)
	}
	return token{kind: kIdent, s: start, e: end}
}

func (l *mysqlLexer) keyword(t uint16) token {
	switch {
	case t == kwNull:
		return token{kind: kNull, tok: t}
	case t == kwNot && l.mode&HighNotPrecedence != 0:
		return l.tok(tokNot2)
	}
	return l.tok(t)
}

// identSep returns the '.' at l.pos; an identifier char after it starts an
// identifier that is never a keyword ("t.select").
func (l *mysqlLexer) identSep() token {
	l.pos++
	if identChar[l.at(l.pos)] {
		l.state = stIdentStart
	}
	return l.tok('.')
}

// identStart lexes an identifier that cannot be a keyword: after '.', or
// one that starts with digits (MY_LEX_IDENT_START).
func (l *mysqlLexer) identStart(start int) token {
	end := l.identEnd(l.pos)
	l.pos = end
	if l.at(end) == '.' && identChar[l.at(end+1)] {
		l.state = stIdentSep
	}
	return token{kind: kIdent, s: start, e: end}
}

// number lexes what starts with a digit: 0x1F, 0b101, 12, 1.5, 1e5, or an
// identifier such as 1st or 0xZZ.
func (l *mysqlLexer) number(start int) token {
	if l.src[start] == '0' {
		switch l.at(l.pos) {
		case 'x':
			i := l.pos + 1
			for isXDigit(l.at(i)) {
				i++
			}
			if i-start >= 3 && !identChar[l.at(i)] {
				l.pos = i
				return token{kind: kNumber}
			}
			return l.identStart(start)
		case 'b':
			i := l.pos + 1
			for l.at(i) == '0' || l.at(i) == '1' {
				i++
			}
			if i-start >= 3 && !identChar[l.at(i)] {
				l.pos = i
				return token{kind: kNumber}
			}
			return l.identStart(start)
		}
	}
	i := l.pos
	for isDigit(l.at(i)) {
		i++
	}
	c := l.at(i)
	if !identChar[c] {
		l.pos = i
		if c == '.' {
			l.pos++
			return l.real()
		}
		return token{kind: kNumber}
	}
	if c == 'e' || c == 'E' {
		j := i + 1
		if s := l.at(j); s == '+' || s == '-' {
			j++
		}
		if isDigit(l.at(j)) {
			for isDigit(l.at(j)) {
				j++
			}
			l.pos = j
			return token{kind: kNumber}
		}
	}
	l.pos = i
	return l.identStart(start)
}

// real lexes the rest of a decimal or float after its '.'.
func (l *mysqlLexer) real() token {
	i := l.pos
	for isDigit(l.at(i)) {
		i++
	}
	if c := l.at(i); c == 'e' || c == 'E' {
		j := i + 1
		if s := l.at(j); s == '+' || s == '-' {
			j++
		}
		if isDigit(l.at(j)) {
			for isDigit(l.at(j)) {
				j++
			}
			i = j
		}
	}
	l.pos = i
	return token{kind: kNumber}
}

// text lexes a string literal whose opening quote is just before l.pos. An
// unterminated string is still a literal, and it ends the statement: its
// bytes never reach the digest.
func (l *mysqlLexer) text(quote byte) token {
	i := l.pos
	escapes := l.mode&NoBackslashEscapes == 0
	for i < len(l.src) {
		c := l.src[i]
		i++
		if c == '\\' && escapes {
			if i >= len(l.src) {
				break
			}
			i++
		} else if c == quote {
			if l.at(i) == quote {
				i++
				continue
			}
			l.pos = i
			return token{kind: kValue}
		}
	}
	l.pos = len(l.src)
	return token{kind: kValue}
}

// quotedIdent lexes `name` (or "name" under ANSI_QUOTES); a doubled quote
// stands for one. An unterminated one aborts, as in MySQL.
func (l *mysqlLexer) quotedIdent(quote byte) token {
	start := l.pos
	for i := start; i < len(l.src); i++ {
		c := l.src[i]
		if c == 0 {
			break
		}
		if c == quote {
			if l.at(i+1) == quote {
				i++
				continue
			}
			l.pos = i + 1
			return token{kind: kIdent, s: start, e: i, quote: quote}
		}
	}
	l.pos = len(l.src)
	return token{kind: kAbort}
}
