package bridge

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// A Span is a span that a History built from the history tables: a
// statement, or a stage, with its waits as events. It is the bridge's own
// model, free of any wire format; package exporter turns it into OTLP.
type Span struct {
	TraceID trace.TraceID
	SpanID  trace.SpanID
	// Parent is the parent span's id, zero for a root span. RemoteParent
	// says the parent is the application's own span (the TRACE_ID and
	// SPAN_ID the statement recorded), not one the History made.
	Parent       trace.SpanID
	RemoteParent bool
	Name         string
	Kind         trace.SpanKind
	Start, End   time.Time
	Attributes   []attribute.KeyValue
	Events       []SpanEvent
	Status       codes.Code
	// StatusMessage is the error's text (MESSAGE_TEXT) when Status is
	// codes.Error.
	StatusMessage string
}

// A SpanEvent is a wait inside a span.
type SpanEvent struct {
	Name       string // the wait's EVENT_NAME: wait/synch/mutex/app/cache
	Time       time.Time
	Attributes []attribute.KeyValue
}

// DefaultDBSystem is the db.system.name of SQL statements by default:
// otelpfs sees the statements a Go service sends through database/sql, and
// cannot tell which database receives them (see WithDBSystem).
const DefaultDBSystem = "other_sql"

// maxSpanName bounds a span's name (a DIGEST_TEXT may be 1 KiB long); the
// whole text stays in pfs.digest_text.
const maxSpanName = 255

// Attribute keys of the spans and span events the History makes. Those
// named db.* and error.type are OpenTelemetry's database semantic
// conventions; pfs.* are the performance_schema columns.
const (
	keyDBSystem           = attribute.Key("db.system.name")
	keyDBNamespace        = attribute.Key("db.namespace")
	keyDBSummary          = attribute.Key("db.query.summary")
	keyDBText             = attribute.Key("db.query.text")
	keyDBOperation        = attribute.Key("db.operation.name")
	keyDBRows             = attribute.Key("db.response.returned_rows")
	keyDBCollection       = attribute.Key("db.collection.name")
	keyDBProcedure        = attribute.Key("db.stored_procedure.name")
	keyHTTPMethod         = attribute.Key("http.request.method")
	keyHTTPMethodOriginal = attribute.Key("http.request.method_original")
	keyHTTPRoute          = attribute.Key("http.route")
	keyHTTPStatus         = attribute.Key("http.response.status_code")
	keyURLScheme          = attribute.Key("url.scheme")
	keyURLPath            = attribute.Key("url.path")
	keyURLQuery           = attribute.Key("url.query")
	keyDigestText         = attribute.Key("pfs.digest_text")
	keyErrorType          = attribute.Key("error.type")
	keyEventName          = attribute.Key("pfs.event_name")
	keyThreadID           = attribute.Key("pfs.thread_id")
	keyEventID            = attribute.Key("pfs.event_id")
	keyDigest             = attribute.Key("pfs.digest")
	keySource             = attribute.Key("pfs.source")
	keyRowsAffected       = attribute.Key("pfs.rows_affected")
	keyRowsExamined       = attribute.Key("pfs.rows_examined")
	keyWarnings           = attribute.Key("pfs.warnings")
	keyTimed              = attribute.Key("pfs.timed")
	keyNestingID          = attribute.Key("pfs.nesting_event_id")
	keyOrphan             = attribute.Key("pfs.orphan")
	keyWorkCompleted      = attribute.Key("pfs.work_completed")
	keyWorkEstimated      = attribute.Key("pfs.work_estimated")
	keyObjectName         = attribute.Key("pfs.object_name")
	keyObjectType         = attribute.Key("pfs.object_type")
	keyObjectInst         = attribute.Key("pfs.object_instance")
	keyOperation          = attribute.Key("pfs.operation")
	keyBytes              = attribute.Key("pfs.number_of_bytes")
	keyDuration           = attribute.Key("pfs.duration")
)

// spanHolder is a context that holds a span of its own: holds reports
// whether it does, and then the ids are those of what
// trace.SpanContextFromContext would return for the context. pfshttp's
// request context is one.
type spanHolder interface {
	OtelpfsSpanIDs() (traceID [16]byte, spanID [8]byte, sampled, holds bool)
}

