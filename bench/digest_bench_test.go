package bench

import (
	"bufio"
	"os"
	"strings"
	"testing"

	sqllexer "github.com/DataDog/go-sqllexer"

	"github.com/otelpfs/otelpfs/digest"
)

// The statement-digest benchmarks run otelpfs's digest and DataDog's
// go-sqllexer over one corpus, testdata/queries.txt: realistic MySQL
// statements of varied length (point selects, joins, IN lists, multi-row
// inserts, updates, hints), one per line. Each benchmark iteration handles
// the whole corpus; ns/op is per corpus, so the ratio of two results is the
// speed ratio.

func loadCorpus(b *testing.B) []string {
	b.Helper()
	f, err := os.Open("testdata/queries.txt")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			qs = append(qs, q)
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if len(qs) == 0 {
		b.Fatal("empty corpus")
	}
	return qs
}

func corpusBytes(qs []string) int64 {
	var n int64
	for _, q := range qs {
		n += int64(len(q))
	}
	return n
}

// BenchmarkDigest normalizes, renders DIGEST_TEXT and hashes every corpus
// statement with one reused Normalizer, numbering tokens as the MySQL server
// does (the default), so that DIGEST is the server's.
func BenchmarkDigest(b *testing.B) {
	benchDigest(b, digest.NumberingMySQL80)
}

// BenchmarkDigestOtelpfs is BenchmarkDigest with NumberingOtelpfs, the
// numbering of Version mysql80-1 digests: the stream is renumbered before it
// is hashed.
func BenchmarkDigestOtelpfs(b *testing.B) {
	benchDigest(b, digest.NumberingOtelpfs)
}

func benchDigest(b *testing.B, numbering digest.Numbering) {
	qs := loadCorpus(b)
	n := digest.New(digest.WithNumbering(numbering))
	for _, q := range qs {
		n.Normalize(q) // grow the buffers once: the steady state is measured
	}
	b.SetBytes(corpusBytes(qs))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			r := n.Normalize(q)
			if len(r.Text) == 0 {
				b.Fatal("empty digest text")
			}
		}
	}
}

// BenchmarkSQLLexerNormalize is go-sqllexer doing the same job: replace
// literals (the obfuscator) and normalize (the normalizer), MySQL dialect.
func BenchmarkSQLLexerNormalize(b *testing.B) {
	qs := loadCorpus(b)
	obf := sqllexer.NewObfuscator()
	norm := sqllexer.NewNormalizer()
	b.SetBytes(corpusBytes(qs))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			out, _, err := sqllexer.ObfuscateAndNormalize(q, obf, norm, sqllexer.WithDBMS(sqllexer.DBMSMySQL))
			if err != nil || out == "" {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSQLLexerNormalizeOnly is go-sqllexer's normalizer alone, without
// literal replacement (less work than a digest; shown for reference).
func BenchmarkSQLLexerNormalizeOnly(b *testing.B) {
	qs := loadCorpus(b)
	norm := sqllexer.NewNormalizer()
	b.SetBytes(corpusBytes(qs))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			if _, _, err := norm.Normalize(q, sqllexer.WithDBMS(sqllexer.DBMSMySQL)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// digest200 is a typical OLTP statement of about 200 bytes.
const digest200 = "SELECT o.id, o.status, o.total, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.customer_id = 1017 AND o.status IN ('paid', 'shipped') ORDER BY o.created_at DESC LIMIT 20"

// BenchmarkDigest200 digests one typical 200-byte statement.
func BenchmarkDigest200(b *testing.B) {
	n := digest.New()
	b.SetBytes(int64(len(digest200)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n.Normalize(digest200)
	}
}

// BenchmarkSQLLexerNormalize200 is go-sqllexer on the same statement.
func BenchmarkSQLLexerNormalize200(b *testing.B) {
	obf := sqllexer.NewObfuscator()
	norm := sqllexer.NewNormalizer()
	b.SetBytes(int64(len(digest200)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := sqllexer.ObfuscateAndNormalize(digest200, obf, norm, sqllexer.WithDBMS(sqllexer.DBMSMySQL)); err != nil {
			b.Fatal(err)
		}
	}
}
