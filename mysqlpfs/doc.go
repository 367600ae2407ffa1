// Package mysqlpfs serves otelpfs's performance_schema, and a sys schema
// over it, on the MySQL wire protocol, so that the mysql client, MySQL
// drivers and tools that speak MySQL query a running Go service as they
// query a MySQL server:
//
//	srv, err := mysqlpfs.Listen("127.0.0.1:6033", pfscore.Default(),
//		mysqlpfs.WithUser("pfs", password), mysqlpfs.WithSetupChanges(true))
//	...
//	defer srv.Close()
//
//	$ mysql -h 127.0.0.1 -P 6033 -u pfs -p -e "SELECT * FROM sys.statement_analysis LIMIT 5"
//
// It is a module of its own (github.com/otelpfs/otelpfs/mysqlpfs): the SQL
// engine it runs on, github.com/dolthub/go-mysql-server, is large, and
// only a service that imports this package builds it.
//
// # Tables
//
// Every table of the pfscore.Tables given to Listen is a table of the
// performance_schema database, with its columns in order and MySQL's
// names: counts and TIMER_* columns (picoseconds) are BIGINT UNSIGNED,
// signed ones BIGINT, ENUM-like and other strings VARCHAR, free text
// (SQL_TEXT, DIGEST_TEXT, DOCUMENTATION, ...) LONGTEXT. Strings compare
// case-insensitively, but setup_actors' and setup_objects' keys, which
// compare byte for byte, as in MySQL. Each scan of a table reads a fresh
// snapshot through pfscore.Tables.Query, which never blocks the service's
// instruments; WHERE, ORDER BY, GROUP BY, joins, subqueries and LIMIT are
// the engine's. Two scans of a table in one statement (a self-join) are
// two snapshots.
//
// # Setup changes
//
// With WithSetupChanges, the statements MySQL allows on performance_schema
// change the service's instrumentation at once, through
// pfscore.Tables' Update, Insert, Delete and Truncate: UPDATE of
// setup_instruments (ENABLED, TIMED), setup_consumers (ENABLED),
// setup_threads and setup_actors (ENABLED, HISTORY), setup_objects
// (ENABLED, TIMED), setup_timers (TIMER_NAME) and threads (INSTRUMENTED,
// HISTORY); INSERT and DELETE on setup_actors and setup_objects (a column
// not given takes MySQL's default); TRUNCATE TABLE on the tables MySQL
// truncates. An UPDATE applies row by row; a row that fails stops the
// statement with the rows before it changed, as performance_schema,
// which has no transactions, does in MySQL.
//
// What MySQL refuses is refused with its error: ER_TABLEACCESS_DENIED_ERROR
// (1142) for a statement the table does not take (UPDATE of
// events_waits_current, DELETE of a history table, TRUNCATE of
// setup_instruments), and for every change while the server only reads;
// ER_WRONG_PERFSCHEMA_USAGE (1683) for an UPDATE of a column that does not
// change (setup_instruments.NAME); ER_DUP_ENTRY (1062) and
// ER_RECORD_FILE_FULL (1114) for INSERTs; WARN_DATA_TRUNCATED (1265) for a
// value a column does not take. The error constants list them.
//
// # The sys schema
//
// The sys database holds MySQL's most used sys views, written over the
// tables otelpfs has, each but version, metrics and
// ps_check_lost_instrumentation with its x$ twin of raw numbers:
// statement_analysis, statements_with_errors_or_warnings,
// user_summary_by_statement_type, host_summary_by_statement_type,
// user_summary, host_summary, waits_global_by_latency,
// wait_classes_global_by_latency, wait_classes_global_by_avg_latency,
// waits_by_user_by_latency, waits_by_host_by_latency,
// memory_global_by_current_bytes, memory_global_total,
// memory_by_thread_by_current_bytes, memory_by_user_by_current_bytes,
// memory_by_host_by_current_bytes, io_global_by_file_by_latency,
// io_global_by_file_by_bytes, io_global_by_wait_by_latency,
// io_global_by_wait_by_bytes, latest_file_io and processlist. Their
// columns are sys's, but for those whose data a Go service has no
// equivalent of (lock latency, temporary tables, sorts, index use), which
// are left out; statement_analysis adds p95_latency and processlist
// trace_id. The functions are format_pico_time (and sys 1.5's
// format_time), format_bytes, format_statement, ps_thread_id and
// ps_current_thread_id, called with or without the sys. prefix. An x$
// view is named as in MySQL, unquoted (sys.x$statement_analysis) or in
// backquotes: the server quotes an unquoted identifier with a '$' before
// the engine's parser, which takes none, reads the statement. SUM of an
// integer column is an exact DECIMAL, as in MySQL, so the x$ views' sums
// of picoseconds and bytes are whole numbers, exact past 2^53.
//
// # Safety
//
// Listen serves on loopback addresses only unless WithRemoteAccess, which
// needs a password. The server has one account (WithUser), checked with
// mysql_native_password; a wrong password or user name is
// ER_ACCESS_DENIED_ERROR (1045). The account reads performance_schema and
// sys and nothing else: the engine's own mysql database is closed to it
// (1044), and no statement reaches a file (SELECT ... INTO OUTFILE,
// LOAD DATA and LOAD_FILE are refused with 1227 or 1142) or the engine's
// global variables (SET GLOBAL: 1227), and no client changes the account
// (ALTER USER: 1227). The server holds none of the
// service's data but the tables. Each statement runs under a timeout
// (WithQueryTimeout; ER_QUERY_TIMEOUT, 3024), each result under a row
// limit (WithRowLimit; ER_TOO_BIG_SELECT, 1104), and at most
// WithMaxConnections connections are served at once; a client that has
// not authenticated 10 seconds after connecting (MySQL's
// connect_timeout) is disconnected. While statements run, the server
// samples the Go heap every 5 ms and cancels, with ER_QUERY_INTERRUPTED
// (1317), each statement under which the heap has grown more than
// WithQueryMemoryLimit (256 MiB by default) past its garbage collection
// goal when the statement began: the engine holds the rows it sorts,
// groups, deduplicates and joins in buffers of its own, which no count of
// the tables' rows bounds (a sort of a cross join of three 3,000-row
// history tables grows the heap some 150 MiB a second), while the heap is
// what the limit protects, and the engine's iterators stop within
// milliseconds of their cancellation. The heap is the process's: a
// statement that runs while the service itself grows its heap that much
// is cancelled too. A statement whose client closes its connection is
// cancelled within 50 ms (on Linux and the BSDs, macOS among them). The
// engine's log lines a client can cause (failed logins, handshakes that
// are not MySQL's, statements that fail) go to logrus's standard logger,
// the service's, at most 10 at once and then one every 6 seconds, with a
// count of those left out. No value a statement builds passes
// max_allowed_packet (WithMaxAllowedPacket, 16 MiB by default, read-only
// for a client): REPEAT, LPAD, RPAD, SPACE, REPLACE, REGEXP_REPLACE,
// CONCAT, CONCAT_WS, HEX, TO_BASE64, FORMAT, UNCOMPRESS, the JSON
// functions that build documents, JSON_ARRAYAGG and JSON_OBJECTAGG give
// NULL with warning 1301 (ER_WARN_ALLOWED_PACKET_OVERFLOWED) for a result
// that would be longer, as in MySQL, the bound taken from their arguments
// before the engine builds the result; GROUP_CONCAT with a
// group_concat_max_len past max_allowed_packet is refused with 1153. The
// protocol is not encrypted.
//
// # Concurrency
//
// All exported functions and methods are safe for concurrent use. Each
// connection's statements run on goroutines of the server's; a query
// costs the service what reading the tables costs (see package pfscore),
// and never makes an instrument wait.
//
// # Limitations
//
//   - The SQL is go-mysql-server's: MySQL 8.0's dialect, with the gaps that
//     project lists; the version the server reports is 8.0.36-otelpfs.
//   - A MySQL connection is not a thread of the service: CONNECTION_ID()
//     is the server's own, ps_current_thread_id() is NULL, and sys.session
//     is left out. ps_thread_id(n) finds a thread by its PROCESSLIST_ID,
//     which otelpfs threads leave NULL unless their provider sets it.
//   - memory_global_total leaves out memory/go/*, the Go runtime's view of
//     the whole process, which would count the other rows twice.
//   - A DELETE without WHERE reaches the table as a TRUNCATE; the server
//     tells the two apart by the statement's first word, so a TRUNCATE run
//     through PREPARE and EXECUTE is taken for a DELETE (refused but on
//     setup_actors and setup_objects).
//   - The memory limit counts from the heap's garbage collection goal,
//     which may be up to the limit past its size, and is checked every
//     5 ms: the heap may grow by up to twice the limit, and by what the
//     engine allocates between two checks, before a statement is
//     cancelled.
package mysqlpfs
