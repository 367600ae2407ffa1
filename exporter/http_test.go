package exporter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// fixture is a schema with a workload on it, served by a real listener.
type fixture struct {
	t    *testing.T
	s    *pfscore.Schema
	srv  *httptest.Server
	base string // srv.URL + "/debug/pfs"
	mu   *instrument.Mutex
	// rw is kept so that its instance stays: an instrument the garbage
	// collector takes leaves the instance tables, and a test comparing two
	// reads saw its row in one and not the other (CI, 2026-11-27).
	rw     *instrument.RWMutex
	thread *instrument.Thread
	n      int // what the mutex guards
}

const (
	mutexName  = "wait/synch/mutex/test/lock_a"
	rwName     = "wait/synch/rwlock/test/lock_b"
	fileName   = "wait/io/file/test/data"
	threadName = "thread/test/worker"
)

// newFixture builds a schema, drives a workload through instrument (a
// mutex and an rwlock locked by a thread, a file written and read) and
// serves the handler, mounted as a service would mount it.
func newFixture(t *testing.T, opts ...exporter.HandlerOption) *fixture {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true), pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, s: s}
	opt := instrument.WithSchema(s)
	f.thread = instrument.NewThread(threadName, opt, instrument.WithUser("app"), instrument.WithHost("localhost"))
	t.Cleanup(f.thread.End)
	f.mu = instrument.NewMutex(mutexName, opt)
	rw := instrument.NewRWMutex(rwName, opt)
	f.rw = rw
	f.lock(10)
	for range 5 {
		rw.For(f.thread).RLock()
		_ = f.n
		rw.For(f.thread).RUnlock()
	}
	files := instrument.NewFileClass(fileName, opt)
	file, err := files.Create(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := instrument.ContextWithThread(context.Background(), f.thread)
	file.For(instrument.ThreadFromContext(ctx)).Write([]byte("hello, performance schema"))
	file.Close()
	st := instrument.StartSQL(ctx, s, "app", "SELECT name, email FROM users WHERE id = 42 AND status IN ('a', 'b')")
	st.End(instrument.StatementResult{RowsSent: 1})

	mux := http.NewServeMux()
	mux.Handle("/debug/pfs/", exporter.Handler(s, opts...))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.base = f.srv.URL + "/debug/pfs"
	return f
}

// lock locks and unlocks the test mutex n times from the fixture's thread.
func (f *fixture) lock(n int) {
	for range n {
		f.mu.For(f.thread).Lock()
		f.n++
		f.mu.For(f.thread).Unlock()
	}
}

// response is a response read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (f *fixture) do(method, path string, body io.Reader, header ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func (f *fixture) get(path string, header ...string) response {
	f.t.Helper()
	return f.do(http.MethodGet, path, nil, header...)
}

func (f *fixture) post(path, body string, header ...string) response {
	f.t.Helper()
	return f.do(http.MethodPost, path, strings.NewReader(body), header...)
}

// table fetches a table as JSON through the handler.
func (f *fixture) table(name string, query ...string) *pfscore.Result {
	f.t.Helper()
	v := url.Values{"format": {"json"}}
	for i := 0; i+1 < len(query); i += 2 {
		v.Add(query[i], query[i+1])
	}
	r := f.get("/tables/" + name + "?" + v.Encode())
	if r.status != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", name, r.status, r.body)
	}
	res, err := exporter.DecodeJSON(bytes.NewReader(r.body))
	if err != nil {
		f.t.Fatalf("GET %s: %v\n%s", name, err, r.body)
	}
	return res
}

// cell returns the value of column col in the first row whose column key
// equals val, and whether there is such a row.
func cell(res *pfscore.Result, key string, val any, col string) (any, bool) {
	ki, ci := -1, -1
	for i, c := range res.Columns {
		if c.Name == key {
			ki = i
		}
		if c.Name == col {
			ci = i
		}
	}
	if ki < 0 || ci < 0 {
		return nil, false
	}
	for _, row := range res.Rows {
		if row[ki] == val {
			return row[ci], true
		}
	}
	return nil, false
}

