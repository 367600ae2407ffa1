package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/otelpfs/otelpfs/digest"
)

func init() {
	register(command{
		name:    "digest",
		summary: "print DIGEST_TEXT and DIGEST of statements read from stdin",
		run:     runDigest,
	})
}

// maxStatementLine bounds one input line: a statement longer than this is
// an error rather than unbounded memory.
const maxStatementLine = 64 << 20

// digestRow is what pfs digest prints for one statement. DigestText and
// Digest are null for a statement without tokens (only comments), as MySQL
// shows NULL for it.
type digestRow struct {
	SQL        string  `json:"sql"`
	DigestText *string `json:"digest_text"`
	Digest     *string `json:"digest"`
	Version    string  `json:"version"`
}

func runDigest(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("digest", stderr)
	asJSON := fs.Bool("json", false, "read one JSON object per line, the statement in its \"sql\" field")
	maxLen := fs.Int("max-digest-length", digest.DefaultMaxDigestLength,
		"max_digest_length: byte budget of the normalized token stream (0 to 1048576)")
	sqlMode := fs.String("sql-mode", "", "sql_mode of the statements, e.g. ANSI_QUOTES (only lexing flags matter)")
	numbering := fs.String("numbering", digest.NumberingMySQL80.String(),
		"token numbering the digest hashes: mysql (MySQL 8.0's, the server's DIGEST) or otelpfs (Version mysql80-1 digests)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs digest [--json] [--max-digest-length N] [--sql-mode MODE] [--numbering mysql|otelpfs] < statements")
		fmt.Fprintln(stderr, "\nReads one statement per line (with --json, one object per line with an \"sql\"")
		fmt.Fprintln(stderr, "field) and prints one JSON object per statement: sql, digest_text, digest")
		fmt.Fprintln(stderr, "(64 hex characters, SHA-256) and the normalizer version, as MySQL 8.0's")
		fmt.Fprintln(stderr, "STATEMENT_DIGEST_TEXT() and STATEMENT_DIGEST() would (with --numbering mysql,")
		fmt.Fprintln(stderr, "the default, the digest is the server's). Empty lines are skipped;")
		fmt.Fprintln(stderr, "a statement with nothing but comments gets null digest_text and digest.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if *maxLen < 0 || *maxLen > digest.MaxDigestLengthLimit {
		return fmt.Errorf("%w: --max-digest-length %d is outside [0, %d]", errUsage, *maxLen, digest.MaxDigestLengthLimit)
	}
	mode, err := digest.ParseSQLMode(*sqlMode)
	if err != nil {
		return fmt.Errorf("%w: --sql-mode: %v", errUsage, err)
	}
	num, err := digest.ParseNumbering(*numbering)
	if err != nil {
		return fmt.Errorf("%w: --numbering: %v", errUsage, err)
	}
	n := digest.New(
		digest.WithMaxDigestLength(*maxLen),
		// The text shows the whole stream, as STATEMENT_DIGEST_TEXT() does.
		digest.WithPerformanceSchemaMaxDigestLength(*maxLen),
		digest.WithSQLMode(mode),
		digest.WithNumbering(num),
	)

	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), maxStatementLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		sql := string(b)
		if *asJSON {
			var in struct {
				SQL *string `json:"sql"`
			}
			if err := json.Unmarshal(b, &in); err != nil {
				out.Flush()
				return fmt.Errorf("line %d: not a JSON object: %v", line, err)
			}
			if in.SQL == nil {
				out.Flush()
				return fmt.Errorf("line %d: no \"sql\" field", line)
			}
			sql = *in.SQL
		}
		r := n.Normalize(sql)
		row := digestRow{SQL: sql, Version: r.Version}
		if r.TokenBytes > 0 {
			text, hex := string(r.Text), r.Digest.Hex()
			row.DigestText, row.Digest = &text, &hex
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		out.Flush()
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: statement longer than %d bytes", line+1, maxStatementLine)
		}
		return fmt.Errorf("reading stdin: %w", err)
	}
	return out.Flush()
}
