package pfscore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Queries: the WHERE clause, ORDER BY list and LIMIT that Schema.Query
// (and so the HTTP handler's where, order and limit parameters) applies to
// a table snapshot, with the meaning they have in MySQL where it matters:
//
//	Where: EVENT_NAME LIKE 'wait/io/%' AND COUNT_STAR > 0
//	Order: SUM_TIMER_WAIT desc, EVENT_NAME
//	Limit: 20
//
// A condition is COL op value (op: = != <> < <= > >=), COL [NOT] LIKE
// 'pattern' (see Like: % _ and \ escapes, ASCII case-insensitive) or COL IS
// [NOT] NULL; conditions join with AND. Strings are quoted with ' or " (a
// doubled quote is a literal one, see QuoteString); numbers are decimal
// integers, and a picosecond column also takes a unit, as 1.5ms or 250us
// (ps ns us ms s min h d). Column names and keywords are case-insensitive;
// strings compare case-insensitively (ASCII), as under MySQL's default
// collation. NULL never satisfies a comparison, and sorts first ascending,
// last descending. Anything else is an ErrBadQuery.

// A Query filters, orders and limits a table's rows (see above). The zero
// Query selects every row in the table's order.
type Query struct {
	Where []string // conditions; the strings join with AND
	Order string   // ORDER BY: columns, each optionally asc or desc
	Limit int      // at most this many rows; 0 (or less): no limit
}

// ErrBadQuery marks a Query that does not parse against its table.
var ErrBadQuery = errors.New("pfs: bad query")

// Query returns a snapshot of table filtered, ordered and limited by q:
// SELECT * FROM table WHERE ... ORDER BY ... LIMIT .... Result.Matched is
// the number of rows the WHERE clause matched, before the limit. It returns
// ErrUnknownTable or ErrBadQuery.
func (s *Schema) Query(table string, q Query) (*Result, error) {
	t, err := lookupTable(table)
	if err != nil {
		return nil, err
	}
	cq, err := compileQuery(t.columns, q.Where, q.Order, q.Limit)
	if err != nil {
		return nil, err
	}
	res := s.selectTable(t)
	all := len(res.Rows)
	res.Rows, res.Matched = cq.apply(res.Rows)
	if len(res.Rows) < all/2 {
		// The rows' cells share one allocation per read (see rowsOf):
		// copy the few kept, so they do not hold the whole table's.
		res.Rows = cloneRows(res.Rows)
	}
	return res, nil
}

// cloneRows copies rows into cells of their own, one allocation for all.
func cloneRows(rows []Row) []Row {
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	cells := make(Row, 0, n)
	out := make([]Row, len(rows))
	for i, r := range rows {
		start := len(cells)
		cells = append(cells, r...)
		out[i] = cells[start:len(cells):len(cells)]
	}
	return out
}

// QuoteString quotes s as a string of a Query's WHERE clause.
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func queryErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// A compiledQuery is a Query parsed against a table's columns.
type compiledQuery struct {
	conds []cond
	order []orderKey
	limit int // <= 0: none
}

type opKind uint8

const (
	opEq opKind = iota
	opNe
	opLt
	opLe
	opGt
	opGe
	opLike
	opNotLike
	opIsNull
	opIsNotNull
)

// A cond is one condition of the WHERE clause.
type cond struct {
	col int
	op  opKind
	str string  // string operand, LIKE pattern
	num numeric // numeric operand
	isN bool    // the operand is num (the column is numeric)
	bin bool    // the column compares byte for byte (Column.Binary)
}

// A numeric is an integer operand: its sign and magnitude, so that every
// uint64 and every int64 fits. An operand no integer column value can equal
// (1.5ps, or a number beyond every uint64) is the integer nearest it toward
// zero (or the largest magnitude) with off, the side it lies on: +1 just
// above, -1 just below; cells, integers, then compare with it exactly.
type numeric struct {
	neg bool
	mag uint64
	off int8
}

type orderKey struct {
	col  int
	desc bool
	bin  bool // the column compares byte for byte (Column.Binary)
}

// Bounds on a query, so that one GET cannot cost seconds of CPU: the total
// text of its where clauses, their number of conditions, and each quoted
// string (a LIKE pattern is matched against every row) or number.
const (
	maxWhereBytes  = 4 << 10
	maxConditions  = 64
	maxStringBytes = 512
	maxNumberBytes = 64
)

