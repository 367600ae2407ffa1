package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGeneratedUpToDate fails when digest/tokens_mysql_gen.go is not what
// the recorded input gives: run go generate in digest/.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := generate(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../tokens_mysql_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("digest/tokens_mysql_gen.go is stale: run go generate ./digest")
	}
}

// TestGenerateChecksInput feeds the generator broken tables: each must be
// an error that names the problem, never a table.
func TestGenerateChecksInput(t *testing.T) {
	yacc, err := os.ReadFile("yacc_tokens.txt")
	if err != nil {
		t.Fatal(err)
	}
	hints, err := os.ReadFile("hint_tokens.txt")
	if err != nil {
		t.Fatal(err)
	}
	lex, err := os.ReadFile("lex_symbols_mysql80.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, old, new, want string
	}{
		{"renumbered", "yacc_tokens.txt", "SELECT_SYM 748\n", "SELECT_SYM 747\n", "numbers must increase"},
		{"unknown token", "lex_symbols_mysql80.txt", "SELECT SELECT_SYM hk\n", "SELECT SELECTX_SYM hk\n", "no grammar token SELECTX_SYM"},
		{"bad group", "lex_symbols_mysql80.txt", "SELECT SELECT_SYM hk\n", "SELECT SELECT_SYM zz\n", "unknown group"},
		{"duplicate", "lex_symbols_mysql80.txt", "SELECT SELECT_SYM hk\n", "SELECT SELECT_SYM hk\nSELECT SELECT_SYM hk\n", "appears twice"},
		{"hint range", "hint_tokens.txt", "BKA_HINT 1002\n", "BKA_HINT 1200\n", "bad number"},
		{"no number", "yacc_tokens.txt", "SELECT_SYM 748\n", "SELECT_SYM\n", "want NAME NUMBER"},
		{"yyundef", "yacc_tokens.txt", "YYUNDEF 1150\n", "YYUNDEF 1149\n", "hint and digest range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string][]byte{"yacc_tokens.txt": yacc, "hint_tokens.txt": hints, "lex_symbols_mysql80.txt": lex}
			if !bytes.Contains(files[c.file], []byte(c.old)) {
				t.Fatalf("%s has no %q", c.file, c.old)
			}
			files[c.file] = bytes.Replace(files[c.file], []byte(c.old), []byte(c.new), 1)
			for name, b := range files {
				if err := os.WriteFile(dir+"/"+name, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := generate(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("generate: %v (%d bytes); want an error with %q", err, len(out), c.want)
			}
		})
	}
	if _, err := generate(t.TempDir()); err == nil {
		t.Fatal("generate with no input gave no error")
	}
}
