package pfscore

import "testing"

func TestSQLCommand(t *testing.T) {
	for text, want := range map[string]string{
		"SELECT 1":                     "select",
		"  /* hi */ (select a from t)": "select",
		"-- c\nWITH x AS (SELECT 1) SELECT * FROM x": "select",
		"insert into t values (1)":                   "insert",
		"INSERT INTO `t` (a, b) VALUES (1, 2)":       "insert",
		"INSERT INTO t2 (a) SELECT a FROM t1":        "insert_select",
		"INSERT INTO 'select' VALUES (1)":            "insert",
		"REPLACE INTO t SELECT * FROM u":             "replace_select",
		"UPDATE t SET a = 1":                         "update",
		"DELETE FROM t":                              "delete",
		"CREATE TABLE t (a INT)":                     "create_table",
		"CREATE TEMPORARY TABLE t (a INT)":           "create_table",
		"create unique index i on t (a)":             "create_index",
		"CREATE OR REPLACE VIEW v AS SELECT 1":       "create_view",
		"DROP TABLE IF EXISTS t":                     "drop_table",
		"DROP DATABASE d":                            "drop_db",
		"ALTER TABLE t ADD c INT":                    "alter_table",
		"BEGIN":                                      "begin",
		"START TRANSACTION":                          "begin",
		"COMMIT":                                     "commit",
		"ROLLBACK":                                   "rollback",
		"ROLLBACK TO SAVEPOINT s":                    "rollback_to_savepoint",
		"SAVEPOINT s":                                "savepoint",
		"RELEASE SAVEPOINT s":                        "release_savepoint",
		"SET NAMES utf8mb4":                          "set_option",
		"SHOW TABLES":                                "show_tables",
		"SHOW FULL PROCESSLIST":                      "show_processlist",
		"USE app":                                    "change_db",
		"CALL p(1)":                                  "call_procedure",
		"EXPLAIN SELECT 1":                           "select",
		"PRAGMA journal_mode=WAL":                    "other",
		"":                                           "empty_query",
		"  -- only a comment":                        "empty_query",
		"42":                                         "other",
		"/* unterminated":                            "empty_query",
	} {
		if got := sqlCommand(text); got != want {
			t.Errorf("sqlCommand(%q) = %q, want %q", text, got, want)
		}
	}
	if got := SQLCommand("select 1"); got != "statement/sql/select" {
		t.Errorf("SQLCommand = %q", got)
	}
	for _, name := range []string{"select", "insert_select", "show_tables", "empty_query", "other", "rollback_to_savepoint"} {
		if _, err := ParseInstrumentName("statement/sql/" + name); err != nil {
			t.Errorf("statement/sql/%s: %v", name, err)
		}
	}
}