// wantError checks a refusal: the status, a JSON {"error": ...} body that
// mentions each of msgs.
func wantError(t *testing.T, what string, r response, status int, msgs ...string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
		t.Errorf("%s: body is not a JSON error: %s", what, r.body)
		return
	}
	for _, m := range msgs {
		if !strings.Contains(e.Error, m) {
			t.Errorf("%s: error %q does not mention %q", what, e.Error, m)
		}
	}
}

func TestIndexListsEveryTable(t *testing.T) {
	f := newFixture(t)
	r := f.get("/?format=json")
	if r.status != http.StatusOK {
		t.Fatalf("GET /: %d %s", r.status, r.body)
	}
	var idx struct {
		Tables []exporter.TableInfo `json:"tables"`
	}
	if err := json.Unmarshal(r.body, &idx); err != nil {
		t.Fatal(err)
	}
	names := f.s.TableNames()
	if len(idx.Tables) != len(names) {
		t.Fatalf("index lists %d tables, the schema has %d", len(idx.Tables), len(names))
	}
	for i, ti := range idx.Tables {
		if ti.Name != names[i] {
			t.Errorf("index entry %d is %q, want %q", i, ti.Name, names[i])
		}
		if ti.Truncatable != f.s.Truncatable(ti.Name) {
			t.Errorf("%s: truncatable %v", ti.Name, ti.Truncatable)
		}
		if ti.Name == "setup_consumers" {
			if res, _ := f.s.Select(ti.Name); ti.Rows != len(res.Rows) {
				t.Errorf("setup_consumers: %d rows listed, %d in the table", ti.Rows, len(res.Rows))
			}
		}
	}

	text := f.get("/")
	if text.status != http.StatusOK || !strings.HasPrefix(text.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET / (text): %d %s", text.status, text.header.Get("Content-Type"))
	}
	html := f.get("/", "Accept", "text/html,application/xhtml+xml")
	if !strings.HasPrefix(html.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / from a browser: Content-Type %s", html.header.Get("Content-Type"))
	}
	for _, n := range names {
		if !bytes.Contains(text.body, []byte(n)) {
			t.Errorf("text index lacks %s", n)
		}
		if !bytes.Contains(html.body, []byte(`href="/debug/pfs/tables/`+n+`"`)) {
			t.Errorf("HTML index does not link %s", n)
		}
	}

	// /debug/pfs redirects to /debug/pfs/.
	resp, err := http.Get(f.base)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/debug/pfs/" {
		t.Errorf("GET /debug/pfs: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
}

func TestEveryTableInEveryFormat(t *testing.T) {
	f := newFixture(t)
	for _, name := range f.s.TableNames() {
		cols, err := f.s.Columns(name)
		if err != nil {
			t.Fatal(err)
		}
		// JSON: the columns with their types, rows as wide as the columns.
		res := f.table(name)
		if res.Table != name || !reflect.DeepEqual(res.Columns, cols) {
			t.Errorf("%s (json): table %q, columns %v; want %v", name, res.Table, res.Columns, cols)
		}
		// Text: a header of the column names, a line per row.
		r := f.get("/tables/" + name + "?format=text")
		if r.status != http.StatusOK {
			t.Errorf("%s (text): %d %s", name, r.status, r.body)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
		for _, c := range cols {
			if !strings.Contains(lines[0], c.Name) {
				t.Errorf("%s (text): header %q lacks %s", name, lines[0], c.Name)
			}
		}
		if len(lines) < 1+len(res.Rows)-2 { // rows may come and go between two reads (threads, waits)
			t.Errorf("%s (text): %d lines for about %d rows", name, len(lines), len(res.Rows))
		}
		// HTML: a table with every column, and links to every table.
		h := f.get("/tables/"+name, "Accept", "text/html")
		if h.status != http.StatusOK || !strings.HasPrefix(h.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s (html): %d %s", name, h.status, h.header.Get("Content-Type"))
			continue
		}
		for _, c := range cols {
			if !bytes.Contains(h.body, []byte(">"+c.Name+"</th>")) {
				t.Errorf("%s (html): no header cell for %s", name, c.Name)
			}
		}
		for _, n := range f.s.TableNames() {
			if !bytes.Contains(h.body, []byte(`href="/debug/pfs/tables/`+n+`"`)) {
				t.Errorf("%s (html): no link to %s", name, n)
			}
		}
		if !bytes.Contains(h.body, []byte("<script>")) || bytes.Contains(h.body, []byte("src=")) {
			t.Errorf("%s (html): want inline script only", name)
		}
	}
}

func TestWorkloadIsVisible(t *testing.T) {
	f := newFixture(t)
	res := f.table("events_waits_summary_global_by_event_name")
	if n, ok := cell(res, "EVENT_NAME", mutexName, "COUNT_STAR"); !ok || n != uint64(10) {
		t.Errorf("COUNT_STAR of %s = %v (found %v), want 10", mutexName, n, ok)
	}
	if n, ok := cell(res, "EVENT_NAME", rwName, "COUNT_STAR"); !ok || n != uint64(5) {
		t.Errorf("COUNT_STAR of %s = %v, want 5", rwName, n)
	}
	// Times: raw picoseconds in JSON, format_pico_time in text.
	sum, _ := cell(res, "EVENT_NAME", mutexName, "SUM_TIMER_WAIT")
	if _, ok := sum.(uint64); !ok {
		t.Errorf("SUM_TIMER_WAIT is %T, want uint64 picoseconds", sum)
	}
	r := f.get("/tables/events_waits_summary_global_by_event_name?format=text&where=" + url.QueryEscape("EVENT_NAME = '"+mutexName+"'"))
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if len(lines) != 2 {
		t.Fatalf("text with where: %d lines, want header and one row:\n%s", len(lines), r.body)
	}
	if ps := sum.(uint64); ps > 0 && !strings.Contains(lines[1], strings.TrimSpace(exporter.FormatPicoTime(ps))) {
		t.Errorf("text row %q lacks SUM_TIMER_WAIT as %q", lines[1], exporter.FormatPicoTime(ps))
	}
	if f := f.table("file_summary_by_event_name"); true {
		if n, ok := cell(f, "EVENT_NAME", fileName, "SUM_NUMBER_OF_BYTES_WRITE"); !ok || n != uint64(len("hello, performance schema")) {
			t.Errorf("bytes written = %v", n)
		}
	}
	threads := f.table("threads", "where", "NAME = '"+threadName+"'")
	if len(threads.Rows) != 1 {
		t.Fatalf("threads where NAME = %s: %d rows", threadName, len(threads.Rows))
	}
}

func TestWhereOrderLimit(t *testing.T) {
	f := newFixture(t)
	res := f.table("setup_instruments", "where", "NAME LIKE 'wait/%' AND ENABLED = 'YES'", "order", "NAME desc", "limit", "2")
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(res.Rows))
	}
	// wait/synch/rwlock/test/lock_b > wait/synch/mutex/test/lock_a > wait/io/file/test/data
	if res.Rows[0][0] != rwName || res.Rows[1][0] != mutexName {
		t.Errorf("rows %v, want %s then %s", res.Rows, rwName, mutexName)
	}
	// Repeated where parameters join with AND.
	res = f.table("events_waits_summary_global_by_event_name", "where", "COUNT_STAR > 0", "where", "EVENT_NAME LIKE 'wait/synch/%'", "order", "EVENT_NAME")
	if len(res.Rows) != 2 || res.Rows[0][0] != mutexName || res.Rows[1][0] != rwName {
		t.Errorf("two where parameters: %v", res.Rows)
	}
	// Picosecond columns take units.
	res = f.table("events_waits_summary_global_by_event_name", "where", "SUM_TIMER_WAIT >= 0ps AND MAX_TIMER_WAIT < 1h AND EVENT_NAME = 'wait/synch/mutex/test/lock_a'")
	if len(res.Rows) != 1 {
		t.Errorf("picosecond units: %d rows", len(res.Rows))
	}
}

