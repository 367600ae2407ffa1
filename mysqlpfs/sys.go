package mysqlpfs

import "strings"

// The sys schema: MySQL's most used sys views, written for the tables
// otelpfs has, each with its x$ twin. A view's query is written once with
// three markers: ps_fmt(x), bytes_fmt(x) and stmt_fmt(x) become
// format_pico_time(x), format_bytes(x) and format_statement(x) in the
// view, and plain (x) in its x$ twin, which keeps raw picoseconds, bytes
// and statements for programs to compute with. Orders are on raw values.
//
// Left out, as the data has no such thing: the schema_* and innodb_*
// views, and the statement views that need index, sort or temporary table
// counts (statements_with_full_table_scans, _with_sorting,
// _with_temp_tables). session is left out too: a connection to this
// server is not a thread of the service.

// A sysView is a view and the performance_schema tables it reads.
type sysView struct {
	name  string
	query string
	needs []string
}

// sysViews is every view, x$ twins included, built from sysSources.
var sysViews = buildSysViews()

type sysSource struct {
	name  string
	twin  bool // has an x$ twin
	query string
	needs []string
}

func buildSysViews() []sysView {
	var out []sysView
	for _, s := range sysSources {
		q := strings.Join(strings.Fields(s.query), " ")
		out = append(out, sysView{name: s.name, needs: s.needs, query: strings.NewReplacer(
			"ps_fmt(", "format_pico_time(", "bytes_fmt(", "format_bytes(", "stmt_fmt(", "format_statement(").Replace(q)})
		if s.twin {
			out = append(out, sysView{name: "x$" + s.name, needs: s.needs, query: strings.NewReplacer(
				"ps_fmt(", "(", "bytes_fmt(", "(", "stmt_fmt(", "(").Replace(q)})
		}
	}
	return out
}

const (
	ewsGlobal   = "events_waits_summary_global_by_event_name"
	ewsByUser   = "events_waits_summary_by_user_by_event_name"
	ewsByHost   = "events_waits_summary_by_host_by_event_name"
	essDigest   = "events_statements_summary_by_digest"
	essByUser   = "events_statements_summary_by_user_by_event_name"
	essByHost   = "events_statements_summary_by_host_by_event_name"
	msGlobal    = "memory_summary_global_by_event_name"
	msByThread  = "memory_summary_by_thread_by_event_name"
	msByUser    = "memory_summary_by_user_by_event_name"
	msByHost    = "memory_summary_by_host_by_event_name"
	fsByEvent   = "file_summary_by_event_name"
	fsByInst    = "file_summary_by_instance"
	ewHistLong  = "events_waits_history_long"
	ewCurrent   = "events_waits_current"
	esCurrent   = "events_statements_current"
	globalState = "global_status"
)

