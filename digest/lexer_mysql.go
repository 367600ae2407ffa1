package digest

import "encoding/binary"

// The MySQL 8.0 lexer. It follows sql/sql_lex.cc (lex_one_token) for a
// utf8mb4 client: the same character classes, the same states carried from
// one token to the next (after "ident.", after "@", after "@@"), the same
// comment rules, including version comments and the NUL that ends a query.
// It does not build tokens: each token goes straight into the digest stream
// (emit*), which keeps the hot loop to one dispatch per token.

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
	spaceStep [256]uint8 // 1 for white space, else 0
)

// upper maps a byte to its ASCII upper case. It is a variable initializer,
// not part of init, because the keyword tables need it first.
var upper = func() (u [256]byte) {
	for i := range u {
		u[i] = byte(i)
		if i >= 'a' && i <= 'z' {
			u[i] = byte(i) - ('a' - 'A')
		}
	}
	return u
}()

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
			spaceStep[i] = 1
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
	st            *stream
	mode          SQLMode
	serverVersion int
	prev          uint16 // the last token emitted, before reductions
	kwSet         uint8  // the keyword set of the numbering (setMySQL80, ...)
	state         uint8
	inVersion     bool // inside an executed /*!NNNNN ... */
	pendingWith   bool // WITH seen; ROLLUP may follow
	notExpr       bool // the last NOT emitted starts an expression: NULL after it is a literal
	tokStart      int  // where the current token starts

	// literals, when not nil, collects the byte ranges of the literals
	// lexed (for tests: they must not reach DIGEST_TEXT).
	literals *[][2]int
}

// reset readies l for the statement src; literals is left as it is. The
// fields are set one by one: assigning a whole mysqlLexer value, which
// holds pointers, costs a typed copy of the struct on every statement.
func (l *mysqlLexer) reset(src string, st *stream, mode SQLMode, serverVersion int, kwSet uint8) {
	l.src, l.pos, l.st = src, 0, st
	l.mode, l.serverVersion, l.kwSet = mode, serverVersion, kwSet
	l.prev, l.state, l.inVersion, l.pendingWith, l.tokStart = 0, stStart, false, false, 0
}

// tokenize lexes the whole statement into st.
func (l *mysqlLexer) tokenize(sql string, st *stream, cfg *config) {
	l.reset(sql, st, cfg.sqlMode, cfg.serverVersion, cfg.numbering.set)
	l.run()
}

// Classes of the fast loop in run: the first bytes of the tokens it lexes
// itself. Every other byte starts a token lexed by next.
const (
	fOther uint8 = iota
	fIdent       // a letter, '$' or a byte >= 0x80
	fDigit
	fPunct // a single-character token without a rule of its own
	fEq    // '='
	fQuote // '\''
	fBackQuote
	fUnder // '_': maybe _charset, lexed by next
	fStar  // '*'
	fMinus // '-'
	fCmp   // '<', '>', '!'
)

var fastClass [256]uint8

func init() {
	for i := range fastClass {
		switch c := byte(i); {
		case identChar[c] && !isDigit(c):
			fastClass[i] = fIdent
		case charClass[c] == cDigit:
			fastClass[i] = fDigit
		case charClass[c] == cChar && c != '-' && c != '?':
			fastClass[i] = fPunct
		}
	}
	fastClass['='] = fEq
	fastClass['\''] = fQuote
	fastClass['`'] = fBackQuote
	fastClass['_'] = fUnder
	fastClass['*'] = fStar
	fastClass['-'] = fMinus
	fastClass['<'] = fCmp
	fastClass['>'] = fCmp
	fastClass['!'] = fCmp
}

