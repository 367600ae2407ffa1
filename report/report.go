// Package report writes the reports that `pfs top` prints, in the manner
// of MySQL's sys schema: statement analysis by digest, statements by HTTP
// route, top waits by latency, the hottest instances, the busiest threads,
// memory by current bytes and the lost counters. It reads any
// pfscore.Tables: a *pfscore.Schema in the service's own process, or an
// exporter.Client over HTTP.
//
//	var r report.Report
//	for range time.Tick(5 * time.Second) {
//		r.Write(os.Stdout, pfscore.Default())
//	}
//
// Totals are cumulative since start-up or the tables' last TRUNCATE; a
// Report remembers the wait totals of its previous Write, so that from the
// second report on the top waits also show the last interval and rank by it.
package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// DefaultLimit is the rows per section of a Report whose Limit is 0.
const DefaultLimit = 10

// ErrNoTables is what Write returns when t has none of the tables a report
// reads: it is not an otelpfs schema (an HTTP address that answers 404 for
// everything, say). The error wraps the last table's error too.
var ErrNoTables = errors.New("none of the tables a report reads")

// A Report writes reports of a performance schema. The zero value is ready
// to use. A Report is not safe for concurrent use: it remembers the
// previous report's wait totals.
type Report struct {
	// Limit is the most rows a section shows; 0 means DefaultLimit.
	Limit int
	// Where adds a condition to the rows a section reads, by the section's
	// title: {MemoryByCurrent: "EVENT_NAME LIKE 'memory/app/%'"} shows the
	// application's memory without the Go runtime's and otelpfs's own.
	Where map[string]string
	// Sections, if not nil, lists the titles of the sections to write, in
	// the report's order whatever the list's; nil writes them all.
	Sections []string

	waits map[string][2]uint64 // EVENT_NAME -> COUNT_STAR, SUM_TIMER_WAIT; nil before the first report
}

// A section is one part of the report.
type section struct {
	title string
	label string // what it reads, for the title
	table string // the table Report.Where's condition applies to
	build func(t pfscore.Tables, limit int, st *Report) (*pfscore.Result, error)
	empty string // what an empty result means
}

// The sections' titles, for Report.Sections.
const (
	StatementAnalysis = "Statement analysis"
	StatementsByRoute = "Statements by route"
	TopWaits          = "Top waits by total latency"
	HottestInstances  = "Hottest instances"
	BusiestThreads    = "Busiest threads"
	Users             = "Users"
	MemoryByCurrent   = "Memory by current bytes"
	Lost              = "Lost"
)

var sections = []section{
	{StatementAnalysis, "events_statements_summary_by_digest", "events_statements_summary_by_digest", topStatements, "no statements yet"},
	{StatementsByRoute, "events_statements_summary_by_digest, statement/http/request", "events_statements_summary_by_digest", topRoutes, "no HTTP requests yet"},
	{TopWaits, "events_waits_summary_global_by_event_name", "events_waits_summary_global_by_event_name", topWaits, "no timed waits yet"},
	{HottestInstances, "events_waits_summary_by_instance", "events_waits_summary_by_instance", topInstances, "no timed waits on instances yet"},
	{BusiestThreads, "events_waits_summary_by_thread_by_event_name", "events_waits_summary_by_thread_by_event_name", topThreads, "no thread has waited yet"},
	{Users, "sys.user_summary", "events_statements_summary_by_user_by_event_name", topUsers, "no user has run a statement yet"},
	{MemoryByCurrent, "memory_summary_global_by_event_name", "memory_summary_global_by_event_name", topMemory, "no memory in use"},
	{Lost, "global_status", "global_status", topLost, "nothing lost"},
}

// whereTables adds a condition to the queries of one table.
type whereTables struct {
	pfscore.Tables
	table, cond string
}

func (w whereTables) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	if table == w.table {
		q.Where = append(q.Where[:len(q.Where):len(q.Where)], w.cond)
	}
	return w.Tables.Query(table, q)
}

// wanted returns how many sections the report writes.
func (r *Report) wanted() int {
	if r.Sections == nil {
		return len(sections)
	}
	n := 0
	for _, s := range sections {
		if slices.Contains(r.Sections, s.title) {
			n++
		}
	}
	return n
}