// summaryBy is the user_summary / host_summary query for key USER or
// HOST, with users or hosts as its table and the other key counted.
func summaryBy(key, table, other, otherAlias string) string {
	return `
SELECT IFNULL(u.` + key + `, 'background') AS ` + strings.ToLower(key) + `,
  IFNULL(st.statements, 0) AS statements,
  ps_fmt(IFNULL(st.latency, 0)) AS statement_latency,
  ps_fmt(IFNULL(st.latency / NULLIF(st.statements, 0), 0)) AS statement_avg_latency,
  IFNULL(io.ios, 0) AS file_ios,
  ps_fmt(IFNULL(io.latency, 0)) AS file_io_latency,
  u.CURRENT_CONNECTIONS AS current_connections,
  u.TOTAL_CONNECTIONS AS total_connections,
  IFNULL(a.n, 0) AS ` + otherAlias + `,
  bytes_fmt(IFNULL(m.current_bytes, 0)) AS current_memory,
  bytes_fmt(IFNULL(m.total_bytes, 0)) AS total_memory_allocated
FROM performance_schema.` + table + ` u
LEFT JOIN (SELECT ` + key + `, SUM(COUNT_STAR) AS statements, SUM(SUM_TIMER_WAIT) AS latency
  FROM performance_schema.events_statements_summary_by_` + strings.ToLower(key) + `_by_event_name GROUP BY ` + key + `) st ON st.` + key + ` <=> u.` + key + `
LEFT JOIN (SELECT ` + key + `, SUM(COUNT_STAR) AS ios, SUM(SUM_TIMER_WAIT) AS latency
  FROM performance_schema.events_waits_summary_by_` + strings.ToLower(key) + `_by_event_name WHERE EVENT_NAME LIKE 'wait/io/file/%' GROUP BY ` + key + `) io ON io.` + key + ` <=> u.` + key + `
LEFT JOIN (SELECT ` + key + `, SUM(CURRENT_NUMBER_OF_BYTES_USED) AS current_bytes, SUM(SUM_NUMBER_OF_BYTES_ALLOC) AS total_bytes
  FROM performance_schema.memory_summary_by_` + strings.ToLower(key) + `_by_event_name GROUP BY ` + key + `) m ON m.` + key + ` <=> u.` + key + `
LEFT JOIN (SELECT ` + key + `, COUNT(DISTINCT ` + other + `) AS n FROM performance_schema.accounts WHERE ` + other + ` IS NOT NULL GROUP BY ` + key + `) a ON a.` + key + ` <=> u.` + key + `
ORDER BY IFNULL(st.latency, 0) DESC`
}

// byStatementType is user_summary_by_statement_type or the host one.
func byStatementType(key, table string) string {
	return `
SELECT IFNULL(` + key + `, 'background') AS ` + strings.ToLower(key) + `,
  SUBSTRING_INDEX(EVENT_NAME, '/', -1) AS statement,
  COUNT_STAR AS total,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  ps_fmt(MAX_TIMER_WAIT) AS max_latency,
  SUM_ROWS_SENT AS rows_sent,
  SUM_ROWS_EXAMINED AS rows_examined,
  SUM_ROWS_AFFECTED AS rows_affected,
  SUM_ERRORS AS errors
FROM performance_schema.` + table + `
WHERE SUM_TIMER_WAIT > 0
ORDER BY IFNULL(` + key + `, 'background'), SUM_TIMER_WAIT DESC`
}

// waitsBy is waits_by_user_by_latency or the host one.
func waitsBy(key, table string) string {
	return `
SELECT ` + key + ` AS ` + strings.ToLower(key) + `,
  EVENT_NAME AS event,
  COUNT_STAR AS total,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  ps_fmt(AVG_TIMER_WAIT) AS avg_latency,
  ps_fmt(MAX_TIMER_WAIT) AS max_latency
FROM performance_schema.` + table + `
WHERE EVENT_NAME <> 'idle' AND ` + key + ` IS NOT NULL AND SUM_TIMER_WAIT > 0
ORDER BY ` + key + `, SUM_TIMER_WAIT DESC`
}

// memoryBy is memory_by_user_by_current_bytes or the host one.
func memoryBy(key, table string) string {
	return `
SELECT IFNULL(` + key + `, 'background') AS ` + strings.ToLower(key) + `,
  SUM(CURRENT_COUNT_USED) AS current_count_used,
  bytes_fmt(SUM(CURRENT_NUMBER_OF_BYTES_USED)) AS current_allocated,
  bytes_fmt(IFNULL(SUM(CURRENT_NUMBER_OF_BYTES_USED) / NULLIF(SUM(CURRENT_COUNT_USED), 0), 0)) AS current_avg_alloc,
  bytes_fmt(MAX(CURRENT_NUMBER_OF_BYTES_USED)) AS current_max_alloc,
  bytes_fmt(SUM(SUM_NUMBER_OF_BYTES_ALLOC)) AS total_allocated
FROM performance_schema.` + table + `
GROUP BY IFNULL(` + key + `, 'background')
ORDER BY SUM(CURRENT_NUMBER_OF_BYTES_USED) DESC`
}