// run lexes the rest of the statement into l.st.
//
// It is the hot loop: the tokens most statements are made of (white space,
// identifiers, qualified names and keywords, single-character punctuation,
// '=', '*', '-' and the comparisons, integers and decimals, quoted strings
// and backquoted names) are lexed
// here, and written straight into the stream and its text; every other
// token, and every token after a state-changing one (after '@', a pending
// WITH), goes through next, which knows all the rules. Both paths produce
// the same stream and text: the fast one only takes cases whose rules are
// simple, and hands anything else to next before it writes anything.
func (l *mysqlLexer) run() {
	if l.mode&IgnoreSpace != 0 {
		// A space between a name and '(' changes keyword rules: next
		// handles every token.
		for !l.st.full && l.next() {
		}
		return
	}
	src := l.src
	// The loop keeps the lexer's position, the stream's length and the
	// text's length in locals, and writes them back before any call that
	// reads them; out is the stream up to max_digest_length, tout the
	// text's whole buffer; tw is textOff once the text is not kept. Few
	// locals change in the loop, so that they stay in registers.
	out := l.st.buf[:l.st.max]
	n := len(l.st.buf)
	tout := l.st.text[:cap(l.st.text)]
	tw := textFrom(l.st.text)
	pos := l.pos
	kwSet := l.kwSet
	for {
		if pos < len(src) && isSpace[src[pos]] {
			pos++
			for pos < len(src) && isSpace[src[pos]] {
				pos++
			}
		}
		if pos >= len(src) {
			break // next ends the statement
		}
		c := src[pos]
		switch fastClass[c] {
		case fIdent:
			end := pos + 1
			for end < len(src) && identChar[src[end]] {
				end++
			}
			var next byte
			if end < len(src) {
				next = src[end]
			}
			k := end - pos
			if next == '.' {
				if end+1 >= len(src) || !identChar[src[end+1]] {
					break // "name." then no name: next
				}
				// A qualified name, a.b.c: every part is an identifier,
				// never a keyword.
				l.prev = tokIdent
				for {
					if n+4+min(k, 0xFFFF) > len(out) {
						goto full
					}
					n, tw = putName(out, n, tout, tw, src, pos, end)
					if n+2 > len(out) {
						goto full
					}
					binary.LittleEndian.PutUint16(out[n:], '.')
					n += 2
					if tw+2 <= len(tout) {
						binary.LittleEndian.PutUint16(tout[tw:], '.'|' '<<8)
						tw += 2
					} else {
						tw = textOff
					}
					pos = end + 1
					end = pos + 1
					for end < len(src) && identChar[src[end]] {
						end++
					}
					k = end - pos
					if end+1 >= len(src) || src[end] != '.' || !identChar[src[end+1]] {
						break
					}
				}
				if n+4+min(k, 0xFFFF) > len(out) {
					goto full
				}
				n, tw = putName(out, n, tout, tw, src, pos, end)
				l.st.lastID = n
				pos = end
				continue
			}
			if next == '\'' && k == 1 || k > 0xFFFF {
				break // N'', X'', B'': next
			}
			var e *shortEntry
			var ok bool
			if k <= 8 {
				if pos+8 <= len(src) {
					if x := load64(src, pos) & nameMask[k]; x&0x8080808080808080 == 0 {
						e, ok = findShortKey(upperWord(x))
					}
				} else {
					e, ok = findShort(src, pos, k)
				}
			} else if e := mainKeywords.find(src[pos:end]); e != nil && e.sets&kwSet != 0 && (!e.funcOnly || next == '(') {
				l.tokStart = pos
				l.pos = end
				l.st.buf, l.st.text = out[:n], textOf(tout, tw)
				if !l.emitKeyword(e.tok) || l.st.full {
					return
				}
				n, pos = len(l.st.buf), l.pos
				tw = textFrom(l.st.text)
				if l.pendingWith {
					break
				}
				continue
			}
			if ok && e.sets&kwSet != 0 && (!e.funcOnly || next == '(') {
				if e.special && !(e.hintable && !hintFollows(src, end)) {
					// NULL, NOT, WITH, ROLLUP, keywords optimizer hints
					// follow.
					l.tokStart = pos
					l.pos = end
					l.st.buf, l.st.text = out[:n], textOf(tout, tw)
					if !l.emitKeyword(e.tok) || l.st.full {
						return
					}
					n, pos = len(l.st.buf), l.pos
					tw = textFrom(l.st.text)
					if l.pendingWith {
						break // WITH: next, until the token after it
					}
					continue
				}
				pos = end
				l.prev = e.tok
				if n+2 > len(out) {
					goto full
				}
				binary.LittleEndian.PutUint16(out[n:], e.tok)
				n += 2
				if tw+textSlack <= len(tout) {
					if e.long {
						tw = putTokText(tout, tw, e.tok)
					} else {
						binary.LittleEndian.PutUint64(tout[tw:], e.word)
						tw += int(e.n)
					}
				} else {
					tw = textOff
				}
				continue
			}
			pos = end
			l.prev = tokIdent
			if n+4+k > len(out) {
				goto full
			}
			n, tw = putName(out, n, tout, tw, src, pos-k, end)
			l.st.lastID = n
			continue
		case fDigit:
			i := pos + 1
			for i < len(src) && isDigit(src[i]) {
				i++
			}
			if i < len(src) && src[i] == '.' {
				// 1.5, 1.: MySQL's real, but for an exponent.
				i++
				for i < len(src) && isDigit(src[i]) {
					i++
				}
				if i < len(src) && src[i]|0x20 == 'e' {
					break // 1.5e3: next
				}
			} else if i < len(src) && identChar[src[i]] {
				break // 0x1F, 1e5, 1st: next
			}
			l.tokStart = pos
			l.noteLiteral(pos, i)
			pos = i
			l.prev = tokValue
			if lastID := l.st.lastID; n >= lastID+2 && (out[n-2] == '-' || out[n-2] == '+') && out[n-1] == 0 {
				// A sign before it may fold into the value.
				l.st.buf, l.st.text = out[:n], textOf(tout, tw)
				l.st.addNumber()
				if l.st.full {
					l.pos = pos
					return
				}
				n = len(l.st.buf)
				tw = textFrom(l.st.text)
				continue
			}
			var ok bool
			if n, tw, ok = putValue(out, n, l.st.lastID, tout, tw); !ok {
				goto full
			}
			continue
		case fPunct:
			pos++
			l.prev = uint16(c)
			if c == ')' && n >= l.st.lastID+4 && out[n-4] == '(' && out[n-3] == 0 {
				// "(?)", "(?, ...)": the reductions of closeParen.
				l.st.buf, l.st.text = out[:n], textOf(tout, tw)
				l.st.closeParen()
				if l.st.full {
					l.pos = pos
					return
				}
				n = len(l.st.buf)
				tw = textFrom(l.st.text)
				continue
			}
			if n+2 > len(out) {
				goto full
			}
			binary.LittleEndian.PutUint16(out[n:], uint16(c))
			n += 2
			if tw+2 <= len(tout) {
				binary.LittleEndian.PutUint16(tout[tw:], uint16(c)|' '<<8)
				tw += 2
			} else {
				tw = textOff
			}
			continue
		case fEq:
			if pos+1 < len(src) {
				if k := charClass[src[pos+1]]; k == cCmp || k == cLongCmp {
					break
				}
			}
			pos++
			l.prev = tokEQ
			if n+2 > len(out) {
				goto full
			}
			binary.LittleEndian.PutUint16(out[n:], tokEQ)
			n += 2
			if tw+2 <= len(tout) {
				binary.LittleEndian.PutUint16(tout[tw:], '='|' '<<8)
				tw += 2
			} else {
				tw = textOff
			}
			continue
		case fBackQuote:
			i := pos + 1
			for i < len(src) && src[i] != '`' && src[i] != 0 {
				i++
			}
			if i+1 >= len(src) || src[i] != '`' || src[i+1] == '`' {
				break // unterminated, doubled quote, or at the end: next
			}
			k := i - pos - 1
			l.prev = tokIdent
			pos = i + 1
			if n+4+min(k, 0xFFFF) > len(out) {
				goto full
			}
			n, tw = putName(out, n, tout, tw, src, i-k, i)
			l.st.lastID = n
			continue
		case fStar, fMinus, fCmp:
			// Operators: '*' (but "*/" closing a version comment), '-'
			// (but "--" and "->"), and the comparisons next would lex.
			var t uint16
			switch cls := fastClass[c]; {
			case cls == fStar:
				if l.inVersion {
					break
				}
				t = '*'
			case cls == fMinus:
				if pos+1 < len(src) && (src[pos+1] == '-' || src[pos+1] == '>') {
					break
				}
				t = '-'
			default:
				i := pos + 1
				if i < len(src) {
					if k := charClass[src[i]]; k == cCmp || k == cLongCmp {
						i++
						if c == '<' && i < len(src) && charClass[src[i]] == cCmp {
							i++
						}
					}
				}
				if t = operatorToken(src[pos:i]); t == tokNone {
					t = uint16(c)
				}
				pos = i - 1
			}
			if t == tokNone {
				break
			}
			pos++
			l.prev = t
			if n+2 > len(out) {
				goto full
			}
			binary.LittleEndian.PutUint16(out[n:], t)
			n += 2
			if tw+textSlack <= len(tout) {
				tw = putTokText(tout, tw, t)
			} else {
				tw = textOff
			}
			continue
		case fOther, fUnder:
			// Lexed by next, below. (Listing every class lets the
			// compiler dispatch with one jump table.)
		case fQuote:
			escapes := l.mode&NoBackslashEscapes == 0
			i := pos + 1
			for i < len(src) {
				if c := src[i]; c == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						i += 2
						continue
					}
					break
				} else if c == '\\' && escapes {
					i++
				}
				i++
			}
			if i >= len(src) {
				// Unterminated: text ends the statement.
				l.tokStart = pos
				l.pos = pos + 1
				l.st.buf, l.st.text = out[:n], textOf(tout, tw)
				l.text('\'')
				return
			}
			l.tokStart = pos
			l.noteLiteral(pos, i+1)
			pos = i + 1
			l.prev = tokValue
			var ok bool
			if n, tw, ok = putValue(out, n, l.st.lastID, tout, tw); !ok {
				goto full
			}
			continue
		}
		// Any other token: next lexes it, and every token after it while
		// the lexer is in a state of its own.
		l.pos = pos
		l.st.buf, l.st.text = out[:n], textOf(tout, tw)
		for {
			if !l.next() || l.st.full {
				return
			}
			if l.state == stStart && !l.pendingWith {
				break
			}
		}
		n, pos = len(l.st.buf), l.pos
		tw = textFrom(l.st.text)
	}
	l.pos = pos
	l.st.buf, l.st.text = out[:n], textOf(tout, tw)
	for !l.st.full && l.next() {
	}
	return
