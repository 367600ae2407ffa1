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
//	GET  /debug/pfs/tables/NAME           one table
//	POST /debug/pfs/tables/NAME/truncate  TRUNCATE TABLE NAME
//	POST /debug/pfs/setup/TABLE           a change to a setup table
//
// A GET takes format=text (aligned columns, times as FormatPicoTime writes
// them), format=json or format=html; without one, a browser (Accept:
// text/html) gets HTML and anything else text. The JSON form is
//
//	{"table": "NAME", "columns": [{"name": "COUNT_STAR", "type": "uint", "role": "counter"}, ...], "rows": [[...], ...]}
//
// with column types "string", "uint", "int" and "picos" (a TIMER_* column,
// in raw picoseconds), roles as pfscore.Role names them (dim, counter,
// timer, gauge, ...), NULL as null; DecodeJSON reads it back. The HTML page
// links every table and sorts by a click on a column header.
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
// MaxBodyBytes, field names case-insensitive, flags true/false or
// "YES"/"NO"; names are LIKE patterns as in MySQL's UPDATE … WHERE NAME
// LIKE …. Each body becomes a pfscore.Tables Update, Insert or Delete:
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
// Every error is a JSON object {"error": "..."}: 400 for a bad query,
// parameter, body or value, 403 for a change not allowed (or a table MySQL
// does not truncate), 404 for an unknown table or path, 405 for a wrong
// method (with Allow), 409 for a duplicate row or a full setup table, 413
// for a body over MaxBodyBytes. A refused or bad request changes nothing.
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
// The /debug/pfs handler needs only pfscore and the standard library. The OTLP side of the package will import bridge, the OTLP
// exporters and pdata.
package exporter
