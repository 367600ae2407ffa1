// Package pfscore is the otelpfs engine: instrument classes, setup tables,
// threads and actors, object instances, wait and stage events, summaries, lost
// counters and the virtual tables that readers query.
//
// # Storage
//
// Threads and instances are records in lock-free paged containers (package
// internal/store: MySQL's pfs_lock and PFS_buffer_scalable_container). A
// record's owner writes it between two transitions of its lock, readers copy
// it optimistically and drop torn copies, so writers never wait for readers.
// A container is bounded: an allocation that finds it full fails at once and
// is counted in global_status (Performance_schema_*_lost). Pages that stay
// empty for WithReclaimIdle are retired, and every container's pages show in
// memory_summary_global_by_event_name as memory/performance_schema/<name>.
//
// # Setup
//
// A Schema's behaviour is set by its setup tables, as in MySQL, at start-up
// (options and the OTELPFS_INSTRUMENT and OTELPFS_CONSUMER environment
// variables; see New) and at run time (UpdateInstruments, UpdateConsumers,
// the setup_actors, setup_objects and setup_threads methods, SetupTimers).
// A change is seen by the next event that starts; an event that started
// enabled ends enabled. Instrument classes register by name (Register) and
// get a dense index: summaries are slices indexed by it.
//
// # The wait path
//
// Instruments (package instrument) call SyncInstance.BeginWait,
// IOInstance.BeginWait or Schema.BeginIdle, run the operation, and call
// WaitState.EndWait. BeginWait is one atomic load when the class is off.
// When it is on, the event reads the setup_timers timer, fills the thread's
// current row, and at its end adds its wait to the instance's and the
// thread's statistics and appends the row to the history rings whose
// consumers are on. Nothing on the path takes a lock, and nothing allocates
// but a thread's first event of a class registered after the thread
// started (its statistics grow once); with a thread, each half of the event
// is one uncontended compare-and-swap on the thread's own guard word (see
// below).
//
// Threads are explicit (NewThread); one goroutine drives a thread at a time.
// A thread's storage has a guard word naming the thread it serves: each
// write is a short section opened by a compare-and-swap on it, so two
// goroutines on one Thread, or an event still in flight when another
// goroutine ended its thread, never tear a row or write into storage
// recycled for another thread; the per-thread part of such an event is
// dropped and counted (Performance_schema_thread_events_lost). The same word
// counts the sections, and readers of events_waits_current validate their
// copy of a thread's stack of waits with it, as with a seqlock. Storage of
// ended threads is reused only while no reader is active.
//
// Instances are records in containers per family, freed by Destroy (package
// instrument does it when the instrumented object is garbage collected).
// Global summaries are computed on read from the instances, the live
// threads, and the roll-ups of destroyed instances and ended threads, so no
// counter on the provider path is shared by unrelated goroutines. A thread
// that ends moves from "live" to "rolled up" in one critical section that
// readers of the same summary take only to copy a bounded list, so every
// cumulative column (COUNT_*, SUM_*) only grows between two reads, except
// across a TRUNCATE.
//
// accounts, users and hosts are bounded (WithAccountsSize, WithUsersSize,
// WithHostsSize); a thread that finds its table full has no row there, and
// Performance_schema_accounts_lost, _users_lost or _hosts_lost counts it.
//
// # Tables
//
// Every table is a snapshot of rows read without blocking a writer. Query
// returns one, filtered, ordered and limited by a small SQL subset (the
// WHERE, ORDER BY and LIMIT of Query, the language of the HTTP handler's
// where, order and limit); Select is Query without them; Scan copies a
// snapshot into structs by column name, so Go callers read typed rows.
// Catalog lists the tables: each column with its type and its Role
// (dimension, counter, timer, gauge, low or high water mark, min, avg,
// max, timestamp, duration, id, attribute, text), which is what a generic
// reader (the HTTP view, the OpenTelemetry bridge) needs to know of it.
// A table's columns are declared as the tagged fields of its row struct.
//
// Tables is the interface adapters depend on rather than *Schema: the
// catalog, Query, Truncate, and the changes MySQL allows on setup tables
// as Update, Insert and Delete (UPDATE setup_instruments SET ENABLED='NO'
// WHERE NAME LIKE 'wait/synch/%' is Update("setup_instruments",
// []string{"NAME LIKE 'wait/synch/%'"}, map[string]Value{"ENABLED": "NO"})).
//
// The summaries by event name of a kind of event (global, by thread,
// account, user and host) are declared together as one family, with
// MySQL's TRUNCATE cascade; their TRUNCATE baselines are keyed by the
// row's object and class, never by its text.
//
// The tables (TestDocListsEveryTable keeps this list true):
//
//	setup_instruments, setup_consumers, setup_actors, setup_objects,
//	setup_threads, setup_timers, performance_timers
//	threads, accounts, users, hosts
//	events_waits_current, events_waits_history, events_waits_history_long
//	events_waits_summary_global_by_event_name,
//	events_waits_summary_by_thread_by_event_name,
//	events_waits_summary_by_account_by_event_name,
//	events_waits_summary_by_user_by_event_name,
//	events_waits_summary_by_host_by_event_name,
//	events_waits_summary_by_instance
//	events_stages_current, events_stages_history, events_stages_history_long
//	events_stages_summary_global_by_event_name,
//	events_stages_summary_by_thread_by_event_name,
//	events_stages_summary_by_account_by_event_name,
//	events_stages_summary_by_user_by_event_name,
//	events_stages_summary_by_host_by_event_name
//	events_statements_current, events_statements_history,
//	events_statements_history_long
//	events_statements_summary_global_by_event_name,
//	events_statements_summary_by_thread_by_event_name,
//	events_statements_summary_by_account_by_event_name,
//	events_statements_summary_by_user_by_event_name,
//	events_statements_summary_by_host_by_event_name
//	events_statements_summary_by_digest,
//	events_statements_histogram_by_digest,
//	events_statements_histogram_global
//	events_transactions_current, events_transactions_history,
//	events_transactions_history_long
//	events_transactions_summary_global_by_event_name,
//	events_transactions_summary_by_thread_by_event_name,
//	events_transactions_summary_by_account_by_event_name,
//	events_transactions_summary_by_user_by_event_name,
//	events_transactions_summary_by_host_by_event_name
//	mutex_instances, rwlock_instances, cond_instances, file_instances,
//	socket_instances
//	file_summary_by_event_name, file_summary_by_instance,
//	socket_summary_by_event_name, socket_summary_by_instance
//	memory_summary_global_by_event_name,
//	memory_summary_by_thread_by_event_name,
//	memory_summary_by_account_by_event_name,
//	memory_summary_by_user_by_event_name,
//	memory_summary_by_host_by_event_name (memory classes, and in the global
//	table the built-in rows: memory/performance_schema/* for the schema's
//	own containers, rings and digest storage, memory/go/* for the Go
//	runtime's memory, sampled from runtime/metrics when read)
//	global_status (the Performance_schema_*_lost counters, and two of
//	otelpfs's own: see Schema.Status)
//
// TRUNCATE TABLE (Truncate) has MySQL's effects where MySQL allows it: the
// history tables empty; a summary restarts from zero, MIN and MAX included,
// and truncating a summary restarts the summaries MySQL truncates with it
// (the global summary: all; a by-instance summary: the instance rows of
// the by-event-name summaries, which MySQL computes from the instances);
// accounts, users and hosts, and their summaries, lose their rows without
// connections, and truncating accounts, users or hosts truncates the
// summaries that depend on them (by thread and by account; by user or by
// host) and removes the accounts without connections. It is done on the reader's side (ring bases, summary
// baselines, an epoch per record group that MIN and MAX carry) and never
// touches a record, so it costs the provider one comparison.
//
// # Differences from MySQL
//
//   - MySQL adds a truncated by_thread or by_account summary's statistics
//     to the summaries above it; otelpfs's, computed on read, keep their
//     counts anyway, but their MIN and MAX restart with the TRUNCATE too
//     (widened to include AVG), as extremes are kept once per record. Events
//     that end while a TRUNCATE runs count in the new totals and may be
//     missing from MIN and MAX; a wait longer than 20 hours shows as 20
//     hours in MIN and MAX.
//   - A dialed socket has no owner thread until one is given (package
//     instrument's Conn.SetThread): a pooled connection outlives the request
//     that dialed it.
//   - SOURCE is where the instrumented object was created, captured once,
//     not the call site of each event: a stack walk per event would cost
//     more than the event.
//   - setup_objects has two more OBJECT_TYPEs, FILE (OBJECT_SCHEMA the
//     directory, OBJECT_NAME the base name) and SOCKET (the network and the
//     address).
//   - setup_timers is kept, as in MySQL 5.7, with its idle default of
//     MICROSECOND.
//   - Stages and idle waits have no instances: they count in the threads'
//     statistics only, so with thread_instrumentation off they count
//     nowhere (MySQL adds them to global totals then).
//   - The wait and stage summaries by thread, account, user and host, and
//     every statement and transaction summary by event name, share one
//     MIN/MAX epoch: a TRUNCATE of one such table (or of a wait or stage
//     global summary) restarts the others' extremes too (widened to include
//     AVG), never their counts or sums.
//   - Memory (see memory.go and package memsum): TRUNCATE of any memory
//     summary table rebases all five (MySQL's TRUNCATE of the global one);
//     TRUNCATE of accounts, users or hosts leaves them. A thread's memory
//     statistics move whole to its account (or user and host) when it
//     ends, memory it left allocated included, and that memory's free counts
//     there too: MySQL moves what a thread leaked to the global row, which
//     takes the parent rows' COUNT_ALLOC and HIGH marks down. A free counts
//     on the thread that allocated the memory, from whichever goroutine,
//     unless that thread has ended or is writing at that instant: then on
//     its account (or user and host). The built-in rows are not truncated
//     but for the marks of memory/go/*, and memory/go/* rows other than
//     heap objects are one block each, counted as reallocated whenever a
//     read finds its size changed.
//   - A stage's history consumers and its thread's HISTORY are read when
//     it starts, as a wait's are (MySQL reads a stage's when it ends).
//   - Statements carry the columns that apply to a client: SQL_TEXT,
//     DIGEST, DIGEST_TEXT, CURRENT_SCHEMA, ROWS_AFFECTED, ROWS_SENT,
//     ROWS_EXAMINED, ERRORS, WARNINGS, MESSAGE_TEXT and the nesting columns;
//     the server-side ones (LOCK_TIME, temporary tables, sorts, index use,
//     memory) are left out, and otelpfs adds TRACE_ID and SPAN_ID to the
//     events and SUM_POOL_TIME, SUM_DRIVER_TIME, SUM_FETCH_TIME,
//     COUNT_RETRIES and COUNT_CANCELLED to the summaries. A statement
//     without a thread still counts in the global and by-digest summaries.
//   - A digest's DIGEST is otelpfs's own (see package digest); its
//     DIGEST_TEXT is the server's. Digests are computed once per distinct
//     text (the statement cache), and only while statements_digest is on.
//   - TRUNCATE events_statements_summary_by_digest empties the table at
//     once; a statement ending during it may count in the old table, and is
//     lost, as one ending during MySQL's reset may be.
//     TRUNCATE events_statements_histogram_by_digest restarts the buckets,
//     and with them the QUANTILE_* columns, as in MySQL.
//   - FIRST_SEEN, LAST_SEEN and QUERY_SAMPLE_SEEN are the statements' own
//     end times (the statement timer mapped to wall-clock time), not a clock
//     read apart; an untimed statement reads the cycle counter for them.
//     LAST_SEEN may lag the digest's last statement by up to a millisecond
//     (statements of a digest ending closer together share one update).
//     otelpfs adds QUERY_SAMPLE_TRACE_ID and QUERY_SAMPLE_SPAN_ID: the
//     OpenTelemetry span the query sample (the digest's slowest recent
//     statement) ran in, NULL if none; the bridge exports it as the digest
//     histogram's exemplar.
//   - A stage ends with the statement it began in.
//   - Transactions show ACCESS_MODE, ISOLATION_LEVEL, AUTOCOMMIT and the
//     savepoint counts; the XA and GTID columns are left out, and otelpfs
//     adds STATEMENTS, the statements at level 0 the transaction ran. A
//     transaction begun while another is in progress on the thread counts
//     in the summaries but shows no row.
//   - setup_actors' HOST compares byte for byte, as its USER and ROLE and
//     setup_objects' OBJECT_SCHEMA and OBJECT_NAME do in MySQL (MySQL's HOST
//     is case-insensitive ASCII): the engine matches a thread's host exactly.
//
// # Imports
//
// pfscore imports the standard library, otelpfs's leaves (hwclock, rings)
// and its internal storage (internal/owned, internal/store). It never imports
// OpenTelemetry: the provider path stays free of it.
package pfscore