// TraceContext returns the trace and span ids of the span ctx carries,
// whether it is sampled, and false if it carries no valid one. Its
// signature is pfscore.TraceHook's (instrument.TraceHook):
// instrument.SetTraceHook(bridge.TraceContext) makes every statement begun
// with a context record its span (TRACE_ID, SPAN_ID), and History then
// places the statement's span inside that trace. (package bridge does not
// import instrument, nor instrument OpenTelemetry.)
//
// A context that holds the span itself and says so (spanHolder: pfshttp's
// request context, with WithTraceContext) is asked directly, without
// OpenTelemetry's walk down the context for its key: the same span context,
// found in fewer steps, for every statement a handler begins on its
// request's context.
func TraceContext(ctx context.Context) (traceID [16]byte, spanID [8]byte, sampled, ok bool) {
	if h, isHolder := ctx.(spanHolder); isHolder {
		if traceID, spanID, sampled, ok = h.OtelpfsSpanIDs(); ok {
			// Valid, as trace.SpanContext.IsValid says, when both are
			// not zero.
			if traceID == [16]byte{} || spanID == [8]byte{} {
				return [16]byte{}, [8]byte{}, false, false
			}
			return traceID, spanID, sampled, true
		}
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return traceID, spanID, false, false
	}
	return sc.TraceID(), sc.SpanID(), sc.IsSampled(), true
}

// idSeed makes span and trace ids: random for each process, so ids of two
// processes do not collide, and fixed within one, so an event's ids are the
// same whenever and by whichever History it is read.
var idSeed = maphash.MakeSeed()

// eventHash is a keyed hash of an event's identity and a tag that tells the
// uses apart.
func eventHash(tag byte, thread, event uint64) uint64 {
	var b [17]byte
	b[0] = tag
	binary.LittleEndian.PutUint64(b[1:], thread)
	binary.LittleEndian.PutUint64(b[9:], event)
	return maphash.Bytes(idSeed, b[:])
}

// SpanIDOf returns the span id the History gives the event (thread,
// event): derived from a per-process random seed, so stable for the event
// and unique with overwhelming probability. Never zero.
func SpanIDOf(thread, event uint64) trace.SpanID {
	h := eventHash('s', thread, event)
	if h == 0 {
		h = 1
	}
	var id trace.SpanID
	binary.BigEndian.PutUint64(id[:], h)
	return id
}

// traceIDOf returns the trace id of a root span the History makes for the
// event (thread, event) when it recorded no trace.
func traceIDOf(thread, event uint64) trace.TraceID {
	var id trace.TraceID
	binary.BigEndian.PutUint64(id[:8], eventHash('t', thread, event))
	binary.BigEndian.PutUint64(id[8:], eventHash('u', thread, event)|1) // never zero
	return id
}

// parseHexID decodes a TRACE_ID or SPAN_ID column; false when it is not
// len(dst)*2 hex digits or is all zero.
func parseHexID(s string, dst []byte) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	nonzero := false
	for i := range dst {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
		nonzero = nonzero || dst[i] != 0
	}
	return nonzero
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// recordedTrace returns the trace and span a statement recorded, if any.
func recordedTrace(e *pfscore.StatementEvent) (trace.TraceID, trace.SpanID, bool) {
	var tr trace.TraceID
	var sp trace.SpanID
	if !parseHexID(e.TraceID, tr[:]) || !parseHexID(e.SpanID, sp[:]) {
		return trace.TraceID{}, trace.SpanID{}, false
	}
	return tr, sp, true
}

// wallTime converts a TIMER_* column (picoseconds) to wall-clock time.
func wallTime(ps uint64) time.Time { return hwclock.WallTime(ps) }

// times returns a span's start and end: its timer columns when timed, else
// the fallback (the parent span's start, or the time of the read).
func times(timed bool, start, end uint64, fallback time.Time) (time.Time, time.Time) {
	if !timed {
		return fallback, fallback
	}
	s := wallTime(start)
	return s, s.Add(time.Duration((end - start) / 1000))
}

