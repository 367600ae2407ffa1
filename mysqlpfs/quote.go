package mysqlpfs

import "strings"

// quoteDollarIdents returns q with each unquoted identifier that holds a
// '$' (sys.x$statement_analysis) put in backquotes: MySQL takes '$' in an
// unquoted identifier, the engine's parser does not. Strings, quoted
// identifiers, comments (executable /*! */ ones included) and variables
// (@x$y) are left as they are. The rewrite only quotes names: the
// statement is parsed, and checked, as ever.
func quoteDollarIdents(q string) string {
	if !strings.Contains(q, "$") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(q, i)
			b.WriteString(q[i:j])
			i = j
		case c == '#' || c == '-' && strings.HasPrefix(q[i:], "--") && (i+2 == len(q) || q[i+2] <= ' '):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				j = len(q)
			} else {
				j = i + 2 + j + 2
			}
			b.WriteString(q[i:j])
			i = j
		case isIdentByte(c):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			word := q[i:j]
			if strings.Contains(word, "$") && (i == 0 || q[i-1] != '@') && !isDigits(word) {
				b.WriteByte('`')
				b.WriteString(word)
				b.WriteByte('`')
			} else {
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// skipQuoted returns the index past the string or quoted identifier that
// starts at q[i]: a doubled quote is one quote, and in a string a
// backslash escapes the next byte.
func skipQuoted(q string, i int) int {
	quote := q[i]
	j := i + 1
	for j < len(q) {
		switch q[j] {
		case '\\':
			if quote != '`' {
				j += 2
				continue
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return len(q)
}

// isIdentByte reports whether c may be part of an unquoted identifier (a
// byte of a multi-byte UTF-8 character included).
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
