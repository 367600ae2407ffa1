// Package digest computes statement digests as MySQL 8.0 does, in the Go
// service instead of the server: a MySQL-dialect lexer, the normalized token
// stream (literals replaced by ?, lists and rows reduced, keywords in their
// canonical spelling), DIGEST_TEXT rendered exactly as MySQL prints it, and
// a SHA-256 DIGEST. Statements that differ only in literal values, spacing,
// comments or letter case of keywords share a digest, so they aggregate into
// one row of events_statements_summary_by_digest.
//
//	n := digest.New()                       // reuse it: steady state allocates nothing
//	r := n.Normalize("SELECT * FROM t WHERE id = 42")
//	r.Text   // SELECT * FROM `t` WHERE `id` = ?
//	r.Digest // 32 bytes; r.Digest.Hex() is the 64-character DIGEST
//
// StatementDigestText and StatementDigest are the one-off forms, like
// MySQL's STATEMENT_DIGEST_TEXT() and STATEMENT_DIGEST(); `pfs digest` is
// the command-line form.
//
// # Concurrency
//
// A Normalizer is not safe for concurrent use: it owns the buffers that make
// it allocation-free, and Result.Text aliases one of them until the next
// call. Give each goroutine its own Normalizer, or keep them in a sync.Pool:
//
//	var pool = sync.Pool{New: func() any { return digest.New() }}
//	n := pool.Get().(*digest.Normalizer)
//	r := n.Normalize(sql)
//	key, text := r.Digest, string(r.Text) // copy Text before Put
//	pool.Put(n)
//
// The package-level functions do exactly this and are safe for concurrent
// use. Digest values and Version are plain values.
//
// # The token stream and its budgets
//
// The normalized stream has MySQL's layout (sql_digest_storage): a token is
// two bytes, little endian; an identifier is its token, a two-byte length and
// its bytes as the client sent them. max_digest_length (WithMaxDigestLength,
// default 1024) is the stream's byte budget, counted exactly that way: the
// first token that does not fit ends the stream, silently, and
// Result.Truncated reports it. Statements that differ only beyond the budget
// therefore share a digest, as in MySQL. performance_schema_max_digest_length
// (WithPerformanceSchemaMaxDigestLength, default 1024) bounds the part of the
// stream DIGEST_TEXT is rendered from, as MySQL renders it from its
// performance_schema copy; a token cut by that bound is not printed. Memory is
// bounded by the two settings whatever the input: the stream never grows past
// the first, the text past a fixed multiple of the second.
//
// The reductions follow MySQL's digest_add_token: numbers, strings,
// placeholders, literal NULL, @user_variable names and hostnames become ?; a
// + or - before a number folds into it when the token before the sign
// starts an expression ("(-1)", "SELECT -1", but "a = - ?" and "a - ?");
// "? , ?" becomes "?, ..."; "( ? )" becomes "(?)" and "( ?, ... )" becomes
// "(...)"; repeated rows become "(?) /* , ... */" and "(...) /* , ... */";
// IN with either becomes "IN (...)". No reduction looks back past an
// identifier. Identifiers, quoted or not, print back-quoted in the case they
// were written; keywords print in MySQL's canonical spelling (DATABASE as
// SCHEMA, INT as INTEGER, CHAR as CHARACTER, DISTINCT as DISTINCTROW, DAY as
// SQL_TSI_DAY, ...: the spelling MySQL's token table ends up holding).
// Optimizer hints right after SELECT, INSERT, REPLACE, UPDATE or DELETE are
// part of the digest ("/*+ MAX_EXECUTION_TIME (?) */"); other comments are
// not. Version comments /*!NNNNN ... */ are SQL when NNNNN is at most the
// server version (WithServerVersion, default 8.0.40) and comments otherwise.
// The sql_mode flags that change lexing are options (WithSQLMode):
// ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT, HIGH_NOT_PRECEDENCE,
// IGNORE_SPACE.
//
// DIGEST_TEXT never holds a literal of the statement: literals are replaced
// before anything is stored, and an unterminated string literal ends the
// statement. The fuzz test checks this on every input it tries.
//
// # What the DIGEST hashes: the server's token numbers
//
// DIGEST is the SHA-256 of the token stream's bytes (within
// max_digest_length), as in MySQL. By default the tokens carry the numbers
// MySQL 8.0's server gives them (NumberingMySQL80), so DIGEST equals the
// server's DIGEST for the same statement and settings: the one in
// events_statements_summary_by_digest, STATEMENT_DIGEST() and the tools
// keyed by it. A statement's client-side view (pool waits, rows iteration,
// retries) and the server's view (rows examined, lock time) join on one key.
//
// The numbers are the server's own: single characters are their byte;
// grammar tokens take their sql/sql_yacc.yy numbers (explicit since 8.0,
// appended and never renumbered: a retired token keeps its number as
// OBSOLETE_TOKEN_NNN); optimizer-hint keywords their sql/sql_hints.yy
// numbers from 1000; the digest-only tokens (?, "?, ...", "(...)",
// identifier and hint markers) 1100 to 1111, in the order
// sql/gen_lex_token.cc adds them. tokens_mysql_gen.go is generated from
// copies of those tables kept in internal/gentokens, each with the
// repository and commit it was read from; go generate rebuilds it and a
// test fails when it is stale. With the numbering comes MySQL 8.0's keyword
// set (sql/lex.h): a word is a keyword exactly when it is one in 8.0.
//
// Later releases number every token they share with 8.0 the same way: the
// grammar read for this (the trunk after 8.4) has all of 8.0's tokens at
// 8.0's numbers, the retired ones included, so 8.4 LTS's numbering does not
// differ. Its keyword set does: the MASTER_* replication keywords are
// retired there (their tokens kept as OBSOLETE_TOKEN_NNN), and words such
// as QUALIFY, LOG, PARALLEL and TABLESAMPLE became keywords after 8.0. A
// statement using one of those words therefore has another DIGEST on a
// later server than on 8.0, in the server as here; this package reproduces
// 8.0's.
//
// NumberingOtelpfs is the numbering this package used before: its own
// numbers (operators from 257, keywords from 300 in the order of its
// keyword list, hint keywords from 1000) and a keyword set of MySQL 8.0's
// words plus ten later ones. It gives the digests of Version "mysql80-1"
// unchanged, so that digests stored before can still be looked up; its
// DIGEST_TEXT differs from the default's only where one of those ten words
// appears. The default is the server's numbering because a DIGEST that
// matches the server is what makes the digest useful across the fleet, and
// because a new Version ("mysql80-server-1") marks the change: nothing
// keyed by the old digests is re-keyed silently.
//
// Identifier bytes are hashed as received; the same statement sent with
// non-ASCII identifiers in another character set hashes differently, as in
// MySQL.
//
// # Version
//
// Version names the rules: lexer, reductions, keyword spellings and token
// numbering. It is carried by every Result (and by the tables and exports
// built on them) and changes whenever a rule change could give a statement a
// different DIGEST or DIGEST_TEXT, so that a dashboard keyed by digest is
// never re-keyed silently: digests of different Versions are not
// comparable. Each Numbering has its own (Numbering.Version):
// "mysql80-server-1" for NumberingMySQL80, the default and the package's
// Version constant, and "mysql80-1" for NumberingOtelpfs.
//
// # Differences from MySQL
//
// The server digests what its parser accepts; this package has a lexer and
// no grammar. The visible consequences:
//
//   - DIGEST and DIGEST_TEXT equal the server's where the token stream
//     does; the points below are where the stream can differ.
//   - NULL is a literal (and prints ?) where the grammar reduces it to one;
//     without the grammar, NULL counts as a literal after an operator, a
//     comma or parenthesis, or a keyword that starts an expression (SELECT,
//     WHERE, THEN, DEFAULT, ...) or after a NOT that does (WHERE NOT
//     NULL), and stays NULL elsewhere (IS NULL, IS NOT NULL, a column's
//     NULL and NOT NULL attributes, SET NULL), whatever the sql_mode spells
//     NOT as. (NumberingOtelpfs keeps the rules of its Version: NULL after
//     any NOT stays, and under HIGH_NOT_PRECEDENCE becomes ?.)
//   - Invalid SQL still gets a digest, of its tokens up to the first lexical
//     error (an unterminated quoted identifier or comment, a malformed
//     X'..' or B'..' literal), where the server would reject it.
//   - An unterminated string literal ends the statement; the server would
//     lex what follows its quote as SQL.
//   - Input is one statement: a trailing ';' is dropped as MySQL 8.0 does
//     (older 8.0 releases kept it, printing "SELECT ? ;"), but a ';' inside
//     does not split the input the way the server splits a multi-statement.
//   - ? is always a placeholder; the server treats it so only in prepared
//     statements.
//   - The client character set is taken to be utf8mb4, MySQL 8.0's default.
//     As the server does when it converts identifiers to utf8mb3 for
//     DIGEST_TEXT, an identifier longer than 64 bytes prints as "...", and
//     one that is not valid utf8mb3 (4-byte characters, invalid UTF-8) is
//     left out of the text; both are still hashed.
//   - The keyword table is sql/lex.h of the latest 8.0 release (8.0.4x): a
//     word that became a keyword during 8.0 (INTERSECT in 8.0.31, say)
//     prints as a keyword here and as an identifier on an older 8.0
//     server. Non-reserved keywords used as names print as keywords, as in
//     MySQL: "SELECT status FROM t" gives "SELECT STATUS FROM `t`", while
//     "t.status" gives "`t` . `status`".
//
// # Query summaries
//
// Summarize (and Normalizer.Summarize) gives the OpenTelemetry database
// attributes of a statement, read from the same token stream, so that it
// accepts a statement as sent and its DIGEST_TEXT alike and gives both the
// same Summary:
//
//	s := digest.Summarize("INSERT INTO shipping_details SELECT * FROM orders WHERE id = 7")
//	s.Summary    // db.query.summary:   INSERT shipping_details SELECT orders
//	s.Operation  // db.operation.name:  INSERT
//	s.Collection // db.collection.name: "" (two tables)
//
// It follows the conventions' "Generating a summary of the query text":
// each operation (SELECT, INSERT, CREATE TABLE, BEGIN, CALL, ...) in the
// order the statement has them, each followed by its targets, the tables it
// reads or writes in the order they appear; a subquery's or a set
// operation's SELECT is an operation of its own ("SELECT SELECT orders
// customers" for a join in a derived table). A derived table or a common
// table expression is no target. Names print as the statement wrote them,
// schema-qualified ones included ("app.notes"), without quotes unless a
// name needs them ("`song list`"); keywords print as DIGEST_TEXT spells
// them, in upper case ("CREATE SCHEMA" for CREATE DATABASE, "EXPLAIN" for
// DESCRIBE). The summary is at most MaxSummaryLength (255) bytes, cut
// before the first operation or name that does not fit. Savepoint,
// prepared-statement and account names are left out: they are often
// generated. Operation is the statement's own operation (after its WITH
// clause); Collection is the table when the statement names exactly one,
// views included; StoredProcedure is the procedure of a CALL.
//
// Only keywords and identifiers reach a Summary: literals, hostnames and
// @variables are ? in the stream before the summarizer sees it, and the
// fuzz test checks that changing a literal never changes the Summary.
// Without a grammar the reading is heuristic: it knows MySQL's statement
// shapes (joins, USING, index hints, multi-table UPDATE and DELETE, DDL
// prefixes such as DEFINER = ...) but not every corner, and it does not read
// routine bodies or subqueries nested more than 64 parentheses deep.
//
// # Dialects
//
// WithDialect selects the lexer and keyword set; MySQL80 is the only
// dialect today. A new dialect supplies its own lexer feeding the same token
// stream, so the reductions, the budget, the rendering and the hash are
// shared.
//
// # Performance
//
// Normalize, rendering and hashing included, takes about 1.7 µs for a
// 200-byte statement on a shared 2-core VM (BenchmarkDigest200 in bench/,
// with go-sqllexer's normalizer at about 10 µs on the same statement in the
// same run) and allocates nothing once the Normalizer's buffers have grown.
// The server's numbering costs nothing extra: tokens carry MySQL's numbers
// from the start, and only NumberingOtelpfs renumbers the stream before it
// is hashed. About a quarter of the time is SHA-256, which has no shortcut:
// the server's DIGEST is a SHA-256 of the whole stream. The common tokens
// are lexed in one loop over locals, and DIGEST_TEXT is written as tokens
// are stored; the rarer rules go through the general lexer. bench/ compares
// it with DataDog's go-sqllexer on one corpus as well (BenchmarkDigest,
// BenchmarkSQLLexerNormalize).
//
// # Imports
//
// Standard library only: digest is a leaf of otelpfs's dependency graph.
package digest