// Write writes one report of t to w: each section's title, then its rows
// as a text table (exporter.WriteText's format, indented) or what its
// emptiness means. A section whose table t does not have (an older
// otelpfs) says so, unless no section's table is there: then Write returns
// an error wrapping ErrNoTables. Any other error of t ends the report and
// is returned; what was written before it stays written.
func (r *Report) Write(w io.Writer, t pfscore.Tables) error {
	limit := r.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var b bytes.Buffer
	missing, asked := 0, 0
	for _, s := range sections {
		if r.Sections != nil && !slices.Contains(r.Sections, s.title) {
			continue
		}
		asked++
		fmt.Fprintf(&b, "\n%s (%s)\n", s.title, s.label)
		var src pfscore.Tables = t
		if cond := r.Where[s.title]; cond != "" {
			src = whereTables{t, s.table, cond}
		}
		res, err := s.build(src, limit, r)
		switch {
		case errors.Is(err, pfscore.ErrUnknownTable):
			if missing++; missing == asked && asked == r.wanted() {
				return fmt.Errorf("%w: %w", ErrNoTables, err)
			}
			b.WriteString("  (not available from this service)\n")
		case err != nil:
			w.Write(b.Bytes())
			return err
		case len(res.Rows) == 0:
			fmt.Fprintf(&b, "  (%s)\n", s.empty)
		default:
			var tb bytes.Buffer
			exporter.WriteText(&tb, res)
			for _, line := range bytes.SplitAfter(tb.Bytes(), []byte("\n")) {
				if len(line) > 0 {
					b.WriteString("  ")
					b.Write(line)
				}
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// columns maps a result's column names to their indexes.
type columns map[string]int

func columnsOf(res *pfscore.Result) columns {
	m := columns{}
	for i, c := range res.Columns {
		m[c.Name] = i
	}
	return m
}

// get returns row's value of column name, nil if there is no such column.
func (m columns) get(row pfscore.Row, name string) pfscore.Value {
	if i, ok := m[name]; ok && i < len(row) {
		return row[i]
	}
	return nil
}

func (m columns) uint(row pfscore.Row, name string) uint64 {
	v, _ := m.get(row, name).(uint64)
	return v
}

func (m columns) int(row pfscore.Row, name string) int64 {
	switch v := m.get(row, name).(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	}
	return 0
}

func (m columns) str(row pfscore.Row, name string) string {
	v, _ := m.get(row, name).(string)
	return v
}

func newResult(name string, spec ...any) *pfscore.Result {
	res := &pfscore.Result{Table: name}
	for i := 0; i+1 < len(spec); i += 2 {
		res.Columns = append(res.Columns, pfscore.Column{Name: spec[i].(string), Type: spec[i+1].(pfscore.ColumnType)})
	}
	return res
}

// topWaits is sys.waits_global_by_latency. From the second report on it
// adds the waits and latency of the last interval and ranks by them, so a
// refreshing screen shows what the service waits on now.
func topWaits(t pfscore.Tables, limit int, st *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_waits_summary_global_by_event_name", pfscore.Query{
		Where: []string{"EVENT_NAME != 'idle' AND SUM_TIMER_WAIT > 0"},
		Order: "SUM_TIMER_WAIT desc",
	})
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	prev := st.waits
	st.waits = make(map[string][2]uint64, len(src.Rows))
	type row struct {
		r          pfscore.Row
		dCount, dT uint64
	}
	rows := make([]row, 0, len(src.Rows))
	for _, r := range src.Rows {
		name, count, sum := m.str(r, "EVENT_NAME"), m.uint(r, "COUNT_STAR"), m.uint(r, "SUM_TIMER_WAIT")
		st.waits[name] = [2]uint64{count, sum}
		var d row
		d.r = r
		if p, ok := prev[name]; ok && count >= p[0] && sum >= p[1] { // else: truncated since
			d.dCount, d.dT = count-p[0], sum-p[1]
		} else if prev != nil {
			d.dCount, d.dT = count, sum
		}
		rows = append(rows, d)
	}
	if prev != nil { // rank by the interval; the server ranked by total
		slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.dT, a.dT) })
	}
	spec := []any{"events", pfscore.ColString, "total", pfscore.ColUint,
		"total_latency", pfscore.ColPicos, "avg_latency", pfscore.ColPicos, "max_latency", pfscore.ColPicos}
	if prev != nil {
		spec = append(spec, "interval", pfscore.ColUint, "interval_latency", pfscore.ColPicos)
	}
	res := newResult("waits_global_by_latency", spec...)
	for _, d := range rows[:min(limit, len(rows))] {
		r := d.r
		out := pfscore.Row{m.get(r, "EVENT_NAME"), m.get(r, "COUNT_STAR"),
			m.get(r, "SUM_TIMER_WAIT"), m.get(r, "AVG_TIMER_WAIT"), m.get(r, "MAX_TIMER_WAIT")}
		if prev != nil {
			out = append(out, d.dCount, d.dT)
		}
		res.Rows = append(res.Rows, out)
	}
	return res, nil
}

