package mysqlpfs

import (
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The sys schema's functions the views use, and that people call:
// format_pico_time (and its sys 1.5 name format_time), format_bytes,
// format_statement, ps_thread_id and ps_current_thread_id. The engine
// ignores a function's schema, so sys.format_bytes(x) and
// format_bytes(x) are the same function, as MySQL 8.0's built-in
// FORMAT_BYTES and sys.format_bytes agree.

// statementTruncateLen is sys's @sys.statement_truncate_len default.
const statementTruncateLen = 64

// functions returns the functions, reading threads from src, and the
// engine's string functions bounded by maxPacket (see caps.go).
func functions(src pfscore.Tables, maxPacket int64) map[string]sql.Function {
	fns := []sql.Function{
		sql.Function1{Name: "format_pico_time", Fn: unary("format_pico_time", longText, false, formatPicoTime)},
		sql.Function1{Name: "format_time", Fn: unary("format_time", longText, false, formatPicoTime)},
		sql.Function1{Name: "format_bytes", Fn: unary("format_bytes", longText, false, formatBytes)},
		sql.Function1{Name: "format_statement", Fn: unary("format_statement", longText, false, formatStatement)},
		sql.Function1{Name: "ps_thread_id", Fn: unary("ps_thread_id", types.Uint64, true, psThreadID(src))},
		sql.Function0{Name: "ps_current_thread_id", Fn: func() sql.Expression { return nullUint{} }},
		// The engine's LOAD_FILE reads any file the service can; this one
		// refuses, as MySQL does without the FILE privilege.
		sql.FunctionN{Name: "load_file", Fn: func(...sql.Expression) (sql.Expression, error) { return nil, fileDenied("LOAD_FILE") }},
	}
	fns = append(fns, cappedFunctions(maxPacket)...)
	fns = append(fns, cappedAggregates(maxPacket)...)
	fns = append(fns, sql.Function1{Name: "sum", Fn: newExactSum})
	m := make(map[string]sql.Function, len(fns))
	for _, f := range fns {
		m[f.FunctionName()] = f
	}
	return m
}

// A unaryFunc is a function of one argument: NULL gives NULL, anything
// else eval's result.
type unaryFunc struct {
	name    string
	child   sql.Expression
	typ     sql.Type
	volatil bool // reads the live tables: not to be folded into a constant
	eval    func(ctx *sql.Context, v any) (any, error)
}

var (
	_ sql.FunctionExpression         = (*unaryFunc)(nil)
	_ sql.NonDeterministicExpression = (*unaryFunc)(nil)
)

func unary(name string, typ sql.Type, volatile bool, eval func(*sql.Context, any) (any, error)) sql.CreateFunc1Args {
	return func(e sql.Expression) sql.Expression {
		return &unaryFunc{name: name, child: e, typ: typ, volatil: volatile, eval: eval}
	}
}

func (f *unaryFunc) FunctionName() string       { return f.name }
func (f *unaryFunc) Description() string        { return "otelpfs sys function " + f.name }
func (f *unaryFunc) Resolved() bool             { return f.child.Resolved() }
func (f *unaryFunc) String() string             { return fmt.Sprintf("%s(%s)", f.name, f.child) }
func (f *unaryFunc) Type() sql.Type             { return f.typ }
func (f *unaryFunc) IsNullable() bool           { return true }
func (f *unaryFunc) IsNonDeterministic() bool   { return f.volatil }
func (f *unaryFunc) Children() []sql.Expression { return []sql.Expression{f.child} }
func (f *unaryFunc) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), 1)
	}
	g := *f
	g.child = children[0]
	return &g, nil
}

func (f *unaryFunc) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return f.eval(ctx, v)
}

// toFloat converts an argument to a number as MySQL would: a string that
// is not one is 0.
func toFloat(ctx *sql.Context, v any) float64 {
	x, _, err := types.Float64.Convert(ctx, v)
	if err != nil {
		return 0
	}
	f, _ := x.(float64)
	return f
}

