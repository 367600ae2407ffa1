package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"unsafe"
)

// Version names the normalization rules: the lexer, the reductions, the
// keyword spellings and the token numbering the DIGEST hashes. Every Result
// carries it. It changes whenever a rule change could give a statement a
// different DIGEST or DIGEST_TEXT, so that stored digests and dashboards
// keyed by them are never re-keyed silently: a consumer seeing a new Version
// knows old and new digests are not comparable.
//
// Version is the Version of the default numbering, NumberingMySQL80;
// Numbering.Version gives each numbering's (NumberingOtelpfs: "mysql80-1").
const Version = "mysql80-server-1"

// Digest is a statement's DIGEST: the SHA-256 of its normalized token
// stream.
type Digest [32]byte

// Hex returns the digest as 64 lower-case hex characters, as MySQL prints
// DIGEST.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// String returns d.Hex().
func (d Digest) String() string { return d.Hex() }

// AppendHex appends the 64 hex characters of d to dst.
func (d Digest) AppendHex(dst []byte) []byte { return hex.AppendEncode(dst, d[:]) }

// MarshalText implements encoding.TextMarshaler with the hex form.
func (d Digest) MarshalText() ([]byte, error) { return d.AppendHex(nil), nil }

// IsZero reports whether d is the zero Digest (no digest).
func (d Digest) IsZero() bool { return d == Digest{} }

// Result is the digest of one statement.
type Result struct {
	// Text is DIGEST_TEXT. It aliases the Normalizer's buffer: it is valid
	// until the Normalizer's next call; copy it to keep it.
	Text []byte
	// Digest is DIGEST, the SHA-256 of the token stream; the zero Digest
	// when the stream is empty (MySQL shows NULL then).
	Digest Digest
	// TokenBytes is the length of the token stream as counted against
	// max_digest_length. 0 means the statement has no tokens (MySQL shows
	// NULL for DIGEST and DIGEST_TEXT then).
	TokenBytes int
	// Truncated reports that the token stream hit max_digest_length and
	// the rest of the statement was dropped.
	Truncated bool
	// Version is the normalizer Version that produced this result.
	Version string
}

// A Normalizer computes statement digests. It keeps its buffers between
// calls, so that in steady state a call allocates nothing.
//
// A Normalizer is not safe for concurrent use: give each goroutine its own,
// or take them from a sync.Pool (the package-level functions do).
type Normalizer struct {
	cfg  config
	tk   tokenizer // the dialect's lexer
	st   stream
	text []byte
	hbuf []byte // the renumbered stream, for NumberingOtelpfs
	sum  *summarizer
}

// New returns a Normalizer configured by opts.
func New(opts ...Option) *Normalizer {
	n := &Normalizer{cfg: newConfig(opts)}
	n.tk = n.cfg.dialect.newTokenizer()
	n.text = make([]byte, 0, 256)
	n.st.reset(n.cfg.maxDigestLength, n.text[:0])
	return n
}

// Normalize computes the digest of one SQL statement.
func (n *Normalizer) Normalize(sql string) (r Result) {
	n.tokenize(sql)
	buf := n.st.buf
	r.TokenBytes = len(buf)
	r.Truncated = n.st.full
	r.Version = n.cfg.numbering.version
	if len(buf) > 0 {
		if n.cfg.numbering.legacy {
			if cap(n.hbuf) < len(buf) {
				n.hbuf = make([]byte, cap(n.st.buf))
			}
			h := n.hbuf[:len(buf)]
			renumberLegacy(h, buf)
			r.Digest = sha256.Sum256(h)
		} else {
			r.Digest = sha256.Sum256(buf)
		}
	}
	if t := n.st.text; t != nil && len(buf) <= n.cfg.pfsMaxDigestLength {
		// The text kept as the stream grew is the whole stream's.
		if len(t) > 0 && t[len(t)-1] == ' ' {
			t = t[:len(t)-1]
		}
		r.Text = t
		return r
	}
	pfs := min(len(buf), n.cfg.pfsMaxDigestLength)
	n.text = renderText(n.text[:0], buf[:pfs])
	r.Text = n.text
	return r
}

// NormalizeBytes is Normalize for a statement held in a byte slice. The
// Normalizer does not keep sql.
func (n *Normalizer) NormalizeBytes(sql []byte) Result {
	if len(sql) == 0 {
		return n.Normalize("")
	}
	return n.Normalize(unsafe.String(&sql[0], len(sql)))
}

// tokenize fills n.st with the normalized token stream of sql.
func (n *Normalizer) tokenize(sql string) {
	n.st.reset(n.cfg.maxDigestLength, n.text[:0])
	if n.st.max == 0 {
		return
	}
	n.tk.tokenize(sql, &n.st, &n.cfg)
}

// Package-level convenience, backed by a pool of default Normalizers.

var defaultPool = sync.Pool{New: func() any { return New() }}

// StatementDigest returns the DIGEST of sql with the default options, like
// MySQL's STATEMENT_DIGEST(). It is safe for concurrent use.
func StatementDigest(sql string) Digest {
	n := defaultPool.Get().(*Normalizer)
	d := n.Normalize(sql).Digest
	defaultPool.Put(n)
	return d
}

// StatementDigestText returns the DIGEST_TEXT of sql with the default
// options, like MySQL's STATEMENT_DIGEST_TEXT(). It is safe for concurrent
// use.
func StatementDigestText(sql string) string {
	n := defaultPool.Get().(*Normalizer)
	s := string(n.Normalize(sql).Text)
	defaultPool.Put(n)
	return s
}
