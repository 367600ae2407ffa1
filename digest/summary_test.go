package digest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// summaryCases are statements with the attributes they summarize to.
var summaryCases = []struct {
	sql, summary, op, coll string
}{
	// The examples of the semantic conventions.
	{"SELECT * FROM wuser_table WHERE username = 'jdoe'", "SELECT wuser_table", "SELECT", "wuser_table"},
	{"INSERT INTO shipping_details (order_id, address) SELECT order_id, address FROM orders WHERE order_id = 7", "INSERT shipping_details SELECT orders", "INSERT", ""},
	{"SELECT * FROM songs, artists WHERE songs.artist_id = artists.id", "SELECT songs artists", "SELECT", ""},
	{"SELECT order_date FROM (SELECT * FROM orders o JOIN customers c ON o.customer_id = c.customer_id) AS t", "SELECT SELECT orders customers", "SELECT", ""},
	{"SELECT * FROM (SELECT * FROM notes) t", "SELECT SELECT notes", "SELECT", "notes"},

	// Joins.
	{"SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > 10", "SELECT orders customers", "SELECT", ""},
	{"SELECT * FROM a LEFT OUTER JOIN b USING (id) NATURAL JOIN c CROSS JOIN d STRAIGHT_JOIN e ON e.x = a.x", "SELECT a b c d e", "SELECT", ""},
	{"SELECT * FROM t1 LEFT JOIN (t2, t3) ON t1.a = t2.a AND LEFT(t1.s, 2) = 'ab'", "SELECT t1 t2 t3", "SELECT", ""},
	{"SELECT * FROM t AS x FORCE INDEX (i) JOIN t AS y IGNORE KEY FOR JOIN (j) ON x.p = y.id", "SELECT t", "SELECT", "t"},
	{"SELECT * FROM t PARTITION (p0, p1) WHERE a = 1", "SELECT t", "SELECT", "t"},

	// Subqueries.
	{"SELECT * FROM t WHERE x IN (SELECT y FROM s WHERE s.z = 3)", "SELECT t SELECT s", "SELECT", ""},
	{"SELECT (SELECT MAX(x) FROM u) FROM t WHERE EXISTS (SELECT 1 FROM v WHERE v.a = t.a)", "SELECT t SELECT u SELECT v", "SELECT", ""},
	{"SELECT * FROM t WHERE a = (SELECT a FROM t WHERE b = 2)", "SELECT t SELECT t", "SELECT", "t"},
	{"SELECT EXTRACT(YEAR FROM d), TRIM(LEADING 'x' FROM s) FROM t", "SELECT t", "SELECT", "t"},
	{"SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.id = t.id) AS l", "SELECT t SELECT u", "SELECT", ""},
	{"SELECT * FROM JSON_TABLE(@j, '$[*]' COLUMNS (a INT PATH '$.a')) AS jt", "SELECT", "SELECT", ""},

	// Set operations.
	{"SELECT a FROM t1 UNION ALL SELECT b FROM t2", "SELECT t1 SELECT t2", "SELECT", ""},
	{"(SELECT a FROM t1) UNION (SELECT b FROM t2) ORDER BY 1 LIMIT 3", "SELECT t1 SELECT t2", "SELECT", ""},
	{"SELECT a FROM t1 EXCEPT SELECT a FROM t2", "SELECT t1 SELECT t2", "SELECT", ""},

	// Common table expressions: their names are not collections.
	{"WITH recent AS (SELECT * FROM orders WHERE d > NOW()) SELECT * FROM recent JOIN customers USING (id)", "SELECT orders SELECT customers", "SELECT", ""},
	{"WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r", "SELECT SELECT SELECT", "SELECT", ""},
	{"WITH ids AS (SELECT id FROM stale) DELETE FROM notes WHERE id IN (SELECT id FROM ids)", "SELECT stale DELETE notes SELECT", "DELETE", ""},
	{"WITH a AS (SELECT 1), b AS (SELECT * FROM t) UPDATE u JOIN b ON u.id = b.id SET u.x = 1", "SELECT SELECT t UPDATE u", "UPDATE", ""},

	// INSERT and REPLACE.
	{"INSERT INTO notes (tenant, tag) VALUES ('acme', 'x'), ('b', 'y')", "INSERT notes", "INSERT", "notes"},
	{"INSERT LOW_PRIORITY IGNORE notes SET tenant = 'acme'", "INSERT notes", "INSERT", "notes"},
	{"INSERT INTO t SELECT * FROM s ON DUPLICATE KEY UPDATE a = VALUES(a)", "INSERT t SELECT s", "INSERT", ""},
	{"INSERT INTO t (a) VALUES ((SELECT MAX(a) FROM t))", "INSERT t SELECT t", "INSERT", "t"},
	{"REPLACE INTO kv VALUES (1, 'a')", "REPLACE kv", "REPLACE", "kv"},

	// UPDATE and DELETE.
	{"UPDATE tenants SET notes = notes + 1 WHERE name = 'acme'", "UPDATE tenants", "UPDATE", "tenants"},
	{"UPDATE orders o JOIN customers c ON c.id = o.cid SET o.vip = 1 WHERE c.total > 1000", "UPDATE orders customers", "UPDATE", ""},
	{"UPDATE LOW_PRIORITY IGNORE t SET a = (SELECT b FROM s LIMIT 1)", "UPDATE t SELECT s", "UPDATE", ""},
	{"DELETE FROM notes WHERE id = 5", "DELETE notes", "DELETE", "notes"},
	{"DELETE QUICK FROM notes ORDER BY id LIMIT 10", "DELETE notes", "DELETE", "notes"},
	{"DELETE t1 FROM t1 JOIN t2 ON t1.id = t2.id WHERE t2.x = 1", "DELETE t1 t2", "DELETE", ""},
	{"DELETE a1, a2 FROM t1 AS a1 INNER JOIN t2 AS a2 WHERE a1.id = a2.id", "DELETE t1 t2", "DELETE", ""},
	{"DELETE FROM a1 USING t1 AS a1 JOIN t2 ON a1.id = t2.id", "DELETE t1 t2", "DELETE", ""},
	{"DELETE FROM t1 USING t1 WHERE t1.x = 2", "DELETE t1", "DELETE", "t1"},

	// Data definition.
	{"CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, tenant TEXT REFERENCES tenants (name))", "CREATE TABLE notes", "CREATE TABLE", "notes"},
	{"CREATE TEMPORARY TABLE tmp AS SELECT * FROM notes WHERE tag = 'x'", "CREATE TABLE tmp SELECT notes", "CREATE TABLE", ""},
	{"CREATE TABLE t2 LIKE t1", "CREATE TABLE t2", "CREATE TABLE", "t2"},
	{"ALTER TABLE notes ADD COLUMN x INT DEFAULT 0, ALGORITHM = INPLACE", "ALTER TABLE notes", "ALTER TABLE", "notes"},
	{"DROP TABLE IF EXISTS a, app.b", "DROP TABLE a app.b", "DROP TABLE", ""},
	{"DROP TEMPORARY TABLE tmp", "DROP TABLE tmp", "DROP TABLE", "tmp"},
	{"CREATE UNIQUE INDEX notes_by_tag ON notes (tenant, tag)", "CREATE INDEX notes", "CREATE INDEX", "notes"},
	{"DROP INDEX notes_by_tag ON app.notes", "DROP INDEX app.notes", "DROP INDEX", "app.notes"},
	{"CREATE OR REPLACE ALGORITHM = MERGE DEFINER = 'root'@'localhost' SQL SECURITY INVOKER VIEW v AS SELECT * FROM notes", "CREATE VIEW v SELECT notes", "CREATE VIEW", ""},
	{"ALTER VIEW v AS SELECT a FROM t", "ALTER VIEW v SELECT t", "ALTER VIEW", ""},
	{"DROP VIEW IF EXISTS v1, v2", "DROP VIEW v1 v2", "DROP VIEW", ""},
	{"CREATE DATABASE IF NOT EXISTS shop", "CREATE SCHEMA shop", "CREATE SCHEMA", ""},
	{"DROP SCHEMA shop", "DROP SCHEMA shop", "DROP SCHEMA", ""},
	{"CREATE DEFINER = CURRENT_USER() PROCEDURE p (IN x INT) BEGIN SELECT x FROM t; UPDATE u SET a = 1; END", "CREATE PROCEDURE p", "CREATE PROCEDURE", ""},
	{"CREATE TRIGGER trg BEFORE INSERT ON notes FOR EACH ROW SET NEW.x = 1", "CREATE TRIGGER trg", "CREATE TRIGGER", ""},
	{"DROP PROCEDURE IF EXISTS app.p", "DROP PROCEDURE app.p", "DROP PROCEDURE", ""},
	{"CREATE USER 'bob'@'%' IDENTIFIED BY 'secret'", "CREATE USER", "CREATE USER", ""},
	{"TRUNCATE notes", "TRUNCATE TABLE notes", "TRUNCATE TABLE", "notes"},
	{"TRUNCATE TABLE app.notes", "TRUNCATE TABLE app.notes", "TRUNCATE TABLE", "app.notes"},
	{"RENAME TABLE a TO b, c TO d", "RENAME TABLE a b c d", "RENAME TABLE", ""},

	// Transactions: savepoint names are left out (ORMs number them).
	{"BEGIN", "BEGIN", "BEGIN", ""},
	{"BEGIN WORK", "BEGIN", "BEGIN", ""},
	{"START TRANSACTION READ ONLY", "START TRANSACTION", "START TRANSACTION", ""},
	{"COMMIT", "COMMIT", "COMMIT", ""},
	{"COMMIT WORK AND NO CHAIN", "COMMIT", "COMMIT", ""},
	{"ROLLBACK", "ROLLBACK", "ROLLBACK", ""},
	{"ROLLBACK WORK TO SAVEPOINT s1", "ROLLBACK TO SAVEPOINT", "ROLLBACK TO SAVEPOINT", ""},
	{"ROLLBACK TO s_17_x", "ROLLBACK TO SAVEPOINT", "ROLLBACK TO SAVEPOINT", ""},
	{"SAVEPOINT s_17_x", "SAVEPOINT", "SAVEPOINT", ""},
	{"RELEASE SAVEPOINT s_17_x", "RELEASE SAVEPOINT", "RELEASE SAVEPOINT", ""},

	// Session and administration.
	{"SET autocommit = 1", "SET", "SET", ""},
	{"SET NAMES utf8mb4", "SET", "SET", ""},
	{"SET @x = (SELECT COUNT(*) FROM notes)", "SET SELECT notes", "SET", "notes"},
	{"SHOW TABLES", "SHOW TABLES", "SHOW TABLES", ""},
	{"SHOW FULL PROCESSLIST", "SHOW FULL PROCESSLIST", "SHOW FULL PROCESSLIST", ""},
	{"SHOW GLOBAL VARIABLES LIKE 'max_%'", "SHOW GLOBAL VARIABLES", "SHOW GLOBAL VARIABLES", ""},
	{"SHOW CREATE TABLE notes", "SHOW CREATE TABLE notes", "SHOW CREATE TABLE", "notes"},
	{"SHOW COLUMNS FROM notes FROM app", "SHOW FIELDS notes app", "SHOW FIELDS", "notes"},
	{"SHOW INDEX FROM notes", "SHOW INDEX notes", "SHOW INDEX", "notes"},
	{"SHOW TABLES FROM app LIKE 'n%'", "SHOW TABLES app", "SHOW TABLES", ""},
	{"USE shop", "USE shop", "USE", ""},
	{"CALL app.get_user(1, 'x')", "CALL app.get_user", "CALL", ""},
	{"CALL refresh", "CALL refresh", "CALL", ""},
	{"EXPLAIN SELECT * FROM notes WHERE id = 1", "EXPLAIN SELECT notes", "EXPLAIN", "notes"},
	{"EXPLAIN ANALYZE FORMAT = TREE SELECT * FROM a JOIN b", "EXPLAIN SELECT a b", "EXPLAIN", ""},
	{"EXPLAIN UPDATE t SET a = 1", "EXPLAIN UPDATE t", "EXPLAIN", "t"},
	{"DESCRIBE notes", "EXPLAIN notes", "EXPLAIN", "notes"},
	{"DESC notes", "EXPLAIN notes", "EXPLAIN", "notes"},
	{"LOCK TABLES t1 READ, t2 AS x WRITE", "LOCK TABLES t1 t2", "LOCK TABLES", ""},
	{"UNLOCK TABLES", "UNLOCK TABLES", "UNLOCK TABLES", ""},
	{"LOAD DATA LOCAL INFILE '/tmp/notes.csv' INTO TABLE notes FIELDS TERMINATED BY ','", "LOAD DATA notes", "LOAD DATA", "notes"},
	{"ANALYZE TABLE a, b", "ANALYZE TABLE a b", "ANALYZE TABLE", ""},
	{"OPTIMIZE NO_WRITE_TO_BINLOG TABLE notes", "OPTIMIZE TABLE notes", "OPTIMIZE TABLE", "notes"},
	{"TABLE notes ORDER BY id", "TABLE notes", "TABLE", "notes"},
	{"VALUES ROW(1, 2), ROW(3, 4)", "VALUES", "VALUES", ""},
	{"DO SLEEP(1)", "DO", "DO", ""},
	{"PREPARE s1 FROM 'SELECT * FROM secret'", "PREPARE", "PREPARE", ""},
	{"EXECUTE s1 USING @a", "EXECUTE", "EXECUTE", ""},
	{"DEALLOCATE PREPARE s1", "DEALLOCATE PREPARE", "DEALLOCATE PREPARE", ""},
	{"GRANT SELECT ON app.* TO 'u'@'h'", "GRANT", "GRANT", ""},
	{"FLUSH PRIVILEGES", "FLUSH", "FLUSH", ""},

	// SELECT without a table, locking reads.
	{"SELECT 1", "SELECT", "SELECT", ""},
	{"SELECT 1 FROM DUAL", "SELECT", "SELECT", ""},
	{"SELECT NOW(), @@version", "SELECT", "SELECT", ""},
	{"SELECT * FROM t FOR UPDATE", "SELECT t", "SELECT", "t"},
	{"SELECT * FROM t1 FOR SHARE OF t1 NOWAIT", "SELECT t1", "SELECT", "t1"},
	{"SELECT a INTO @x FROM t LIMIT 1", "SELECT t", "SELECT", "t"},

	// Comments and hints are not SQL; version comments are.
	{"/* app=notes */ SELECT /*+ BKA(t1) NO_ICP(t2 idx) */ * FROM notes -- tail\n WHERE id = 1", "SELECT notes", "SELECT", "notes"},
	{"SELECT * FROM a /*!80000 JOIN b ON a.x = b.x */ /*!90000 JOIN c */", "SELECT a b", "SELECT", ""},
	{"# comment\nDELETE /*+ MAX_EXECUTION_TIME(10) */ FROM t", "DELETE t", "DELETE", "t"},

	// Quoting and qualified names: names print as written, without quotes
	// unless they need them.
	{"SELECT * FROM `app`.`notes`", "SELECT app.notes", "SELECT", "app.notes"},
	{"SELECT * FROM app . notes n", "SELECT app.notes", "SELECT", "app.notes"},
	{"SELECT * FROM cat.app.notes", "SELECT cat.app.notes", "SELECT", "cat.app.notes"},
	{"SELECT * FROM `song list`, `a``b`, `Ünïcode`", "SELECT `song list` `a``b` Ünïcode", "SELECT", ""},
	{"SELECT * FROM `Notes` JOIN notes", "SELECT Notes notes", "SELECT", ""},
	{"SELECT * FROM `select`", "SELECT select", "SELECT", "select"},
	{"SELECT * FROM status", "SELECT STATUS", "SELECT", "STATUS"},
	{"SELECT * FROM user", "SELECT USER", "SELECT", "USER"},
	{"SELECT * FROM mysql.user", "SELECT mysql.user", "SELECT", "mysql.user"},
	{"SELECT msg FROM log WHERE id = 7", "SELECT log", "SELECT", "log"},

	// Not statements.
	{"", "", "", ""},
	{" ; ", "", "", ""},
	{"hello world", "", "", ""},
	{"notes.id = 3", "", "", ""},
}

