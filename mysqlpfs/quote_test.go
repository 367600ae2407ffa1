package mysqlpfs

import "testing"

func TestQuoteDollarIdents(t *testing.T) {
	for _, c := range [][2]string{
		{"SELECT * FROM sys.x$statement_analysis", "SELECT * FROM sys.`x$statement_analysis`"},
		{"select a$b, `x$y`, 'x$y', \"x$y\", @x$y, 1 -- x$y\n, x$z # x$w", "select `a$b`, `x$y`, 'x$y', \"x$y\", @x$y, 1 -- x$y\n, `x$z` # x$w"},
		{"SELECT 'it''s x$a', 'a\\'x$b' /* x$c */ /*! x$d */ FROM x$e;SELECT x$f", "SELECT 'it''s x$a', 'a\\'x$b' /* x$c */ /*! x$d */ FROM `x$e`;SELECT `x$f`"},
		{"SELECT `a``x$b` FROM t", "SELECT `a``x$b` FROM t"},
		{"SELECT 'unterminated x$a", "SELECT 'unterminated x$a"},
		{"SELECT 1--x$a", "SELECT 1--`x$a`"},
		{"no dollar", "no dollar"},
	} {
		if got := quoteDollarIdents(c[0]); got != c[1] {
			t.Errorf("%q:\n got  %q\n want %q", c[0], got, c[1])
		}
		if got := quoteDollarIdents(quoteDollarIdents(c[0])); got != c[1] {
			t.Errorf("%q twice: %q", c[0], got)
		}
	}
}