func TestBadQueries(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		query string
		msg   string
	}{
		{"where=NOPE = 1", `unknown column "NOPE"`},
		{"where=NAME LIKE wait", "quoted pattern"},
		{"where=NAME = 'a' OR NAME = 'b'", "OR is not supported"},
		{"where=(NAME = 'a')", "parentheses"},
		{"where=NAME = 'unterminated", "unterminated string"},
		{"where=VOLATILITY > 1ms", "not an integer"},
		{"where=NAME = YES", "must be quoted"},
		{"where=NAME = NULL", "IS NULL"},
		{"order=NAME sideways", "want ASC, DESC"},
		{"order=NOPE", `unknown column "NOPE"`},
		{"limit=-1", "limit"},
		{"limit=ten", "limit"},
		{"format=xml", "unknown format"},
		{"select=NAME", `unknown parameter "select"`},
		{"limit=1&limit=2", "given 2 times"},
	} {
		r := f.get("/tables/setup_instruments?" + strings.ReplaceAll(url.PathEscape(tc.query), "%3D", "="))
		wantError(t, tc.query, r, http.StatusBadRequest, tc.msg)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	wantError(t, "unknown table", f.get("/tables/no_such_table"), http.StatusNotFound, `unknown table "no_such_table"`)
	wantError(t, "truncate unknown table", f.post("/tables/no_such_table/truncate", ""), http.StatusNotFound, "unknown table")
	wantError(t, "unknown setup table", f.post("/setup/widgets", `{}`), http.StatusNotFound, "no setup table")
	wantError(t, "unknown path", f.get("/nope"), http.StatusNotFound, "no such path")
	wantError(t, "deep path", f.get("/tables/threads/extra"), http.StatusNotFound, "no such path")
	for _, tc := range []struct {
		method, path, allow string
	}{
		{http.MethodPost, "/tables/threads", "GET, HEAD"},
		{http.MethodDelete, "/tables/threads", "GET, HEAD"},
		{http.MethodGet, "/tables/events_waits_history/truncate", "POST"},
		{http.MethodGet, "/setup/instruments", "POST"},
		{http.MethodPut, "/setup/instruments", "POST"},
		{http.MethodPost, "/", "GET, HEAD"},
	} {
		r := f.do(tc.method, tc.path, strings.NewReader(`{"name":"%","enabled":false}`))
		wantError(t, tc.method+" "+tc.path, r, http.StatusMethodNotAllowed, "not allowed")
		if got := r.header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	// HEAD works where GET does.
	if r := f.do(http.MethodHead, "/tables/threads", nil); r.status != http.StatusOK {
		t.Errorf("HEAD: %d", r.status)
	}
	// Nothing above changed the setup.
	res := f.table("setup_instruments", "where", "ENABLED = 'NO'")
	if len(res.Rows) != 0 {
		t.Errorf("refused requests disabled instruments: %v", res.Rows)
	}
}

// setupSnapshot renders every setup table, to check that refused requests
// change nothing.
func setupSnapshot(t *testing.T, s *pfscore.Schema) string {
	var b strings.Builder
	for _, n := range []string{"setup_instruments", "setup_consumers", "setup_actors", "setup_objects", "setup_threads", "setup_timers"} {
		res, err := s.Select(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, n, res.Rows)
	}
	return b.String()
}

func TestChangesRefusedByDefault(t *testing.T) {
	f := newFixture(t) // no WithSetupChanges
	before := setupSnapshot(t, f.s)
	for path, body := range map[string]string{
		"/setup/instruments":                    `{"name":"%","enabled":false}`,
		"/setup/consumers":                      `{"name":"%","enabled":false}`,
		"/setup/threads":                        `{"name":"%","enabled":false}`,
		"/setup/timers":                         `{"name":"wait","timer_name":"MILLISECOND"}`,
		"/setup/actors":                         `{"op":"truncate"}`,
		"/setup/objects":                        `{"op":"truncate"}`,
		"/tables/events_waits_history/truncate": ``,
		"/tables/setup_actors/truncate":         ``,
		"/tables/events_waits_summary_by_instance/truncate": ``,
	} {
		wantError(t, "POST "+path, f.post(path, body), http.StatusForbidden, "changes are disabled", "WithSetupChanges")
	}
	if after := setupSnapshot(t, f.s); after != before {
		t.Errorf("a refused change changed the setup:\nbefore %s\nafter %s", before, after)
	}
	if res := f.table("events_waits_history"); len(res.Rows) == 0 {
		t.Errorf("a refused TRUNCATE emptied events_waits_history")
	}
}

func TestMalformedSetupRequests(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	before := setupSnapshot(t, f.s)
	huge := `{"name":"` + strings.Repeat("x", exporter.MaxBodyBytes) + `","enabled":false}`
	for _, tc := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/setup/instruments", ``, 400, "empty body"},
		{"/setup/instruments", `{"name":`, 400, "bad JSON"},
		{"/setup/instruments", `{"name":"%","enabled":false} {"x":1}`, 400, "after the object"},
		{"/setup/instruments", `["%"]`, 400, "bad JSON"},
		{"/setup/instruments", `{"name":"%","enabled":false,"colour":"red"}`, 400, `unknown field "colour"`},
		{"/setup/instruments", `{"name":"%","enabled":"maybe"}`, 400, "want true, false"},
		{"/setup/instruments", `{"name":"wait/\u0001%","enabled":false}`, 400, "bad name pattern"},
		{"/setup/instruments", `{"name":"","enabled":false}`, 400, `"name" is required`},
		{"/setup/instruments", `{"name":"%"}`, 400, "nothing to change"},
		{"/setup/instruments", huge, 413, "larger than"},
		{"/setup/consumers", `{"name":"%"}`, 400, `"enabled" is required`},
		{"/setup/threads", `{"name":"thread/%"}`, 400, "nothing to change"},
		{"/setup/timers", `{"name":"wait","timer_name":"SUNDIAL"}`, 400, "SUNDIAL"},
		{"/setup/timers", `{"name":"mutex","timer_name":"CYCLE"}`, 400, "mutex"},
		{"/setup/timers", `{"name":"wait"}`, 400, "required"},
		{"/setup/actors", `{"host":"%"}`, 400, `"op" is required`},
		{"/setup/actors", `{"op":"upsert"}`, 400, `unknown op "upsert"`},
		{"/setup/actors", `{"op":"insert","host":"%","user":"%","role":"%"}`, 409, "duplicate row"},
		{"/setup/actors", `{"op":"insert","user":"` + strings.Repeat("u", 40) + `"}`, 400, "bad value"},
		{"/setup/actors", `{"op":"update","user":"app"}`, 400, "nothing to change"},
		{"/setup/actors", `{"op":"delete","enabled":true}`, 400, "no flags"},
		{"/setup/actors", `{"op":"truncate","user":"app"}`, 400, "no other fields"},
		{"/setup/objects", `{"op":"insert","object_type":"VIEW"}`, 400, "OBJECT_TYPE"},
		{"/setup/objects", `{"op":"insert"}`, 400, `"object_type" is required`},
		{"/setup/objects", `{"op":"insert","object_type":"FILE","object_schema":"%","object_name":"%"}`, 409, "duplicate row"},
		{"/setup/instruments?dry_run=1", `{"name":"%","enabled":false}`, 400, `unknown parameter "dry_run"`},
		{"/tables/performance_timers/truncate", ``, 403, "not allowed"},
	} {
		wantError(t, tc.path+" "+tc.body[:min(len(tc.body), 60)], f.post(tc.path, tc.body), tc.status, tc.msg)
	}
	// A browser on another site may not change anything.
	wantError(t, "cross-origin", f.post("/setup/instruments", `{"name":"%","enabled":false}`, "Sec-Fetch-Site", "cross-site"),
		http.StatusForbidden, "cross-origin")
	wantError(t, "cross-origin truncate", f.post("/tables/events_waits_history/truncate", ``, "Origin", "https://evil.example"),
		http.StatusForbidden, "cross-origin")
	if after := setupSnapshot(t, f.s); after != before {
		t.Errorf("a malformed request changed the setup:\nbefore %s\nafter %s", before, after)
	}
}

