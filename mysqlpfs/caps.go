package mysqlpfs

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// ErWarnAllowedPacketOverflowed is ER_WARN_ALLOWED_PACKET_OVERFLOWED: the
// warning with which MySQL returns NULL for a string function whose
// result would be longer than max_allowed_packet.
const ErWarnAllowedPacketOverflowed = 1301

// The engine's string functions build what they are asked to: one
// REPEAT(REPEAT('x', 65536), 2147483647) asks the Go runtime for 140 TB,
// whose failure is a fatal error that ends the process, not a panic. The
// functions below are the engine's, wrapped: their arguments are evaluated
// first, the size of the result is bounded from them before the engine's
// function runs, and a result that could pass max_allowed_packet is NULL
// with warning 1301, as MySQL does; a result that turns out longer (a
// function whose bound is its result) is NULL too.

// A boundFunc bounds, in bytes, the result of a function of args (the
// evaluated arguments), or returns math.MaxInt64 when it cannot.
type boundFunc func(ctx *sql.Context, args []any, limit int64) int64

// cappedFuncs are the wrapped functions and their bounds; nil means the
// result is checked after it is built, which is safe for a function whose
// result is at most a small multiple of its arguments' sizes (which are
// at most max_allowed_packet each, being capped too, or literals).
var cappedFuncs = map[string]boundFunc{
	"repeat":          boundRepeat,
	"space":           boundSpace,
	"lpad":            boundPad,
	"rpad":            boundPad,
	"replace":         boundReplace,
	"regexp_replace":  boundRegexpReplace,
	"concat":          boundSum(1, 0),
	"concat_ws":       boundConcatWS,
	"insert":          boundSum(1, 0),
	"export_set":      boundExportSet,
	"make_set":        boundSum(1, 0),
	"char":            boundSum(4, 0),
	"hex":             boundSum(2, 0),
	"to_base64":       boundSum(2, 4),
	"quote":           boundSum(2, 4),
	"lower":           boundSum(3, 0),
	"lcase":           boundSum(3, 0),
	"upper":           boundSum(3, 0),
	"ucase":           boundSum(3, 0),
	"reverse":         boundSum(1, 0),
	"format":          boundFormat,
	"uncompress":      boundUncompress,
	"compress":        boundSum(2, 64),
	"bin":             nil,
	"conv":            nil,
	"soundex":         boundSum(4, 4),
	"substring_index": boundSum(1, 0),
	// JSON values share what they are built of: JSON_ARRAY(@s, @s, ...)
	// is small in memory and enormous as text; the bound is its text.
	"json_array":          boundJSON,
	"json_object":         boundJSON,
	"json_array_append":   boundJSON,
	"json_array_insert":   boundJSON,
	"json_insert":         boundJSON,
	"json_set":            boundJSON,
	"json_replace":        boundJSON,
	"json_merge":          boundJSON,
	"json_merge_patch":    boundJSON,
	"json_merge_preserve": boundJSON,
	"json_pretty":         nil,
	"json_quote":          boundJSON,
	"json_extract":        nil,
	"json_search":         nil,
	"json_keys":           nil,
	"json_unquote":        nil,
	"json_remove":         nil,
}

// cappedFunctions returns the engine's functions of cappedFuncs, wrapped
// with a result bound of limit bytes.
func cappedFunctions(limit int64) []sql.Function {
	var fns []sql.Function
	for _, f := range function.BuiltIns {
		name := strings.ToLower(f.FunctionName())
		bound, ok := cappedFuncs[name]
		if !ok {
			continue
		}
		fns = append(fns, sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
			e, err := f.NewInstance(args)
			if err != nil {
				return nil, err
			}
			return newCapped(name, e, bound, limit)
		}})
	}
	return fns
}

// A capped is an engine function whose arguments it evaluates itself: the
// function's children are slots that read them from the end of the row
// it is given, so each argument is evaluated once.
type capped struct {
	name  string
	inner sql.Expression // the engine's function, its children slots
	args  []sql.Expression
	bound boundFunc
	limit int64
}

var (
	_ sql.FunctionExpression         = (*capped)(nil)
	_ sql.CollationCoercible         = (*capped)(nil)
	_ sql.NonDeterministicExpression = (*capped)(nil)
)

