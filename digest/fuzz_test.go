package digest

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// literalSpans returns the byte ranges of the literals the lexer finds in
// sql under opts.
func literalSpans(sql string, opts ...Option) [][2]int {
	n := New(opts...)
	var spans [][2]int
	lx := n.tk.(*mysqlLexer)
	lx.literals = &spans
	n.tokenize(sql)
	lx.literals = nil
	return spans
}

// mutateLiterals returns sql with every literal's value changed but its
// shape kept: digits become other digits, hex digits other hex digits,
// bits flip, letters in strings other letters. Prefixes (0x, X', b', N',
// quotes) and escapes stay, so the new statement lexes into the same
// tokens with different values.
func mutateLiterals(sql string, spans [][2]int) string {
	b := []byte(sql)
	for _, sp := range spans {
		lit := b[sp[0]:sp[1]]
		if len(lit) == 0 {
			continue
		}
		kind := byte('d') // decimal number
		i := 0
		switch {
		case len(lit) >= 2 && lit[0] == '0' && lit[1] == 'x':
			kind, i = 'x', 2
		case len(lit) >= 2 && lit[0] == '0' && lit[1] == 'b':
			kind, i = 'b', 2
		case len(lit) >= 2 && (lit[0]|0x20) == 'x' && lit[1] == '\'':
			kind, i = 'x', 2
		case len(lit) >= 2 && (lit[0]|0x20) == 'b' && lit[1] == '\'':
			kind, i = 'b', 2
		case lit[0] == '\'' || lit[0] == '"' || lit[0] == '`':
			kind, i = 's', 1
		case len(lit) >= 2 && (lit[0]|0x20) == 'n' && lit[1] == '\'':
			kind, i = 's', 2
		case lit[0] == '?':
			continue
		case lit[0] >= '0' && lit[0] <= '9', lit[0] == '.':
		default:
			kind = 'h' // @hostname
		}
		for ; i < len(lit); i++ {
			c := lit[i]
			switch kind {
			case 'd':
				if c >= '0' && c <= '9' {
					lit[i] = '0' + (c-'0'+3)%10
				}
			case 'x':
				switch {
				case c >= '0' && c <= '8':
					lit[i] = c + 1
				case c >= 'a' && c <= 'e', c >= 'A' && c <= 'E':
					lit[i] = c + 1
				}
			case 'b':
				if c == '0' || c == '1' {
					lit[i] = c ^ 1
				}
			case 's', 'h':
				switch {
				case c >= 'a' && c <= 'y', c >= 'A' && c <= 'Y':
					lit[i] = c + 1
				case c >= '0' && c <= '8':
					lit[i] = c + 1
				}
			}
		}
	}
	return string(b)
}

// textBound is the most DIGEST_TEXT bytes a token stream of n bytes can
// print.
func textBound(n int) int { return n*maxTextPerByte + 16 }