var picoUnits = []struct {
	div  float64
	name string
}{
	{86_400e12, "d"}, {3_600e12, "h"}, {60e12, "min"}, {1e12, "s"}, {1e9, "ms"}, {1e6, "us"}, {1e3, "ns"},
}

// formatPicoTime is MySQL's FORMAT_PICO_TIME: picoseconds to a number
// with two decimals and a unit (ps, ns, us, ms, s, min, h, d); under a
// nanosecond, a whole number of ps.
func formatPicoTime(ctx *sql.Context, v any) (any, error) {
	f := toFloat(ctx, v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, nil
	}
	a := math.Abs(f)
	for _, u := range picoUnits {
		if a >= u.div {
			return fmt.Sprintf("%.2f %s", f/u.div, u.name), nil
		}
	}
	return fmt.Sprintf("%.0f ps", f), nil
}

var byteUnits = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// formatBytes is MySQL's FORMAT_BYTES: a byte count with two decimals and
// a binary unit (KiB ... EiB); under 1 KiB, a whole number of bytes.
func formatBytes(ctx *sql.Context, v any) (any, error) {
	f := toFloat(ctx, v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, nil
	}
	a := math.Abs(f)
	if a < 1024 {
		return fmt.Sprintf("%.0f bytes", f), nil
	}
	div := 1024.0
	for i, u := range byteUnits {
		if a < div*1024 || i == len(byteUnits)-1 {
			return fmt.Sprintf("%.2f %s", f/div, u), nil
		}
		div *= 1024
	}
	return nil, nil // not reached
}

// formatStatement is sys.format_statement: a statement on one line, and
// one longer than 64 characters cut to its first and last 30 around
// " ... ".
func formatStatement(ctx *sql.Context, v any) (any, error) {
	s, err := types.ConvertToString(ctx, v, longText, nil)
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	if len(r) > statementTruncateLen {
		keep := statementTruncateLen/2 - 2
		s = string(r[:keep]) + " ... " + string(r[len(r)-keep:])
	}
	return strings.ReplaceAll(s, "\n", " "), nil
}

// psThreadID is sys.ps_thread_id: the THREAD_ID of the thread whose
// PROCESSLIST_ID is the argument, or NULL.
func psThreadID(src pfscore.Tables) func(*sql.Context, any) (any, error) {
	return func(ctx *sql.Context, v any) (any, error) {
		id, _, err := types.Uint64.Convert(ctx, v)
		if err != nil || id == nil {
			return nil, nil
		}
		res, err := src.Query("threads", pfscore.Query{Where: []string{fmt.Sprintf("PROCESSLIST_ID = %d", id)}, Limit: 1})
		if err != nil || len(res.Rows) == 0 {
			return nil, err
		}
		for i, c := range res.Columns {
			if c.Name == "THREAD_ID" {
				return res.Rows[0][i], nil
			}
		}
		return nil, nil
	}
}

// nullUint is ps_current_thread_id(): a MySQL connection to this server is
// not a thread of the service, so it has none.
type nullUint struct{}

func (nullUint) FunctionName() string { return "ps_current_thread_id" }
func (nullUint) Description() string {
	return "otelpfs: NULL, the connection is no thread of the service"
}
func (nullUint) Resolved() bool                          { return true }
func (nullUint) String() string                          { return "ps_current_thread_id()" }
func (nullUint) Type() sql.Type                          { return types.Uint64 }
func (nullUint) IsNullable() bool                        { return true }
func (nullUint) Eval(*sql.Context, sql.Row) (any, error) { return nil, nil }
func (nullUint) Children() []sql.Expression              { return nil }
func (n nullUint) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(c), 0)
	}
	return n, nil
}