func newCapped(name string, e sql.Expression, bound boundFunc, limit int64) (sql.Expression, error) {
	args := e.Children()
	slots := make([]sql.Expression, len(args))
	for i, a := range args {
		slots[i] = &slot{i: i, n: len(args), arg: a}
	}
	inner, err := e.WithChildren(slots...)
	if err != nil {
		return nil, err
	}
	return &capped{name: name, inner: inner, args: args, bound: bound, limit: limit}, nil
}

func (c *capped) FunctionName() string { return c.name }
func (c *capped) Description() string {
	return "the engine's " + c.name + ", its result bounded by max_allowed_packet"
}
func (c *capped) Resolved() bool {
	for _, a := range c.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (c *capped) String() string {
	s := make([]string, len(c.args))
	for i, a := range c.args {
		s[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", strings.ToUpper(c.name), strings.Join(s, ","))
}
func (c *capped) Type() sql.Type             { return c.inner.Type() }
func (c *capped) IsNullable() bool           { return true }
func (c *capped) Children() []sql.Expression { return c.args }
func (c *capped) IsNonDeterministic() bool {
	nd, ok := c.inner.(sql.NonDeterministicExpression)
	return ok && nd.IsNonDeterministic()
}
func (c *capped) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, c.inner)
}

func (c *capped) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(c.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), len(c.args))
	}
	slots := make([]sql.Expression, len(children))
	for i, a := range children {
		slots[i] = &slot{i: i, n: len(children), arg: a}
	}
	inner, err := c.inner.WithChildren(slots...)
	if err != nil {
		return nil, err
	}
	return &capped{name: c.name, inner: inner, args: children, bound: c.bound, limit: c.limit}, nil
}

func (c *capped) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ext := make(sql.Row, len(row), len(row)+len(c.args))
	copy(ext, row)
	for _, a := range c.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		ext = append(ext, v)
	}
	if c.bound != nil && c.bound(ctx, ext[len(row):], c.limit) > c.limit {
		return c.overflow(ctx)
	}
	v, err := c.inner.Eval(ctx, ext)
	if err != nil || v == nil {
		return v, err
	}
	if valueSize(v, c.limit) > c.limit {
		return c.overflow(ctx)
	}
	return v, nil
}

func (c *capped) overflow(ctx *sql.Context) (any, error) {
	ctx.Warn(ErWarnAllowedPacketOverflowed,
		"Result of %s() was larger than max_allowed_packet (%d) - truncated", c.name, c.limit)
	return nil, nil
}

// A slot is argument i of a capped function's n: the value its Eval put
// at the end of the row.
type slot struct {
	i, n int
	arg  sql.Expression // for the type and collation
}

var _ sql.CollationCoercible = (*slot)(nil)

func (s *slot) Resolved() bool             { return true }
func (s *slot) String() string             { return s.arg.String() }
func (s *slot) Type() sql.Type             { return s.arg.Type() }
func (s *slot) IsNullable() bool           { return s.arg.IsNullable() }
func (s *slot) Children() []sql.Expression { return nil }
func (s *slot) Eval(_ *sql.Context, row sql.Row) (any, error) {
	return row[len(row)-s.n+s.i], nil
}
func (s *slot) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}
func (s *slot) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, s.arg)
}

// valueSize is the size in bytes of v as a result: its length for a
// string, its text's for a JSON value (counted up to a little past limit,
// not built), and a number's at most.
func valueSize(v any, limit int64) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return int64(len(x))
	case []byte:
		return int64(len(x))
	case sql.JSONWrapper:
		i, err := x.ToInterface()
		if err != nil {
			return math.MaxInt64
		}
		n := limit + 1
		jsonSize(i, &n)
		return limit + 1 - n
	}
	return 100 // a number, a decimal, a date
}

// jsonSize takes the size of v's JSON text from *budget, stopping when it
// is spent.
func jsonSize(v any, budget *int64) {
	if *budget <= 0 {
		return
	}
	switch x := v.(type) {
	case string:
		*budget -= jsonStringSize(x)
	case []any:
		*budget -= 2
		for _, e := range x {
			if *budget <= 0 {
				return
			}
			*budget -= 2
			jsonSize(e, budget)
		}
	case map[string]any:
		*budget -= 2
		for k, e := range x {
			if *budget <= 0 {
				return
			}
			*budget -= jsonStringSize(k) + 4
			jsonSize(e, budget)
		}
	case sql.JSONWrapper:
		i, err := x.ToInterface()
		if err != nil {
			*budget = 0
			return
		}
		jsonSize(i, budget)
	default:
		*budget -= 100
	}
}

