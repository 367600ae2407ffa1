// Command gentokens writes digest/tokens_mysql_gen.go: the token numbers
// MySQL's statement digest hashes, taken from the server's own tables.
//
// Its input is kept beside it, each file with the repository and commit it
// was read from at its top:
//
//   - yacc_tokens.txt: the %token numbers of sql/sql_yacc.yy;
//   - hint_tokens.txt: the %token numbers of sql/sql_hints.yy;
//   - lex_symbols_mysql80.txt: the symbols[] array of MySQL 8.0's sql/lex.h
//     (spelling, token, group), in its order.
//
// The output holds the keyword table (spelling, token number, group) in
// lex.h's order, the hint keywords, and the numbers of the tokens the lexer
// emits by name (operators, WITH ROLLUP, the charset introducer) and of the
// digest-only tokens, numbered from 1100 in the order sql/gen_lex_token.cc
// adds them. Run it with go generate in digest/; TestGeneratedUpToDate fails
// when the committed output differs from what the input gives.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "internal/gentokens", "directory of the input tables")
	out := flag.String("out", "tokens_mysql_gen.go", "Go file to write")
	flag.Parse()
	src, err := generate(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentokens:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gentokens:", err)
		os.Exit(1)
	}
}

// token is one grammar token: its name, number, and for a retired token the
// name it had before.
type token struct {
	name string
	num  int
	was  string
}

// symbol is one lex.h entry.
type symbol struct {
	spelling string
	token    string
	group    string // kw, hk, fn, h
}

// named are the tokens the lexer emits under a Go name of their own, and
// the grammar token each one is.
var named = []struct{ goName, token, text string }{
	{"mysqlTokAndAnd", "AND_AND_SYM", "&&"},
	{"mysqlTokEQ", "EQ", "="},
	{"mysqlTokNE", "NE", "<> and !="},
	{"mysqlTokLT", "LT", "<"},
	{"mysqlTokLE", "LE", "<="},
	{"mysqlTokGT", "GT_SYM", ">"},
	{"mysqlTokGE", "GE", ">="},
	{"mysqlTokShiftLeft", "SHIFT_LEFT", "<<"},
	{"mysqlTokShiftRight", "SHIFT_RIGHT", ">>"},
	{"mysqlTokEqualNull", "EQUAL_SYM", "<=>"},
	{"mysqlTokOr2", "OR2_SYM", "|| meaning OR"},
	{"mysqlTokOrOr", "OR_OR_SYM", "|| under PIPES_AS_CONCAT"},
	{"mysqlTokNot2", "NOT2_SYM", "NOT under HIGH_NOT_PRECEDENCE"},
	{"mysqlTokSetVar", "SET_VAR", ":="},
	{"mysqlTokJSONSep", "JSON_SEPARATOR_SYM", "->"},
	{"mysqlTokJSONUnquoted", "JSON_UNQUOTED_SEPARATOR_SYM", "->>"},
	{"mysqlTokUnderscoreCharset", "UNDERSCORE_CHARSET", "_utf8mb4 and friends"},
	{"mysqlTokWithRollup", "WITH_ROLLUP_SYM", "WITH ROLLUP"},
	{"mysqlTokUndef", "YYUNDEF", "the first number past the digest range"},
}

// digestTokens are the digest-only tokens in the order gen_lex_token.cc
// adds them to its range starting at 1100 (the 5.7 ones, then IN (...),
// then UNUSED).
var digestTokens = []struct{ goName, text string }{
	{"mysqlTokValue", "?"},
	{"mysqlTokValueList", "?, ..."},
	{"mysqlTokRowSingle", "(?)"},
	{"mysqlTokRowSingleList", "(?) /* , ... */"},
	{"mysqlTokRowMulti", "(...)"},
	{"mysqlTokRowMultiList", "(...) /* , ... */"},
	{"mysqlTokIdent", "an identifier"},
	{"mysqlTokIdentAt", "an identifier before @ in table@query_block"},
	{"mysqlTokHintOpen", "/*+"},
	{"mysqlTokHintClose", "*/"},
	{"mysqlTokInValues", "IN (...)"},
	{"mysqlTokUnused", "UNUSED"},
}

const (
	firstDigestToken = 1100
	firstHintToken   = 1000
)

// lines returns the non-comment lines of file, split into fields, and the
// comment lines at its top.
func lines(dir, file string) (rows [][]string, header []string, err error) {
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			if rows == nil {
				header = append(header, strings.TrimSpace(strings.TrimPrefix(l, "#")))
			}
			continue
		}
		if l == "" {
			continue
		}
		rows = append(rows, strings.Fields(l))
	}
	return rows, header, sc.Err()
}

func readTokens(dir, file string, min, max int) ([]token, error) {
	rows, _, err := lines(dir, file)
	if err != nil {
		return nil, err
	}
	var toks []token
	seen := map[string]bool{}
	last := 0
	for i, r := range rows {
		if len(r) < 2 || len(r) > 3 {
			return nil, fmt.Errorf("%s: entry %d: want NAME NUMBER [OLD_NAME], got %q", file, i+1, strings.Join(r, " "))
		}
		n, err := strconv.Atoi(r[1])
		if err != nil || n < min || n > max {
			return nil, fmt.Errorf("%s: %s: bad number %q", file, r[0], r[1])
		}
		if n <= last {
			return nil, fmt.Errorf("%s: %s %d: numbers must increase (after %d)", file, r[0], n, last)
		}
		last = n
		t := token{name: r[0], num: n}
		if len(r) == 3 {
			if !strings.HasPrefix(t.name, "OBSOLETE_TOKEN_") {
				return nil, fmt.Errorf("%s: %s: only a retired token has an old name", file, t.name)
			}
			t.was = r[2]
		}
		for _, name := range []string{t.name, t.was} {
			if name == "" {
				continue
			}
			if seen[name] {
				return nil, fmt.Errorf("%s: %s appears twice", file, name)
			}
			seen[name] = true
		}
		toks = append(toks, t)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%s: no tokens", file)
	}
	return toks, nil
}