full:
	// The token at pos does not fit: the stream is full, and nothing
	// after it counts.
	l.pos = pos
	l.st.buf, l.st.text = out[:n], textOf(tout, tw)
	l.st.full = true
}

// textOff is the loop's text length once the text is not kept: every
// "does it fit" test on it fails.
const textOff = 1 << 48

// textOf is the text slice of a local text buffer and length.
func textOf(tout []byte, tw int) []byte {
	if tw > len(tout) {
		return nil
	}
	return tout[:tw]
}

// textFrom returns the local text length for st.text after a call that
// may have changed it.
func textFrom(text []byte) int {
	if text == nil {
		return textOff
	}
	return len(text)
}

// hintFollows reports whether "/*+" follows src[i:] after white space, as
// hints tests it.
func hintFollows(src string, i int) bool {
	for i < len(src) && isSpace[src[i]] {
		i++
	}
	return i+2 < len(src) && src[i] == '/' && src[i+1] == '*' && src[i+2] == '+'
}

// putValue adds a literal to the stream at out[:n] and to the text at
// tout[:tw] as the stream's addValue does ("? , ?" becomes "?, ..."), and
// returns the new lengths, tw textOff when the text is no longer kept. ok is
// false when the stream is full.
func putValue(out []byte, n, lastID int, tout []byte, tw int) (_, _ int, ok bool) {
	tok := tokValue
	if n >= lastID+4 && out[n-2] == ',' && out[n-1] == 0 {
		if t2 := binary.LittleEndian.Uint16(out[n-4:]); t2 == tokValue || t2 == tokValueList {
			n -= 4
			tw -= int(tokOut[','].n) + int(tokOut[t2].n)
			tok = tokValueList
		}
	}
	if n+2 > len(out) {
		return n, tw, false
	}
	binary.LittleEndian.PutUint16(out[n:], tok)
	if tw+textSlack > len(tout) {
		return n + 2, textOff, true
	}
	f := &tokOut[tok]
	binary.LittleEndian.PutUint64(tout[tw:], f.word)
	return n + 2, tw + int(f.n), true
}

