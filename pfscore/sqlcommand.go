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
	case "select", "values", "table":
		return "select"
	case "with":
		return withCommand(rest)
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
		if w2, r2 := sqlWord(rest); w2 == "to" || w2 == "work" && firstWord(r2) == "to" {
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
		// EXPLAIN of a statement is that statement's; DESCRIBE of a table
		// is SHOW COLUMNS.
		w2, r2 := sqlWord(rest)
		for w2 == "analyze" || w2 == "format" || w2 == "extended" || w2 == "partitions" {
			w2, r2 = sqlWord(skipOption(r2))
		}
		switch w2 {
		case "select", "with", "table", "values", "insert", "replace", "update", "delete":
			return sqlCommand(w2 + r2)
		case "for":
			return "explain_other"
		}
		return "show_fields"
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
	case "rename":
		if w2, _ := sqlWord(rest); w2 == "user" {
			return "rename_user"
		}
		return "rename_table"
	case "create", "drop", "alter":
		return ddlCommand(w1, rest)
	case "show":
		return showCommand(rest)
	}
	return "other"
}

// ddlCommand names CREATE, DROP and ALTER statements by their object,
// skipping the clauses that may come before it (OR REPLACE, TEMPORARY,
// DEFINER = ..., ALGORITHM = ..., SQL SECURITY ...).
func ddlCommand(verb, rest string) string {
	for range 16 {
		w, r := sqlWord(rest)
		switch w {
		case "table", "index", "view", "trigger", "procedure", "function", "event", "user", "role", "server":
			return verb + "_" + w
		case "database", "schema":
			return verb + "_db"
		case "prepare":
			if verb == "drop" {
				return "dealloc_sql"
			}
			return "other"
		case "":
			r = skipToken(r)
		}
		if r == "" {
			break
		}
		rest = r
	}
	return "other"
}

// showCommand names SHOW statements as MySQL does (show_tables,
// show_status, show_create_db, ...), skipping GLOBAL, SESSION, FULL and
// EXTENDED.
func showCommand(rest string) string {
	w, r := sqlWord(rest)
	for w == "global" || w == "session" || w == "full" || w == "extended" || w == "local" {
		w, r = sqlWord(r)
	}
	switch w {
	case "tables", "variables", "status", "processlist", "warnings", "errors", "grants", "triggers",
		"events", "plugins", "collation", "privileges", "profiles", "profile":
		return "show_" + w
	case "databases", "schemas":
		return "show_databases"
	case "columns", "fields":
		return "show_fields"
	case "index", "indexes", "keys":
		return "show_keys"
	case "engines":
		return "show_storage_engines"
	case "storage":
		return "show_storage_engines"
	case "character", "charset":
		return "show_charsets"
	case "table":
		return "show_table_status"
	case "engine":
		return "show_engine_status"
	case "open":
		return "show_open_tables"
	case "create":
		w2, _ := sqlWord(r)
		switch w2 {
		case "table", "view", "trigger", "event", "user":
			return "show_create_" + w2
		case "database", "schema":
			return "show_create_db"
		case "procedure":
			return "show_create_proc"
		case "function":
			return "show_create_func"
		}
	}
	return "show_other"
}

// withCommand names a statement that begins with a WITH clause by the
// statement after its common table expressions: the first SELECT, UPDATE,
// DELETE, INSERT or REPLACE outside parentheses.
func withCommand(rest string) string {
	depth := 0
	for i := 0; i < len(rest); {
		switch c := rest[i]; {
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case c == '\'' || c == '"' || c == '`':
			i = len(rest) - len(skipToken(rest[i:]))
		case depth == 0 && (c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_'):
			w, r := sqlWord(rest[i:])
			switch w {
			case "select", "table", "values":
				return "select"
			case "update", "delete", "insert", "replace":
				return sqlCommand(rest[i:])
			}
			i = len(rest) - len(r)
			if w == "" {
				i++
			}
		default:
			i++
		}
	}
	return "select"
}

// skipOption skips "= value" after an EXPLAIN option such as FORMAT.
func skipOption(rest string) string {
	t := strings.TrimLeft(rest, " \t\n\r")
	if !strings.HasPrefix(t, "=") {
		return rest
	}
	_, r := sqlWord(strings.TrimLeft(t[1:], " \t\n\r"))
	return r
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
		case c == '/' && i+2 < len(text) && text[i+1] == '*' && text[i+2] == '!':
			// A versioned comment, /*!40101 SET ... */: MySQL runs its
			// content. Its closing "*/" is never reached by a first word.
			i += 3
			for i < len(text) && text[i] >= '0' && text[i] <= '9' {
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
			return sqlKeyword(text[i:j]), text[j:]
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

// firstWord returns the first word of text, as sqlWord does.
func firstWord(text string) string {
	w, _ := sqlWord(text)
	return w
}

// sqlKeyword returns w lower-cased if it is one of the words sqlCommand
// looks at, else "x" (a word, but none of those): the classification
// allocates nothing.
func sqlKeyword(w string) string {
	var buf [16]byte
	if len(w) > len(buf) {
		return "x"
	}
	for i := range len(w) {
		buf[i] = w[i] | 0x20 // letters and '_' only, see sqlWord
	}
	if k, ok := sqlKeywords[string(buf[:len(w)])]; ok {
		return k
	}
	return "x"
}

// sqlKeywords are the words sqlCommand looks at, each mapped to itself.
var sqlKeywords = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(`alter analyze begin call character charset check checksum collation columns commit create database databases deallocate delete desc describe do drop engine engines errors event events execute explain extended fields flush for format full function global grant grants index indexes insert keys kill load local lock open optimize other partitions plugins prepare privileges procedure processlist profile profiles release rename repair replace resignal revoke role rollback savepoint schema schemas select server session set show signal start status storage strings table tables to transaction trigger triggers truncate unlock update use user value values variables view warnings with work`) {
		m[w] = w
	}
	return m
}()