func TestSummaryHasOperationAndTargets(t *testing.T) {
	n := New()
	for _, c := range summaryCases {
		got := n.Summarize(c.sql)
		if got.Summary != c.summary || got.Operation != c.op || got.Collection != c.coll {
			t.Errorf("%q:\n got %q op %q collection %q\nwant %q op %q collection %q",
				c.sql, got.Summary, got.Operation, got.Collection, c.summary, c.op, c.coll)
		}
		if got.Operation != "" && !strings.Contains(" "+got.Summary+" ", " "+got.Operation+" ") {
			t.Errorf("%q: operation %q not in summary %q", c.sql, got.Operation, got.Summary)
		}
		if got.Collection != "" && !strings.Contains(" "+got.Summary+" ", " "+got.Collection+" ") {
			t.Errorf("%q: collection %q not in summary %q", c.sql, got.Collection, got.Summary)
		}
	}
}

func TestSummaryStoredProcedure(t *testing.T) {
	for sql, want := range map[string]string{
		"CALL app.get_user(1, 'x')":   "app.get_user",
		"CALL `refresh all`()":        "`refresh all`",
		"SELECT * FROM procs":         "",
		"EXPLAIN SELECT * FROM t":     "",
		"CALL p((SELECT 1 FROM t))":   "p",
		"CALL":                        "",
		"CREATE PROCEDURE p() SELECT": "",
	} {
		if got := Summarize(sql); got.StoredProcedure != want {
			t.Errorf("%q: stored procedure %q, want %q", sql, got.StoredProcedure, want)
		}
	}
}