// topStatements is sys.statement_analysis: the digests with the most
// total latency, with their count, p95, rows, errors and a sample. HTTP
// routes are left to topRoutes: a route's latency holds its SQL's.
func topStatements(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_statements_summary_by_digest", pfscore.Query{Order: "SUM_TIMER_WAIT desc"})
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	res := newResult("statement_analysis", "query", pfscore.ColString, "db", pfscore.ColString,
		"exec_count", pfscore.ColUint, "err_count", pfscore.ColUint,
		"total_latency", pfscore.ColPicos, "avg_latency", pfscore.ColPicos, "p95_latency", pfscore.ColPicos,
		"rows_sent", pfscore.ColUint, "rows_affected", pfscore.ColUint, "sample", pfscore.ColString)
	for _, r := range src.Rows {
		query := m.str(r, "DIGEST_TEXT")
		if IsRoute(query) {
			continue
		}
		if len(res.Rows) == limit {
			break
		}
		if query == "" {
			query = "(other digests: the table is full)"
		}
		res.Rows = append(res.Rows, pfscore.Row{shorten(query, 60), m.get(r, "SCHEMA_NAME"),
			m.get(r, "COUNT_STAR"), m.get(r, "SUM_ERRORS"),
			m.get(r, "SUM_TIMER_WAIT"), m.get(r, "AVG_TIMER_WAIT"), m.get(r, "QUANTILE_95"),
			m.get(r, "SUM_ROWS_SENT"), m.get(r, "SUM_ROWS_AFFECTED"), shorten(m.str(r, "QUERY_SAMPLE_TEXT"), 40)})
	}
	return res, nil
}

// topRoutes is statement analysis for the HTTP requests package pfshttp
// records: one digest per route, with its latency quantiles.
func topRoutes(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_statements_summary_by_digest", pfscore.Query{Order: "SUM_TIMER_WAIT desc"})
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	res := newResult("statements_by_route", "route", pfscore.ColString,
		"exec_count", pfscore.ColUint, "err_count", pfscore.ColUint,
		"total_latency", pfscore.ColPicos, "avg_latency", pfscore.ColPicos, "p95_latency", pfscore.ColPicos,
		"p99_latency", pfscore.ColPicos, "max_latency", pfscore.ColPicos)
	for _, r := range src.Rows {
		route := m.str(r, "DIGEST_TEXT")
		if !IsRoute(route) {
			continue
		}
		if len(res.Rows) == limit {
			break
		}
		res.Rows = append(res.Rows, pfscore.Row{shorten(route, 60),
			m.get(r, "COUNT_STAR"), m.get(r, "SUM_ERRORS"),
			m.get(r, "SUM_TIMER_WAIT"), m.get(r, "AVG_TIMER_WAIT"), m.get(r, "QUANTILE_95"),
			m.get(r, "QUANTILE_99"), m.get(r, "MAX_TIMER_WAIT")})
	}
	return res, nil
}