// jsonStringSize is the size of s as a JSON string, at most: quoted, and
// each byte that may be escaped as \u00XX counted six.
func jsonStringSize(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			n += 5
		}
	}
	return n
}

// boundJSON bounds a JSON function by its arguments' sizes as JSON.
func boundJSON(_ *sql.Context, args []any, limit int64) int64 {
	n := int64(2)
	for _, a := range args {
		if s, ok := a.(string); ok {
			n = add(n, jsonStringSize(s)+2)
		} else {
			n = add(n, valueSize(a, limit)+2)
		}
	}
	return n
}

// mul is a*b, or math.MaxInt64 if that overflows or either is negative.
func mul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return math.MaxInt64
	}
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// toInt is an argument as the engine's functions take a count: NULL and
// what is not a number are 0.
func toInt(ctx *sql.Context, v any) int64 {
	x, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		// A number past int64: a count the bound refuses.
		if f := toFloat(ctx, v); f > 0 {
			return math.MaxInt64
		}
		return 0
	}
	n, _ := x.(int64)
	return n
}

// boundSum bounds a function whose result is at most k times its
// arguments' sizes and c more.
func boundSum(k, c int64) boundFunc {
	return func(_ *sql.Context, args []any, limit int64) int64 {
		n := c
		for _, a := range args {
			n = add(n, mul(k, valueSize(a, limit)))
		}
		return n
	}
}

// REPEAT(str, count)
func boundRepeat(ctx *sql.Context, args []any, limit int64) int64 {
	if len(args) != 2 {
		return 0
	}
	n := toInt(ctx, args[1])
	if n <= 0 {
		return 0
	}
	return mul(valueSize(args[0], limit), n)
}

// SPACE(n)
func boundSpace(ctx *sql.Context, args []any, _ int64) int64 {
	if len(args) != 1 {
		return 0
	}
	return max(toInt(ctx, args[0]), 0)
}

// LPAD(str, len, padstr), RPAD: len characters of at most 4 bytes (1 if
// str and padstr are ASCII).
func boundPad(ctx *sql.Context, args []any, limit int64) int64 {
	if len(args) != 3 {
		return 0
	}
	n := max(toInt(ctx, args[1]), 0)
	w := int64(1)
	for _, a := range []any{args[0], args[2]} {
		if !isASCII(a) {
			w = 4
		}
	}
	return add(mul(n, w), valueSize(args[0], limit))
}

