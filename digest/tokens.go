package digest

// Token numbers of the normalized stream. A token is a 16-bit number, laid
// out as MySQL lays out lex_token_array (sql/gen_lex_token.cc): 0-255 are
// single-character tokens (the byte itself); 258-999 and 1150 up are the
// grammar's tokens (sql/sql_yacc.yy); 1000-1099 the optimizer-hint tokens
// (sql/sql_hints.yy); 1100-1149 the digest-only tokens. Inside this package
// every token carries its MySQL number (tokens_mysql_gen.go, generated from
// the server's own tables); NumberingOtelpfs renumbers the stream just
// before it is hashed (numbering.go).
const (
	tokNone uint16 = 0

	tokNE                = mysqlTokNE                // "!=" and "<>"
	tokEQ                = mysqlTokEQ                // "="
	tokLT                = mysqlTokLT                // "<"
	tokLE                = mysqlTokLE                // "<="
	tokGT                = mysqlTokGT                // ">"
	tokGE                = mysqlTokGE                // ">="
	tokShiftLeft         = mysqlTokShiftLeft         // "<<"
	tokShiftRight        = mysqlTokShiftRight        // ">>"
	tokEqualNull         = mysqlTokEqualNull         // "<=>"
	tokAndAnd            = mysqlTokAndAnd            // "&&"
	tokOr2               = mysqlTokOr2               // "||" meaning OR (the default sql_mode)
	tokOrOr              = mysqlTokOrOr              // "||" meaning concatenation (PIPES_AS_CONCAT)
	tokNot2              = mysqlTokNot2              // NOT under HIGH_NOT_PRECEDENCE, printed "!"
	tokSetVar            = mysqlTokSetVar            // ":="
	tokJSONSep           = mysqlTokJSONSep           // "->"
	tokJSONUnquoted      = mysqlTokJSONUnquoted      // "->>"
	tokUnderscoreCharset = mysqlTokUnderscoreCharset // _utf8mb4 and friends, printed "(_charset)"
	tokWithRollup        = mysqlTokWithRollup        // WITH ROLLUP, folded into one token
)

// Digest tokens: the reductions' results and the identifier markers.
const (
	tokValue         = mysqlTokValue         // ?
	tokValueList     = mysqlTokValueList     // ?, ...
	tokRowSingle     = mysqlTokRowSingle     // (?)
	tokRowSingleList = mysqlTokRowSingleList // (?) /* , ... */
	tokRowMulti      = mysqlTokRowMulti      // (...)
	tokRowMultiList  = mysqlTokRowMultiList  // (...) /* , ... */
	tokIdent         = mysqlTokIdent         // an identifier: token, length, bytes
	tokIdentAt       = mysqlTokIdentAt       // identifier before @ in table@query_block
	tokHintOpen      = mysqlTokHintOpen      // /*+
	tokHintClose     = mysqlTokHintClose     // */
	tokInValues      = mysqlTokInValues      // IN (...)
	tokUnused        = mysqlTokUnused        // "no token" for the peeks
)

const (
	// firstLaterToken numbers the keywords NumberingOtelpfs knows and
	// MySQL 8.0 does not (QUALIFY, LOG, ...): internal numbers of their own,
	// past every MySQL token, never hashed as they are.
	firstLaterToken = 1800
	maxToken        = 2048
)

// Token properties, indexed by token number.
const (
	flagAppendSpace uint8 = 1 << iota // print a space after the token
	flagStartExpr                     // an expression may follow: a sign after it is unary
	flagHintable                      // optimizer hints may follow (SELECT, INSERT, ...)
	flagSpecial                       // the lexer has a rule for it (NULL, NOT, WITH, ROLLUP, hintable)
)

var (
	tokText  [maxToken]string
	tokFlags [maxToken]uint8
)

// Named keyword tokens the normalizer treats specially.
var (
	kwWith, kwRollup, kwNull, kwNot, kwIn, kwBinary, kwAll uint16
)