func generate(dir string) ([]byte, error) {
	yacc, err := readTokens(dir, "yacc_tokens.txt", 258, 2047)
	if err != nil {
		return nil, err
	}
	hints, err := readTokens(dir, "hint_tokens.txt", firstHintToken, firstDigestToken-1)
	if err != nil {
		return nil, err
	}
	yaccNum := map[string]int{}
	for _, t := range yacc {
		if t.num >= firstHintToken && t.num < 1150 {
			return nil, fmt.Errorf("yacc_tokens.txt: %s %d is in the hint and digest range", t.name, t.num)
		}
		yaccNum[t.name] = t.num
		if t.was != "" {
			yaccNum[t.was] = t.num
		}
	}
	hintNum := map[string]int{}
	for _, t := range hints {
		hintNum[t.name] = t.num
	}
	rows, header, err := lines(dir, "lex_symbols_mysql80.txt")
	if err != nil {
		return nil, err
	}
	var syms []symbol
	seenSpelling := map[string]bool{}
	for i, r := range rows {
		if len(r) != 3 {
			return nil, fmt.Errorf("lex_symbols_mysql80.txt: entry %d: want SPELLING TOKEN GROUP, got %q", i+1, strings.Join(r, " "))
		}
		s := symbol{spelling: r[0], token: r[1], group: r[2]}
		switch s.group {
		case "kw", "hk", "fn":
			if _, ok := yaccNum[s.token]; !ok {
				return nil, fmt.Errorf("lex_symbols_mysql80.txt: %s: no grammar token %s", s.spelling, s.token)
			}
		case "h":
			if _, ok := hintNum[s.token]; !ok {
				return nil, fmt.Errorf("lex_symbols_mysql80.txt: %s: no hint token %s", s.spelling, s.token)
			}
		default:
			return nil, fmt.Errorf("lex_symbols_mysql80.txt: %s: unknown group %q", s.spelling, s.group)
		}
		key := s.group[:1] + s.spelling
		if s.group != "h" {
			key = "m" + s.spelling
		}
		if seenSpelling[key] {
			return nil, fmt.Errorf("lex_symbols_mysql80.txt: %s appears twice", s.spelling)
		}
		seenSpelling[key] = true
		syms = append(syms, s)
	}
	for _, n := range named {
		if _, ok := yaccNum[n.token]; !ok {
			return nil, fmt.Errorf("yacc_tokens.txt: no token %s", n.token)
		}
	}
	if yaccNum["YYUNDEF"] != 1150 {
		return nil, errors.New("yacc_tokens.txt: YYUNDEF must be 1150, where gen_lex_token.cc expects it")
	}
	if hintNum["MAX_EXECUTION_TIME_HINT"] != firstHintToken {
		return nil, errors.New("hint_tokens.txt: MAX_EXECUTION_TIME_HINT must be 1000, where gen_lex_token.cc expects it")
	}

	var b bytes.Buffer
	b.WriteString("// Code generated by gentokens from internal/gentokens/*.txt; DO NOT EDIT.\n\n")
	b.WriteString("package digest\n\n")
	b.WriteString("// The keyword table below is sql/lex.h as the input recorded it:\n//\n")
	for _, h := range header {
		if h == "" {
			b.WriteString("//\n")
			continue
		}
		fmt.Fprintf(&b, "//\t%s\n", h)
	}
	b.WriteString("\n// Token numbers of MySQL's grammar (sql/sql_yacc.yy) the lexer emits by name.\nconst (\n")
	for _, n := range named {
		fmt.Fprintf(&b, "%s uint16 = %d // %s: %s\n", n.goName, yaccNum[n.token], n.token, n.text)
	}
	b.WriteString(")\n\n// Digest-only tokens (sql/gen_lex_token.cc, range_for_digests).\nconst (\n")
	for i, d := range digestTokens {
		fmt.Fprintf(&b, "%s uint16 = %d // %s\n", d.goName, firstDigestToken+i, d.text)
	}
	b.WriteString(")\n\n")
	b.WriteString("// mysql80Symbols is the main parser's part of MySQL 8.0's sql/lex.h, in\n")
	b.WriteString("// its order: spelling, token number, group.\n")
	b.WriteString("var mysql80Symbols = [...]mysqlSymbol{\n")
	for _, s := range syms {
		if s.group == "h" {
			continue
		}
		fmt.Fprintf(&b, "{%q, %d, sym%s}, // %s\n", s.spelling, yaccNum[s.token], groupName(s.group), s.token)
	}
	b.WriteString("}\n\n")
	b.WriteString("// mysql80HintSymbols are the optimizer-hint keywords of sql/lex.h, with\n")
	b.WriteString("// their sql/sql_hints.yy numbers.\n")
	b.WriteString("var mysql80HintSymbols = [...]mysqlSymbol{\n")
	for _, s := range syms {
		if s.group != "h" {
			continue
		}
		fmt.Fprintf(&b, "{%q, %d, symHint}, // %s\n", s.spelling, hintNum[s.token], s.token)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func groupName(g string) string {
	switch g {
	case "hk":
		return "Hintable"
	case "fn":
		return "Function"
	}
	return "Keyword"
}
