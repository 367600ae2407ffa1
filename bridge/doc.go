// Package bridge maps otelpfs onto OpenTelemetry: Producer, an sdk/metric
// Producer that turns each collection's snapshot of the summary tables into
// metric data (digest latency histograms with exemplars included); History,
// which turns the _history_long tables into spans (see # Spans); and views
// that drive the setup tables (see # Views). Package exporter ships them as
// OTLP.
//
//	s, _ := pfscore.New()
//	p, _ := bridge.NewProducer(s)
//	reader := metric.NewManualReader(metric.WithProducer(p)) // or a PeriodicReader
//	provider := metric.NewMeterProvider(metric.WithReader(reader))
//
// The producer reads through pfscore.Tables (Catalog and Query); over a
// *pfscore.Schema it reads each table in place instead (Schema.ReadRows:
// no Value per cell, about a third less time per collection), and the
// digests' histogram buckets directly, which a remote Tables
// (exporter.Client) cannot, so over one it exports no histograms.
//
// # What is exported
//
// By default (DefaultTables) the summaries by event name at the global
// level (waits, stages, statements, transactions, file and socket I/O,
// memory), the statement digests (the top N, see # Digests) and
// global_status: what a fleet of services can afford to send, with no
// attribute that grows with a service's threads, users, hosts, clients or
// objects. The same events by thread, account, user, host and instance,
// and the actor tables accounts, users and hosts, are opt-in: a view that
// matches one of a table's metrics by name (pfs.events_waits.by_user.*,
// say; see # Views) or a view on classes that keeps one of the table's
// dimensions (pfs.user, thread.id, ...) adds it, for the classes the views
// name; WithTables(AllTables) adds them all, and WithTables(keep) sets the
// list outright. Nothing is written per table: a table's plan comes from
// its columns' roles (pfscore.Role), made once in NewProducer, so a table
// added to the catalog later flows through as it is.
//
//	role                    becomes
//	dim                     an attribute of every metric of the row
//	counter                 a cumulative monotonic Sum[int64]
//	timer                   a cumulative monotonic Sum[float64], in seconds
//	gauge, low, high        a Gauge[int64] (memory: bytes or counts in use, and their water marks)
//	min, max                a Gauge, float64 seconds for picosecond columns
//	avg                     nothing: SUM_ over COUNT_ gives it, per interval
//	id, time, duration,     nothing (history and current tables, which have
//	attr, text              them, are not exported; DIGEST_TEXT is the
//	                        exception, as pfs.digest_text)
//
// Every time is converted from picoseconds to seconds (unit "s"), bytes
// have unit "By", counts a UCUM annotation ("{event}", "{row}",
// "{allocation}", "{connection}", ...).
//
// # Naming
//
// A table is a family and a variant; a measure column is a metric named
// pfs.<family>[.<variant>].<measure>:
//
//	table                                         metric names
//	events_waits_summary_global_by_event_name     pfs.events_waits.count, .time, .time.min, .time.max
//	events_waits_summary_by_thread_by_event_name  pfs.events_waits.by_thread.count, .time, ...
//	events_waits_summary_by_account_by_event_name pfs.events_waits.by_account.count, ... (also by_user, by_host)
//	events_waits_summary_by_instance              pfs.events_waits.by_instance.count, ...
//	events_stages_..., events_transactions_...    pfs.events_stages..., pfs.events_transactions... (.read_write.count, .read_only.time)
//	events_statements_summary_global_by_event_name pfs.events_statements.count, .time, .errors, .rows_sent, .pool.time, .retries.count, ...
//	events_statements_summary_by_digest           pfs.events_statements.by_digest.count, .time, .time.p95, ...
//	  and its histogram table                     pfs.events_statements.by_digest.duration (a Histogram)
//	file_summary_by_event_name                    pfs.file.count, .read.count, .read.time, .read.bytes, .write.bytes, .misc.time, ...
//	file_summary_by_instance, socket_summary_...  pfs.file.by_instance..., pfs.socket..., pfs.socket.by_instance...
//	memory_summary_global_by_event_name           pfs.memory.alloc.count, .alloc.bytes, .free.count, .free.bytes,
//	                                              .used.count, .used.bytes, .used.bytes.low, .used.bytes.high, ...
//	memory_summary_by_thread_by_event_name        pfs.memory.by_thread.used.bytes, ... (also by_account, by_user, by_host)
//	accounts, users, hosts                        pfs.accounts.connections, pfs.accounts.connections.current, ...
//	global_status                                 pfs.global_status.value
//
// The measure comes from the column name: COUNT_STAR is count,
// SUM_TIMER_WAIT time, COUNT_X x.count, SUM_TIMER_X x.time,
// SUM_NUMBER_OF_BYTES_X x.bytes, SUM_X x, SUM_X_TIME x.time, MIN_ and
// MAX_ add .min and .max to their SUM_'s measure, CURRENT_COUNT_X and
// CURRENT_NUMBER_OF_BYTES_X are x.count and x.bytes (LOW_ and HIGH_ add
// .low and .high), QUANTILE_95 is time.p95, anything else is the column
// name in lower case.
//
// The dimensions become attributes: EVENT_NAME pfs.event_name (the pfs
// instrument name, wait/synch/mutex/app/cache), THREAD_ID thread.id, USER
// pfs.user, HOST pfs.host, OBJECT_INSTANCE_BEGIN pfs.object_instance,
// FILE_NAME file.path, SCHEMA_NAME db.namespace, DIGEST pfs.digest,
// DIGEST_TEXT pfs.digest_text, VARIABLE_NAME pfs.variable_name, any other
// pfs.<column in lower case>. A NULL dimension is left out of the set. A
// string that is not UTF-8 (a file named in Latin-1, a user taken from a
// request header) is exported with U+FFFD for its invalid bytes: OTLP's
// strings must be UTF-8, and one bad value would otherwise fail the whole
// export.
//
// Variants have metric names of their own, not the family's name with more
// attributes: the global, by_thread, by_account, by_user and by_host
// tables each carry the same events once more, so one metric over all of
// them would make a plain sum(...) count every event four or five times.
// With one name per variant, every PromQL expression over one name is
// right: topk(10, rate(pfs_events_waits_time_seconds_total[5m])) ranks
// every wait by time, sum by (pfs_user) (rate(pfs_events_waits_by_user_time_seconds_total[5m]))
// splits them by user, and topk(10, rate(pfs_events_statements_by_digest_time_seconds_total[5m]))
// ranks every digest.
//
// # Digests
//
// events_statements_summary_by_digest is bounded on purpose, so that it
// never meets the SDK's cardinality limit unannounced: each collection
// exports the top N digests by SUM_TIMER_WAIT (WithTopDigests, by default
// 100) with pfs.digest, pfs.digest_text (DIGEST_TEXT) and db.namespace
// (SCHEMA_NAME), and one overflow series, pfs.digest_text="other" and
// otel.metric.overflow=true, with the sums of the rest, their least MIN
// and greatest MAX (no quantiles). A digest of SQL statements also carries
// the database semantic conventions' attributes, db.system.name (what the
// database wrapper recorded for its schema, pfscore.Schema.SetDBSystem;
// else other_sql), db.query.summary (the operation and its targets,
// "SELECT notes": digest.Summarize), db.operation.name and
// db.collection.name; a digest of HTTP requests (an instrument/pfshttp
// route) http.request.method and http.route instead, and no db.* attribute
// (semconv.go). Their histograms add up into the conventions' own
// db.client.operation.duration and http.server.request.duration (see #
// Digest histograms). The overflow series
// counts what the digests outside the top N add, collection by collection,
// so its sums only grow whichever digests it holds; a digest that leaves
// the top N stops being exported under its own attributes, and when it
// returns it restarts, with the previous collection as StartTime and only
// what it counted since, because the overflow series counted what it added
// meanwhile. So the exported series' increases between two collections add
// up to the table's, and nothing counts twice; their cumulative values add
// up to the table's only until a digest first moves across the cut.
//
// # Cumulative sums and TRUNCATE
//
// Between two TRUNCATEs the engine's counters and timers only grow, and so
// do the exported sums. A Sum's StartTime is the producer's start (or
// WithStartTime) for the rows the first collection sees; a row first seen
// later starts at the previous collection, which did not see it or saw it
// at zero, so everything it counts came after. The producer cannot learn
// when a TRUNCATE ran: it notices one when a row's counter or timer went
// down since the previous collection, and restarts that row's sums with
// the previous collection as StartTime; a backend sees a counter reset. A
// TRUNCATE that leaves a row at zero removes the row from the export until
// it counts again. A TRUNCATE whose row grew past its old values before
// the next collection goes unnoticed: the backend sees a smaller increase
// than happened.
//
// Rows whose counters and timers are all zero (classes never used, a
// thread's classes it never ran) are left out. A table that fails to read
// in one collection keeps its rows' StartTimes for the next. MIN and MAX are gauges
// since the last TRUNCATE, as the table has them.
//
// # Concurrency and errors
//
// Produce is safe for concurrent use; collections run one at a time, each
// reading every table once. A table that fails to read is left out of
// that collection and its error returned, joined, with the other tables'
// data (the SDK's readers pass it on). The producer keeps, between
// collections, one attribute set and the last values per exported row, and
// forgets rows a collection did not export.
//
// # Digest histograms
//
// Each top-N digest also has a point of pfs.events_statements.by_digest.duration,
// an explicit-bucket Histogram in seconds, from the engine's 450 buckets
// (events_statements_histogram_by_digest) added up into the bounds of a
// view on that name, or DefaultStatementBuckets: every third engine bound
// from 10 µs to 10 s, so that each explicit bucket is whole engine buckets
// and at most 14.8% wide, and a quantile a backend interpolates
// (histogram_quantile(0.95, ...)) is within 15% of the engine's
// QUANTILE_95 (TestHistogramQuantilesAgreeWithEngine). The quantile gauges
// (QUANTILE_95, _99, _999) are not exported beside the histogram: it
// carries them, and unlike them it adds up across series. That is 102
// buckets per histogram series, each a series of its own in Prometheus; a
// view with explicit_bucket_histogram boundaries makes them fewer, and the
// quantiles coarser. An engine bucket counts in the explicit bucket that
// holds its upper bound: a statement may count one engine bucket (4.7%)
// above its wait, never below. Count is the digest's timed statements, Sum
// their waits, and the exemplar its
// query sample (the slowest recent statement) with the trace and span it
// ran in, when it ran in one (QUERY_SAMPLE_TRACE_ID): a dashboard goes from
// a slow digest to the trace that shows why. A TRUNCATE of the histogram
// table restarts the point (with the previous collection as StartTime); a
// digest back in the top N restarts it as its sums (at the previous
// collection, with what it counted since), or, if its histogram was never
// exported, at that collection. The overflow
// series has no histogram (it would read 450 counters of every digest
// outside the top N each collection), nor has a producer over a remote
// Tables, which exports the quantile gauges instead.
//
// The top-N digests' histograms also add up into the semantic conventions'
// histograms, in the same bounds: db.client.operation.duration by
// db.system.name, db.namespace, db.query.summary, db.operation.name and
// db.collection.name (digests that differ but in their columns share a
// summary, and a series), and http.server.request.duration by
// http.request.method and http.route. A series that loses a member (a
// digest leaving the top N) restarts at the previous collection, as a
// merged series does (# Views). http.server.request.duration has no
// http.response.status_code: the digest table has one row per route, not
// per status; a request's span has it (# Spans).
//
// # Imports
//
// bridge is the lowest package that may import OpenTelemetry (API and SDK).
// It imports pfscore, never instrument.
//
// # Spans
//
// Two readers make spans. Traces (traces.go) is the one exporter.StartOTLP
// uses: it takes the event trees a *pfscore.Schema captures
// (Schema.EnableTraceCapture): each sampled top-level statement, an HTTP
// request or a connection's command, with every stage, statement and wait
// that ended inside it, handed over whole when the statement ends, so each
// span is sent once and complete, at any rate the queues hold (its doc
// comment has the tree; a SQL statement is the child of the stage it ran
// in). History, below, reads the _history_long tables of any
// pfscore.Tables, a remote one included, and must guess at what the rings
// overwrote. Both name and describe spans alike:
//
//	statement          name                       kind     attributes
//	SQL                its db.query.summary       CLIENT   db.system.name, db.namespace, db.query.summary,
//	                   ("SELECT notes")                    db.operation.name, db.collection.name,
//	                                                       db.response.returned_rows, pfs.digest, pfs.digest_text
//	HTTP request       METHOD ROUTE ("GET          SERVER   http.request.method, http.route, and from a captured
//	(pfshttp)          /notes/{id}"), METHOD              tree http.response.status_code, url.scheme, url.path
//	                   when unmatched
//	any other          DIGEST_TEXT, else class    INTERNAL pfs.digest
//
// A SQL statement with ERRORS is an error with error.type _OTHER; an HTTP
// request is an error for a 5xx status only, with error.type the code, as
// the HTTP conventions say of a server (a 4xx is the client's).
//
// History turns the _history_long tables into spans. NewHistory(t) takes
// any pfscore.Tables (a *pfscore.Schema is read directly, others through
// Query); each Read returns the spans of what ended since the previous
// Read, and the first Read those of what the tables hold. A Read copies the
// whole of each _history_long ring; of a *pfscore.Schema's waits it decodes
// only those that nest in an event, and of the others, which become
// nothing, takes the ids alone (Schema.EventsWaitsHistoryLongNested). It needs the
// current and history_long consumers of the events it is to show
// (events_statements_*, events_stages_*, events_waits_*; the history_long
// ones are off by default, as in MySQL).
//
//	event                         becomes
//	statement                     a span, named as above (clipped to 255 bytes)
//	statement nested in another   a child span of the enclosing statement's
//	stage in a statement          a child span of the statement's, named by EVENT_NAME
//	stage in no statement         a root span of a trace of its own
//	wait                          a span event of the span it nests in (through nested waits), at TIMER_START
//	wait in no stage or statement nothing (the summaries count it)
//	transaction                   nothing (its EVENT_IDs count for the cursor only)
//
// A statement's span is in the trace the statement recorded (TRACE_ID and
// SPAN_ID, see TraceContext): its trace id is the recorded one, its parent
// the recorded span (Span.RemoteParent), so a backend shows the service's
// own span with the statement inside. A nested statement that recorded the
// same span as the statement enclosing it is that statement's child
// instead, which says more. A statement without a recorded trace, and a
// root stage, starts a trace; its children share it. Span ids (SpanIDOf)
// and those trace ids are keyed hashes of THREAD_ID and EVENT_ID with a
// random seed of the process: an event has the same ids whenever it is
// read, and ids of distinct events collide with probability 2^-64. (Two
// Schemas in one process share thread and event ids, so their spans may
// share span ids; read one Schema per process.) Times are TIMER_START and
// TIMER_END through hwclock.WallTime; an untimed event takes its parent's
// start, or the time of the Read, and pfs.timed=false. A wait's event
// time is kept inside its span: waits and spans are timed by different
// timers of setup_timers (CYCLE and NANOSECOND by default), whose
// conversions to wall-clock time may disagree by some microseconds.
//
// Attributes of a statement's span, besides those above: pfs.event_name,
// pfs.thread_id, pfs.event_id, pfs.rows_affected, pfs.rows_examined,
// pfs.warnings (when not 0), pfs.source, db.namespace (CURRENT_SCHEMA,
// when set); db.system.name is WithDBSystem's, else what the database
// wrapper recorded for the statement's schema (pfscore.Schema.SetDBSystem:
// pfssql records its driver's: sqlite, mysql, postgresql), else
// "other_sql"; db.query.text (SQL_TEXT) only with WithSQLText(true). An
// error's span has MESSAGE_TEXT as its status message (an error text may
// quote a value). A stage's span has pfs.event_name, pfs.thread_id,
// pfs.event_id, pfs.source and pfs.work_completed and pfs.work_estimated
// when set. A wait's event has pfs.event_id, pfs.duration (TIMER_WAIT in
// seconds), pfs.operation, pfs.object_name, pfs.object_type,
// pfs.object_instance, pfs.number_of_bytes, pfs.source and, for a wait in
// a wait, pfs.nesting_event_id.
//
// What ends inside a statement ends before it, so stages, waits and nested
// statements wait in the History until their statement's row arrives
// (tables are read outermost first, so a statement read has its stages and
// waits read too). A statement in progress holds them back: nothing is
// sent before the whole tree has ended. WithMaxPending bounds the rows
// held (HistoryStats.Pending); beyond it the oldest are dropped and counted
// (Dropped). A row whose enclosing statement or stage is gone (the ring
// overwrote it) is decided at the second Read that finds the statement
// neither in its table nor in progress (the first may have read the rows
// before the statement began): a stage or statement becomes a root span
// with pfs.orphan=true and pfs.nesting_event_id, a wait is dropped; both
// count in Orphans.
//
// # The cursor and lost events
//
// Each thread hands out EVENT_IDs in the order its events begin, and a
// History keeps, per thread, the ids it has read or decided about, so it
// never sends an event twice, whatever the rings hold. An id below the
// highest the previous Reads found began before those Reads: at the next
// Read it is in progress (the current tables, read first, show it) or has
// ended, and then is in a _history_long table (read after) unless the
// ring overwrote it, or dropped it in a collision (the engine ends a
// current row only once its history row exists, so there is no moment in
// between). Such an id, neither read nor in progress, counts in
// HistoryStats.Lost, one Read after the Read that saw the ids around it.
// The current rows are copied without blocking their writers, and a copy
// can fail (its goroutine descheduled in the middle of a write): a Read
// decides nothing about such a thread, and a later Read does (the 16th
// such Read in a row decides all the same, so that the ids it holds stay
// bounded). A History over Tables other than a *pfscore.Schema cannot tell
// such a thread from one with nothing in progress, and may count its
// events lost and drop them. Lost is a lower bound: events of a thread
// after the last id a Read found, when the thread ends before the
// next Read finds one, go uncounted, and so do the events of a thread that
// existed before NewHistory and that come before the first one read. It
// counts only while, for every kind of event, the current consumer is off
// or the history_long consumer on (the kinds of ids the History cannot
// see would otherwise look lost); with MySQL's default consumers
// (events_transactions_current on, its history_long off) it counts
// nothing. An id that TRUNCATE cut counts as lost, and so does a statement
// or transaction still in progress when its thread ended (it never gets a
// history row; what nested in it is sent as orphans); a thread turned to
// HISTORY=NO, or a TRUNCATE of a current table, can make ids look lost.
// Threads that ended and left no row in the tables are forgotten.
//
// History's methods are safe for concurrent use; Reads run one at a time.
// TraceContext is the hook instrument.SetTraceHook takes, so that
// statements record the span of their context.
//
// # Views
//
// OpenTelemetry views configure otelpfs. The instrument name a view
// selects is a pfs instrument class name: wait/synch/mutex/*,
// statement/sql/*, with the SDK's wildcards ('*' any run of characters,
// '?' one; case-sensitive). A view is evaluated against each class as
// ClassInstrument(name), a histogram in seconds of the bridge's scope
// (ScopeName), and against each metric the producer makes, under its
// metric name (pfs.events_statements.by_digest.time, a counter).
//
// At record time, ApplyViews (and NewProducer with WithViews) sets
// setup_instruments from each class's aggregation:
//
//	aggregation                                  setup_instruments
//	drop                                         ENABLED=NO, TIMED=NO: the provider pays nothing
//	explicit_bucket_histogram, base2_exponential ENABLED=YES, TIMED=YES
//	sum, last_value                              ENABLED=YES, TIMED=NO (counted)
//	default, or none                             as it is
//
// (So a producer WithViews also changes the setup: through
// pfscore.Tables' Update, or SetInstrumentPolicy on a *pfscore.Schema.)
// On a *pfscore.Schema, classes that register later follow the views too
// (pfscore.Schema.SetInstrumentPolicy), and applying views replaces those
// applied before; InstrumentPolicy is the start-up form, for
// pfscore.New(pfscore.WithInstrumentPolicy(...)). Over another
// pfscore.Tables (exporter.Client) only the classes registered then
// change, one UPDATE per LIKE pattern (LikePattern; LIKE compares letters
// case-insensitively, so names that differ only in case are one name to
// it).
//
// A class has one setup row and one series per table, where the SDK would
// make a stream per matching view, so several matching views combine
// aspect by aspect, in any order. Of the views that set an aggregation
// (default sets none), a class is dropped if all of them drop, else timed
// if one asks for a histogram, else counted: as in the SDK, a drop drops
// only what no other view keeps, so select what to drop apart from what to
// keep. Of the views that keep the class and set attribute keys, a key is
// kept if any keeps it; with none, every key is kept. A stream's name,
// description and cardinality limit mean nothing here (metric names are
// per table). A histogram's buckets are kept for the statements'
// histograms, which are not exported yet.
//
// At export time, WithViews leaves out the series of a class, or the
// metric, that the views drop, and keeps the attribute keys they keep.
// pfs.event_name stays on every series of a class (the class is the
// instrument), and otel.metric.overflow on the digests' overflow series.
// The keys choose the tables' dimensions, and a key kept for a class
// registered when NewProducer runs opts its tables in (# What is
// exported): only the classes whose views keep some of a table's
// dimensions, or whose metric a view names, are exported from a table
// the default leaves out.
//
//	key kept                 keeps apart the series of
//	thread.id                *_by_thread_by_event_name
//	pfs.user, pfs.host       *_by_user_*, *_by_host_*, and both: *_by_account_*
//	pfs.object_instance      *_by_instance (waits, files, sockets)
//	file.path                file_summary_by_instance
//	pfs.digest, db.namespace, events_statements_summary_by_digest, selected by
//	pfs.digest_text          its metric names: pfs.events_statements.by_digest.*
//
// A series whose class's views keep none of its table's dimensions is its
// table's share of the global summary, which is exported, and is left out
// (by_thread without thread.id); series that become the same series add
// up: counts, times and amounts add, MIN is the least, MAX the greatest,
// water marks add (a bound, not the merged row's mark), quantiles are left
// out, and the StartTime is the earliest. A merged sum (or histogram) that
// goes down, because a member left (a thread ended, a digest moved to the
// overflow) or was truncated, restarts with the previous collection as
// StartTime, as a truncated row does: a backend sees a reset, never a
// counter going down.
//
// Views and run-time setup changes: views apply when they are applied
// (ApplyViews, NewProducer), to every class registered then and to every
// class that registers later. A later explicit change (UPDATE
// setup_instruments, pfs setup, the HTTP endpoint) wins for the classes it
// changes until views are applied again, as MySQL's UPDATE wins over
// my.cnf: an operator's change takes effect at once. The export-time part
// keeps applying: a class a view drops and an operator enables counts, but
// is not exported.
//
// Package bridge/viewconf reads the views of a declarative configuration
// file, meter_provider.views, with go.opentelemetry.io/contrib/otelconf's
// types (viewconf.Parse; a package of its own, so that a program that
// imports bridge does not import otelconf and the exporters it links). An
// example (testdata/views.yaml):
//
//	# otelpfs views in an OpenTelemetry declarative configuration file: the
//	# bridge reads meter_provider.views (bridge/viewconf.Parse); an instrument
//	# name is a pfs instrument class name.
//	file_format: "1.0-rc.2"
//	meter_provider:
//	  readers:
//	    - periodic:
//	        exporter:
//	          otlp_grpc:
//	            endpoint: http://localhost:4317
//	  views:
//	    # No mutex events at all: ENABLED=NO, TIMED=NO, and no series.
//	    - selector:
//	        instrument_name: "wait/synch/mutex/*"
//	      stream:
//	        aggregation:
//	          drop: {}
//	    # File waits counted, not timed: ENABLED=YES, TIMED=NO.
//	    - selector:
//	        instrument_name: "wait/io/file/*"
//	      stream:
//	        aggregation:
//	          sum: {}
//	    # SQL statements timed, in these buckets (seconds): ENABLED=YES, TIMED=YES.
//	    - selector:
//	        instrument_name: "statement/sql/*"
//	      stream:
//	        aggregation:
//	          explicit_bucket_histogram:
//	            boundaries: [0.0001, 0.001, 0.01, 0.1, 1]
//	    # I/O waits by user and host, never by thread or instance. This view
//	    # sets no aggregation: file waits stay counted, as the view above says.
//	    - selector:
//	        instrument_name: "wait/io/*"
//	      stream:
//	        attribute_keys:
//	          included: ["pfs.event_name", "pfs.user", "pfs.host"]
//	    # The digests without their schema (series of several schemas add up).
//	    - selector:
//	        instrument_name: "pfs.events_statements.by_digest.*"
//	      stream:
//	        attribute_keys:
//	          excluded: ["db.namespace"]
//
// viewconf.Parse translates the file's views itself: attribute-key
// wildcards ('*', '?') work, record_min_max defaults to true, an omitted
// histogram parameter takes the configuration schema's default, and a
// misspelled field is an error with its line. `pfs views` (FormatViewConfig)
// prints a schema's setup_instruments as such a file, compactly.
package bridge