// compileQuery parses a query's where, order and limit against cols. wheres
// are AND-joined; empty strings mean "absent".
func compileQuery(cols []Column, wheres []string, order string, limit int) (*compiledQuery, error) {
	q := &compiledQuery{limit: limit}
	total := 0
	for _, w := range wheres {
		total += len(w)
	}
	if total > maxWhereBytes {
		return nil, queryErrorf("where: %d bytes, more than the %d allowed", total, maxWhereBytes)
	}
	for _, w := range wheres {
		if strings.TrimSpace(w) == "" {
			continue
		}
		cs, err := parseWhere(cols, w)
		if err != nil {
			return nil, err
		}
		q.conds = append(q.conds, cs...)
		if len(q.conds) > maxConditions {
			return nil, queryErrorf("where: more than %d conditions", maxConditions)
		}
	}
	if strings.TrimSpace(order) != "" {
		keys, err := parseOrder(cols, order)
		if err != nil {
			return nil, err
		}
		q.order = keys
	}
	return q, nil
}

// apply filters, sorts and limits rows, returning a new slice and the
// number of rows the WHERE clause matched.
func (q *compiledQuery) apply(rows []Row) (out []Row, matched int) {
	switch {
	case len(q.conds) == 0 && len(q.order) == 0:
		out = rows // the whole table, in its order: nothing to copy
	case len(q.conds) == 0:
		out = slices.Clone(rows) // sorted below; rows stays as it is
	default:
		out = rows[:0:0]
		for _, r := range rows {
			if q.match(r) {
				out = append(out, r)
			}
		}
	}
	if len(q.order) > 0 {
		slices.SortStableFunc(out, func(a, b Row) int {
			for _, k := range q.order {
				c := compareValues(a[k.col], b[k.col], k.bin)
				if k.desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	matched = len(out)
	if q.limit > 0 && len(out) > q.limit {
		out = out[:q.limit]
	}
	return out, matched
}

func (q *compiledQuery) match(r Row) bool {
	for _, c := range q.conds {
		if !c.match(r[c.col]) {
			return false
		}
	}
	return true
}

func (c *cond) match(v Value) bool {
	switch c.op {
	case opIsNull:
		return v == nil
	case opIsNotNull:
		return v != nil
	}
	if v == nil {
		return false // NULL satisfies no comparison
	}
	switch c.op {
	case opLike, opNotLike:
		like := Like
		if c.bin {
			like = likeBinary
		}
		return like(c.str, valueString(v)) == (c.op == opLike)
	}
	var d int
	switch {
	case c.isN:
		d = compareNumeric(v, c.num)
	case c.bin:
		d = strings.Compare(valueString(v), c.str)
	default:
		d = compareFold(valueString(v), c.str)
	}
	switch c.op {
	case opEq:
		return d == 0
	case opNe:
		return d != 0
	case opLt:
		return d < 0
	case opLe:
		return d <= 0
	case opGt:
		return d > 0
	default: // opGe
		return d >= 0
	}
}

// valueString renders a non-NULL cell as a string, for LIKE and string
// comparison.
func valueString(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case uint64:
		return strconv.FormatUint(v, 10)
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

// toNumeric converts a numeric cell.
func toNumeric(v Value) (numeric, bool) {
	switch v := v.(type) {
	case uint64:
		return numeric{mag: v}, true
	case int64:
		if v < 0 {
			return numeric{neg: true, mag: uint64(-(v + 1)) + 1}, true
		}
		return numeric{mag: uint64(v)}, true
	}
	return numeric{}, false
}

func (a numeric) compare(b numeric) int {
	if a.mag == 0 && b.mag == 0 {
		return 0
	}
	switch {
	case a.neg && !b.neg:
		return -1
	case !a.neg && b.neg:
		return 1
	case a.neg: // both negative
		return cmp.Compare(b.mag, a.mag)
	default:
		return cmp.Compare(a.mag, b.mag)
	}
}

// compareNumeric compares a cell with a numeric operand; a cell that is not
// a number compares as its string against the operand's.
func compareNumeric(v Value, n numeric) int {
	if x, ok := toNumeric(v); ok {
		if d := x.compare(n); d != 0 || n.off == 0 {
			return d
		}
		return -int(n.off) // x is the integer next to the operand
	}
	s := strconv.FormatUint(n.mag, 10)
	if n.neg {
		s = "-" + s
	}
	return compareFold(valueString(v), s)
}

// compareValues orders two cells of one column: NULL first, numbers by
// value, strings case-insensitively unless bin says byte for byte.
func compareValues(a, b Value, bin bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	x, okA := toNumeric(a)
	y, okB := toNumeric(b)
	if okA && okB {
		return x.compare(y)
	}
	if bin {
		return strings.Compare(valueString(a), valueString(b))
	}
	return compareFold(valueString(a), valueString(b))
}

// compareFold compares strings with ASCII letters folded to lower case.
func compareFold(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmp.Compare(lower(a[i]), lower(b[i])); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// columnIndex finds a column by name, case-insensitively.
func columnIndex(cols []Column, name string) (int, error) {
	for i, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return i, nil
		}
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return 0, queryErrorf("unknown column %q (columns: %s)", name, strings.Join(names, ", "))
}

// Tokens of the WHERE and ORDER BY languages.

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber // digits, an optional fraction, an optional unit: 12, 1.5ms
	tokOp     // = != <> < <= > >=
	tokComma
)

type token struct {
	kind tokKind
	text string // identifier, operator or number as written; string unquoted
	pos  int    // byte offset, for messages
}

// tokenize splits s into tokens.
func tokenize(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tokIdent, s[i:j], i})
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, queryErrorf("unterminated string starting at offset %d", i)
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						b.WriteByte(c)
						j += 2
						continue
					}
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if b.Len() > maxStringBytes {
				return nil, queryErrorf("string at %d: longer than %d bytes", i, maxStringBytes)
			}
			toks = append(toks, token{tokString, b.String(), i})
			i = j
		case isDigit(c) || (c == '-' || c == '+') && i+1 < len(s) && isDigit(s[i+1]):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || isIdentPart(s[j])) {
				j++
			}
			if j-i > maxNumberBytes {
				return nil, queryErrorf("number at %d: longer than %d bytes", i, maxNumberBytes)
			}
			toks = append(toks, token{tokNumber, s[i:j], i})
			i = j
		case c == '=':
			toks = append(toks, token{tokOp, "=", i})
			i++
		case c == '!' && i+1 < len(s) && s[i+1] == '=':
			toks = append(toks, token{tokOp, "!=", i})
			i += 2
		case c == '<' || c == '>':
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '=' || c == '<' && s[i+1] == '>') {
				op += string(s[i+1])
			}
			toks = append(toks, token{tokOp, op, i})
			i += len(op)
		case c == ',':
			toks = append(toks, token{tokComma, ",", i})
			i++
		case c == '(' || c == ')':
			return nil, queryErrorf("parentheses are not supported (offset %d): conditions join with AND only", i)
		default:
			return nil, queryErrorf("unexpected character %q at offset %d", c, i)
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(s)}), nil
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }

// describe names a token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return strconv.Quote(t.text) + " (a string)"
	default:
		return strconv.Quote(t.text)
	}
}

func (t token) is(keyword string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, keyword)
}

// parseWhere parses conditions joined by AND.
func parseWhere(cols []Column, s string) ([]cond, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, fmt.Errorf("where: %w", err)
	}
	var conds []cond
	p := 0
	next := func() token { t := toks[p]; p++; return t }
	for {
		c, err := parseCond(cols, toks, &p)
		if err != nil {
			return nil, fmt.Errorf("where: %w", err)
		}
		conds = append(conds, c)
		t := next()
		switch {
		case t.kind == tokEOF:
			return conds, nil
		case t.is("AND"):
			continue
		case t.is("OR"):
			return nil, fmt.Errorf("where: %w", queryErrorf("OR is not supported: conditions join with AND only"))
		default:
			return nil, fmt.Errorf("where: %w", queryErrorf("unexpected %s at offset %d: want AND or the end", t.describe(), t.pos))
		}
	}
}

func parseCond(cols []Column, toks []token, p *int) (cond, error) {
	next := func() token { t := toks[*p]; *p++; return t }
	t := next()
	if t.kind != tokIdent {
		return cond{}, queryErrorf("unexpected %s at offset %d: want a column name", t.describe(), t.pos)
	}
	col, err := columnIndex(cols, t.text)
	if err != nil {
		return cond{}, err
	}
	c := cond{col: col, bin: cols[col].Binary}
	typ := cols[col].Type
	t = next()
	switch {
	case t.is("IS"):
		c.op = opIsNull
		t = next()
		if t.is("NOT") {
			c.op = opIsNotNull
			t = next()
		}
		if !t.is("NULL") {
			return cond{}, queryErrorf("unexpected %s at offset %d: want NULL after IS", t.describe(), t.pos)
		}
		return c, nil
	case t.is("NOT"), t.is("LIKE"):
		c.op = opLike
		if t.is("NOT") {
			c.op = opNotLike
			if t = next(); !t.is("LIKE") {
				return cond{}, queryErrorf("unexpected %s at offset %d: want LIKE after NOT", t.describe(), t.pos)
			}
		}
		v := next()
		if v.kind != tokString {
			return cond{}, queryErrorf("LIKE wants a quoted pattern, as '%s', at offset %d; got %s", v.text, v.pos, v.describe())
		}
		c.str = v.text
		return c, nil
	case t.kind == tokOp:
		c.op = map[string]opKind{"=": opEq, "!=": opNe, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}[t.text]
	default:
		return cond{}, queryErrorf("unexpected %s at offset %d: want =, !=, <>, <, <=, >, >=, LIKE, NOT LIKE or IS", t.describe(), t.pos)
	}
	v := next()
	switch {
	case typ == ColString && v.kind == tokString:
		c.str = v.text
	case typ == ColString && v.kind == tokNumber:
		c.str = v.text // MySQL compares a string column with a number's text here well enough
	case typ != ColString && (v.kind == tokNumber || v.kind == tokString):
		n, err := parseNumber(v.text, typ)
		if err != nil {
			return cond{}, err
		}
		c.num, c.isN = n, true
	case v.kind == tokIdent && !v.is("NULL"):
		return cond{}, queryErrorf("value %s at offset %d must be quoted, as '%s' (a bare word would name a column)", v.describe(), v.pos, v.text)
	case v.is("NULL"):
		return cond{}, queryErrorf("a comparison with NULL is never true: use IS NULL or IS NOT NULL")
	default:
		return cond{}, queryErrorf("unexpected %s at offset %d: want a value", v.describe(), v.pos)
	}
	return c, nil
}