// putName writes the unquoted identifier src[s:e] to the stream at
// out[n:], which has room for it, and its printed form to the text at
// tout[tw:]; it returns the new lengths, tw textOff when the text is no longer
// kept. A name longer than 0xFFFF bytes is cut there, as addIdent cuts it.
//
// A short ASCII name moves in two words, loaded once for both: the bytes
// written past it are overwritten by the next token.
func putName(out []byte, n int, tout []byte, tw int, src string, s, e int) (int, int) {
	k := e - s
	if k <= 16 && s+16 <= len(src) && n+20 <= len(out) && tw+19 <= len(tout) {
		a := load64(src, s)
		b := load64(src, s+8)
		m := &nameMask16[k]
		if (a&m[0]|b&m[1])&0x8080808080808080 == 0 && k > 0 {
			o := out[n : n+20]
			binary.LittleEndian.PutUint32(o, uint32(tokIdent)|uint32(k)<<16)
			binary.LittleEndian.PutUint64(o[4:], a)
			binary.LittleEndian.PutUint64(o[12:], b)
			t := tout[tw : tw+19]
			t[0] = '`'
			binary.LittleEndian.PutUint64(t[1:], a)
			binary.LittleEndian.PutUint64(t[9:], b)
			t[k+1] = '`'
			t[k+2] = ' '
			return n + 4 + k, tw + k + 3
		}
	}
	return putNameSlow(out, n, tout, tw, src, s, e)
}

