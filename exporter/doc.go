// Package exporter is the wire: OTLP metrics and spans, OTEL_* environment
// configuration and lifecycle, and the /debug/pfs HTTP handler that renders
// the tables for people and tools.
//
// # The /debug/pfs handler
//
// Handler serves a schema's tables over HTTP, through pfscore.Tables (the
// catalog, Query, Truncate and the setup changes; a *pfscore.Schema is
// one). A service mounts it on its own mux, or starts a loopback-only server
// for it with Listen:
//
//	mux.Handle("/debug/pfs/", exporter.Handler(pfscore.Default()))
//
//	srv, err := exporter.Listen("127.0.0.1:6060", exporter.Handler(pfscore.Default(),
//		exporter.WithSetupChanges(true)))
//
// It answers:
//
//	GET  /debug/pfs/                      every table and its row count
//	GET  /debug/pfs/catalog               every table's columns and the changes it takes
//	GET  /debug/pfs/tables/NAME           one table
//	POST /debug/pfs/tables/NAME/truncate  TRUNCATE TABLE NAME
//	POST /debug/pfs/tables/NAME/update    UPDATE NAME SET ... WHERE ...
//	POST /debug/pfs/tables/NAME/insert    INSERT INTO NAME ...
//	POST /debug/pfs/tables/NAME/delete    DELETE FROM NAME WHERE ...
//	POST /debug/pfs/setup/TABLE           a change to a setup table, in its own terms
//
// Client is the other end: a pfscore.Tables over these requests, for a
// program (the pfs command, say) that reads or changes a service's tables
// from another process.
//
// A GET takes format=text (aligned columns, times as FormatPicoTime writes
// them), format=json or format=html; without one, a browser (Accept:
// text/html) gets HTML and anything else text. The JSON form is
//
//	{"table": "NAME", "columns": [{"name": "COUNT_STAR", "type": "uint", "role": "counter"}, ...], "rows": [[...], ...]}
//
// with column types "string", "uint", "int" and "picos" (a TIMER_* column,
// in raw picoseconds), roles as pfscore.Role names them (dim, counter,
// timer, gauge, ...), "binary": true on a string column that compares byte
// for byte (setup_actors' and setup_objects' keys, as MySQL's _bin
// collations), NULL as null; when a limit left rows out, "matched":
// N follows the rows, the number the where matched. DecodeJSON reads it
// back. JSON strings are UTF-8: a value that is not (a file name in
// Latin-1, say) arrives with U+FFFD in place of its invalid bytes, so a
// Client sees, and can match in a where, only that form.
//
// The HTML form is for people and self-contained (no external assets).
// The index lists every table with its row count, sortable in the
// browser. A table's page has a form for the where, order and limit
// below, which keeps what was sent; its placeholders are examples built
// from the table's own columns (EVENT_NAME LIKE 'wait/%' AND COUNT_STAR >
// 0, SUM_TIMER_WAIT desc), queries the table takes. A click on a column
// header asks for the page again ordered by that column, keeping the where
// and limit, so that a limit keeps the biggest rows: a number biggest
// first, a string A to Z, and the other way on a second click; ▼ or ▲
// (and aria-sort) mark the column the order starts with. A bad where,
// order or limit comes back as the page (status 400) with the error above
// the form as typed.
//
// GET /debug/pfs/catalog describes every table without reading any rows
// (pfscore.Tables.Catalog), in name order:
//
//	{"tables": [{"name": "setup_instruments", "columns": [{"name": "NAME", "type": "string", "role": "dim"}, ...],
//	             "truncatable": false, "updatable": ["ENABLED", "TIMED"], "insertable": false}, ...]}
//
// with the columns as a table's JSON has them; "updatable" lists the
// columns an update may set, "insertable" says whether insert and delete
// are allowed. It takes no parameters.
//
// A table GET also takes a filter, an order and a limit, a small subset of
// SQL with MySQL's meaning (pfscore.Query, which Go callers use directly):
//
//	where=EVENT_NAME LIKE 'wait/io/%' AND COUNT_STAR > 0
//	where=SUM_TIMER_WAIT > 1.5ms            (TIMER_* columns take ps ns us ms s min h d)
//	order=SUM_TIMER_WAIT desc, EVENT_NAME
//	limit=20
//
// Conditions are COL op value (= != <> < <= > >=), COL [NOT] LIKE
// 'pattern' and COL IS [NOT] NULL, joined by AND (a repeated where
// parameter joins with AND too). Strings compare case-insensitively; NULL
// satisfies no comparison and sorts first; limit=0 shows no rows. Anything
// the handler does not understand is a 400 that says what it expected.
//
// # Changes
//
// The POST requests change what the schema collects or shows, and are
// refused (403) unless the application passed WithSetupChanges(true).
// Browsers' cross-origin POSTs are refused as well
// (http.CrossOriginProtection). Bodies are JSON objects of at most
// MaxBodyBytes, field names case-insensitive; unknown fields are an error.
//
// The table changes are pfscore.Tables' Update, Insert and Delete, on any
// table the catalog says takes them:
//
//	tables/NAME/update  {"where": ["COND", ...], "set": {"COLUMN": value, ...}}
//	tables/NAME/insert  {"values": {"COLUMN": value, ...}}
//	tables/NAME/delete  {"where": ["COND", ...]}
//
// A where is a list of conditions as a table GET takes them, joined by AND;
// without one, an update or delete takes every row, as in SQL. Column names
// are case-insensitive. A value is a JSON string, true or false (a flag
// also takes "YES" or "NO"), an integer (uint64, or int64 if negative) or
// null; a fraction, an object or an array is a 400. The answer is
// {"table": NAME, "op": "update", "rows_matched": 12} (1 for an insert).
// A change MySQL does not allow on the table or column (an update of
// setup_instruments.NAME, an insert into threads) is a 403, as a refused
// TRUNCATE is.
//
// The setup bodies say the same changes in the setup tables' own terms:
// flags true/false or "YES"/"NO"; names are LIKE patterns as in MySQL's
// UPDATE … WHERE NAME LIKE …. Each body becomes a pfscore.Tables Update,
// Insert or Delete:
//
//	setup/instruments  {"name": "wait/synch/%", "enabled": true, "timed": true}   (either flag)
//	setup/consumers    {"name": "events_waits_history%", "enabled": true}
//	setup/threads      {"name": "thread/app/%", "enabled": true, "history": false} (either flag)
//	setup/timers       {"name": "wait", "timer_name": "NANOSECOND"}
//	setup/actors       {"op": "insert", "host": "%", "user": "app", "role": "%", "enabled": true, "history": true}
//	setup/objects      {"op": "update", "object_type": "FILE", "object_schema": "/var/log", "object_name": "%", "timed": false}
//
// setup_actors and setup_objects take op "insert" (empty keys mean '%';
// flags default to YES as in MySQL), "update" and "delete" (the keys given
// select rows, exactly; an absent key matches any) and "truncate". The
// setup_ prefix of the table is optional. The answer is
// {"table": "setup_instruments", "rows_matched": 12} (setup_timers adds the
// timer set, which may be a substitute the platform has). A TRUNCATE
// answers {"table": NAME, "truncated": true} and has MySQL's effect: history
// tables empty, summary rows restart from zero.
//
// # Errors
//
// Every error is a JSON object {"error": "..."} (but for a browser's bad
// query on a table's HTML page, above): 400 for a bad query,
// parameter, body or value, 403 for a change not allowed (changes
// disabled, or a TRUNCATE, UPDATE, INSERT or DELETE MySQL does not allow on
// the table), 404 for an unknown table or path, 405 for a wrong method
// (with Allow), 409 for a duplicate row or a full setup table, 413 for a
// body over MaxBodyBytes. A refused or bad request changes nothing. When
// the error is one of the engine's, "code" names it, for programs to tell
// apart (Client turns it back into the error):
//
//	unknown_table         pfscore.ErrUnknownTable
//	bad_query             pfscore.ErrBadQuery
//	truncate_not_allowed  pfscore.ErrTruncateNotAllowed
//	not_updatable         pfscore.ErrNotUpdatable
//	not_insertable        pfscore.ErrNotInsertable
//	duplicate_row         pfscore.ErrDuplicateRow
//	table_full            pfscore.ErrTableFull
//	bad_value             pfscore.ErrBadValue
//	bad_pattern           pfscore.ErrBadPattern
//	unknown_timer         hwclock.ErrUnknownTimer
//
// # The client
//
// NewClient("127.0.0.1:6060") (or a URL, for another prefix or https)
// returns a Client, a pfscore.Tables whose every call is one request:
// Catalog is GET catalog, Query a table's JSON GET, the changes
// the POSTs above. Its errors are the engine's where the handler's code
// says (errors.Is(err, pfscore.ErrUnknownTable) works as on a Schema), a
// *ResponseError with the status and the handler's message, and
// ErrUnreachable when nothing answers; an answer that is not the handler's
// is an error that says so. pfscore.Tables has no context: WithContext
// gives a Client whose requests end with one. A Query's Limit 0 means no
// limit, as for a Schema (the handler's limit=0 means no rows).
//
// # OTLP
//
// StartOTLP sends a schema's summaries to an OpenTelemetry Collector (or
// any OTLP endpoint, over gRPC or HTTP) as metrics, configured by the
// standard OTEL_* environment and then options, and returns the running
// pipeline; its Shutdown sends a last collection, within its context:
//
//	o, err := exporter.StartOTLP(ctx, pfscore.Default())
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer func() {
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		_ = o.Shutdown(ctx)
//	}()
//
// A periodic reader (sdk/metric) collects bridge.NewProducer's metric data
// every OTEL_METRIC_EXPORT_INTERVAL and sends it with otlpmetricgrpc, or
// otlpmetrichttp when OTEL_EXPORTER_OTLP_PROTOCOL (or
// OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, or WithProtocol) says
// http/protobuf. Sums are cumulative with a StartTime, so a collection the
// endpoint missed (down, restarting, too slow for the timeout) loses
// nothing: the next one carries it. Collection reads the tables as any
// reader does; the instrumented code never waits for it or for the
// network.
//
// Over http/protobuf the endpoints follow the OpenTelemetry
// specification: OTEL_EXPORTER_OTLP_ENDPOINT (and WithEndpoint) is a base
// URL to which /v1/metrics and /v1/traces are appended;
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT and _TRACES_ENDPOINT are used as they
// are; the default is http://localhost:4318 (gRPC's http://localhost:4317).
// Headers, timeout, gzip compression (OTEL_EXPORTER_OTLP_COMPRESSION) and
// TLS or none apply to both protocols alike; http/json is refused.
//
// Shutdown stops both signals at once, each within its context: with a
// deadline it returns by the deadline (plus 100ms at most for its
// goroutines to report) whatever the endpoint does, down, stalled or
// refusing; without one it bounds itself by the longest export timeout of
// the signals (OTEL_EXPORTER_OTLP_TIMEOUT, 10s by default), for the whole
// last flush. What was not sent by then is dropped (spans are counted).
//
// # Security
//
// Listen serves on loopback only unless WithRemoteAccess says otherwise,
// and then answers only requests addressed to a loopback host or localhost
// (DNS rebinding). The tables name the service's locks, files and sockets
// (and, later, its SQL): mounting Handler on a public mux exposes them, so
// put the mux's own authentication in front of it.
//
// # Concurrency
//
// All exported functions are safe for concurrent use. Reading a table
// copies a snapshot out of the schema and never blocks the instrumented
// code; a change takes effect at once for the events that start after it.
//
// # Imports
//
// The /debug/pfs handler and its client need only pfscore (and hwclock for
// one of its errors) and the standard library. The OTLP side imports
// bridge, the OpenTelemetry SDK and its OTLP metric exporters (gRPC and
// HTTP), pdata (for spans), gRPC and net/http.
//
// # Spans over OTLP
//
// The trace pipeline (started with the rest of the OTLP side) turns on the
// schema's trace capture (pfscore.Schema.EnableTraceCapture) with the
// sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name (always_on,
// always_off, traceidratio and their parentbased_ forms;
// parentbased_always_on by default; WithSampler), installs
// bridge.TraceContext as the statements' trace hook unless one is
// installed (so that pfshttp reads the caller's traceparent and statements
// record their context's span), reads the captured trees with a
// bridge.Traces every 200 ms (WithSpanInterval), and sends the spans to an
// OTLP receiver: over gRPC with pdata's ptraceotlp client, or
// over HTTP (http/protobuf) as the ptraceotlp.ExportRequest marshalled to
// binary protobuf and POSTed to the traces URL with Content-Type
// application/x-protobuf (and Content-Encoding gzip if configured). One
// resource (service.name and the rest of the configured resource), one
// scope (bridge.ScopeName), the span flags saying whether the parent is
// the application's remote span. pdata rather than the SDK's trace
// pipeline: these spans are finished records with ids and times of their
// own, which the SDK's tracer cannot make and its exporters take only as
// test stubs; that is how WithSpanExporter hands them to an application's
// own SpanExporter instead (bridge.ReadOnlySpans), for its retries,
// endpoints and vendors. Shutdown turns capture off.
//
// Captured trees wait in the schema's queue (4096 trees) until a read;
// spans then wait in a bounded queue (by default 8192 spans, the batch in
// flight included); a span that finds it full is dropped and counted in
// global_status as Performance_schema_export_spans_lost, as is a batch
// whose export failed for good: rejected by the receiver, a non-transient
// gRPC error or HTTP status, or still failing after retries with
// exponential backoff (from 200ms to 5s apart) for a minute. Transient are
// the gRPC codes the OTLP specification lists and, over HTTP, 429, 502,
// 503, 504 and a request that got no answer (refused, reset, timed out);
// a Retry-After (or gRPC RetryInfo) replaces the backoff's wait. A
// partial success (an accepted export whose response rejects some spans)
// counts the rejected spans and is not retried; any other 4xx or 5xx
// drops the batch, with the receiver's google.rpc.Status message in the
// error. A tree the capture's queue had no room for counts its top
// statement as Performance_schema_export_events_lost, and a tree's events
// past its bound (1024) one each. One goroutine does the
// network: each export has its own timeout, so an endpoint that is down,
// slow or restarting delays only that goroutine, and the instrumented code
// never waits for it. Spans queued while the endpoint is down are sent
// when it returns, if it returns within the retries and the queue holds
// them. A flush reads the trees and waits for what was queued; shutdown
// reads a last time, sends what is queued within its context (OTLP.Shutdown
// gives it one with a deadline), ends the export or backoff in flight when
// the context ends, and drops (and counts) what is left.
package exporter