// The bridge summarizes DIGEST_TEXT: it must give what the statement gives.
func TestSummaryOfDigestTextIsTheSame(t *testing.T) {
	var sqls []string
	for _, c := range summaryCases {
		sqls = append(sqls, c.sql)
	}
	for _, c := range loadMySQLCases(t) {
		sqls = append(sqls, c.SQL)
	}
	n := New()
	for _, sql := range sqls {
		if strings.Contains(sql, "``") {
			continue // DIGEST_TEXT prints a`b unescaped, as MySQL does
		}
		want := n.Summarize(sql)
		text := string(n.Normalize(sql).Text)
		if got := n.Summarize(text); got != want {
			t.Errorf("%q: %+v\nits DIGEST_TEXT %q: %+v", sql, want, text, got)
		}
	}
}

func TestSummaryNeverHasLiterals(t *testing.T) {
	for _, sql := range []string{
		"SELECT * FROM notes WHERE title = 'secret_table' AND body = \"hunter2\"",
		"SELECT 'secret_table' FROM DUAL",
		"INSERT INTO notes VALUES (12345, 0xDEADBEEF, X'CAFE', b'1010', 6.02e23, N'nat', _utf8mb4'cs')",
		"SELECT * FROM `t` WHERE a = @secret_var AND b = @@session.sql_mode",
		"CREATE USER 'alice'@'secret.host' IDENTIFIED BY 'pw'",
		"GRANT ALL ON *.* TO alice@secrethost",
		"SET @secret_var = 'v'",
		"PREPARE s FROM 'SELECT * FROM secret_table'",
		"LOAD DATA INFILE '/secret/path' INTO TABLE t",
		"CALL p('secret_arg', 42)",
		"SELECT * FROM t WHERE x = 'unterminated secret_table FROM secret_table",
		"SHOW TABLES LIKE 'secret%'",
		"SELECT * FROM 'secret_table'",
		"DELETE FROM t WHERE s = 'it''s secret_table'",
	} {
		got := Summarize(sql)
		all := got.Summary + " " + got.Operation + " " + got.Collection + " " + got.StoredProcedure
		for _, lit := range []string{"secret", "hunter2", "12345", "DEADBEEF", "CAFE", "1010", "6.02", "nat", "cs", "alice", "pw", "42", "'", "\"", "@", "?"} {
			if strings.Contains(all, lit) {
				t.Errorf("%q: literal %q in %+v", sql, lit, got)
			}
		}
		checkSummaryLiterals(t, sql, got, nil)
	}
}