// nameMask16[k] keeps the low k bytes of a 16-byte name in two words.
var nameMask16 = func() (m [17][2]uint64) {
	for k := range m {
		m[k][0] = nameMask[min(k, 8)]
		m[k][1] = nameMask[max(k-8, 0)]
	}
	return m
}()

func putNameSlow(out []byte, n int, tout []byte, tw int, src string, s, e int) (int, int) {
	k := min(e-s, 0xFFFF)
	name := src[s : s+k]
	binary.LittleEndian.PutUint32(out[n:], uint32(tokIdent)|uint32(k)<<16)
	copy(out[n+4:], name)
	if tw+textSlack+k > len(tout) {
		return n + 4 + k, textOff
	}
	return n + 4 + k, putIdentText(tout, tw, tokIdent, name)
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

// Emitters: each hands one token to the stream and remembers it for the
// NULL and WITH ROLLUP decisions. A pending WITH is flushed first.

func (l *mysqlLexer) flushWith() {
	l.pendingWith = false
	l.st.addToken(kwWith)
}

func (l *mysqlLexer) emitTok(t uint16) bool {
	l.prev = t
	st := l.st
	n := len(st.buf)
	if l.pendingWith || t == ')' || n+2 > st.max || st.full {
		// The rare cases: a pending WITH, the reductions at ')', a full
		// stream.
		if l.pendingWith {
			l.flushWith()
		}
		st.addToken(t)
		return true
	}
	b := st.buf[:n+2]
	b[n] = byte(t)
	b[n+1] = byte(t >> 8)
	st.buf = b
	st.textTok(t)
	return true
}

func (l *mysqlLexer) emitNumber() bool {
	if l.pendingWith {
		l.flushWith()
	}
	if l.literals != nil {
		*l.literals = append(*l.literals, [2]int{l.tokStart, l.pos})
	}
	l.st.addNumber()
	l.prev = tokValue
	return true
}

func (l *mysqlLexer) emitValue() bool {
	if l.pendingWith {
		l.flushWith()
	}
	if l.literals != nil {
		*l.literals = append(*l.literals, [2]int{l.tokStart, l.pos})
	}
	l.st.addValue()
	l.prev = tokValue
	return true
}

func (l *mysqlLexer) emitIdent(s, e int, quote byte) bool {
	l.prev = tokIdent
	st := l.st
	at := len(st.buf)
	n := e - s
	if l.pendingWith || quote != 0 || n > 0xFFFF || at+4+n > st.max || st.full {
		if l.pendingWith {
			l.flushWith()
		}
		st.addIdent(tokIdent, l.src[s:e], quote)
		return true
	}
	b := st.buf[:at+4+n]
	h := b[at : at+4 : at+4]
	h[0] = byte(tokIdent & 0xFF)
	h[1] = byte(tokIdent >> 8)
	h[2] = byte(n)
	h[3] = byte(n >> 8)
	copy(b[at+4:], l.src[s:e])
	st.buf = b
	st.lastID = len(b)
	st.textIdent(tokIdent, b[at+4:])
	return true
}

// emitKeyword handles the keywords with rules of their own: NULL (a literal
// where an expression is expected), NOT under HIGH_NOT_PRECEDENCE, WITH
// ROLLUP (one token), and the keywords optimizer hints may follow.
func (l *mysqlLexer) emitKeyword(t uint16) bool {
	if tokFlags[t]&flagSpecial == 0 {
		return l.emitTok(t)
	}
	switch t {
	case kwNull:
		if l.pendingWith {
			l.flushWith()
		}
		v := nullIsValueAfter[l.prev]
		if l.kwSet != setOtelpfs { // NumberingOtelpfs keeps its Version's rules
			switch l.prev {
			case kwNot, tokNot2:
				// NULL is NOT's operand, a literal, when the NOT itself
				// starts an expression (WHERE NOT NULL); after IS, or as a
				// column attribute (NOT NULL), it stays the keyword.
				// NOT2_SYM (NOT under HIGH_NOT_PRECEDENCE) goes through the
				// same grammar rules as NOT.
				v = l.notExpr
			case kwAll:
				v = true // SELECT ALL NULL
			}
		}
		if v {
			l.st.addNullValue()
			l.prev = tokValue
		} else {
			l.st.addToken(kwNull)
			l.prev = kwNull
		}
		return true
	case kwNot:
		if l.prev != kwNot && l.prev != tokNot2 { // NOT NOT x: as the outer NOT
			l.notExpr = l.prev != kwBinary && (nullIsValueAfter[l.prev] || l.prev == kwAll)
		}
		if l.mode&HighNotPrecedence != 0 {
			t = tokNot2
		}
	case kwWith:
		if l.pendingWith {
			l.flushWith()
		}
		l.pendingWith = true
		l.prev = kwWith
		return true
	case kwRollup:
		if l.pendingWith {
			l.pendingWith = false
			t = tokWithRollup
		}
	}
	l.emitTok(t)
	if tokFlags[t]&flagHintable != 0 {
		return l.hints()
	}
	return true
}

// end closes the statement.
func (l *mysqlLexer) end() bool {
	if l.pendingWith {
		l.flushWith()
	}
	l.st.end()
	return false
}

// next lexes and emits one token. It reports false at the end of the
// statement, or where MySQL would stop with a syntax error.
func (l *mysqlLexer) next() bool {
	if l.state != stStart {
		return l.nextInState()
	}
	src := l.src
	pos := l.pos
	if pos < len(src) {
		// One space between tokens is the common case: step over it
		// without a branch, then loop for any more.
		pos += int(spaceStep[src[pos]])
		for pos < len(src) && isSpace[src[pos]] {
			pos++
		}
	}
	if pos >= len(src) {
		l.pos = pos
		return l.end()
	}
	start := pos
	c := src[start]
	l.pos = pos + 1
	l.tokStart = start
	switch charClass[c] {
	case cIdent:
		return l.ident(start)
	case cDigit:
		return l.number(start)
	case cChar:
		return l.char(c)
	case cPoint:
		if isDigit(l.at(l.pos)) {
			l.real()
			return l.emitNumber()
		}
		l.pos = start
		return l.identSep()
	case cQuote:
		return l.text('\'')
	case cBackQuote:
		return l.quotedIdent('`')
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
		if t := operatorToken(src[start:i]); t != tokNone {
			return l.emitTok(t)
		}
		return l.emitTok(uint16(c)) // MySQL returns the first character
	case cEOL:
		return l.end()
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
				return false
			}
			l.pos = i + 1
			return l.emitNumber()
		}
		return l.ident(start)
	case cBin:
		if l.at(l.pos) == '\'' {
			i := l.pos + 1
			for l.at(i) == '0' || l.at(i) == '1' {
				i++
			}
			if l.at(i) != '\'' {
				return false
			}
			l.pos = i + 1
			return l.emitNumber()
		}
		return l.ident(start)
	case cDQuote:
		if l.mode&ANSIQuotes != 0 {
			return l.quotedIdent('"')
		}
		return l.text('"')
	case cBool:
		if l.at(l.pos) != c {
			return l.emitTok(uint16(c))
		}
		l.pos++
		if c == '&' {
			return l.emitTok(tokAndAnd)
		}
		if l.mode&PipesAsConcat != 0 {
			return l.emitTok(tokOrOr)
		}
		return l.emitTok(tokOr2)
	case cHash:
		l.skipLine()
		return true
	case cColon:
		if l.at(l.pos) == '=' {
			l.pos++
			return l.emitTok(tokSetVar)
		}
		return l.emitTok(':')
	case cSlash:
		if l.at(l.pos) != '*' {
			return l.emitTok('/')
		}
		return l.comment()
	case cStar:
		if l.inVersion && l.at(l.pos) == '/' {
			l.pos++
			l.inVersion = false
			return true
		}
		return l.emitTok('*')
	case cAt:
		switch charClass[l.at(l.pos)] {
		case cQuote, cDQuote, cBackQuote:
		case cAt:
			l.state = stSystemVar
		default:
			l.state = stHostname
		}
		return l.emitTok('@')
	}
	return l.char(c)
}

