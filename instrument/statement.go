package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A Statement is a statement in progress: what StatementClass.Start and
// StartSQL return, ended by its End. It is a value: keep it in a local
// variable. The zero Statement (an instrument that is off) does nothing.
type Statement = pfscore.Statement

// StatementResult is what a statement did, given to Statement.End.
type StatementResult = pfscore.StatementResult

// A StatementClass is a statement/<component>/<name> instrument: a unit of
// work the application defines and names by its normalized text, such as an
// HTTP route or an RPC method. Its statements show in
// events_statements_current, _history and _history_long and count in the
// events_statements_summary_* tables; the normalized text is the digest,
// so events_statements_summary_by_digest has a row per route.
//
//	var requests = instrument.NewStatementClass("statement/http/request")
//
//	func handle(ctx context.Context, route string) {
//		st := requests.Start(ctx, route)
//		defer st.End(instrument.StatementResult{})
//		…
//	}
//
// SQL statements take their class from their text instead: see StartSQL.
type StatementClass struct {
	schema *pfscore.Schema
	class  *pfscore.Class // nil: an invalid name or a full schema
	source string
}

// NewStatementClass registers the statement class name. It takes
// WithSchema, WithDocumentation and WithSource (the SOURCE of its
// statements: by default where NewStatementClass was called). An invalid
// name gives a class whose statements record nothing.
func NewStatementClass(name string, opts ...Option) *StatementClass {
	c := newConfig(opts)
	sc := &StatementClass{schema: c.schema, class: c.registerAs(name, "NewStatementClass", pfscore.KindStatement), source: c.source}
	if sc.source == "" {
		sc.source = pfscore.Source(1)
	}
	return sc
}

// Start begins a statement of the class on the thread ctx carries (none:
// the statement counts in the global and by-digest summaries only).
// normalized is its text in normalized form, which is also its digest text:
// a route pattern, never a raw URL with identifiers in it. The statement
// carries the trace and span of ctx (see SetTraceHook).
func (c *StatementClass) Start(ctx context.Context, normalized string) Statement {
	if c == nil || c.class == nil {
		return Statement{}
	}
	info := pfscore.StatementInfo{Text: normalized, Normalized: true, Source: c.source}
	traceOf(ctx, &info)
	return c.schema.StartStatement(ThreadFromContext(ctx), c.class, info)
}

// StartOn begins a statement of the class on thread t with info as given.
func (c *StatementClass) StartOn(t *Thread, info pfscore.StatementInfo) Statement {
	if c == nil || c.class == nil {
		return Statement{}
	}
	if info.Source == "" {
		info.Source = c.source
	}
	return c.schema.StartStatement(t, c.class, info)
}

// StartSQL begins a SQL statement on the thread ctx carries, in schema s
// (nil: pfscore.Default()). Its class is statement/sql/<command> from the
// text's first keyword (pfscore.SQLCommand); its DIGEST and DIGEST_TEXT
// are computed once per distinct text. schemaName is CURRENT_SCHEMA. The
// statement carries the trace and span of ctx (see SetTraceHook).
func StartSQL(ctx context.Context, s *pfscore.Schema, schemaName, text string) Statement {
	if s == nil {
		s = pfscore.Default()
	}
	info := pfscore.StatementInfo{Text: text, Schema: schemaName}
	traceOf(ctx, &info)
	return s.StartSQL(ThreadFromContext(ctx), info)
}

// A TraceHook returns the trace and span ids of the OpenTelemetry span ctx
// carries, whether it is sampled, and false if it carries none.
type TraceHook = pfscore.TraceHook

// SetTraceHook installs the function statements use to find the span
// their context carries; nil removes it. package instrument does not import
// OpenTelemetry: the bridge installs a hook that reads
// trace.SpanContextFromContext, and statements then show TRACE_ID and
// SPAN_ID, linking each row to its trace (and a sampled one's events become
// spans, see pfscore.EnableTraceCapture). It is pfscore.SetTraceHook, which
// exporter.StartOTLP calls when it exports spans.
func SetTraceHook(h TraceHook) { pfscore.SetTraceHook(h) }

// traceOf fills info's trace and span ids from ctx, through the hook.
func traceOf(ctx context.Context, info *pfscore.StatementInfo) { pfscore.TraceOf(ctx, info) }