func init() {
	for i := 0; i < 256; i++ {
		tokText[i] = string(rune(i))
		if i >= 0x80 {
			tokText[i] = string([]byte{byte(i)})
		}
		tokFlags[i] = flagAppendSpace
	}
	tokFlags['@'] = 0 // "@@var" and "@?" print without a space
	named := []struct {
		tok  uint16
		text string
	}{
		{tokNE, "!="}, {tokEQ, "="}, {tokLT, "<"}, {tokLE, "<="}, {tokGT, ">"},
		{tokGE, ">="}, {tokShiftLeft, "<<"}, {tokShiftRight, ">>"},
		{tokEqualNull, "<=>"}, {tokAndAnd, "&&"}, {tokOr2, "||"}, {tokOrOr, "||"},
		{tokNot2, "!"}, {tokSetVar, ":="}, {tokJSONSep, "->"},
		{tokJSONUnquoted, "->>"}, {tokUnderscoreCharset, "(_charset)"},
		{tokWithRollup, "WITH ROLLUP"},
		{tokValue, "?"}, {tokValueList, "?, ..."}, {tokRowSingle, "(?)"},
		{tokRowSingleList, "(?) /* , ... */"}, {tokRowMulti, "(...)"},
		{tokRowMultiList, "(...) /* , ... */"}, {tokIdent, ""}, {tokIdentAt, ""},
		{tokHintOpen, "/*+"}, {tokHintClose, "*/"}, {tokInValues, "IN (...)"},
		{tokUnused, "UNUSED"},
	}
	for _, n := range named {
		tokText[n.tok] = n.text
		tokFlags[n.tok] = flagAppendSpace
	}
	initKeywords()

	for _, c := range "(,|&+-*/%^" {
		tokFlags[c] |= flagStartExpr
	}
	for _, t := range []uint16{tokOr2, tokAndAnd, tokShiftLeft, tokShiftRight} {
		tokFlags[t] |= flagStartExpr
	}
	for _, k := range []string{
		"EVERY", "AT", "STARTS", "ENDS", "DEFAULT", "RETURN", "IF", "ELSEIF",
		"CASE", "WHEN", "WHILE", "UNTIL", "SELECT", "OR", "XOR", "AND", "NOT",
		"BETWEEN", "LIKE", "REGEXP", "INTERVAL", "DIV", "MOD",
	} {
		tokFlags[mustKeyword(k)] |= flagStartExpr
	}
	for _, k := range []string{"SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE"} {
		tokFlags[mustKeyword(k)] |= flagHintable
	}
	kwWith = mustKeyword("WITH")
	kwRollup = mustKeyword("ROLLUP")
	kwNull = mustKeyword("NULL")
	kwNot = mustKeyword("NOT")
	kwIn = mustKeyword("IN")
	kwBinary = mustKeyword("BINARY")
	kwAll = mustKeyword("ALL")
	for _, t := range []uint16{kwNull, kwNot, kwWith, kwRollup} {
		tokFlags[t] |= flagSpecial
	}
	for t := range tokFlags {
		if tokFlags[t]&flagHintable != 0 {
			tokFlags[t] |= flagSpecial
		}
	}
	initRender()
	initLegacy()
	for i := range shortKeywords {
		if e := &shortKeywords[i]; e.key != 0 {
			e.special = tokFlags[e.tok]&flagSpecial != 0
			e.hintable = tokFlags[e.tok]&flagHintable != 0
			f := tokOut[e.tok]
			e.word, e.n, e.long = f.word, f.n, f.long
		}
	}

	// A NULL keyword is the literal NULL (and becomes ?) when it follows a
	// token after which the grammar expects an expression; elsewhere
	// (IS NULL, NOT NULL, a column's NULL attribute, SET NULL) it stays.
	// With the server's keyword set, NULL after NOT (or NOT2_SYM) depends
	// on the token before the NOT, and ALL NULL is a literal: see
	// emitKeyword.
	for _, c := range "(,=<>+-*/%^&|~!" {
		nullIsValueAfter[c] = true
	}
	for _, t := range []uint16{tokNE, tokEQ, tokLT, tokLE, tokGT, tokGE,
		tokShiftLeft, tokShiftRight, tokEqualNull, tokAndAnd, tokOr2, tokOrOr,
		tokNot2, tokSetVar} {
		nullIsValueAfter[t] = true
	}
	for _, k := range []string{
		"SELECT", "DEFAULT", "THEN", "ELSE", "WHEN", "CASE", "RETURN", "IF",
		"ELSEIF", "UNTIL", "WHILE", "AND", "OR", "XOR", "BETWEEN", "LIKE",
		"REGEXP", "ESCAPE", "BY", "WHERE", "HAVING", "ON", "DO", "DISTINCT",
		"BINARY", "INTERVAL", "EVERY", "AT", "STARTS", "ENDS", "DIV", "MOD",
	} {
		nullIsValueAfter[mustKeyword(k)] = true
	}
}

var nullIsValueAfter [maxToken]bool

func mustKeyword(name string) uint16 {
	e := mainKeywords.find(name)
	if e == nil {
		panic("digest: BUG: unknown keyword " + name)
	}
	return e.tok
}
