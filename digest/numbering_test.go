package digest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func TestParseNumbering(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Numbering
	}{
		{"mysql", NumberingMySQL80}, {"MySQL80", NumberingMySQL80}, {" mysql80 ", NumberingMySQL80},
		{"otelpfs", NumberingOtelpfs}, {"OTELPFS", NumberingOtelpfs},
	} {
		got, err := ParseNumbering(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseNumbering(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "mysql57", "mysql84", "own"} {
		if n, err := ParseNumbering(bad); err == nil {
			t.Errorf("ParseNumbering(%q) = %v, no error", bad, n)
		}
	}
	if NumberingMySQL80.Version() == NumberingOtelpfs.Version() || Version != NumberingMySQL80.Version() {
		t.Errorf("Versions: %q %q, package %q", NumberingMySQL80.Version(), NumberingOtelpfs.Version(), Version)
	}
	// The zero Numbering changes nothing.
	if r := New(WithNumbering(NumberingOtelpfs), WithNumbering(Numbering{})).Normalize("SELECT 1"); r.Version != "mysql80-1" {
		t.Errorf("WithNumbering(Numbering{}) replaced the numbering: %q", r.Version)
	}
}

// TestMySQLTokenNumbers pins a few numbers against the server's tables as
// read by hand, so that a generator bug cannot move them all at once.
func TestMySQLTokenNumbers(t *testing.T) {
	for _, c := range []struct {
		word string
		tok  uint16
	}{
		{"SELECT", 748}, {"FROM", 452}, {"WHERE", 890}, {"AND", 274}, {"INSERT", 496},
		{"VALUES", 875}, {"SCHEMA", 363}, {"DATABASE", 363}, {"CHARACTER", 317},
		{"MASTER_HOST", 554}, {"JSON_VALUE", 1151}, {"GENERATE", 1203}, {"NOW", 623},
	} {
		e := mainKeywords.find(c.word)
		if e == nil || e.tok != c.tok || e.sets&setMySQL80 == 0 {
			t.Errorf("%s: %+v, want token %d in MySQL 8.0's set", c.word, e, c.tok)
		}
	}
	for _, c := range []struct {
		tok  uint16
		want uint16
	}{{tokEQ, 415}, {tokNE, 614}, {tokAndAnd, 273}, {tokOr2, 642}, {tokWithRollup, 894}, {tokValue, 1100}, {tokIdent, 1106}, {tokInValues, 1110}} {
		if c.tok != c.want {
			t.Errorf("token %d, want %d", c.tok, c.want)
		}
	}
	if e := hintKeywords.find("MAX_EXECUTION_TIME"); e == nil || e.tok != 1000 {
		t.Errorf("MAX_EXECUTION_TIME hint: %+v", e)
	}
	if e := hintKeywords.find("MERGE"); e == nil || e.tok != 1019 || tokText[e.tok] != "MERGE" {
		t.Errorf("MERGE hint: %+v", e)
	}
	// Ten words are keywords only to NumberingOtelpfs.
	later := 0
	for _, e := range mainKeywords.slots {
		if e.name != "" && e.sets == setOtelpfs {
			later++
		}
	}
	if later != 10 {
		t.Errorf("%d keywords only NumberingOtelpfs knows, want 10", later)
	}
	// Every token the lexer can emit has an NumberingOtelpfs number.
	for _, e := range append(append([]keywordEntry{}, mainKeywords.slots...), hintKeywords.slots...) {
		if e.name != "" && legacyTok[e.tok] == 0 {
			t.Errorf("%s (token %d) has no otelpfs number", e.name, e.tok)
		}
	}
}

// TestNumberingKeywordSets: a word MySQL 8.0 does not know is an identifier
// to NumberingMySQL80 in every position the lexer looks keywords up, and a
// keyword to NumberingOtelpfs.
func TestNumberingKeywordSets(t *testing.T) {
	for _, c := range []struct{ sql, mysql, otelpfs string }{
		{"SELECT * FROM log", "SELECT * FROM `log`", "SELECT * FROM LOG"},
		{"SELECT qualify, parse_tree FROM t", "SELECT `qualify` , `parse_tree` FROM `t`", "SELECT QUALIFY , PARSE_TREE FROM `t`"},
		{"SELECT @@tablesample", "SELECT @@`tablesample`", "SELECT @@TABLESAMPLE"},
		{"SELECT bernoulli_x, s3 FROM t", "SELECT `bernoulli_x` , `s3` FROM `t`", "SELECT `bernoulli_x` , S3 FROM `t`"},
	} {
		for _, ignoreSpace := range []SQLMode{0, IgnoreSpace} {
			m := string(New(WithSQLMode(ignoreSpace)).Normalize(c.sql).Text)
			o := string(New(WithSQLMode(ignoreSpace), WithNumbering(NumberingOtelpfs)).Normalize(c.sql).Text)
			if m != c.mysql || o != c.otelpfs {
				t.Errorf("%q (mode %v):\n mysql80 %q, want %q\n otelpfs %q, want %q", c.sql, ignoreSpace, m, c.mysql, o, c.otelpfs)
			}
		}
	}
}

// TestRenumberLegacy: renumbering keeps identifiers and lengths, maps every
// token, and never reads or writes out of bounds, whatever the bytes.
func TestRenumberLegacy(t *testing.T) {
	n := New()
	n.Normalize("SELECT `a b`, x FROM t WHERE y IN (1, 2) AND z = 'q'")
	src := n.st.buf
	dst := make([]byte, len(src))
	renumberLegacy(dst, src)
	if len(dst) != len(src) || !bytes.Contains(dst, []byte("a b")) {
		t.Fatalf("renumbered %v from %v", dst, src)
	}
	if got := binary.LittleEndian.Uint16(dst); got != legacyTok[mustKeyword("SELECT")] || got == 748 {
		t.Errorf("SELECT renumbered to %d", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = byte(r.Uint32())
			if j%2 == 1 && r.IntN(3) == 0 {
				b[j-1], b[j] = byte(tokIdent&0xFF), byte(tokIdent>>8)
			}
		}
		out := make([]byte, len(b))
		renumberLegacy(out, b)
	}
}