func FuzzNormalize(f *testing.F) {
	for _, c := range loadMySQLCases(f) {
		f.Add(c.SQL, uint16(1024), uint8(0))
	}
	for _, s := range []string{
		"SELECT /*+ BKA(t1@qb) SET_VAR(x=16M) RESOURCE_GROUP('g') */ a FROM t WHERE b IN (1, 'x', 0x1F, X'AB', b'1', N'y', _utf8mb4'z', .5e3) WITH ROLLUP",
		"SELECT @a, @@session.x, @'h', 1 -- c\n # d\n /*!80000 , 2 */ /*!90000 , 3 */ ;",
		"INSERT INTO t VALUES (1, -2, +3), (NULL, 'a\\'b', \"c\"\"d\") ON DUPLICATE KEY UPDATE a = VALUES(a)",
		"SELECT 'unterminated",
		"SELECT `unterminated",
		"SELECT /*+ unterminated",
	} {
		f.Add(s, uint16(1024), uint8(0))
		f.Add(s, uint16(17), uint8(ANSIQuotes|NoBackslashEscapes))
	}
	f.Fuzz(func(t *testing.T, sql string, maxLen uint16, mode uint8) {
		limit := int(maxLen) % 4096
		opts := []Option{
			WithMaxDigestLength(limit),
			WithPerformanceSchemaMaxDigestLength(limit / 2),
			WithSQLMode(SQLMode(mode) & (ANSIQuotes | NoBackslashEscapes | PipesAsConcat | HighNotPrecedence | IgnoreSpace)),
		}
		n := New(opts...)
		r := n.Normalize(sql)

		// The budget holds, and memory stays bounded by it.
		if r.TokenBytes > limit || cap(n.st.buf) > limit {
			t.Fatalf("token stream %d bytes (cap %d) over max_digest_length %d", r.TokenBytes, cap(n.st.buf), limit)
		}
		if len(r.Text) > textBound(limit/2) || cap(n.text) > max(256, textBound(limit/2)) {
			t.Fatalf("text %d bytes (cap %d) over its bound %d", len(r.Text), cap(n.text), textBound(limit/2))
		}
		if r.Version != Version || len(r.Digest.Hex()) != 64 {
			t.Fatalf("bad Version %q or digest %q", r.Version, r.Digest.Hex())
		}
		if utf8.ValidString(sql) && !utf8.Valid(r.Text) {
			t.Fatalf("valid input gave invalid UTF-8 text %q", r.Text)
		}

		// Deterministic, and independent of the previous statement.
		text := string(r.Text)
		d := r.Digest

		// The text kept as the stream grew is what renderText prints from
		// the stream.
		checkKeptText(t, n, sql)
		n.Normalize("SELECT 'something else entirely', 1, 2, 3")
		if r2 := n.Normalize(sql); string(r2.Text) != text || r2.Digest != d {
			t.Fatalf("not deterministic: %q then %q", text, r2.Text)
		}

		// Changing literal values changes neither the digest nor the text;
		// in particular no literal byte reaches DIGEST_TEXT.
		spans := literalSpans(sql, opts...)
		mut := mutateLiterals(sql, spans)
		if mut != sql {
			rm := n.Normalize(mut)
			if rm.Digest != d || string(rm.Text) != text {
				t.Fatalf("literal change changed the digest:\n%q -> %q\n%q -> %q", sql, text, mut, rm.Text)
			}
		}

		// The old numbering hashes the same stream renumbered: where no word
		// only it knows as a keyword appears, its text and stream length are
		// the same, and equal streams hash alike under both.
		lr := New(append(opts, WithNumbering(NumberingOtelpfs))...).Normalize(sql)
		if lr.Version != NumberingOtelpfs.Version() || len(lr.Digest.Hex()) != 64 {
			t.Fatalf("otelpfs numbering: Version %q", lr.Version)
		}
		if !hasLaterKeyword(sql) && !nullAfterNotOrAll(sql) && (string(lr.Text) != text || lr.TokenBytes != r.TokenBytes || lr.Truncated != r.Truncated) {
			t.Fatalf("numberings disagree on %q:\n mysql80 %q (%d bytes)\n otelpfs %q (%d bytes)", sql, text, r.TokenBytes, lr.Text, lr.TokenBytes)
		}

		// Long literals never appear in the text unless the statement has
		// the same bytes outside its literals.
		outside := []byte(sql)
		for _, sp := range spans {
			for i := sp[0]; i < sp[1]; i++ {
				outside[i] = 0
			}
		}
		for _, sp := range spans {
			lit := sql[sp[0]:sp[1]]
			if len(lit) >= 8 && strings.Contains(text, lit) && !strings.Contains(string(outside), lit) {
				t.Fatalf("literal %q survives into %q", lit, text)
			}
		}
	})
}

// hasLaterKeyword reports whether sql contains, in any case, one of the ten
// words only NumberingOtelpfs takes for keywords.
func hasLaterKeyword(sql string) bool {
	u := strings.ToUpper(sql)
	for _, w := range []string{"AUTO", "BERNOULLI", "GTIDS", "LOG", "MANUAL", "PARALLEL", "PARSE_TREE", "QUALIFY", "S3", "TABLESAMPLE"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// nullAfterNotOrAll reports whether sql may have a NULL whose reduction
// the numberings decide differently: after NOT (or NOT2_SYM), or after ALL.
// NumberingOtelpfs keeps the rules of its Version there.
func nullAfterNotOrAll(sql string) bool {
	u := strings.ToUpper(sql)
	return strings.Contains(u, "NULL") && (strings.Contains(u, "NOT") || strings.Contains(u, "ALL"))
}

// checkKeptText normalizes sql with n twice (the second call has the
// buffers the first grew) and checks the text the stream kept against
// renderText of the stream.
func checkKeptText(t *testing.T, n *Normalizer, sql string) {
	t.Helper()
	n.Normalize(sql)
	r := n.Normalize(sql)
	if n.st.text == nil || len(n.st.buf) > n.cfg.pfsMaxDigestLength {
		return // rendered at the end
	}
	if want := renderText(nil, n.st.buf); string(r.Text) != string(want) {
		t.Fatalf("%q: kept text %q, renderText %q", sql, r.Text, want)
	}
}

// TestKeptText checks the text kept as the stream grows against renderText
// over the generated statements of the golden test.
func TestKeptText(t *testing.T) {
	var seeds []string
	for _, c := range loadMySQLCases(t) {
		seeds = append(seeds, c.SQL)
	}
	r := rand.New(rand.NewPCG(7, 7))
	kept := 0
	for i := 0; i < 2000; i++ {
		n := New(goldenOptions(r)...)
		sql := goldenStatement(r, seeds)
		checkKeptText(t, n, sql)
		if n.st.text != nil {
			kept++
		}
	}
	if kept < 1000 {
		t.Errorf("the text was kept for %d statements of 2000", kept)
	}
}