// setupOK posts a setup change and returns rows_matched.
func (f *fixture) setupOK(path, body string) int {
	f.t.Helper()
	r := f.post(path, body)
	if r.status != http.StatusOK {
		f.t.Fatalf("POST %s %s: %d %s", path, body, r.status, r.body)
	}
	var res struct {
		Table       string `json:"table"`
		RowsMatched int    `json:"rows_matched"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil || !strings.HasPrefix(res.Table, "setup_") {
		f.t.Fatalf("POST %s: response %s", path, r.body)
	}
	return res.RowsMatched
}

func TestSetupInstrumentsTakeEffectAtOnce(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	count := func() any {
		v, _ := cell(f.table("events_waits_summary_global_by_event_name"), "EVENT_NAME", mutexName, "COUNT_STAR")
		return v
	}
	// DESIGN.md's example body, by pattern: both test sync instruments.
	if n := f.setupOK("/setup/instruments", `{"name":"wait/synch/%/test/%","enabled":false,"timed":true}`); n != 2 {
		t.Errorf("rows_matched %d, want 2", n)
	}
	res := f.table("setup_instruments", "where", "NAME LIKE 'wait/synch/%'", "order", "NAME")
	for _, row := range res.Rows {
		if row[1] != "NO" {
			t.Errorf("after disabling: %v", row)
		}
	}
	if v, _ := cell(f.table("setup_instruments"), "NAME", fileName, "ENABLED"); v != "YES" {
		t.Errorf("%s ENABLED=%v: the pattern reached too far", fileName, v)
	}
	f.lock(7)
	if got := count(); got != uint64(10) {
		t.Errorf("a disabled mutex still counts: COUNT_STAR %v, want 10", got)
	}
	// The setup_ prefix is optional, flags take YES/NO, names are case-insensitive.
	if n := f.setupOK("/setup/setup_instruments", `{"NAME":"wait/synch/mutex/test/lock_a","ENABLED":"YES"}`); n != 1 {
		t.Errorf("rows_matched %d, want 1", n)
	}
	f.lock(3)
	if got := count(); got != uint64(13) {
		t.Errorf("after re-enabling: COUNT_STAR %v, want 13", got)
	}
	// TIMED=NO: counted, not timed.
	f.setupOK("/setup/instruments", `{"name":"wait/synch/mutex/test/lock_a","timed":false}`)
	if v, _ := cell(f.table("setup_instruments"), "NAME", mutexName, "TIMED"); v != "NO" {
		t.Errorf("TIMED = %v", v)
	}
}

func TestSetupConsumersThreadsTimers(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	if n := f.setupOK("/setup/consumers", `{"name":"events_waits_history%","enabled":false}`); n != 2 {
		t.Errorf("consumers rows_matched %d, want 2", n)
	}
	for _, name := range []string{"events_waits_history", "events_waits_history_long"} {
		if v, _ := cell(f.table("setup_consumers"), "NAME", name, "ENABLED"); v != "NO" {
			t.Errorf("%s ENABLED=%v", name, v)
		}
	}
	if v, _ := cell(f.table("setup_consumers"), "NAME", "events_waits_current", "ENABLED"); v != "YES" {
		t.Errorf("events_waits_current ENABLED=%v", v)
	}

	if n := f.setupOK("/setup/threads", `{"name":"thread/test/%","history":false}`); n != 1 {
		t.Errorf("threads rows_matched %d, want 1", n)
	}
	if v, _ := cell(f.table("setup_threads"), "NAME", threadName, "HISTORY"); v != "NO" {
		t.Errorf("setup_threads HISTORY=%v", v)
	}

	r := f.post("/setup/timers", `{"name":"wait","timer_name":"MICROSECOND"}`)
	if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"timer_name":"MICROSECOND"`)) {
		t.Errorf("setup_timers: %d %s", r.status, r.body)
	}
	if v, _ := cell(f.table("setup_timers"), "NAME", "wait", "TIMER_NAME"); v != "MICROSECOND" {
		t.Errorf("setup_timers wait = %v", v)
	}
}

