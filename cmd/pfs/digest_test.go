package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/digest"
)

func runPfs(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func decodeRows(t *testing.T, s string) []digestRow {
	t.Helper()
	var rows []digestRow
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" {
			continue
		}
		var r digestRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows
}

func TestDigestCommandText(t *testing.T) {
	in := "SELECT * FROM t WHERE a = 1\n\n   \nselect * from t where a = 22\r\nINSERT INTO t VALUES (1), (2)\n"
	code, out, errOut := runPfs(t, in, "digest")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	rows := decodeRows(t, out)
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 3 (empty lines skipped):\n%s", len(rows), out)
	}
	if rows[0].SQL != "SELECT * FROM t WHERE a = 1" || str(rows[0].DigestText) != "SELECT * FROM `t` WHERE `a` = ?" {
		t.Errorf("row 0 = %+v", rows[0])
	}
	if rows[1].SQL != "select * from t where a = 22" {
		t.Errorf("row 1 sql %q: the CR should be dropped", rows[1].SQL)
	}
	if str(rows[0].Digest) != str(rows[1].Digest) || len(str(rows[0].Digest)) != 64 {
		t.Errorf("digests %q %q: want equal, 64 hex", str(rows[0].Digest), str(rows[1].Digest))
	}
	if str(rows[2].DigestText) != "INSERT INTO `t` VALUES (?) /* , ... */" {
		t.Errorf("row 2 = %+v", rows[2])
	}
	if rows[0].Version != digest.Version {
		t.Errorf("version %q", rows[0].Version)
	}
	if want := digest.StatementDigest(rows[2].SQL).Hex(); str(rows[2].Digest) != want {
		t.Errorf("digest %s, package says %s", str(rows[2].Digest), want)
	}
	if strings.Count(out, "\n") != 3 {
		t.Errorf("want one object per line:\n%s", out)
	}
}