// checkSummaryLiterals checks that changing the literals of sql changes
// nothing, and that every word of the summary is a keyword or a name the
// statement has outside its literals.
func checkSummaryLiterals(t *testing.T, sql string, got Summary, opts []Option) {
	t.Helper()
	spans := literalSpans(sql, opts...)
	if mut := mutateLiterals(sql, spans); mut != sql {
		if m := New(opts...).Summarize(mut); m != got {
			t.Fatalf("changing literals changed the summary:\n%q: %+v\n%q: %+v", sql, got, mut, m)
		}
	}
	outside := []byte(sql)
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			outside[i] = 0
		}
	}
	out := string(outside)
	for _, word := range summaryWords(got.Summary) {
		for _, part := range word {
			if mainKeywords.find(part) != nil {
				continue
			}
			for _, piece := range strings.Split(part, "\uFFFD") {
				if piece == "" || strings.Contains(out, piece) ||
					strings.Contains(out, strings.ReplaceAll(piece, "`", "``")) ||
					strings.Contains(out, strings.ReplaceAll(piece, `"`, `""`)) {
					continue
				}
				t.Fatalf("%q: %q in summary %q is not a name of the statement", sql, piece, got.Summary)
			}
		}
	}
}

// summaryWords splits a summary into its words, each into its name parts,
// unquoted.
func summaryWords(s string) [][]string {
	var words [][]string
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '`':
			for i++; i < len(s); i++ {
				if s[i] == '`' {
					if i+1 < len(s) && s[i+1] == '`' {
						cur.WriteByte('`')
						i++
						continue
					}
					break
				}
				cur.WriteByte(s[i])
			}
		case '.':
			parts = append(parts, cur.String())
			cur.Reset()
		case ' ':
			words = append(words, append(parts, cur.String()))
			parts = nil
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if s != "" {
		words = append(words, append(parts, cur.String()))
	}
	return words
}