func isASCII(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// REPLACE(str, from, to): str with each from (at most len(str)/len(from)
// of them) replaced.
func boundReplace(_ *sql.Context, args []any, limit int64) int64 {
	if len(args) != 3 {
		return 0
	}
	str, from, to := valueSize(args[0], limit), valueSize(args[1], limit), valueSize(args[2], limit)
	if from == 0 || to <= from {
		return str
	}
	if s, ok := args[0].(string); ok {
		if f, ok := args[1].(string); ok {
			return add(str, mul(int64(strings.Count(s, f)), to-from))
		}
	}
	return add(str, mul(str/from+1, to))
}

// REGEXP_REPLACE(str, pattern, repl, ...): a match at each of len(str)+1
// places, each replaced by repl, whose back references ($n) each take at
// most len(str).
func boundRegexpReplace(_ *sql.Context, args []any, limit int64) int64 {
	if len(args) < 3 {
		return 0
	}
	str, repl := valueSize(args[0], limit), valueSize(args[2], limit)
	per := repl
	if r, ok := args[2].(string); !ok || strings.ContainsAny(r, `$\`) {
		per = mul(repl, str+1)
	}
	return add(str, mul(str+1, per))
}

// CONCAT_WS(sep, str, ...)
func boundConcatWS(_ *sql.Context, args []any, limit int64) int64 {
	var n int64
	for _, a := range args {
		n = add(n, valueSize(a, limit))
	}
	if len(args) > 0 {
		n = add(n, mul(valueSize(args[0], limit), int64(len(args))))
	}
	return n
}

// EXPORT_SET(bits, on, off, separator, number_of_bits): up to 64 of on or
// off and separators.
func boundExportSet(_ *sql.Context, args []any, limit int64) int64 {
	var n int64
	for _, a := range args {
		n = add(n, valueSize(a, limit))
	}
	return mul(n, 64)
}

// FORMAT(x, d[, locale]): x's digits with separators, and d decimals.
func boundFormat(ctx *sql.Context, args []any, limit int64) int64 {
	if len(args) < 2 {
		return 0
	}
	return add(mul(valueSize(args[0], limit), 2), max(toInt(ctx, args[1]), 0))
}

// UNCOMPRESS(str): the length its first four bytes announce, which the
// engine allocates at once.
func boundUncompress(_ *sql.Context, args []any, _ int64) int64 {
	if len(args) != 1 {
		return 0
	}
	var b []byte
	switch x := args[0].(type) {
	case string:
		b = []byte(x[:min(len(x), 4)])
	case []byte:
		b = x
	}
	if len(b) < 4 {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(b[:4]))
}

// JSON_ARRAYAGG and JSON_OBJECTAGG gather references: JSON_ARRAYAGG(@s)
// over a history table is small in memory and its text, built when the
// row is sent, is the table's rows times @s. Their results are measured
// (not built) and NULL past the limit.

// cappedAggregates returns the engine's JSON aggregates, their results
// bounded by limit bytes.
func cappedAggregates(limit int64) []sql.Function {
	var fns []sql.Function
	for _, f := range function.BuiltIns {
		name := strings.ToLower(f.FunctionName())
		if name != "json_arrayagg" && name != "json_objectagg" {
			continue
		}
		fns = append(fns, sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
			e, err := f.NewInstance(args)
			if err != nil {
				return nil, err
			}
			a, ok := e.(sql.Aggregation)
			if !ok {
				return e, nil
			}
			return &cappedAgg{Aggregation: a, name: name, limit: limit}, nil
		}})
	}
	return fns
}

// A cappedAgg is an aggregate whose result is measured against limit.
type cappedAgg struct {
	sql.Aggregation
	name  string
	limit int64
}

func (a *cappedAgg) wrap(e sql.Expression) sql.Expression {
	if x, ok := e.(sql.Aggregation); ok {
		return &cappedAgg{Aggregation: x, name: a.name, limit: a.limit}
	}
	return e
}

func (a *cappedAgg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return a.wrap(e), nil
}

func (a *cappedAgg) WithId(id sql.ColumnId) sql.IdExpression {
	return a.wrap(a.Aggregation.WithId(id)).(sql.IdExpression)
}

func (a *cappedAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.wrap(a.Aggregation.WithWindow(w)).(sql.WindowAdaptableExpression)
}

func (a *cappedAgg) NewBuffer() (sql.AggregationBuffer, error) {
	b, err := a.Aggregation.NewBuffer()
	if err != nil {
		return nil, err
	}
	return &cappedBuffer{AggregationBuffer: b, a: a}, nil
}

func (a *cappedAgg) NewWindowFunction() (sql.WindowFunction, error) {
	f, err := a.Aggregation.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	return &cappedWindow{WindowFunction: f, a: a}, nil
}

func (a *cappedAgg) check(ctx *sql.Context, v any) any {
	if valueSize(v, a.limit) > a.limit {
		ctx.Warn(ErWarnAllowedPacketOverflowed,
			"Result of %s() was larger than max_allowed_packet (%d) - truncated", a.name, a.limit)
		return nil
	}
	return v
}

type cappedBuffer struct {
	sql.AggregationBuffer
	a *cappedAgg
}

func (b *cappedBuffer) Eval(ctx *sql.Context) (any, error) {
	v, err := b.AggregationBuffer.Eval(ctx)
	if err != nil {
		return nil, err
	}
	return b.a.check(ctx, v), nil
}

type cappedWindow struct {
	sql.WindowFunction
	a *cappedAgg
}

func (w *cappedWindow) Compute(ctx *sql.Context, i sql.WindowInterval, buf sql.WindowBuffer) any {
	return w.a.check(ctx, w.WindowFunction.Compute(ctx, i, buf))
}