// IsRoute reports whether a DIGEST_TEXT is an HTTP route as package
// pfshttp writes it: a ServeMux pattern ("[METHOD ][HOST]/[PATH]", any
// method ServeMux accepts), or a method (or _OTHER) and "(unmatched)" or a
// route holding a slash. A route a pfshttp.WithRoute function names
// without a slash is not recognized. No SQL statement's digest text has
// that shape: its first word holds no slash, and its second (after a
// keyword that is also a method, DELETE) is a keyword, a quoted name or
// an optimizer hint ("/*+"), never a word holding a slash otherwise.
func IsRoute(text string) bool {
	first, rest := text, ""
	if i := strings.IndexAny(text, " \t"); i >= 0 {
		first, rest = text[:i], strings.TrimLeft(text[i+1:], " \t")
	}
	if strings.Contains(first, "/") { // a pattern without a method
		return pathLike(first)
	}
	if first == "" || strings.ContainsAny(first, "`'\"(") {
		return false
	}
	if rest == "(unmatched)" {
		switch first {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "_OTHER":
			return true
		}
		return false
	}
	path, _, _ := strings.Cut(rest, " ")
	return pathLike(path)
}

// pathLike reports whether a word of a digest text is a host and path or
// a path: it holds a slash, and is not a quoted name, a parenthesis or a
// comment (an optimizer hint).
func pathLike(w string) bool {
	return strings.Contains(w, "/") && !strings.ContainsAny(w[:1], "`'\"(") && !strings.HasPrefix(w, "/*")
}

// topInstances lists the instances with the most wait time, named by their
// file or address where the service says.
func topInstances(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_waits_summary_by_instance", pfscore.Query{
		Where: []string{"SUM_TIMER_WAIT > 0"},
		Order: "SUM_TIMER_WAIT desc",
		Limit: limit,
	})
	if err != nil {
		return nil, err
	}
	names, err := instanceNames(t)
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	res := newResult("instances_by_latency", "event_name", pfscore.ColString, "object", pfscore.ColString, "total", pfscore.ColUint,
		"total_latency", pfscore.ColPicos, "avg_latency", pfscore.ColPicos, "max_latency", pfscore.ColPicos)
	for _, r := range src.Rows {
		addr := m.uint(r, "OBJECT_INSTANCE_BEGIN")
		obj, ok := names[addr]
		if !ok {
			obj = strconv.FormatUint(addr, 10) // OBJECT_INSTANCE_BEGIN
		}
		res.Rows = append(res.Rows, pfscore.Row{m.get(r, "EVENT_NAME"), shorten(obj, 60), m.get(r, "COUNT_STAR"),
			m.get(r, "SUM_TIMER_WAIT"), m.get(r, "AVG_TIMER_WAIT"), m.get(r, "MAX_TIMER_WAIT")})
	}
	return res, nil
}

// instanceNames maps OBJECT_INSTANCE_BEGIN to a file's name or a socket's
// address, from the tables that have them; a table the service lacks
// names nothing.
func instanceNames(t pfscore.Tables) (map[uint64]string, error) {
	names := map[uint64]string{}
	files, err := t.Query("file_summary_by_instance", pfscore.Query{})
	if err != nil && !errors.Is(err, pfscore.ErrUnknownTable) {
		return nil, err
	}
	if err == nil {
		m := columnsOf(files)
		for _, r := range files.Rows {
			if n := m.str(r, "FILE_NAME"); n != "" {
				names[m.uint(r, "OBJECT_INSTANCE_BEGIN")] = n
			}
		}
	}
	socks, err := t.Query("socket_instances", pfscore.Query{})
	if err != nil && !errors.Is(err, pfscore.ErrUnknownTable) {
		return nil, err
	}
	if err == nil {
		m := columnsOf(socks)
		for _, r := range socks.Rows {
			ip := m.str(r, "IP")
			port, _ := m.get(r, "PORT").(int64)
			if ip != "" || port != 0 {
				names[m.uint(r, "OBJECT_INSTANCE_BEGIN")] = ip + ":" + strconv.FormatInt(port, 10)
			}
		}
	}
	return names, nil
}