// char handles single-character tokens, with the special cases of '-'
// ("-- " comments, "->", "->>") and '?' (a placeholder).
func (l *mysqlLexer) char(c byte) bool {
	switch c {
	case '-':
		if n := l.at(l.pos); n == '-' {
			if a := l.at(l.pos + 1); isSpace[a] || a < 0x20 || a == 0x7f {
				l.skipLine()
				return true
			}
		} else if n == '>' {
			l.pos++
			if l.at(l.pos) == '>' {
				l.pos++
				return l.emitTok(tokJSONUnquoted)
			}
			return l.emitTok(tokJSONSep)
		}
	case '?':
		if !identChar[l.at(l.pos)] {
			return l.emitValue()
		}
	}
	return l.emitTok(uint16(c))
}

// nextInState lexes a token whose meaning depends on the one before it.
func (l *mysqlLexer) nextInState() bool {
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
		return l.emitTok('@')
	case stIdentOrKeyword:
		start := l.pos
		end := l.identEnd(start)
		l.pos = end
		if l.at(end) == '.' {
			l.state = stIdentSep
		}
		if end == start {
			return false
		}
		if e := mainKeywords.find(l.src[start:end]); e != nil && e.sets&l.kwSet != 0 && !e.funcOnly {
			return l.emitKeyword(e.tok)
		}
		return l.emitIdent(start, end, 0)
	case stHostname:
		l.tokStart = l.pos
		i := l.pos
		for c := l.at(i); isAlnum(c) || c == '.' || c == '_' || c == '$'; c = l.at(i) {
			i++
		}
		l.pos = i
		return l.emitValue()
	}
	return false
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
// The keyword hash is computed in the same pass that finds the end.
func (l *mysqlLexer) ident(start int) bool {
	src := l.src
	end := l.identEnd(l.pos)
	l.pos = end
	after := end
	if l.mode&IgnoreSpace != 0 {
		for after < len(src) && isSpace[src[after]] {
			after++
		}
	}
	if after == end && l.at(end) == '.' && identChar[l.at(end+1)] {
		// A qualified name, a.b.c: every part is an identifier, never a
		// keyword (MySQL's IDENT_SEP and IDENT_START states, folded here).
		for {
			l.emitIdent(start, end, 0)
			l.emitTok('.')
			start = end + 1
			end = l.identEnd(start)
			if l.at(end) != '.' || !identChar[l.at(end+1)] {
				l.pos = end
				return l.emitIdent(start, end, 0)
			}
		}
	}
	if n := end - start; n <= 8 {
		if e, ok := findShort(src, start, n); ok && e.sets&l.kwSet != 0 && (!e.funcOnly || l.at(after) == '(') {
			return l.emitKeyword(e.tok)
		}
	} else if e := mainKeywords.find(src[start:end]); e != nil && e.sets&l.kwSet != 0 && (!e.funcOnly || l.at(after) == '(') {
		return l.emitKeyword(e.tok)
	}
	if name := src[start:end]; name[0] == '_' && charsets.find(name[1:]) != nil {
		return l.emitTok(tokUnderscoreCharset)
	}
	return l.emitIdent(start, end, 0)
}