// newExactSum is SUM as MySQL computes it: exactly, as a DECIMAL, for an
// integer argument (the engine sums everything else, integers included,
// in a float64, which loses digits past 2^53 and prints 5.867376e+06).
// A floating-point argument is summed as a float64, as in MySQL.
func newExactSum(e sql.Expression) sql.Expression {
	if d, ok := e.(*expression.DistinctExpression); ok {
		if types.IsInteger(d.Child.Type()) {
			return aggregation.NewSum(expression.NewDistinctExpression(&exactInt{d.Child}))
		}
		return aggregation.NewSum(e)
	}
	if types.IsInteger(e.Type()) {
		return aggregation.NewSum(&exactInt{e})
	}
	return aggregation.NewSum(e)
}

// sumType is the type of an integer's SUM: MySQL's DECIMAL(65,0) at most.
var sumType = types.MustCreateDecimalType(65, 0)

// An exactInt is an integer argument of SUM as a DECIMAL, which the
// engine sums exactly.
type exactInt struct{ child sql.Expression }

var _ sql.CollationCoercible = (*exactInt)(nil)

func (x *exactInt) Resolved() bool             { return x.child.Resolved() }
func (x *exactInt) String() string             { return x.child.String() }
func (x *exactInt) Type() sql.Type             { return sumType }
func (x *exactInt) IsNullable() bool           { return x.child.IsNullable() }
func (x *exactInt) Children() []sql.Expression { return []sql.Expression{x.child} }
func (x *exactInt) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(x, len(children), 1)
	}
	return &exactInt{children[0]}, nil
}
func (x *exactInt) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}
func (x *exactInt) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := x.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	d, _, err := sumType.Convert(ctx, v)
	return d, err
}

// exactSumsID names the analyzer rule exactSums.
const exactSumsID analyzer.RuleId = 1_001

// exactSums is an analyzer rule that gives the engine's references to an
// exact SUM (newExactSum) the SUM's type: the engine's plan builder types
// every SUM column a DOUBLE, whatever the SUM computes, and the value
// would be sent as one. References through aliases and derived tables
// (the sys views) are typed too.
func exactSums(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	exact := map[sql.ColumnId]bool{}
	isExact := func(e sql.Expression) bool {
		s, ok := e.(*aggregation.Sum)
		if !ok {
			return false
		}
		c := s.Child
		if d, ok := c.(*expression.DistinctExpression); ok {
			c = d.Child
		}
		_, ok = c.(*exactInt)
		return ok
	}
	found := false
	transform.InspectExpressions(n, func(e sql.Expression) bool {
		found = found || isExact(e)
		return !found
	})
	if !found {
		return n, transform.SameTree, nil
	}
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if sq, ok := n.(*plan.SubqueryAlias); ok {
			// The derived table's columns, in its schema's order.
			sch := sq.Child.Schema()
			i := 0
			sq.Columns().ForEach(func(id sql.ColumnId) {
				if i < len(sch) && types.IsDecimal(sch[i].Type) {
					exact[id] = true
				}
				i++
			})
			return n, transform.SameTree, nil
		}
		transform.InspectExpressions(n, func(e sql.Expression) bool {
			if id, ok := e.(sql.IdExpression); ok && isExact(e) {
				exact[id.Id()] = true
			}
			return true
		})
		return transform.OneNodeExprsWithNode(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			switch x := e.(type) {
			case *expression.GetField:
				if exact[x.Id()] && types.IsFloat(x.Type()) {
					return expression.NewGetFieldWithTable(x.Index(), int(x.TableId()), sumType, x.Database(), x.Table(), x.Name(), x.IsNullable()).WithId(x.Id()).(sql.Expression), transform.NewTree, nil
				}
			case *expression.Alias:
				if types.IsDecimal(x.Child.Type()) && x.Id() != 0 {
					if gf, ok := x.Child.(*expression.GetField); ok && exact[gf.Id()] {
						exact[x.Id()] = true
					}
				}
			}
			return e, transform.SameTree, nil
		})
	})
}
