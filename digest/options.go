package digest

import (
	"fmt"
	"strings"
)

// Defaults, as in MySQL 8.0.
const (
	// DefaultMaxDigestLength is max_digest_length's default: the byte
	// budget of the normalized token stream.
	DefaultMaxDigestLength = 1024
	// DefaultPerformanceSchemaMaxDigestLength is
	// performance_schema_max_digest_length's default: the part of the token
	// stream DIGEST_TEXT is rendered from.
	DefaultPerformanceSchemaMaxDigestLength = 1024
	// MaxDigestLengthLimit is the largest value either length accepts
	// (1 MiB, MySQL's limit).
	MaxDigestLengthLimit = 1024 * 1024
	// DefaultServerVersion is the MySQL version the lexer assumes for
	// version comments: /*!80000 ... */ is SQL, /*!90000 ... */ a comment.
	DefaultServerVersion = 80040
)

// SQLMode holds the sql_mode flags that change how a statement is lexed
// (and so its digest). Other sql_mode flags do not matter here.
type SQLMode uint8

const (
	// ANSIQuotes makes "x" an identifier instead of a string.
	ANSIQuotes SQLMode = 1 << iota
	// NoBackslashEscapes makes '\' an ordinary character inside strings.
	NoBackslashEscapes
	// PipesAsConcat makes || the concatenation operator rather than OR.
	PipesAsConcat
	// HighNotPrecedence makes NOT the high-precedence operator (printed !).
	HighNotPrecedence
	// IgnoreSpace allows spaces between a function name and its '('.
	IgnoreSpace
)

// String returns the flags as sql_mode spells them, comma-separated.
func (m SQLMode) String() string {
	var names []string
	for _, n := range sqlModeNames[:5] {
		if m&n.mode != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

var sqlModeNames = []struct {
	name string
	mode SQLMode
}{
	{"ANSI_QUOTES", ANSIQuotes},
	{"NO_BACKSLASH_ESCAPES", NoBackslashEscapes},
	{"PIPES_AS_CONCAT", PipesAsConcat},
	{"HIGH_NOT_PRECEDENCE", HighNotPrecedence},
	{"IGNORE_SPACE", IgnoreSpace},
	// ANSI is a combination mode; these are the parts that affect lexing.
	{"ANSI", ANSIQuotes | PipesAsConcat | IgnoreSpace},
}

// ParseSQLMode parses a comma-separated sql_mode value such as
// "ANSI_QUOTES,STRICT_TRANS_TABLES". Flags that do not affect lexing are
// accepted and ignored; an empty string is the empty mode. Names are
// matched without regard to case.
func ParseSQLMode(s string) (SQLMode, error) {
	var m SQLMode
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		found := false
		for _, n := range sqlModeNames {
			if strings.EqualFold(f, n.name) {
				m |= n.mode
				found = true
			}
		}
		if !found && !knownSQLModeFlag(f) {
			return 0, fmt.Errorf("digest: unknown sql_mode flag %q", f)
		}
	}
	return m, nil
}

func knownSQLModeFlag(f string) bool {
	switch strings.ToUpper(f) {
	case "REAL_AS_FLOAT", "ONLY_FULL_GROUP_BY", "NO_UNSIGNED_SUBTRACTION",
		"NO_DIR_IN_CREATE", "NO_AUTO_VALUE_ON_ZERO", "STRICT_TRANS_TABLES",
		"STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
		"ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL",
		"NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH",
		"TIME_TRUNCATE_FRACTIONAL":
		return true
	}
	return false
}

// A Dialect selects the SQL lexer and keyword set. MySQL80 is the only one
// today; the seam exists so that MariaDB or TiDB variants can be added
// without changing the Normalizer's API.
type Dialect struct {
	name         string
	newTokenizer func() tokenizer
}

// A tokenizer is a dialect's lexer: it lexes one statement into the shared
// token stream, whose reductions, budget, rendering and hash are the same
// for every dialect. It is called once per statement.
type tokenizer interface {
	tokenize(sql string, st *stream, cfg *config)
}

// MySQL80 is MySQL 8.0's dialect.
var MySQL80 = Dialect{name: "mysql80", newTokenizer: func() tokenizer { return new(mysqlLexer) }}

// String returns the dialect's name.
func (d Dialect) String() string { return d.name }

type config struct {
	maxDigestLength    int
	pfsMaxDigestLength int
	sqlMode            SQLMode
	serverVersion      int
	dialect            Dialect
	numbering          Numbering
}

func newConfig(opts []Option) config {
	c := config{
		maxDigestLength:    DefaultMaxDigestLength,
		pfsMaxDigestLength: DefaultPerformanceSchemaMaxDigestLength,
		serverVersion:      DefaultServerVersion,
		dialect:            MySQL80,
		numbering:          NumberingMySQL80,
	}
	for _, o := range opts {
		c = o.apply(c)
	}
	return c
}

// An Option configures a Normalizer.
type Option interface {
	apply(config) config
}

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

func clampLength(n int) int {
	if n < 0 {
		return 0
	}
	if n > MaxDigestLengthLimit {
		return MaxDigestLengthLimit
	}
	return n
}

// WithMaxDigestLength sets max_digest_length: the byte budget of the token
// stream, counted as MySQL counts it (2 bytes a token, 4 bytes plus the name
// for an identifier). Tokens past the budget are dropped silently. 0
// disables digests (every statement gets an empty token stream). Values are
// clamped to [0, MaxDigestLengthLimit]. By default, 1024.
func WithMaxDigestLength(n int) Option {
	return optionFunc(func(c config) config {
		c.maxDigestLength = clampLength(n)
		return c
	})
}

// WithPerformanceSchemaMaxDigestLength sets
// performance_schema_max_digest_length: DIGEST_TEXT is rendered from at most
// this many bytes of the token stream (the DIGEST still covers the whole
// stream). Values are clamped to [0, MaxDigestLengthLimit]. By default, 1024.
func WithPerformanceSchemaMaxDigestLength(n int) Option {
	return optionFunc(func(c config) config {
		c.pfsMaxDigestLength = clampLength(n)
		return c
	})
}

// WithSQLMode sets the sql_mode flags that change lexing. By default, none
// (MySQL 8.0's default sql_mode has none of them).
func WithSQLMode(m SQLMode) Option {
	return optionFunc(func(c config) config {
		c.sqlMode = m
		return c
	})
}

// WithServerVersion sets the MySQL version, as MAJOR*10000+MINOR*100+PATCH,
// that decides which /*!NNNNN ... */ version comments are SQL. By default,
// DefaultServerVersion (8.0.40).
func WithServerVersion(v int) Option {
	return optionFunc(func(c config) config {
		c.serverVersion = v
		return c
	})
}

// WithDialect selects the SQL dialect. By default, MySQL80.
func WithDialect(d Dialect) Option {
	return optionFunc(func(c config) config {
		if d.newTokenizer != nil {
			c.dialect = d
		}
		return c
	})
}