func TestSummaryIsBounded(t *testing.T) {
	var joins, unions, many strings.Builder
	joins.WriteString("SELECT * FROM t0")
	unions.WriteString("SELECT 1 FROM u0")
	many.WriteString("SELECT * FROM a")
	for i := 1; i < 200; i++ {
		fmt.Fprintf(&joins, " JOIN table_number_%d ON 1", i)
		fmt.Fprintf(&unions, " UNION SELECT %d FROM u%d", i, i)
		fmt.Fprintf(&many, ", (SELECT * FROM b%d) d%d", i, i)
	}
	long := strings.Repeat("x", 300)
	for _, sql := range []string{
		joins.String(), unions.String(), many.String(),
		"SELECT * FROM " + long,
		"SELECT * FROM a, " + long + ", b",
		"INSERT INTO `" + long + "` SELECT * FROM b",
		strings.Repeat("(", 50) + "SELECT * FROM deep" + strings.Repeat(")", 50),
		"SELECT * FROM t WHERE " + strings.Repeat("a IN (SELECT b FROM c WHERE ", 1000),
	} {
		for _, n := range []*Normalizer{New(), New(WithMaxDigestLength(MaxDigestLengthLimit))} {
			got := n.Summarize(sql)
			if len(got.Summary) > MaxSummaryLength || len(got.Collection) > MaxSummaryLength {
				t.Fatalf("%.40q: %d bytes: %q", sql, len(got.Summary), got.Summary)
			}
			if got.Summary == "" || got.Operation == "" {
				t.Errorf("%.40q: empty summary %+v", sql, got)
			}
			// Cut at a boundary: every word is a whole operation or name.
			for _, w := range strings.Fields(got.Summary) {
				if w != "SELECT" && w != "INSERT" && w != "JOIN" && !strings.HasPrefix(w, "t") &&
					!strings.HasPrefix(w, "u") && !strings.HasPrefix(w, "b") && w != "a" && w != "c" && w != "deep" && w != long && w != "`"+long+"`" {
					t.Errorf("%.40q: word %q in %q", sql, w, got.Summary)
					break
				}
			}
			if i := strings.LastIndex(got.Summary, " "); i >= 0 && strings.HasPrefix(got.Summary[i+1:], "table_number_") {
				last := got.Summary[i+1:]
				if !strings.Contains(sql, " "+last+" ") {
					t.Errorf("%.40q: cut inside a name: %q", sql, last)
				}
			}
		}
	}
	// Nesting deeper than the summarizer follows is bounded, not an error.
	deep := strings.Repeat("(", 100000) + "SELECT * FROM deep" + strings.Repeat(")", 100000)
	for _, n := range []*Normalizer{New(), New(WithMaxDigestLength(MaxDigestLengthLimit))} {
		if got := n.Summarize(deep); len(got.Summary) > MaxSummaryLength {
			t.Errorf("deep: %q", got.Summary)
		}
	}
	// The summary of the joins keeps as many whole names as fit.
	got := Summarize(joins.String())
	if len(got.Summary) < MaxSummaryLength-len(" table_number_100") {
		t.Errorf("joins: %d bytes: %q", len(got.Summary), got.Summary)
	}
}

