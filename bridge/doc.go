// Package bridge maps otelpfs onto OpenTelemetry. Today it exports one
// thing: Producer, an sdk/metric Producer that turns each collection's
// snapshot of the summary tables into metric data.
//
//	s, _ := pfscore.New()
//	p, _ := bridge.NewProducer(s)
//	reader := metric.NewManualReader(metric.WithProducer(p)) // or a PeriodicReader
//	provider := metric.NewMeterProvider(metric.WithReader(reader))
//
// The producer reads through pfscore.Tables only (Catalog and Query); the
// tests run it over a *pfscore.Schema (a remote Tables such as
// exporter.Client is not tested yet).
//
// # What is exported
//
// Every table of the catalog whose name contains "_summary_" (waits,
// stages, statements, transactions, file, socket and memory summaries, by
// event name, thread, account, user, host, instance and digest), the actor
// tables accounts, users and hosts, and global_status; WithTables changes
// the set. Nothing is written per table: a table's plan comes from its
// columns' roles (pfscore.Role), made once in NewProducer, so a table
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
//	                        exception, as db.query.summary)
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
// DIGEST_TEXT db.query.summary, VARIABLE_NAME pfs.variable_name, any other
// pfs.<column in lower case>. A NULL dimension is left out of the set.
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
// 100) with pfs.digest, db.query.summary (DIGEST_TEXT) and db.namespace
// (SCHEMA_NAME), and one overflow series, db.query.summary="other" and
// otel.metric.overflow=true, with the sums of the rest, their least MIN,
// greatest MAX and the AVG those make (no quantiles). The overflow series
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
// # Not built yet
//
// Views as configuration (a view's drop or histogram aggregation driving
// setup_instruments), the statements' histograms as OTel histograms, timers
// as resource attributes, and history rows as spans and span events are the
// next parts of this package; none exists today.
//
// # Imports
//
// bridge is the lowest package that may import OpenTelemetry (API and SDK).
// It imports pfscore, never instrument.
package bridge
