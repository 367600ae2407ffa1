package digest

import "unsafe"

// stream is the normalized token stream of one statement, laid out as
// MySQL's sql_digest_storage lays out its token array: a token is two bytes,
// little endian; an identifier is its token, a two-byte length and the
// identifier's bytes, written whole or not at all. The stream never grows
// past max bytes: the first token that does not fit marks it full, and every
// later token is dropped, so statements that differ only past the budget
// share their stream and their digest.
//
// The reductions (literals to ?, sign folding, value lists, rows, IN lists)
// rewrite the stream's tail as MySQL's digest_add_token does; they never
// look back past the last identifier.
//
// The stream also keeps its DIGEST_TEXT as it grows (text): every token
// printed with its trailing space, as renderText prints it, so that the
// common statement needs no second pass over the stream. A reduction pops
// tokens that are never identifiers, so the text shrinks by their printed
// lengths. When the next token might not fit in text's capacity, text
// becomes nil and the Normalizer renders the stream at the end instead.
type stream struct {
	buf    []byte // len is MySQL's m_byte_count; cap >= max
	text   []byte // renderText(buf) with its trailing space, or nil
	max    int
	lastID int // end of the last identifier: peeks stop here
	full   bool
}

// textSlack is the most bytes one token or short identifier writes past
// the text's length: a word store past a short form, or the longest form.
const textSlack = 48

// reset empties the stream for a statement. text, when not nil, is the
// buffer to keep the DIGEST_TEXT in (its capacity is used).
func (s *stream) reset(max int, text []byte) {
	if cap(s.buf) < max {
		s.buf = make([]byte, 0, max)
	}
	s.buf = s.buf[:0]
	s.text = text
	s.max = max
	s.lastID = 0
	s.full = false
}

func (s *stream) pop(n int) {
	b := s.buf
	if s.text != nil {
		t := len(s.text)
		for i := 1; i <= n; i++ {
			t -= int(tokOut[uint16(b[len(b)-2*i])|uint16(b[len(b)-2*i+1])<<8].n)
		}
		s.text = s.text[:t]
	}
	s.buf = b[:len(b)-2*n]
}

// store appends one token, or marks the stream full when it does not fit.
func (s *stream) store(tok uint16) {
	n := len(s.buf)
	if n+2 > s.max || s.full {
		s.full = true
		return
	}
	s.buf = s.buf[:n+2]
	s.buf[n] = byte(tok)
	s.buf[n+1] = byte(tok >> 8)
	s.textTok(tok)
}

// textTok appends tok's printed form to the text.
func (s *stream) textTok(tok uint16) {
	t := len(s.text)
	if t+textSlack > cap(s.text) {
		s.text = nil
		return
	}
	s.text = s.text[:putTokText(s.text[:cap(s.text)], t, tok)]
}

// textIdent appends an identifier's printed form to the text.
func (s *stream) textIdent(tok uint16, name []byte) {
	t := len(s.text)
	if t+textSlack+len(name) > cap(s.text) {
		s.text = nil
		return
	}
	s.text = s.text[:putIdentText(s.text[:cap(s.text)], t, tok, unsafe.String(unsafe.SliceData(name), len(name)))]
}

// peek2 returns the last two tokens (t1 the last), or tokUnused where the
// stream ends or an identifier is in the way.
func (s *stream) peek2() (t1, t2 uint16) {
	n := len(s.buf)
	t1, t2 = tokUnused, tokUnused
	if s.lastID+2 <= n {
		t1 = uint16(s.buf[n-2]) | uint16(s.buf[n-1])<<8
		if s.lastID+4 <= n {
			t2 = uint16(s.buf[n-4]) | uint16(s.buf[n-3])<<8
		}
	}
	return t1, t2
}

// addToken adds a keyword, operator or punctuation token.
func (s *stream) addToken(tok uint16) {
	if tok == ')' {
		s.closeParen()
		return
	}
	s.store(tok)
}

// addNumber adds a numeric literal, folding unary signs before it into the
// value: "(-1)" and "= ---1" lose their signs, "a - 1" keeps its operator.
func (s *stream) addNumber() {
	if s.full {
		return
	}
	for {
		t1, t2 := s.peek2()
		if (t1 != '-' && t1 != '+') || t2 == tokUnused || tokFlags[t2]&flagStartExpr == 0 {
			break
		}
		s.pop(1)
	}
	s.addValue()
}

// addValue adds a literal (string, number, placeholder, NULL, @variable
// name) as ?, merging "? , ?" into "?, ...".
func (s *stream) addValue() {
	if s.full {
		return
	}
	tok := tokValue
	if t1, t2 := s.peek2(); t1 == ',' && (t2 == tokValue || t2 == tokValueList) {
		s.pop(2)
		tok = tokValueList
	}
	s.store(tok)
}

// addNullValue adds the literal NULL. MySQL stores the NULL keyword first
// and rewrites it once the grammar reduces it to a literal, so the keyword
// must fit before the rewrite can shrink the tail.
func (s *stream) addNullValue() {
	if s.full {
		return
	}
	if len(s.buf)+2 > s.max {
		s.full = true
		return
	}
	s.addValue()
}

func (s *stream) closeParen() {
	if s.full {
		return
	}
	tok := uint16(')')
	t1, t2 := s.peek2()
	switch {
	case t1 == tokValue && t2 == '(':
		s.pop(2)
		tok = tokRowSingle
		t1, t2 = s.peek2()
		if t1 == ',' && (t2 == tokRowSingle || t2 == tokRowSingleList) {
			s.pop(2)
			tok = tokRowSingleList
		} else if t1 == kwIn {
			s.pop(1)
			tok = tokInValues
		}
	case t1 == tokValueList && t2 == '(':
		s.pop(2)
		tok = tokRowMulti
		t1, t2 = s.peek2()
		if t1 == ',' && (t2 == tokRowMulti || t2 == tokRowMultiList) {
			s.pop(2)
			tok = tokRowMultiList
		} else if t1 == kwIn {
			s.pop(1)
			tok = tokInValues
		}
	}
	s.store(tok)
}

// addIdent adds an identifier. When quote is not 0, a doubled quote
// character in name stands for one.
func (s *stream) addIdent(tok uint16, name string, quote byte) {
	if s.full {
		return
	}
	n := len(name)
	if quote != 0 {
		n = 0
		for i := 0; i < len(name); i++ {
			if name[i] == quote && i+1 < len(name) && name[i+1] == quote {
				i++
			}
			n++
		}
	}
	if n > 0xFFFF {
		n = 0xFFFF
	}
	at := len(s.buf)
	if at+4+n > s.max {
		s.full = true
		return
	}
	b := s.buf[:at+4+n]
	b[at] = byte(tok)
	b[at+1] = byte(tok >> 8)
	b[at+2] = byte(n)
	b[at+3] = byte(n >> 8)
	w := b[at+4:]
	if quote == 0 {
		copy(w, name)
	} else {
		for i, j := 0, 0; j < n; i++ {
			w[j] = name[i]
			j++
			if name[i] == quote && i+1 < len(name) && name[i+1] == quote {
				i++
			}
		}
	}
	s.buf = b
	s.lastID = len(b)
	s.textIdent(tok, b[at+4:])
}

// end closes the statement: a trailing ';' is dropped.
func (s *stream) end() {
	if s.full {
		return
	}
	n := len(s.buf)
	if n >= 2 && s.lastID <= n-2 && s.buf[n-2] == ';' && s.buf[n-1] == 0 {
		s.pop(1)
	}
}
