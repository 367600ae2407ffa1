//go:generate go run ./internal/gentokens -in internal/gentokens -out tokens_mysql_gen.go

package digest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// A Numbering is the set of token numbers the DIGEST hashes, together with
// the keyword set that goes with it. Two Numberings give different DIGESTs
// for the same statement, so each has a Version of its own.
type Numbering struct {
	name    string
	version string
	set     uint8 // the keyword set (setMySQL80, setOtelpfs)
	legacy  bool  // renumber the stream before hashing
}

var (
	// NumberingMySQL80 hashes the token numbers of MySQL 8.0's grammar, as
	// the server does, and recognizes MySQL 8.0's keywords (sql/lex.h):
	// DIGEST equals the server's DIGEST for the same statement, settings and
	// keyword set. The numbers come from the server's sql/sql_yacc.yy,
	// sql/sql_hints.yy and sql/gen_lex_token.cc (see tokens_mysql_gen.go);
	// MySQL 8.4 numbers every token it shares with 8.0 the same way. Its
	// Version is "mysql80-server-1".
	NumberingMySQL80 = Numbering{name: "mysql80", version: "mysql80-server-1", set: setMySQL80}

	// NumberingOtelpfs is otelpfs's own numbering, the only one before
	// NumberingMySQL80: operators from 257, keywords from 300 in the order
	// of this package's keyword list, hint keywords from 1000, the digest
	// tokens at MySQL's numbers. Its keyword set is MySQL 8.0's plus ten
	// words later releases made keywords (AUTO, BERNOULLI, GTIDS, LOG,
	// MANUAL, PARALLEL, PARSE_TREE, QUALIFY, S3, TABLESAMPLE). It gives the
	// digests of Version "mysql80-1", so that digests stored before can still
	// be compared.
	NumberingOtelpfs = Numbering{name: "otelpfs", version: "mysql80-1", set: setOtelpfs, legacy: true}
)

// String returns the numbering's name: "mysql80" or "otelpfs".
func (n Numbering) String() string { return n.name }

// Version returns the Version of the digests made with this numbering.
func (n Numbering) Version() string { return n.version }

// ParseNumbering returns the Numbering named s: "mysql80" (or "mysql") or
// "otelpfs", in any letter case.
func ParseNumbering(s string) (Numbering, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "mysql80", "mysql":
		return NumberingMySQL80, nil
	case "otelpfs":
		return NumberingOtelpfs, nil
	}
	return Numbering{}, fmt.Errorf("digest: unknown numbering %q (want mysql80 or otelpfs)", s)
}

// WithNumbering selects the token numbering the DIGEST hashes, and with it
// the keyword set. The zero Numbering leaves the setting unchanged. By
// default, NumberingMySQL80.
func WithNumbering(n Numbering) Option {
	return optionFunc(func(c config) config {
		if n.name != "" {
			c.numbering = n
		}
		return c
	})
}

// legacyTok maps a token as this package numbers it (MySQL's number) to
// NumberingOtelpfs's number.
var legacyTok [maxToken]uint16

// NumberingOtelpfs's layout.
const (
	legacyFirstKeyword = 300  // keywords from here, in mysqlKeywords order
	legacyFirstHint    = 1000 // hint keywords, in mysqlHintKeywords order
	legacyKeywordGap   = 1150 // keywords past 999 skip the hint and digest ranges
)

func initLegacy() {
	for t := 0; t < 256; t++ {
		legacyTok[t] = uint16(t)
	}
	for t := tokValue; t <= tokUnused; t++ {
		legacyTok[t] = t
	}
	for i, t := range []uint16{
		tokNE, tokEQ, tokLT, tokLE, tokGT, tokGE, tokShiftLeft, tokShiftRight,
		tokEqualNull, tokAndAnd, tokOr2, tokOrOr, tokNot2, tokSetVar, tokJSONSep,
		tokJSONUnquoted, tokUnderscoreCharset, tokWithRollup,
	} {
		legacyTok[t] = uint16(257 + i) // 256+iota, with tokNone at iota 0
	}
	own := uint16(legacyFirstKeyword)
	for _, group := range mysqlKeywords {
		if own == legacyFirstHint {
			own = legacyKeywordGap
		}
		name, _, _ := strings.Cut(group, "|")
		name, _ = strings.CutSuffix(name, "()")
		legacyTok[mustKeyword(name)] = own
		own++
	}
	for i, name := range mysqlHintKeywords {
		e := hintKeywords.find(name)
		if e == nil {
			panic("digest: BUG: unknown hint keyword " + name)
		}
		legacyTok[e.tok] = uint16(legacyFirstHint + i)
	}
}

// renumberLegacy writes the token stream src to dst with every token
// renumbered to NumberingOtelpfs; identifiers keep their length and bytes.
// dst must have len(src) bytes.
func renumberLegacy(dst, src []byte) {
	for i := 0; i+2 <= len(src); {
		tok := binary.LittleEndian.Uint16(src[i:])
		binary.LittleEndian.PutUint16(dst[i:], legacyTok[tok%maxToken])
		i += 2
		if tok == tokIdent || tok == tokIdentAt {
			if i+2 > len(src) {
				return
			}
			n := int(binary.LittleEndian.Uint16(src[i:]))
			copy(dst[i:], src[i:min(len(src), i+2+n)])
			i += 2 + n
		}
	}
}
