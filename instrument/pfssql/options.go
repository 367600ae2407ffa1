package pfssql

import (
	"net/url"
	"reflect"
	"strings"
	"sync"

	"github.com/otelpfs/otelpfs/digest"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// An Option configures a wrapper: Wrap, WrapConnector, Open, OpenDB.
type Option func(*config)

// WithSchema sets the performance schema the statements and transactions
// count in. By default pfscore.Default().
func WithSchema(s *pfscore.Schema) Option {
	return func(c *config) {
		if s != nil {
			c.schema = s
		}
	}
}

// WithCurrentSchema sets CURRENT_SCHEMA, the database a statement runs in,
// which is half of its events_statements_summary_by_digest key. By default
// it is the database name the data source name gives, where the driver is
// one whose DSN the wrapper reads (MySQL: the path; PostgreSQL: the URL path
// or dbname=; SQLite: main, its name for the opened database), and empty
// otherwise. An empty name is allowed.
func WithCurrentSchema(name string) Option {
	return func(c *config) {
		c.schemaName, c.schemaSet = name, true
	}
}

// WithDBSystem names the kind of database the statements go to, as
// OpenTelemetry's db.system.name does (mysql, mariadb, postgresql, sqlite,
// ...), for their spans and metrics (pfscore.Schema.SetDBSystem). By
// default it follows from the driver: a driver whose name or package path
// says sqlite is sqlite, mysql mysql, and postgres, pgx or lib/pq
// postgresql; another driver names none, and exporters say other_sql.
func WithDBSystem(name string) Option {
	return func(c *config) { c.dbSystem = name }
}

// dbSystemOf is the db.system.name of a DSN dialect.
func dbSystemOf(dialect string) string {
	switch dialect {
	case "sqlite", "mysql":
		return dialect
	case "postgres":
		return "postgresql"
	}
	return ""
}

// withDialect names the driver for the DSN rules (Open knows its name).
func withDialect(name string) Option {
	return func(c *config) {
		if d := dialectOf(name); d != "" {
			c.dialect = d
		}
	}
}

// config is what one wrapper's connections share.
type config struct {
	schema     *pfscore.Schema
	schemaName string // CURRENT_SCHEMA
	schemaSet  bool   // WithCurrentSchema was given
	dialect    string // mysql, postgres, sqlite or empty: how to read a DSN
	dbSystem   string // WithDBSystem, or "": from the dialect
	prepare    *instrument.StatementClass
	prepTexts  *prepTexts
	retry      *stash
}

func newConfig(d any, opts []Option) *config {
	c := &config{}
	if d != nil {
		c.dialect = dialectOf(reflect.TypeOf(d).String() + " " + pkgPath(d))
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.schema == nil {
		c.schema = pfscore.Default()
	}
	if c.dbSystem == "" {
		c.dbSystem = dbSystemOf(c.dialect)
	}
	c.schema.SetDBSystem(c.schemaName, c.dbSystem)
	c.prepare = instrument.NewStatementClass("statement/com/Prepare", instrument.WithSchema(c.schema),
		instrument.WithDocumentation("A statement prepared through database/sql (driver.Conn.Prepare)."))
	c.prepTexts = &prepTexts{m: map[string]string{}}
	c.retry = &stash{}
	return c
}

// prepTexts caches the texts of statement/com/Prepare statements by
// prepared text.
type prepTexts struct {
	mu sync.Mutex
	m  map[string]string
}

// maxPrepTexts bounds the cache; past it, texts are computed each time.
const maxPrepTexts = 4096

// prepareText returns the text of the statement/com/Prepare statement that
// prepares query: PREPARE and the query's DIGEST_TEXT, which has none of
// its literals, so that each prepared text has a by-digest row of its own,
// apart from its executions'.
func (c *config) prepareText(query string) string {
	p := c.prepTexts
	p.mu.Lock()
	text, ok := p.m[query]
	p.mu.Unlock()
	if ok {
		return text
	}
	text = "PREPARE " + digest.StatementDigestText(query)
	p.mu.Lock()
	if len(p.m) < maxPrepTexts {
		p.m[strings.Clone(query)] = text
	}
	p.mu.Unlock()
	return text
}

// forDSN returns the configuration of connections to dsn: c, with
// CURRENT_SCHEMA from the DSN unless an option set it.
func (c *config) forDSN(dsn string) *config {
	if c.schemaSet || c.dialect == "" {
		return c
	}
	name := schemaFromDSN(c.dialect, dsn)
	if name == c.schemaName {
		return c
	}
	cc := *c
	cc.schemaName = name
	cc.schema.SetDBSystem(name, cc.dbSystem)
	return &cc
}

func pkgPath(d any) string {
	t := reflect.TypeOf(d)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath()
}

// dialectOf guesses a driver's DSN format from its registered name or its
// package path.
func dialectOf(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "sqlite"):
		return "sqlite"
	case strings.Contains(n, "mysql"):
		return "mysql"
	case strings.Contains(n, "postgres"), strings.Contains(n, "pgx"), strings.Contains(n, "lib/pq"), n == "pq":
		return "postgres"
	}
	return ""
}

// schemaFromDSN reads the database name from a data source name, or
// returns "".
func schemaFromDSN(dialect, dsn string) string {
	switch dialect {
	case "sqlite":
		return "main"
	case "mysql":
		// [user[:password]@][net[(addr)]]/dbname[?param=value]
		if i := strings.IndexByte(dsn, '?'); i >= 0 {
			dsn = dsn[:i]
		}
		if i := strings.LastIndexByte(dsn, '/'); i >= 0 {
			return dsn[i+1:]
		}
	case "postgres":
		if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
			if u, err := url.Parse(dsn); err == nil {
				return strings.TrimPrefix(u.Path, "/")
			}
			return ""
		}
		for _, kv := range strings.Fields(dsn) {
			if v, ok := strings.CutPrefix(kv, "dbname="); ok {
				return strings.Trim(v, "'")
			}
		}
	}
	return ""
}