func TestSetupActorsAndObjects(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	if n := f.setupOK("/setup/actors", `{"op":"insert","host":"localhost","user":"app","enabled":true,"history":"NO"}`); n != 1 {
		t.Errorf("insert: %d", n)
	}
	res := f.table("setup_actors", "where", "USER = 'app'")
	if len(res.Rows) != 1 || !reflect.DeepEqual(res.Rows[0], pfscore.Row{"localhost", "app", "%", "YES", "NO"}) {
		t.Errorf("after insert: %v", res.Rows)
	}
	if n := f.setupOK("/setup/actors", `{"op":"update","user":"app","enabled":false}`); n != 1 {
		t.Errorf("update: %d", n)
	}
	if n := f.setupOK("/setup/actors", `{"op":"delete","user":"app"}`); n != 1 {
		t.Errorf("delete: %d", n)
	}
	if n := f.setupOK("/setup/actors", `{"op":"truncate"}`); n != 1 {
		t.Errorf("truncate: %d (the default row)", n)
	}
	if res := f.table("setup_actors"); len(res.Rows) != 0 {
		t.Errorf("after truncate: %v", res.Rows)
	}

	if n := f.setupOK("/setup/objects", `{"op":"insert","object_type":"file","object_schema":"/tmp","enabled":false}`); n != 1 {
		t.Errorf("objects insert: %d", n)
	}
	res = f.table("setup_objects", "where", "OBJECT_TYPE = 'FILE' AND OBJECT_SCHEMA = '/tmp'")
	if len(res.Rows) != 1 || res.Rows[0][3] != "NO" || res.Rows[0][4] != "YES" {
		t.Errorf("objects after insert: %v", res.Rows)
	}
	if n := f.setupOK("/setup/objects", `{"op":"update","object_type":"FILE","timed":false}`); n != 2 {
		t.Errorf("objects update: %d, want 2 FILE rows", n)
	}
	if n := f.setupOK("/setup/objects", `{"op":"delete","object_type":"SOCKET"}`); n != 1 {
		t.Errorf("objects delete: %d", n)
	}
}