func TestSummaryQuoting(t *testing.T) {
	ansi := New(WithSQLMode(ANSIQuotes))
	for _, c := range []struct {
		n    *Normalizer
		sql  string
		want string
	}{
		{ansi, `SELECT * FROM "app"."notes" JOIN "song list" ON 1`, "SELECT app.notes `song list`"},
		{ansi, `SELECT * FROM "a""b"`, "SELECT `a\"b`"},
		{New(), `SELECT * FROM "app"."notes"`, "SELECT"}, // strings, without ANSI_QUOTES
		{New(), "SELECT * FROM `a.b`", "SELECT `a.b`"},
		{New(), "SELECT * FROM `1`", "SELECT 1"},
		{New(), "SELECT * FROM `\xff\xfe`", "SELECT `\uFFFD\uFFFD`"},
		{New(), "SELECT * FROM `new\nline`", "SELECT `new\nline`"},
	} {
		if got := c.n.Summarize(c.sql).Summary; got != c.want {
			t.Errorf("%q: %q, want %q", c.sql, got, c.want)
		}
	}
}

// The demo's statements (examples/notes), as sent and as DIGEST_TEXT.
func TestSummaryDemoStatements(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT COUNT(*) FROM notes":                      "SELECT notes",
		"INSERT INTO tenants (name, notes) VALUES (?, ?)": "INSERT tenants",
		"INSERT INTO notes (id, tenant, tag, title, body, created) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)":          "INSERT notes",
		"SELECT id, tenant, tag, title, body, created FROM notes WHERE id = ?":                                             "SELECT notes",
		"SELECT id, title, created FROM notes WHERE tenant = ? AND tag = ? ORDER BY id DESC LIMIT ?":                       "SELECT notes",
		"INSERT INTO notes (tenant, tag, title, body, created) VALUES (?, ?, ?, ?, ?)":                                     "INSERT notes",
		"UPDATE tenants SET notes = notes + 1 WHERE name = ?":                                                              "UPDATE tenants",
		"DELETE FROM notes WHERE id = ? AND tenant = ?":                                                                    "DELETE notes",
		"SELECT tag, COUNT(*) FROM notes WHERE tenant = ? GROUP BY tag ORDER BY tag":                                       "SELECT notes",
		"CREATE TABLE IF NOT EXISTS tenants (name TEXT PRIMARY KEY, notes INTEGER NOT NULL DEFAULT 0)":                     "CREATE TABLE tenants",
		"CREATE INDEX IF NOT EXISTS notes_by_tenant_tag ON notes (tenant, tag, id)":                                        "CREATE INDEX notes",
		"SELECT * FROM sys.statement_analysis LIMIT 5":                                                                     "SELECT sys.statement_analysis",
		"SELECT query, exec_count FROM sys.`x$statement_analysis` WHERE query LIKE '%FROM `notes` WHERE `id` = ?' LIMIT 1": "SELECT sys.x$statement_analysis",
		"BEGIN":  "BEGIN",
		"COMMIT": "COMMIT",
	} {
		for _, s := range []string{sql, StatementDigestText(sql)} {
			if got := Summarize(s).Summary; got != want {
				t.Errorf("%q: %q, want %q", s, got, want)
			}
		}
	}
}