// picoUnits are the units a picosecond operand may carry.
var picoUnits = map[string]uint64{
	"ps": 1, "ns": 1e3, "us": 1e6, "ms": 1e9, "s": 1e12,
	"min": 60e12, "h": 3600e12, "d": 86400e12,
}

// parseNumber parses a numeric operand for a column of type typ: an integer,
// or for a picosecond column a decimal with an optional unit.
func parseNumber(s string, typ ColumnType) (numeric, error) {
	num := s
	unit := ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && isIdentStart(byte(r)) }); i >= 0 {
		num, unit = s[:i], strings.ToLower(s[i:])
	}
	if typ != ColPicos && (unit != "" || strings.Contains(num, ".")) {
		return numeric{}, queryErrorf("%q is not an integer (units and fractions apply to TIMER_* columns only)", s)
	}
	mult := uint64(1)
	if unit != "" {
		m, ok := picoUnits[unit]
		if !ok {
			return numeric{}, queryErrorf("%q: unknown unit %q (want ps, ns, us, ms, s, min, h or d)", s, unit)
		}
		mult = m
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || strings.ContainsAny(num, "eE/") {
		return numeric{}, queryErrorf("%q is not a number", s)
	}
	r.Mul(r, new(big.Rat).SetUint64(mult))
	var off int8
	if r.Sign() > 0 {
		off = 1
	} else {
		off = -1
	}
	if r.IsInt() {
		off = 0
	} else {
		// A fraction of a picosecond: the integer toward zero, and the
		// side the operand lies on (see numeric).
		r.SetInt(new(big.Int).Quo(r.Num(), r.Denom()))
	}
	n := r.Num()
	mag := new(big.Int).Abs(n)
	if !mag.IsUint64() { // beyond every cell: compares as just past the largest
		off = 1
		if n.Sign() < 0 {
			off = -1
		}
		return numeric{neg: n.Sign() < 0, mag: math.MaxUint64, off: off}, nil
	}
	return numeric{neg: n.Sign() < 0, mag: mag.Uint64(), off: off}, nil
}

// parseOrder parses "COL [ASC|DESC] [, COL [ASC|DESC]]...".
func parseOrder(cols []Column, s string) ([]orderKey, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	var keys []orderKey
	p := 0
	for {
		t := toks[p]
		p++
		if t.kind != tokIdent {
			return nil, fmt.Errorf("order: %w", queryErrorf("unexpected %s at offset %d: want a column name", t.describe(), t.pos))
		}
		col, err := columnIndex(cols, t.text)
		if err != nil {
			return nil, fmt.Errorf("order: %w", err)
		}
		k := orderKey{col: col, bin: cols[col].Binary}
		t = toks[p]
		p++
		if t.is("ASC") || t.is("DESC") {
			k.desc = t.is("DESC")
			t = toks[p]
			p++
		}
		keys = append(keys, k)
		switch t.kind {
		case tokEOF:
			return keys, nil
		case tokComma:
		default:
			return nil, fmt.Errorf("order: %w", queryErrorf("unexpected %s at offset %d: want ASC, DESC, a comma or the end", t.describe(), t.pos))
		}
	}
}