// clipName shortens s to at most maxSpanName bytes, at a rune boundary.
func clipName(s string) string {
	if len(s) <= maxSpanName {
		return s
	}
	n := maxSpanName
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// isSQL reports whether a statement class is a SQL command's.
func isSQL(eventName string) bool { return strings.HasPrefix(eventName, "statement/sql/") }

// operationName returns db.operation.name for a statement/sql/<command>
// class, "" when none is derivable (other, empty_query).
func operationName(eventName string) string {
	cmd, ok := strings.CutPrefix(eventName, "statement/sql/")
	if !ok {
		return ""
	}
	switch cmd {
	case "", "other", "empty_query", "error":
		return ""
	case "insert_select":
		return "INSERT"
	case "replace_select":
		return "REPLACE"
	case "set_option":
		return "SET"
	case "change_db":
		return "USE"
	case "call_procedure":
		return "CALL"
	case "rollback_to_savepoint":
		return "ROLLBACK TO SAVEPOINT"
	case "release_savepoint":
		return "RELEASE SAVEPOINT"
	}
	return strings.ToUpper(strings.ReplaceAll(cmd, "_", " "))
}

// spanConfig is what building a span needs from the options.
type spanConfig struct {
	sqlText  bool
	dbSystem string    // WithDBSystem: "" for none
	systems  dbSystems // the schema's db.system.name by namespace, or nil
	sums     summaries
	kvs      kvArena
}

// kvArena hands out the spans' attribute slices from one allocation for
// many spans: a span's attributes were an allocation of their own, a
// kilobyte each, and most of a span's cost.
type kvArena struct{ buf []attribute.KeyValue }

// take returns an empty slice with room for n attributes; done records
// what the span used of it and returns it clipped, so that an append to it
// copies rather than writes over the next span's.
func (a *kvArena) take(n int) []attribute.KeyValue {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]attribute.KeyValue, 0, max(n, 2048))
	}
	return a.buf[len(a.buf):len(a.buf):cap(a.buf)]
}

func (a *kvArena) done(s []attribute.KeyValue) []attribute.KeyValue {
	if len(s) > 0 && len(a.buf) < cap(a.buf) && &a.buf[:len(a.buf)+1][len(a.buf)] == &s[0] {
		a.buf = a.buf[:len(a.buf)+len(s)] // s is where take put it: used
	}
	return s[:len(s):len(s)]
}

// dbSystems is what a *pfscore.Schema says of the databases behind its
// statements (pfscore.Schema.SetDBSystem).
type dbSystems interface{ DBSystem(namespace string) string }

// system returns the db.system.name of a statement run in namespace:
// WithDBSystem's, else what the schema recorded, else DefaultDBSystem.
func (c *spanConfig) system(namespace string) string {
	if c.dbSystem != "" {
		return c.dbSystem
	}
	if c.systems != nil {
		if sys := c.systems.DBSystem(namespace); sys != "" {
			return sys
		}
	}
	return DefaultDBSystem
}

// summaries caches digest.Summarize by DIGEST_TEXT: a span's
// db.query.summary costs a map lookup, not a parse (about a microsecond).
// Not safe for concurrent use; each History and Traces has its own.
type summaries struct {
	m map[string]digest.Summary
}

// maxSummaries bounds the cache: past it, it starts over.
const maxSummaries = 4096

func (c *summaries) of(text string) digest.Summary {
	if sum, ok := c.m[text]; ok {
		return sum
	}
	if c.m == nil || len(c.m) >= maxSummaries {
		c.m = make(map[string]digest.Summary, 64)
	}
	sum := digest.Summarize(text)
	c.m[strings.Clone(text)] = sum
	return sum
}

// isHTTP reports whether a statement class is an HTTP request's
// (instrument/pfshttp's statement/http/request).
func isHTTP(eventName string) bool { return strings.HasPrefix(eventName, "statement/http/") }