func TestDigestCommandJSON(t *testing.T) {
	in := `{"sql": "SELECT 1 FROM t\nWHERE b = 'x'", "other": 1}` + "\n\n" + `{"sql":"SELECT a < b"}` + "\n"
	code, out, errOut := runPfs(t, in, "digest", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	rows := decodeRows(t, out)
	if len(rows) != 2 {
		t.Fatalf("got %d rows:\n%s", len(rows), out)
	}
	if rows[0].SQL != "SELECT 1 FROM t\nWHERE b = 'x'" || str(rows[0].DigestText) != "SELECT ? FROM `t` WHERE `b` = ?" {
		t.Errorf("row 0 = %+v", rows[0])
	}
	if !strings.Contains(out, `"SELECT a < b"`) {
		t.Errorf("HTML characters escaped:\n%s", out)
	}
}

func TestDigestCommandMaxDigestLength(t *testing.T) {
	in := "SELECT 1 FROM DUAL\nSELECT 1\n"
	code, out, errOut := runPfs(t, in, "digest", "--max-digest-length", "2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	rows := decodeRows(t, out)
	if len(rows) != 2 || str(rows[0].DigestText) != "SELECT" || str(rows[0].Digest) != str(rows[1].Digest) {
		t.Errorf("rows = %+v", rows)
	}
	for _, bad := range []string{"-1", "2000000", "x"} {
		if code, _, errOut := runPfs(t, "", "digest", "--max-digest-length", bad); code != 2 {
			t.Errorf("--max-digest-length %s: exit %d (%q), want 2", bad, code, errOut)
		}
	}
}

func TestDigestCommandSQLMode(t *testing.T) {
	code, out, _ := runPfs(t, `SELECT "a" FROM t`+"\n", "digest", "--sql-mode", "ANSI_QUOTES")
	if rows := decodeRows(t, out); code != 0 || len(rows) != 1 || str(rows[0].DigestText) != "SELECT `a` FROM `t`" {
		t.Errorf("exit %d, rows %+v", code, rows)
	}
	if code, _, _ := runPfs(t, "", "digest", "--sql-mode", "BOGUS"); code != 2 {
		t.Errorf("bad --sql-mode: exit %d, want 2", code)
	}
}

func TestDigestCommandBadJSON(t *testing.T) {
	in := `{"sql":"SELECT 1"}` + "\n" + `{"sql": SELECT 2}` + "\n" + `{"sql":"SELECT 3"}` + "\n"
	code, out, errOut := runPfs(t, in, "digest", "--json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "JSON") {
		t.Errorf("stderr %q: want the line number and the cause", errOut)
	}
	if rows := decodeRows(t, out); len(rows) != 1 {
		t.Errorf("statements before the bad line: got %d rows, want 1", len(rows))
	}
	code, _, errOut = runPfs(t, `{"query":"SELECT 1"}`+"\n", "digest", "--json")
	if code != 1 || !strings.Contains(errOut, `no "sql" field`) {
		t.Errorf("missing field: exit %d, stderr %q", code, errOut)
	}
}

func TestDigestCommandUsage(t *testing.T) {
	if code, _, _ := runPfs(t, "", "digest", "extra"); code != 2 {
		t.Errorf("positional argument: exit %d, want 2", code)
	}
	if code, _, errOut := runPfs(t, "", "digest", "-h"); code != 0 || !strings.Contains(errOut, "usage: pfs digest") {
		t.Errorf("-h: exit %d, stderr %q", code, errOut)
	}
	if code, out, _ := runPfs(t, "", "digest"); code != 0 || out != "" {
		t.Errorf("empty input: exit %d, out %q", code, out)
	}
}

func TestDigestCommandCommentOnly(t *testing.T) {
	code, out, _ := runPfs(t, "/* nothing */\n", "digest")
	if code != 0 || out != `{"sql":"/* nothing */","digest_text":null,"digest":null,"version":"`+digest.Version+`"}`+"\n" {
		t.Errorf("exit %d, out %q", code, out)
	}
}

// TestDigestCommandServerDigests runs the cases of MySQL's own test results
// that record the server's DIGEST through `pfs digest --json`, with the
// settings each case records: the digest field must be the server's, with
// --numbering mysql and with no --numbering (the default).
func TestDigestCommandServerDigests(t *testing.T) {
	data, err := os.ReadFile("../../digest/testdata/mysql8_cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type mysqlCase struct {
		SQL      string `json:"sql"`
		Digest   string `json:"digest"`
		Settings struct {
			MaxDigestLength *int   `json:"max_digest_length"`
			SQLMode         string `json:"sql_mode"`
		} `json:"settings"`
	}
	checked := 0
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c mysqlCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if c.Digest == "" {
			continue
		}
		var args []string
		if c.Settings.MaxDigestLength != nil {
			args = append(args, "--max-digest-length", strconv.Itoa(*c.Settings.MaxDigestLength))
		}
		if c.Settings.SQLMode != "" {
			args = append(args, "--sql-mode", c.Settings.SQLMode)
		}
		for _, extra := range [][]string{{"--numbering", "mysql"}, nil} {
			code, out, errOut := runPfs(t, line+"\n", append(append([]string{"digest", "--json"}, args...), extra...)...)
			if code != 0 {
				t.Fatalf("case %d %v: exit %d, stderr %q", i+1, extra, code, errOut)
			}
			rows := decodeRows(t, out)
			if len(rows) != 1 || str(rows[0].Digest) != c.Digest || rows[0].Version != digest.NumberingMySQL80.Version() {
				t.Errorf("case %d %q %v: got %s, want digest %s", i+1, c.SQL, extra, out, c.Digest)
			}
		}
		checked++
	}
	if checked != 45 {
		t.Errorf("checked %d cases, want the 45 with a server DIGEST", checked)
	}
}

func TestDigestCommandNumbering(t *testing.T) {
	const sql = "SELECT msg FROM log WHERE id = 7"
	code, out, errOut := runPfs(t, sql+"\n", "digest", "--numbering", "otelpfs")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	rows := decodeRows(t, out)
	old := digest.New(digest.WithNumbering(digest.NumberingOtelpfs)).Normalize(sql)
	if len(rows) != 1 || rows[0].Version != "mysql80-1" || str(rows[0].Digest) != old.Digest.Hex() ||
		str(rows[0].DigestText) != "SELECT `msg` FROM LOG WHERE `id` = ?" {
		t.Errorf("--numbering otelpfs: %s", out)
	}
	for _, bad := range []string{"", "mysql57", "ORACLE"} {
		code, _, errOut := runPfs(t, "", "digest", "--numbering", bad)
		if code != 2 || !strings.Contains(errOut, "numbering") {
			t.Errorf("--numbering %q: exit %d, stderr %q; want 2 and a message", bad, code, errOut)
		}
	}
}
