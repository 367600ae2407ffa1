package mysqlpfs_test

import (
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/mysqlpfs"
)

// TestMaxAllowedPacket checks that the functions that can build a large
// value from small arguments give NULL with warning 1301 past
// max_allowed_packet (here 1 MiB), without building it, and still work
// below it.
func TestMaxAllowedPacket(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithMaxAllowedPacket(1<<20))
	db := f.db(t)
	db.SetMaxOpenConns(1) // one session, for @a
	if _, err := db.Exec("SET @a = REPEAT('x', 600000), @b = REPEAT('y', 300000)"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"REPEAT(REPEAT('x', 65536), 2147483647)",
		"REPEAT('x', 9223372036854775807)",
		"LPAD('x', 2000000000, 'y')",
		"RPAD('x', 2000000000, 'é')",
		"SPACE(2000000000)",
		"REPLACE(@a, 'x', 'yy')",
		"REGEXP_REPLACE(@a, '', 'y')",
		"CONCAT(@a, @a)",
		"CONCAT_WS(@a, 'a', 'b')",
		"HEX(@a)",
		"TO_BASE64(@a)",
		"JSON_ARRAY(@a, @a)",
		"JSON_ARRAY(JSON_ARRAY(@b, @b), JSON_ARRAY(@b, @b))",
		"UNCOMPRESS(UNHEX(CONCAT('FFFFFFFF', SUBSTRING(HEX(COMPRESS('x')), 9))))",
		"FORMAT(1, 2000000000)",
		"(SELECT JSON_ARRAYAGG(@a) FROM performance_schema.setup_instruments)",
		"(SELECT JSON_OBJECTAGG(NAME, @a) FROM performance_schema.setup_instruments)",
	} {
		_, rows := queryRows(t, db, "SELECT "+q+" IS NULL")
		if rows[0][0] != "1" {
			t.Errorf("%s is not NULL", q)
			continue
		}
		_, w := queryRows(t, db, "SHOW WARNINGS")
		if len(w) == 0 || w[0][1] != "1301" {
			t.Errorf("%s: warnings %v, want 1301", q, w)
		}
	}
	_, rows := queryRows(t, db, `SELECT REPEAT('ab', 3), LPAD('x', 3, '0'), RPAD('a', 3, 'bc'), SPACE(2), CONCAT('a', 1, 2.5),
		CONCAT_WS('-', 'a', 'b'), REPLACE('abc', 'b', 'xx'), REGEXP_REPLACE('abc', 'b', 'x'), JSON_ARRAY(1, 'a'),
		UNCOMPRESS(COMPRESS('hello')), LENGTH(@a), LENGTH(REPEAT(@a, 1)), LENGTH(JSON_ARRAY(@b, @b)), @@max_allowed_packet`)
	want := []string{"ababab", "00x", "abc", "  ", "a12.5", "a-b", "axxc", "axc", `[1, "a"]`, "hello", "600000", "600000", "600008", "1048576"}
	if strings.Join(rows[0], "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", rows[0], want)
	}

	// GROUP_CONCAT stops at group_concat_max_len, which may not pass
	// max_allowed_packet; max_allowed_packet is the server's.
	_, rows = queryRows(t, db, "SELECT LENGTH(GROUP_CONCAT(REPEAT('x', 1000))) FROM performance_schema.setup_instruments")
	if rows[0][0] != "1024" {
		t.Errorf("GROUP_CONCAT: %v, want 1024 (group_concat_max_len)", rows[0][0])
	}
	if _, err := db.Exec("SET SESSION group_concat_max_len = 1000000000000"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec("SELECT GROUP_CONCAT(NAME) FROM performance_schema.setup_instruments")
	wantErr(t, "GROUP_CONCAT past max_allowed_packet", err, 1153)
	_, err = db.Exec("SELECT (SELECT GROUP_CONCAT(NAME) FROM performance_schema.setup_instruments)")
	wantErr(t, "GROUP_CONCAT in a subquery past max_allowed_packet", err, 1153)
	_, err = db.Exec("SET SESSION max_allowed_packet = 1073741824")
	wantErr(t, "SET SESSION max_allowed_packet", err, 1621)
}