func TestTruncate(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	post := func(table string) {
		t.Helper()
		r := f.post("/tables/"+table+"/truncate", "")
		if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"truncated":true`)) {
			t.Fatalf("truncate %s: %d %s", table, r.status, r.body)
		}
	}
	// History: the rows go.
	if res := f.table("events_waits_history_long"); len(res.Rows) == 0 {
		t.Fatal("no history to truncate")
	}
	post("events_waits_history_long")
	if res := f.table("events_waits_history_long"); len(res.Rows) != 0 {
		t.Errorf("events_waits_history_long after TRUNCATE: %d rows", len(res.Rows))
	}
	// Summaries: the row stays, its statistics restart from zero, and new
	// waits count from there.
	const summary = "events_waits_summary_global_by_event_name"
	post(summary)
	res := f.table(summary)
	if n, ok := cell(res, "EVENT_NAME", mutexName, "COUNT_STAR"); !ok || n != uint64(0) {
		t.Errorf("COUNT_STAR after TRUNCATE = %v (row present %v), want 0", n, ok)
	}
	if v, _ := cell(res, "EVENT_NAME", mutexName, "SUM_TIMER_WAIT"); v != uint64(0) {
		t.Errorf("SUM_TIMER_WAIT after TRUNCATE = %v", v)
	}
	f.lock(4)
	if n, _ := cell(f.table(summary), "EVENT_NAME", mutexName, "COUNT_STAR"); n != uint64(4) {
		t.Errorf("COUNT_STAR after 4 more waits = %v, want 4", n)
	}
	// A setup table that may be truncated.
	post("setup_actors")
	if res := f.table("setup_actors"); len(res.Rows) != 0 {
		t.Errorf("setup_actors after TRUNCATE: %v", res.Rows)
	}
}

func TestWithPrefix(t *testing.T) {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	srv := httptest.NewServer(exporter.Handler(s, exporter.WithPrefix("/admin/pfs/")))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/admin/pfs/tables/setup_consumers?format=json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := exporter.DecodeJSON(resp.Body)
	resp.Body.Close()
	if err != nil || len(res.Rows) == 0 {
		t.Fatalf("under a prefix: %v %v", err, res)
	}
	resp, err = http.Get(srv.URL + "/debug/pfs/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("outside the prefix: %d", resp.StatusCode)
	}
}

// Statement tables in HTML: their text columns (SQL_TEXT, DIGEST_TEXT,
// QUERY_SAMPLE_TEXT) wrap, the numbers stay on one line.
func TestHTMLStatementText(t *testing.T) {
	f := newFixture(t)
	h := f.get("/tables/events_statements_summary_by_digest", "Accept", "text/html")
	if h.status != http.StatusOK {
		t.Fatalf("status %d", h.status)
	}
	if !bytes.Contains(h.body, []byte(`<td class="t" data-v="SELECT NAME , `)) {
		t.Errorf("DIGEST_TEXT is not a wrapping text cell:\n%s", h.body)
	}
	if !bytes.Contains(h.body, []byte("td.t{white-space:pre-wrap")) {
		t.Errorf("no style for text cells")
	}
}