// splitRoute splits an HTTP request statement's text, "GET /notes/{id}"
// or "GET (unmatched)", into its method and route ("" when unmatched). A
// text that does not start with a method pfshttp names (a route of
// another instrument, "/static/") is all route, of method _OTHER.
func splitRoute(text string) (method, route string) {
	method, route, _ = strings.Cut(text, " ")
	if !slices.Contains(httpMethods, method) {
		return "_OTHER", text
	}
	if route == "(unmatched)" {
		route = ""
	}
	return method, route
}

// statementSpan fills a statement's span but for its ids and parent. proto
// is what the request it served said of itself (a captured tree's top
// statement), nil if nothing.
//
// A SQL statement (statement/sql/*) is a CLIENT span named by its
// db.query.summary, with the database semantic conventions' attributes; an
// HTTP request (statement/http/*) a SERVER span named "METHOD ROUTE", with
// the HTTP conventions'; any other statement an INTERNAL span named by its
// DIGEST_TEXT or class. Every one keeps the performance_schema columns as
// pfs.* attributes, the digest among them (pfs.digest, pfs.digest_text):
// the key that joins a service's statements to a MySQL server's rows.
func (c *spanConfig) statementSpan(e *pfscore.StatementEvent, fallback time.Time, proto *pfscore.Protocol) Span {
	sp := Span{Kind: trace.SpanKindInternal}
	sp.Start, sp.End = times(e.Timed, e.TimerStart, e.TimerEnd, fallback)
	a := c.kvs.take(20)
	errorType := ""
	switch {
	case isSQL(e.EventName):
		sp.Kind = trace.SpanKindClient
		text := e.DigestText
		if text == "" {
			text = e.SQLText // statements_digest off: the summary has no literal either way
		}
		sum := c.sums.of(text)
		sys := c.system(e.CurrentSchema)
		a = append(a, keyDBSystem.String(sys))
		if e.CurrentSchema != "" {
			a = append(a, keyDBNamespace.String(e.CurrentSchema))
		}
		if sum.Summary != "" {
			a = append(a, keyDBSummary.String(sum.Summary))
		}
		op := sum.Operation
		if op == "" {
			op = operationName(e.EventName)
		}
		if op != "" {
			a = append(a, keyDBOperation.String(op))
		}
		if sum.Collection != "" {
			a = append(a, keyDBCollection.String(sum.Collection))
		}
		if sum.StoredProcedure != "" {
			a = append(a, keyDBProcedure.String(sum.StoredProcedure))
		}
		a = append(a, keyDBRows.Int64(spanInt(e.RowsSent)))
		if c.sqlText && e.SQLText != "" {
			a = append(a, keyDBText.String(e.SQLText))
		}
		// The conventions' span name: the summary, else the operation, else
		// the database system.
		switch {
		case sum.Summary != "":
			sp.Name = sum.Summary
		case op != "":
			sp.Name = op
		default:
			sp.Name = sys
		}
		if e.Errors != 0 {
			errorType = "_OTHER"
		}
	case isHTTP(e.EventName):
		sp.Kind = trace.SpanKindServer
		text := e.DigestText
		if text == "" {
			text = e.SQLText
		}
		method, route := splitRoute(text)
		if method == "" {
			method = "_OTHER"
		}
		a = append(a, keyHTTPMethod.String(method))
		switch {
		case method == "_OTHER" && route == "":
			sp.Name = "HTTP"
		case method == "_OTHER":
			sp.Name = "HTTP " + route
		case route == "":
			sp.Name = method
		default:
			sp.Name = method + " " + route
		}
		if route != "" {
			a = append(a, keyHTTPRoute.String(route))
		}
		if proto != nil {
			if proto.Status != 0 {
				a = append(a, keyHTTPStatus.Int(proto.Status))
			}
			if proto.Scheme != "" {
				a = append(a, keyURLScheme.String(proto.Scheme))
			}
			if proto.Path != "" {
				a = append(a, keyURLPath.String(proto.Path))
			}
			if proto.Query != "" {
				a = append(a, keyURLQuery.String(proto.Query))
			}
			if proto.Method != "" && method == "_OTHER" {
				a = append(a, keyHTTPMethodOriginal.String(proto.Method))
			}
			if proto.Status >= 500 {
				errorType = strconv.Itoa(proto.Status)
			}
		}
		if e.Errors != 0 && errorType == "" {
			errorType = "_OTHER" // a panic, or a 5xx whose status the span does not have
		}
	default:
		sp.Name = e.DigestText
		if sp.Name == "" {
			sp.Name = e.EventName
		}
		if e.CurrentSchema != "" {
			a = append(a, keyDBNamespace.String(e.CurrentSchema))
		}
		if e.Errors != 0 {
			errorType = "_OTHER"
		}
	}
	sp.Name = clipName(sp.Name)
	a = append(a,
		keyEventName.String(e.EventName),
		keyThreadID.Int64(spanInt(e.ThreadID)),
		keyEventID.Int64(spanInt(e.EventID)),
		keyRowsAffected.Int64(spanInt(e.RowsAffected)),
		keyRowsExamined.Int64(spanInt(e.RowsExamined)),
	)
	if e.Warnings != 0 {
		a = append(a, keyWarnings.Int64(spanInt(e.Warnings)))
	}
	if e.Digest != "" {
		a = append(a, keyDigest.String(e.Digest))
	}
	if e.DigestText != "" && !isHTTP(e.EventName) {
		a = append(a, keyDigestText.String(e.DigestText))
	}
	if e.Source != "" {
		a = append(a, keySource.String(e.Source))
	}
	if !e.Timed {
		a = append(a, keyTimed.Bool(false))
	}
	if errorType != "" {
		sp.Status, sp.StatusMessage = codes.Error, e.MessageText
		a = append(a, keyErrorType.String(errorType))
	}
	sp.Attributes = c.kvs.done(a)
	return sp
}