// waitClasses is wait_classes_global_by_latency or _by_avg_latency.
func waitClasses(order string) string {
	return `
SELECT SUBSTRING_INDEX(EVENT_NAME, '/', 3) AS event_class,
  SUM(COUNT_STAR) AS total,
  ps_fmt(SUM(SUM_TIMER_WAIT)) AS total_latency,
  ps_fmt(MIN(MIN_TIMER_WAIT)) AS min_latency,
  ps_fmt(IFNULL(SUM(SUM_TIMER_WAIT) / NULLIF(SUM(COUNT_STAR), 0), 0)) AS avg_latency,
  ps_fmt(MAX(MAX_TIMER_WAIT)) AS max_latency
FROM performance_schema.events_waits_summary_global_by_event_name
WHERE SUM_TIMER_WAIT > 0 AND EVENT_NAME <> 'idle'
GROUP BY SUBSTRING_INDEX(EVENT_NAME, '/', 3)
ORDER BY ` + order + ` DESC`
}

// fileIO is io_global_by_file_by_latency or _by_bytes.
func fileIO(order string) string {
	return `
SELECT FILE_NAME AS file,
  COUNT_STAR AS total,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  COUNT_READ AS count_read,
  ps_fmt(SUM_TIMER_READ) AS read_latency,
  bytes_fmt(SUM_NUMBER_OF_BYTES_READ) AS total_read,
  COUNT_WRITE AS count_write,
  ps_fmt(SUM_TIMER_WRITE) AS write_latency,
  bytes_fmt(SUM_NUMBER_OF_BYTES_WRITE) AS total_written,
  COUNT_MISC AS count_misc,
  ps_fmt(SUM_TIMER_MISC) AS misc_latency
FROM performance_schema.file_summary_by_instance
ORDER BY ` + order + ` DESC`
}

// ioByWait is io_global_by_wait_by_latency or _by_bytes.
func ioByWait(order string) string {
	return `
SELECT SUBSTRING_INDEX(EVENT_NAME, '/', -2) AS event_name,
  COUNT_STAR AS total,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  ps_fmt(AVG_TIMER_WAIT) AS avg_latency,
  ps_fmt(MAX_TIMER_WAIT) AS max_latency,
  ps_fmt(SUM_TIMER_READ) AS read_latency,
  ps_fmt(SUM_TIMER_WRITE) AS write_latency,
  ps_fmt(SUM_TIMER_MISC) AS misc_latency,
  COUNT_READ AS count_read,
  bytes_fmt(SUM_NUMBER_OF_BYTES_READ) AS total_read,
  bytes_fmt(IFNULL(SUM_NUMBER_OF_BYTES_READ / NULLIF(COUNT_READ, 0), 0)) AS avg_read,
  COUNT_WRITE AS count_write,
  bytes_fmt(SUM_NUMBER_OF_BYTES_WRITE) AS total_written,
  bytes_fmt(IFNULL(SUM_NUMBER_OF_BYTES_WRITE / NULLIF(COUNT_WRITE, 0), 0)) AS avg_written
FROM performance_schema.file_summary_by_event_name
WHERE EVENT_NAME LIKE 'wait/io/file/%' AND COUNT_STAR > 0
ORDER BY ` + order + ` DESC`
}

// threadUser is sys's user column of a thread: user@host for a thread
// with an account, else the thread's name without its thread/ prefix.
const threadUser = `IF(t.PROCESSLIST_USER IS NULL, REPLACE(t.NAME, 'thread/', ''), CONCAT(t.PROCESSLIST_USER, '@', IFNULL(t.PROCESSLIST_HOST, '')))`