func TestSummarizeAllocations(t *testing.T) {
	n := New()
	n.Summarize(bench200)
	if a := testing.AllocsPerRun(100, func() { n.Summarize(bench200) }); a > 1 {
		t.Errorf("%v allocations a call, want at most 1 (the string)", a)
	}
	if a := testing.AllocsPerRun(100, func() { n.Summarize("COMMIT") }); a > 1 {
		t.Errorf("%v allocations a call, want at most 1", a)
	}
}

func FuzzSummarize(f *testing.F) {
	for _, c := range summaryCases {
		f.Add(c.sql, uint8(0))
	}
	for _, c := range loadMySQLCases(f) {
		f.Add(c.SQL, uint8(0))
	}
	f.Add(`SELECT * FROM "a"."b" WHERE c = 'd'`, uint8(ANSIQuotes))
	f.Add("WITH a AS (SELECT 1) SELECT * FROM a, (SELECT 2) b WHERE x IN (SELECT y FROM `c`)", uint8(0))
	f.Fuzz(func(t *testing.T, sql string, mode uint8) {
		opts := []Option{WithSQLMode(SQLMode(mode) & (ANSIQuotes | NoBackslashEscapes | PipesAsConcat | HighNotPrecedence | IgnoreSpace))}
		n := New(opts...)
		got := n.Summarize(sql)
		if len(got.Summary) > MaxSummaryLength || len(got.Operation) > MaxSummaryLength ||
			len(got.Collection) > MaxSummaryLength || len(got.StoredProcedure) > MaxSummaryLength {
			t.Fatalf("%q: over %d bytes: %+v", sql, MaxSummaryLength, got)
		}
		for _, s := range []string{got.Summary, got.Operation, got.Collection, got.StoredProcedure} {
			if !utf8.ValidString(s) {
				t.Fatalf("%q: invalid UTF-8 %q", sql, s)
			}
		}
		if (got.Summary == "") != (got.Operation == "") {
			t.Fatalf("%q: summary %q with operation %q", sql, got.Summary, got.Operation)
		}
		if got.Summary != "" && (got.Summary[0] == ' ' || strings.HasSuffix(got.Summary, " ") || strings.Contains(got.Summary, "  ")) {
			t.Fatalf("%q: badly spaced %q", sql, got.Summary)
		}
		// Deterministic, and independent of the statement before.
		n.Summarize("SELECT * FROM something_else JOIN other")
		if again := n.Summarize(sql); again != got {
			t.Fatalf("%q: %+v, then %+v", sql, got, again)
		}
		checkSummaryLiterals(t, sql, got, opts)
	})
}

func BenchmarkSummarize(b *testing.B) {
	for _, c := range []struct{ name, sql string }{
		{"statement200", bench200},
		{"digestText", StatementDigestText(bench200)},
		{"insertSelect", "INSERT INTO shipping_details (order_id, address) SELECT order_id, address FROM orders WHERE order_id = ?"},
		{"commit", "COMMIT"},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := New()
			b.SetBytes(int64(len(c.sql)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				n.Summarize(c.sql)
			}
		})
	}
}

func ExampleSummarize() {
	for _, sql := range []string{
		"SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 7",
		"INSERT INTO `shipping_details` ( `order_id` ) SELECT `order_id` FROM `orders` WHERE `order_id` = ?",
		"UPDATE app.notes SET title = 'x' WHERE id = 1",
	} {
		s := Summarize(sql)
		fmt.Printf("%q %q %q\n", s.Summary, s.Operation, s.Collection)
	}
	// Output:
	// "SELECT orders customers" "SELECT" ""
	// "INSERT shipping_details SELECT orders" "INSERT" ""
	// "UPDATE app.notes" "UPDATE" "app.notes"
}
