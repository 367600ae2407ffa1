package pfscore

import "strings"

// SQL commands: the statement/sql/<command> class of a statement, from its
// first keywords, named as MySQL names its SQL command classes (select,
// insert, insert_select, create_table, set_option, ...). A Go client has
// the text and no parse tree, so the commands MySQL tells apart only by
// parsing (update_multi, delete_multi) are their single-table forms.

// SQLCommand returns the statement/sql/<command> class name of SQL text:
// statement/sql/select for "SELECT ..." and "WITH ...", .../insert_select
// for "INSERT ... SELECT", and so on. Leading blanks, comments and
// parentheses are skipped; an empty statement is empty_query, and a
// statement whose first word is none of MySQL's commands (SQLite's PRAGMA,
// say) is statement/sql/other, otelpfs's own class.
func SQLCommand(text string) string { return "statement/sql/" + sqlCommand(text) }

func sqlCommand(text string) string {
	w1, rest := sqlWord(text)
	if w1 == "" {
		if strings.TrimSpace(rest) == "" {
			return "empty_query"
		}
		return "other"
	}
	switch w1 {
	case "select", "with", "values", "table":
		return "select"
	case "insert", "replace":
		if hasSelect(rest) {
			return w1 + "_select"
		}
		return w1
	case "update", "delete", "truncate", "commit", "savepoint", "analyze", "optimize",
		"check", "repair", "flush", "kill", "do", "checksum", "signal", "resignal", "grant", "revoke":
		return w1
	case "begin":
		return "begin"
	case "start":
		if w2, _ := sqlWord(rest); w2 == "transaction" {
			return "begin"
		}
		return "other"
	case "rollback":
		if w2, r2 := sqlWord(rest); w2 == "to" || w2 == "work" && strings.HasPrefix(strings.TrimSpace(strings.ToLower(r2)), "to") {
			return "rollback_to_savepoint"
		}
		return "rollback"
	case "release":
		return "release_savepoint"
	case "set":
		return "set_option"
	case "use":
		return "change_db"
	case "call":
		return "call_procedure"
	case "explain", "describe", "desc":
		return "explain_other"
	case "prepare":
		return "prepare_sql"
	case "execute":
		return "execute_sql"
	case "deallocate":
		return "dealloc_sql"
	case "lock":
		return "lock_tables"
	case "unlock":
		return "unlock_tables"
	case "load":
		return "load"
	case "create", "drop", "alter":
		w2, r2 := sqlWord(rest)
		for w2 == "or" || w2 == "replace" || w2 == "temporary" || w2 == "unique" || w2 == "fulltext" ||
			w2 == "spatial" || w2 == "definer" || w2 == "algorithm" || w2 == "sql" || w2 == "if" || w2 == "online" {
			if w2 == "definer" || w2 == "algorithm" || w2 == "sql" {
				return w1 + "_view" // CREATE DEFINER=... VIEW, ALGORITHM=..., SQL SECURITY ...
			}
			w2, r2 = sqlWord(r2)
		}
		switch w2 {
		case "table", "index", "view", "trigger", "procedure", "function", "event", "user", "role", "server", "spatial":
			return w1 + "_" + w2
		case "database", "schema":
			return w1 + "_db"
		}
		return "other"
	case "show":
		w2, _ := sqlWord(rest)
		switch w2 {
		case "tables", "databases", "variables", "status", "processlist", "columns", "fields", "index",
			"indexes", "keys", "warnings", "errors", "grants", "triggers", "events", "engines", "plugins":
			switch w2 {
			case "fields":
				w2 = "columns"
			case "indexes", "index", "keys":
				w2 = "keys"
			}
			return "show_" + w2
		case "create":
			return "show_create_table"
		}
		return "show_other"
	}
	return "other"
}

// sqlWord returns the first word of text, lower-cased, skipping blanks,
// comments and opening parentheses, and what follows it. The word is ""
// if text does not begin with a letter after those.
func sqlWord(text string) (string, string) {
	i := 0
	for i < len(text) {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '(':
			i++
		case c == '#' || c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return "", ""
			}
			i += end + 4
		default:
			j := i
			for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z' || text[j] == '_') {
				j++
			}
			if j == i || j-i > 32 {
				return "", text[i:]
			}
			return strings.ToLower(text[i:j]), text[j:]
		}
	}
	return "", ""
}

// hasSelect reports whether an INSERT's rest holds a SELECT that is its
// source: a SELECT keyword outside quotes, before any VALUES.
func hasSelect(rest string) bool {
	for {
		w, r := sqlWord(rest)
		switch w {
		case "select", "with", "table":
			return true
		case "values", "value", "set":
			return false
		}
		if w == "" { // not a word: a name in quotes, punctuation, a number
			r = skipToken(r)
		}
		if r == "" {
			return false
		}
		rest = r
	}
}

// skipToken skips one non-word token of rest: a quoted name or string, or
// one byte.
func skipToken(rest string) string {
	if rest == "" {
		return rest
	}
	if q := rest[0]; q == '`' || q == '"' || q == '\'' {
		if end := strings.IndexByte(rest[1:], q); end >= 0 {
			return rest[end+2:]
		}
		return ""
	}
	return rest[1:]
}