// identSep emits the '.' at l.pos; an identifier char after it starts an
// identifier that is never a keyword ("t.select").
func (l *mysqlLexer) identSep() bool {
	l.pos++
	if identChar[l.at(l.pos)] {
		l.state = stIdentStart
	}
	return l.emitTok('.')
}

// identStart lexes an identifier that cannot be a keyword: after '.', or
// one that starts with digits (MY_LEX_IDENT_START).
func (l *mysqlLexer) identStart(start int) bool {
	end := l.identEnd(l.pos)
	l.pos = end
	if l.at(end) == '.' && identChar[l.at(end+1)] {
		l.state = stIdentSep
	}
	return l.emitIdent(start, end, 0)
}

// number lexes what starts with a digit: 0x1F, 0b101, 12, 1.5, 1e5, or an
// identifier such as 1st or 0xZZ.
func (l *mysqlLexer) number(start int) bool {
	if l.src[start] == '0' {
		switch l.at(l.pos) {
		case 'x':
			i := l.pos + 1
			for isXDigit(l.at(i)) {
				i++
			}
			if i-start >= 3 && !identChar[l.at(i)] {
				l.pos = i
				return l.emitNumber()
			}
			return l.identStart(start)
		case 'b':
			i := l.pos + 1
			for l.at(i) == '0' || l.at(i) == '1' {
				i++
			}
			if i-start >= 3 && !identChar[l.at(i)] {
				l.pos = i
				return l.emitNumber()
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
			l.real()
		}
		return l.emitNumber()
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
			return l.emitNumber()
		}
	}
	l.pos = i
	return l.identStart(start)
}

// real consumes the rest of a decimal or float after its '.'.
func (l *mysqlLexer) real() {
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
}

// text lexes a string literal whose opening quote is just before l.pos. An
// unterminated string is still a literal, and it ends the statement: its
// bytes never reach the digest.
func (l *mysqlLexer) text(quote byte) bool {
	src := l.src
	i := l.pos
	escapes := l.mode&NoBackslashEscapes == 0
	for i < len(src) {
		c := src[i]
		i++
		if c == quote {
			if i < len(src) && src[i] == quote {
				i++
				continue
			}
			l.pos = i
			return l.emitValue()
		}
		if c == '\\' && escapes {
			if i >= len(src) {
				break
			}
			i++
		}
	}
	l.pos = len(src)
	l.emitValue()
	return l.end()
}

// quotedIdent lexes `name` (or "name" under ANSI_QUOTES); a doubled quote
// stands for one. An unterminated one aborts, as in MySQL.
func (l *mysqlLexer) quotedIdent(quote byte) bool {
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
			return l.emitIdent(start, i, quote)
		}
	}
	l.pos = len(l.src)
	return false
}

// load64 returns the 8 bytes at src[i:] as a little-endian word (one load).
func load64(src string, i int) uint64 {
	s := src[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