// stageSpan fills a stage's span but for its ids and parent.
func (c *spanConfig) stageSpan(e *pfscore.StageEvent, fallback time.Time) Span {
	sp := Span{Kind: trace.SpanKindInternal, Name: clipName(e.EventName)}
	sp.Start, sp.End = times(e.Timed, e.TimerStart, e.TimerEnd, fallback)
	a := append(c.kvs.take(7),
		keyEventName.String(e.EventName),
		keyThreadID.Int64(spanInt(e.ThreadID)),
		keyEventID.Int64(spanInt(e.EventID)),
	)
	if e.HasProgress {
		a = append(a, keyWorkCompleted.Int64(spanInt(e.WorkCompleted)),
			keyWorkEstimated.Int64(spanInt(e.WorkEstimated)))
	}
	if e.Source != "" {
		a = append(a, keySource.String(e.Source))
	}
	if !e.Timed {
		a = append(a, keyTimed.Bool(false))
	}
	sp.Attributes = c.kvs.done(a)
	return sp
}

// waitEvent makes a wait's span event; fallback is its time when the wait
// was not timed (the span's start).
func (c *spanConfig) waitEvent(e *pfscore.WaitEvent, fallback time.Time) SpanEvent {
	ev := SpanEvent{Name: e.EventName, Time: fallback}
	a := c.kvs.take(10)
	a = append(a, keyEventID.Int64(spanInt(e.EventID)))
	if e.Timed {
		ev.Time = wallTime(e.TimerStart)
		a = append(a, keyDuration.Float64(float64(e.TimerWait)/1e12))
	}
	if op := e.Operation; op != 0 {
		a = append(a, keyOperation.String(op.String()))
	}
	if e.ObjectName != "" {
		a = append(a, keyObjectName.String(e.ObjectName))
	}
	if e.ObjectType != "" {
		a = append(a, keyObjectType.String(e.ObjectType))
	}
	if e.ObjectInstanceBegin != 0 {
		a = append(a, keyObjectInst.Int64(int64(e.ObjectInstanceBegin)))
	}
	if e.HasBytes {
		a = append(a, keyBytes.Int64(e.NumberOfBytes))
	}
	if e.NestingEventType == pfscore.NestingWait {
		a = append(a, keyNestingID.Int64(spanInt(e.NestingEventID)))
	}
	if e.Source != "" {
		a = append(a, keySource.String(e.Source))
	}
	ev.Attributes = c.kvs.done(a)
	return ev
}

// spanInt converts a counter to an int64 attribute value, saturating.
func spanInt(x uint64) int64 {
	if x > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(x)
}