// shorten keeps the last n characters of s, where a path's interesting
// part is.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// topThreads ranks threads by their total wait time, with the wait that
// took most of it, as sys's thread reports do.
func topThreads(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_waits_summary_by_thread_by_event_name", pfscore.Query{
		Where: []string{"EVENT_NAME != 'idle' AND SUM_TIMER_WAIT > 0"},
	})
	if err != nil {
		return nil, err
	}
	type agg struct {
		id         uint64
		count, sum uint64
		topEvent   string
		topSum     uint64
		name, user string
	}
	byID := map[uint64]*agg{}
	m := columnsOf(src)
	for _, r := range src.Rows {
		id := m.uint(r, "THREAD_ID")
		a := byID[id]
		if a == nil {
			a = &agg{id: id}
			byID[id] = a
		}
		sum := m.uint(r, "SUM_TIMER_WAIT")
		a.count += m.uint(r, "COUNT_STAR")
		a.sum += sum
		if sum > a.topSum {
			a.topSum, a.topEvent = sum, m.str(r, "EVENT_NAME")
		}
	}
	if th, err := t.Query("threads", pfscore.Query{}); err == nil {
		m := columnsOf(th)
		for _, r := range th.Rows {
			if a := byID[m.uint(r, "THREAD_ID")]; a != nil {
				a.name = m.str(r, "NAME")
				if u := m.str(r, "PROCESSLIST_USER"); u != "" {
					a.user = u + "@" + m.str(r, "PROCESSLIST_HOST")
				}
			}
		}
	} else if !errors.Is(err, pfscore.ErrUnknownTable) {
		return nil, err
	}
	all := make([]*agg, 0, len(byID))
	for _, a := range byID {
		all = append(all, a)
	}
	slices.SortFunc(all, func(a, b *agg) int {
		if c := cmp.Compare(b.sum, a.sum); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	res := newResult("threads_by_latency", "thread_id", pfscore.ColUint, "name", pfscore.ColString, "user", pfscore.ColString,
		"total", pfscore.ColUint, "total_latency", pfscore.ColPicos, "top_wait", pfscore.ColString, "top_wait_latency", pfscore.ColPicos)
	for _, a := range all[:min(limit, len(all))] {
		var name, user pfscore.Value
		if a.name != "" {
			name = a.name
		}
		if a.user != "" {
			user = a.user
		}
		res.Rows = append(res.Rows, pfscore.Row{a.id, name, user, a.count, a.sum, a.topEvent, a.topSum})
	}
	return res, nil
}

// topUsers is sys.user_summary: by user, the statements and their
// latency (nested statements count in their own class and in the one
// they nest in, as in sys), the connections (threads) and the memory in use.
func topUsers(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("events_statements_summary_by_user_by_event_name", pfscore.Query{
		Where: []string{"COUNT_STAR > 0"},
	})
	if err != nil {
		return nil, err
	}
	type agg struct {
		user                  string
		count, sum, errs      uint64
		total, current, bytes int64
	}
	byUser := map[string]*agg{}
	get := func(user string) *agg {
		a := byUser[user]
		if a == nil {
			a = &agg{user: user}
			byUser[user] = a
		}
		return a
	}
	m := columnsOf(src)
	for _, r := range src.Rows {
		a := get(m.str(r, "USER"))
		a.count += m.uint(r, "COUNT_STAR")
		a.sum += m.uint(r, "SUM_TIMER_WAIT")
		a.errs += m.uint(r, "SUM_ERRORS")
	}
	if users, err := t.Query("users", pfscore.Query{}); err == nil {
		m := columnsOf(users)
		for _, r := range users.Rows {
			if a := byUser[m.str(r, "USER")]; a != nil {
				a.current, a.total = m.int(r, "CURRENT_CONNECTIONS"), m.int(r, "TOTAL_CONNECTIONS")
			}
		}
	} else if !errors.Is(err, pfscore.ErrUnknownTable) {
		return nil, err
	}
	if mem, err := t.Query("memory_summary_by_user_by_event_name", pfscore.Query{
		Where: []string{"CURRENT_NUMBER_OF_BYTES_USED != 0"},
	}); err == nil {
		m := columnsOf(mem)
		for _, r := range mem.Rows {
			if a := byUser[m.str(r, "USER")]; a != nil {
				a.bytes += m.int(r, "CURRENT_NUMBER_OF_BYTES_USED")
			}
		}
	} else if !errors.Is(err, pfscore.ErrUnknownTable) {
		return nil, err
	}
	all := make([]*agg, 0, len(byUser))
	for _, a := range byUser {
		all = append(all, a)
	}
	slices.SortFunc(all, func(a, b *agg) int {
		if c := cmp.Compare(b.sum, a.sum); c != 0 {
			return c
		}
		return cmp.Compare(a.user, b.user)
	})
	res := newResult("user_summary", "user", pfscore.ColString, "statements", pfscore.ColUint,
		"statement_latency", pfscore.ColPicos, "statement_avg_latency", pfscore.ColPicos, "errors", pfscore.ColUint,
		"current_connections", pfscore.ColInt, "total_connections", pfscore.ColInt, "current_memory", pfscore.ColString)
	for _, a := range all[:min(limit, len(all))] {
		var user pfscore.Value = a.user
		if a.user == "" {
			user = "background" // sys's name for the threads without a user
		}
		res.Rows = append(res.Rows, pfscore.Row{user, a.count, a.sum, a.sum / max(a.count, 1), a.errs,
			a.current, a.total, formatBytes(a.bytes)})
	}
	return res, nil
}

// topMemory is sys.memory_global_by_current_bytes: the memory instruments
// holding the most bytes now, with their high water marks.
func topMemory(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("memory_summary_global_by_event_name", pfscore.Query{
		Where: []string{"CURRENT_NUMBER_OF_BYTES_USED > 0"},
		Order: "CURRENT_NUMBER_OF_BYTES_USED desc",
		Limit: limit,
	})
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	res := newResult("memory_global_by_current_bytes", "event_name", pfscore.ColString,
		"current_count", pfscore.ColInt, "current_alloc", pfscore.ColString, "current_avg_alloc", pfscore.ColString,
		"high_count", pfscore.ColInt, "high_alloc", pfscore.ColString, "high_avg_alloc", pfscore.ColString)
	for _, r := range src.Rows {
		cc, cb := m.int(r, "CURRENT_COUNT_USED"), m.int(r, "CURRENT_NUMBER_OF_BYTES_USED")
		hc, hb := m.int(r, "HIGH_COUNT_USED"), m.int(r, "HIGH_NUMBER_OF_BYTES_USED")
		res.Rows = append(res.Rows, pfscore.Row{m.get(r, "EVENT_NAME"),
			cc, formatBytes(cb), formatBytes(avg(cb, cc)), hc, formatBytes(hb), formatBytes(avg(hb, hc))})
	}
	return res, nil
}

func avg(sum, n int64) int64 {
	if n == 0 {
		return 0
	}
	return sum / n
}

// formatBytes renders a byte count as sys.format_bytes does: bytes, then
// KiB, MiB, GiB, TiB and PiB with two decimals.
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	v, abs := float64(n), n
	if abs < 0 {
		abs = -abs
	}
	if abs < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	i := -1
	for i+1 < len(units) && (abs >= 1024) {
		v /= 1024
		abs /= 1024
		i++
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

// topLost lists the *_lost counters, and the instrument errors, that are
// not zero.
func topLost(t pfscore.Tables, limit int, _ *Report) (*pfscore.Result, error) {
	src, err := t.Query("global_status", pfscore.Query{
		Where: []string{"VARIABLE_VALUE > 0"},
		Order: "VARIABLE_VALUE desc",
	})
	if err != nil {
		return nil, err
	}
	m := columnsOf(src)
	res := newResult("lost", "variable_name", pfscore.ColString, "variable_value", pfscore.ColUint)
	for _, r := range src.Rows {
		name, _ := m.get(r, "VARIABLE_NAME").(string)
		if len(res.Rows) == limit {
			break
		}
		if strings.HasSuffix(name, "_lost") || strings.HasSuffix(name, "_errors") {
			res.Rows = append(res.Rows, pfscore.Row{name, m.get(r, "VARIABLE_VALUE")})
		}
	}
	return res, nil
}