var sysSources = []sysSource{
	{name: "version", query: `SELECT '2.1.2' AS sys_version, VERSION() AS mysql_version`},

	{name: "waits_global_by_latency", twin: true, needs: []string{ewsGlobal}, query: `
SELECT EVENT_NAME AS events,
  COUNT_STAR AS total,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  ps_fmt(AVG_TIMER_WAIT) AS avg_latency,
  ps_fmt(MAX_TIMER_WAIT) AS max_latency
FROM performance_schema.events_waits_summary_global_by_event_name
WHERE EVENT_NAME <> 'idle' AND SUM_TIMER_WAIT > 0
ORDER BY SUM_TIMER_WAIT DESC`},
	{name: "wait_classes_global_by_latency", twin: true, needs: []string{ewsGlobal}, query: waitClasses("SUM(SUM_TIMER_WAIT)")},
	{name: "wait_classes_global_by_avg_latency", twin: true, needs: []string{ewsGlobal}, query: waitClasses("IFNULL(SUM(SUM_TIMER_WAIT) / NULLIF(SUM(COUNT_STAR), 0), 0)")},
	{name: "waits_by_user_by_latency", twin: true, needs: []string{ewsByUser}, query: waitsBy("USER", ewsByUser)},
	{name: "waits_by_host_by_latency", twin: true, needs: []string{ewsByHost}, query: waitsBy("HOST", ewsByHost)},

	{name: "statement_analysis", twin: true, needs: []string{essDigest}, query: `
SELECT stmt_fmt(DIGEST_TEXT) AS query,
  SCHEMA_NAME AS db,
  COUNT_STAR AS exec_count,
  SUM_ERRORS AS err_count,
  SUM_WARNINGS AS warn_count,
  ps_fmt(SUM_TIMER_WAIT) AS total_latency,
  ps_fmt(MAX_TIMER_WAIT) AS max_latency,
  ps_fmt(AVG_TIMER_WAIT) AS avg_latency,
  ps_fmt(QUANTILE_95) AS p95_latency,
  SUM_ROWS_SENT AS rows_sent,
  ROUND(IFNULL(SUM_ROWS_SENT / NULLIF(COUNT_STAR, 0), 0)) AS rows_sent_avg,
  SUM_ROWS_EXAMINED AS rows_examined,
  ROUND(IFNULL(SUM_ROWS_EXAMINED / NULLIF(COUNT_STAR, 0), 0)) AS rows_examined_avg,
  SUM_ROWS_AFFECTED AS rows_affected,
  ROUND(IFNULL(SUM_ROWS_AFFECTED / NULLIF(COUNT_STAR, 0), 0)) AS rows_affected_avg,
  FIRST_SEEN AS first_seen,
  LAST_SEEN AS last_seen,
  DIGEST AS digest
FROM performance_schema.events_statements_summary_by_digest
ORDER BY SUM_TIMER_WAIT DESC`},
	{name: "statements_with_errors_or_warnings", twin: true, needs: []string{essDigest}, query: `
SELECT stmt_fmt(DIGEST_TEXT) AS query,
  SCHEMA_NAME AS db,
  COUNT_STAR AS exec_count,
  SUM_ERRORS AS errors,
  IFNULL(SUM_ERRORS / NULLIF(COUNT_STAR, 0), 0) * 100 AS error_pct,
  SUM_WARNINGS AS warnings,
  IFNULL(SUM_WARNINGS / NULLIF(COUNT_STAR, 0), 0) * 100 AS warning_pct,
  FIRST_SEEN AS first_seen,
  LAST_SEEN AS last_seen,
  DIGEST AS digest
FROM performance_schema.events_statements_summary_by_digest
WHERE SUM_ERRORS > 0 OR SUM_WARNINGS > 0
ORDER BY SUM_ERRORS DESC, SUM_WARNINGS DESC`},
	{name: "user_summary_by_statement_type", twin: true, needs: []string{essByUser}, query: byStatementType("USER", essByUser)},
	{name: "host_summary_by_statement_type", twin: true, needs: []string{essByHost}, query: byStatementType("HOST", essByHost)},

	{name: "user_summary", twin: true, needs: []string{"users", "accounts", essByUser, ewsByUser, msByUser}, query: summaryBy("USER", "users", "HOST", "unique_hosts")},
	{name: "host_summary", twin: true, needs: []string{"hosts", "accounts", essByHost, ewsByHost, msByHost}, query: summaryBy("HOST", "hosts", "USER", "unique_users")},

	{name: "memory_global_by_current_bytes", twin: true, needs: []string{msGlobal}, query: `
SELECT EVENT_NAME AS event_name,
  CURRENT_COUNT_USED AS current_count,
  bytes_fmt(CURRENT_NUMBER_OF_BYTES_USED) AS current_alloc,
  bytes_fmt(IFNULL(CURRENT_NUMBER_OF_BYTES_USED / NULLIF(CURRENT_COUNT_USED, 0), 0)) AS current_avg_alloc,
  HIGH_COUNT_USED AS high_count,
  bytes_fmt(HIGH_NUMBER_OF_BYTES_USED) AS high_alloc,
  bytes_fmt(IFNULL(HIGH_NUMBER_OF_BYTES_USED / NULLIF(HIGH_COUNT_USED, 0), 0)) AS high_avg_alloc
FROM performance_schema.memory_summary_global_by_event_name
WHERE CURRENT_NUMBER_OF_BYTES_USED > 0
ORDER BY CURRENT_NUMBER_OF_BYTES_USED DESC`},
	{name: "memory_global_total", twin: true, needs: []string{msGlobal}, query: `
SELECT bytes_fmt(SUM(CURRENT_NUMBER_OF_BYTES_USED)) AS total_allocated
FROM performance_schema.memory_summary_global_by_event_name
WHERE EVENT_NAME NOT LIKE 'memory/go/%'`},
	{name: "memory_by_thread_by_current_bytes", twin: true, needs: []string{msByThread, "threads"}, query: `
SELECT t.THREAD_ID AS thread_id,
  ` + threadUser + ` AS user,
  SUM(m.CURRENT_COUNT_USED) AS current_count_used,
  bytes_fmt(SUM(m.CURRENT_NUMBER_OF_BYTES_USED)) AS current_allocated,
  bytes_fmt(IFNULL(SUM(m.CURRENT_NUMBER_OF_BYTES_USED) / NULLIF(SUM(m.CURRENT_COUNT_USED), 0), 0)) AS current_avg_alloc,
  bytes_fmt(MAX(m.CURRENT_NUMBER_OF_BYTES_USED)) AS current_max_alloc,
  bytes_fmt(SUM(m.SUM_NUMBER_OF_BYTES_ALLOC)) AS total_allocated
FROM performance_schema.memory_summary_by_thread_by_event_name m
JOIN performance_schema.threads t ON m.THREAD_ID = t.THREAD_ID
GROUP BY t.THREAD_ID, t.NAME, t.PROCESSLIST_USER, t.PROCESSLIST_HOST
ORDER BY SUM(m.CURRENT_NUMBER_OF_BYTES_USED) DESC`},
	{name: "memory_by_user_by_current_bytes", twin: true, needs: []string{msByUser}, query: memoryBy("USER", msByUser)},
	{name: "memory_by_host_by_current_bytes", twin: true, needs: []string{msByHost}, query: memoryBy("HOST", msByHost)},

	{name: "io_global_by_file_by_latency", twin: true, needs: []string{fsByInst}, query: fileIO("SUM_TIMER_WAIT")},
	{name: "io_global_by_file_by_bytes", twin: true, needs: []string{fsByInst}, query: fileIO("SUM_NUMBER_OF_BYTES_READ + SUM_NUMBER_OF_BYTES_WRITE")},
	{name: "io_global_by_wait_by_latency", twin: true, needs: []string{fsByEvent}, query: ioByWait("SUM_TIMER_WAIT")},
	{name: "io_global_by_wait_by_bytes", twin: true, needs: []string{fsByEvent}, query: ioByWait("SUM_NUMBER_OF_BYTES_READ + SUM_NUMBER_OF_BYTES_WRITE")},
	{name: "latest_file_io", twin: true, needs: []string{ewHistLong, "threads"}, query: `
SELECT ` + threadUser + ` AS thread,
  w.OBJECT_NAME AS file,
  ps_fmt(w.TIMER_WAIT) AS latency,
  w.OPERATION AS operation,
  bytes_fmt(w.NUMBER_OF_BYTES) AS requested
FROM performance_schema.events_waits_history_long w
JOIN performance_schema.threads t ON w.THREAD_ID = t.THREAD_ID
WHERE w.OBJECT_NAME IS NOT NULL AND w.EVENT_NAME LIKE 'wait/io/file/%'
ORDER BY w.TIMER_START`},

	{name: "processlist", twin: true, needs: []string{"threads", esCurrent, ewCurrent, msByThread}, query: `
SELECT t.THREAD_ID AS thd_id,
  t.PROCESSLIST_ID AS conn_id,
  ` + threadUser + ` AS user,
  t.PROCESSLIST_DB AS db,
  t.PROCESSLIST_COMMAND AS command,
  t.PROCESSLIST_STATE AS state,
  t.PROCESSLIST_TIME AS time,
  IF(s.END_EVENT_ID IS NULL, stmt_fmt(s.SQL_TEXT), NULL) AS current_statement,
  IF(s.END_EVENT_ID IS NULL, ps_fmt(s.TIMER_WAIT), NULL) AS statement_latency,
  s.ROWS_SENT AS rows_sent,
  s.ROWS_AFFECTED AS rows_affected,
  s.ROWS_EXAMINED AS rows_examined,
  IF(s.END_EVENT_ID IS NOT NULL, stmt_fmt(s.SQL_TEXT), NULL) AS last_statement,
  IF(s.END_EVENT_ID IS NOT NULL, ps_fmt(s.TIMER_WAIT), NULL) AS last_statement_latency,
  bytes_fmt(mem.current_bytes) AS current_memory,
  w.EVENT_NAME AS last_wait,
  IF(w.EVENT_NAME IS NOT NULL AND w.END_EVENT_ID IS NULL, 'Still Waiting', ps_fmt(w.TIMER_WAIT)) AS last_wait_latency,
  w.SOURCE AS source,
  s.TRACE_ID AS trace_id,
  t.INSTRUMENTED AS instrumented
FROM performance_schema.threads t
LEFT JOIN (SELECT THREAD_ID, MAX(EVENT_ID) AS EVENT_ID FROM performance_schema.events_statements_current GROUP BY THREAD_ID) ls ON ls.THREAD_ID = t.THREAD_ID
LEFT JOIN performance_schema.events_statements_current s ON s.THREAD_ID = ls.THREAD_ID AND s.EVENT_ID = ls.EVENT_ID
LEFT JOIN (SELECT THREAD_ID, MAX(EVENT_ID) AS EVENT_ID FROM performance_schema.events_waits_current GROUP BY THREAD_ID) lw ON lw.THREAD_ID = t.THREAD_ID
LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = lw.THREAD_ID AND w.EVENT_ID = lw.EVENT_ID
LEFT JOIN (SELECT THREAD_ID, SUM(CURRENT_NUMBER_OF_BYTES_USED) AS current_bytes FROM performance_schema.memory_summary_by_thread_by_event_name GROUP BY THREAD_ID) mem ON mem.THREAD_ID = t.THREAD_ID
ORDER BY t.PROCESSLIST_TIME DESC, t.THREAD_ID`},

	{name: "ps_check_lost_instrumentation", needs: []string{globalState}, query: `
SELECT VARIABLE_NAME AS variable_name, VARIABLE_VALUE AS variable_value
FROM performance_schema.global_status
WHERE VARIABLE_NAME LIKE 'Performance_schema_%_lost' AND VARIABLE_VALUE > 0`},
	{name: "metrics", needs: []string{globalState}, query: `
SELECT VARIABLE_NAME AS Variable_name, VARIABLE_VALUE AS Variable_value, 'Global Status' AS Type, 'YES' AS Enabled
FROM performance_schema.global_status
ORDER BY VARIABLE_NAME`},
}
