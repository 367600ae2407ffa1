package digest

import "testing"

// review19Case is one statement and the DIGEST_TEXT MySQL 8.0 gives it, with
// the sql_mode it is lexed under.
type review19Case struct {
	sql  string
	mode SQLMode
	want string
}

func review19Check(t *testing.T, cases []review19Case) {
	t.Helper()
	for _, c := range cases {
		got := string(New(WithSQLMode(c.mode)).Normalize(c.sql).Text)
		if got != c.want {
			t.Errorf("%q (sql_mode %v):\n got  %s\n want %s", c.sql, c.mode, got, c.want)
		}
	}
}

// TestReview19_NullAfterHighPrecedenceNot shows that under
// HIGH_NOT_PRECEDENCE the NULL of "IS NOT NULL" and of a column's NOT NULL
// attribute was reduced to ?. MySQL's lexer returns NOT2_SYM for NOT in that
// mode, and the grammar takes it through the same rule as NOT_SYM
// (not: NOT_SYM | NOT2_SYM; "bool_pri IS not NULL_SYM", the column
// attribute "not NULL_SYM"), where NULL is a keyword and is not reduced
// (only null_as_literal / literal: NULL_SYM calls reduce_digest_token). So
// the server prints "IS ! NULL", "INTEGER ! NULL": NOT2_SYM must count as
// NOT does for the NULL decision, and the DIGEST differs otherwise.
func TestReview19_NullAfterHighPrecedenceNot(t *testing.T) {
	review19Check(t, []review19Case{
		{"SELECT a FROM t WHERE a IS NOT NULL", HighNotPrecedence, "SELECT `a` FROM `t` WHERE `a` IS ! NULL"},
		{"CREATE TABLE t (a INT NOT NULL)", HighNotPrecedence, "CREATE TABLE `t` ( `a` INTEGER ! NULL )"},
		{"SELECT a FROM t WHERE a IS NOT NULL", 0, "SELECT `a` FROM `t` WHERE `a` IS NOT NULL"},
	})
}

// TestReview19_NullOperandOfNot shows that NULL as the operand of a unary
// NOT (or after SELECT ALL) stayed the keyword NULL. In MySQL's grammar it
// is an expression there (expr: NOT_SYM expr; select_item: expr), reached
// through simple_expr -> literal / null_as_literal, whose action calls
// reduce_digest_token(TOK_GENERIC_VALUE, NULL_SYM): the server prints
// "SELECT NOT ?". Only a NOT that itself starts an expression (after
// SELECT, WHERE, AND, '(', ...) takes NULL as its operand; "IS NOT NULL"
// and the NOT NULL column attribute keep NULL (see the test above).
// Confidence: high for the reduction (it is the grammar's only NULL rule
// in an expression), the exact text is read from the source, not a server.
func TestReview19_NullOperandOfNot(t *testing.T) {
	review19Check(t, []review19Case{
		{"SELECT NOT NULL", 0, "SELECT NOT ?"},
		{"SELECT a FROM t WHERE NOT NULL", 0, "SELECT `a` FROM `t` WHERE NOT ?"},
		{"SELECT a FROM t WHERE a = 1 AND NOT NULL", 0, "SELECT `a` FROM `t` WHERE `a` = ? AND NOT ?"},
		{"SELECT NOT NULL", HighNotPrecedence, "SELECT ! ?"},
		{"SELECT ALL NULL", 0, "SELECT ALL ?"},
		// The keyword stays where NOT does not start an expression.
		{"CREATE TABLE t (a CHAR(3) BINARY NOT NULL, b INT DEFAULT 1 NOT NULL)", 0,
			"CREATE TABLE `t` ( `a` CHARACTER (?) BINARY NOT NULL , `b` INTEGER DEFAULT ? NOT NULL )"},
	})
}
