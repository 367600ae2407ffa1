package digest

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// mysqlCase is one line of testdata/mysql8_cases.jsonl: a statement and the
// DIGEST_TEXT MySQL 8.0 gave it, taken from MySQL's own test suite.
type mysqlCase struct {
	SQL        string `json:"sql"`
	DigestText string `json:"digest_text"`
	Digest     string `json:"digest"` // MySQL's DIGEST, where the source gives it
	Note       string `json:"note"`
	Source     string `json:"source"`
	Settings   struct {
		MaxDigestLength *int   `json:"max_digest_length"`
		SQLMode         string `json:"sql_mode"`
		CurrentSchema   string `json:"current_schema"` // not part of DIGEST
	} `json:"settings"`
}

func loadMySQLCases(tb testing.TB) []mysqlCase {
	tb.Helper()
	f, err := os.Open("testdata/mysql8_cases.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []mysqlCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c mysqlCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("testdata line %d: %v", len(cases)+1, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

func (c mysqlCase) options(tb testing.TB) []Option {
	var opts []Option
	if c.Settings.MaxDigestLength != nil {
		opts = append(opts, WithMaxDigestLength(*c.Settings.MaxDigestLength))
	}
	if c.Settings.SQLMode != "" {
		m, err := ParseSQLMode(c.Settings.SQLMode)
		if err != nil {
			tb.Fatal(err)
		}
		opts = append(opts, WithSQLMode(m))
	}
	return opts
}

// TestMySQL8Cases checks DIGEST_TEXT byte for byte against MySQL 8.0's,
// and, where the case records it, DIGEST against the server's, with the
// default numbering (NumberingMySQL80) and the settings the case records.
// NumberingOtelpfs must give the same DIGEST_TEXT, and equal digests for
// equal token streams.
func TestMySQL8Cases(t *testing.T) {
	cases := loadMySQLCases(t)
	textPass, digestPass, digests := 0, 0, 0
	byStream := map[string]Digest{}
	for i, c := range cases {
		n := New(c.options(t)...)
		r := n.Normalize(c.SQL)
		if r.Version != Version || r.Version != NumberingMySQL80.Version() {
			t.Errorf("case %d: Version %q", i+1, r.Version)
		}
		if c.Digest != "" {
			digests++
			if got := r.Digest.Hex(); got != c.Digest {
				t.Errorf("case %d %q: DIGEST\n got %s\nwant %s (%s)", i+1, c.SQL, got, c.Digest, c.Source)
			} else {
				digestPass++
			}
		}
		if got := string(r.Text); got != c.DigestText {
			t.Errorf("case %d %q:\n got %q\nwant %q\n(note: %s)", i+1, c.SQL, got, c.DigestText, c.Note)
			continue
		}
		textPass++

		legacy := New(append(c.options(t), WithNumbering(NumberingOtelpfs))...)
		lr := legacy.Normalize(c.SQL)
		if string(lr.Text) != c.DigestText || lr.Version != "mysql80-1" || lr.TokenBytes != r.TokenBytes {
			t.Errorf("case %d: NumberingOtelpfs gives %q, Version %q, %d bytes", i+1, lr.Text, lr.Version, lr.TokenBytes)
		}
		if r.TokenBytes > 0 && lr.Digest == r.Digest {
			t.Errorf("case %d: both numberings give DIGEST %s", i+1, r.Digest)
		}
		if h := lr.Digest.Hex(); len(h) != 64 {
			t.Errorf("case %d: digest %q is not 64 hex characters", i+1, h)
		}
		if _, err := hex.DecodeString(lr.Digest.Hex()); err != nil {
			t.Errorf("case %d: %v", i+1, err)
		}
		key := string(legacy.st.buf)
		if d, ok := byStream[key]; ok && d != lr.Digest {
			t.Errorf("case %d: equal token streams, different digests", i+1)
		}
		byStream[key] = lr.Digest
	}
	if digests != 45 {
		t.Errorf("%d cases carry the server's DIGEST, want 45", digests)
	}
	t.Logf("%d/%d MySQL 8.0 DIGEST_TEXTs and %d/%d DIGESTs match", textPass, len(cases), digestPass, digests)
}
