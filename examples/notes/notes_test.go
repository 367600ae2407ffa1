package notes

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

func newSchema(t testing.TB) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateConsumers("%", true); err != nil {
		t.Fatal(err)
	}
	return s
}

func newService(t testing.TB, s *pfscore.Schema, entries int) *Service {
	t.Helper()
	svc, err := New(Config{Dir: t.TempDir(), Schema: s, CacheEntries: entries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// serve runs one request through h in-process.
func serve(t testing.TB, h http.Handler, r Request) *httptest.ResponseRecorder {
	t.Helper()
	req, err := r.NewHTTP(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func routeOf(r Request) string {
	path := r.Path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if strings.HasPrefix(path, "/notes/") {
		path = "/notes/{id}"
	}
	return r.Method + " " + path
}

// TestPlainAndInstrumentedAgree: the same requests get the same answers
// from the plain and the instrumented service: the instrumentation changes
// nothing the service does.
func TestPlainAndInstrumentedAgree(t *testing.T) {
	plain := newService(t, nil, 64)
	inst := newService(t, newSchema(t), 64)
	load := NewLoad(1)
	statuses := map[int]int{}
	for range 400 {
		r := load.Next()
		a, b := serve(t, plain.Handler(), r), serve(t, inst.Handler(), r)
		if a.Code != b.Code {
			t.Fatalf("%s %s (%s): plain %d, instrumented %d", r.Method, r.Path, r.Tenant, a.Code, b.Code)
		}
		if r.Method == "GET" && r.Path == "/stats" && a.Body.String() != b.Body.String() {
			t.Errorf("stats of %s: plain %q, instrumented %q", r.Tenant, a.Body, b.Body)
		}
		statuses[a.Code]++
	}
	// The mix has successes, misses, and the 500 of a too long title.
	for _, code := range []int{200, 201, 204, 404} {
		if statuses[code] == 0 {
			t.Errorf("no %d among %v", code, statuses)
		}
	}
}

func TestAPI(t *testing.T) {
	svc := newService(t, nil, 16)
	h := svc.Handler()
	// Note 1 is alice's, 2 bob's.
	w := serve(t, h, Request{Method: "GET", Path: "/notes/1", Tenant: "alice"})
	var n struct {
		ID    int64
		Tag   string
		Title string
		Body  string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &n); err != nil || w.Code != 200 || n.ID != 1 || n.Title != "note 1" {
		t.Fatalf("GET /notes/1: %d %q (%v)", w.Code, w.Body, err)
	}
	if w := serve(t, h, Request{Method: "GET", Path: "/notes/1", Tenant: "bob"}); w.Code != 404 {
		t.Errorf("bob reads alice's note (cached now): %d", w.Code)
	}
	w = serve(t, h, Request{Method: "POST", Path: "/notes", Tenant: "bob", Body: `{"tag":"home","title":"a \"quoted\" title","body":"é\u0001"}`})
	if w.Code != 201 || w.Header().Get("Location") != "/notes/601" {
		t.Fatalf("POST: %d %q %q", w.Code, w.Header().Get("Location"), w.Body)
	}
	w = serve(t, h, Request{Method: "GET", Path: "/notes/601", Tenant: "bob"})
	if err := json.Unmarshal(w.Body.Bytes(), &n); err != nil || n.Title != `a "quoted" title` || n.Body != "é\u0001" {
		t.Errorf("the new note: %q (%v)", w.Body, err)
	}
	w = serve(t, h, Request{Method: "POST", Path: "/notes", Tenant: "bob", Body: `{"tag":"home","title":"` + strings.Repeat("x", 81) + `"}`})
	if w.Code != 500 || !strings.Contains(w.Body.String(), "CHECK") {
		t.Errorf("a title over 80 bytes: %d %q, want 500 and the constraint", w.Code, w.Body)
	}
	if w := serve(t, h, Request{Method: "POST", Path: "/notes", Tenant: "bob", Body: `{"tag":`}); w.Code != 400 {
		t.Errorf("bad JSON: %d", w.Code)
	}
	if w := serve(t, h, Request{Method: "DELETE", Path: "/notes/601", Tenant: "alice"}); w.Code != 404 {
		t.Errorf("alice deletes bob's note: %d", w.Code)
	}
	if w := serve(t, h, Request{Method: "DELETE", Path: "/notes/601", Tenant: "bob"}); w.Code != 204 {
		t.Errorf("bob deletes his note: %d", w.Code)
	}
	if w := serve(t, h, Request{Method: "GET", Path: "/notes/601", Tenant: "bob"}); w.Code != 404 {
		t.Errorf("a deleted note (it was cached): %d", w.Code)
	}
	w = serve(t, h, Request{Method: "GET", Path: "/stats", Tenant: "carol"})
	var stats map[string]int
	if err := json.Unmarshal(w.Body.Bytes(), &stats); err != nil || stats["work"]+stats["home"]+stats["ideas"]+stats["todo"] != SeedNotes/3 {
		t.Errorf("carol's stats: %q (%v)", w.Body, err)
	}
	if w := serve(t, h, Request{Method: "PUT", Path: "/config/page_size", Tenant: "alice", Body: "3"}); w.Code != 204 {
		t.Errorf("PUT page size: %d", w.Code)
	}
	w = serve(t, h, Request{Method: "GET", Path: "/notes?tag=work", Tenant: "alice"})
	var list []struct{ ID int64 }
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list) != 3 || list[0].ID <= list[1].ID {
		t.Errorf("a page of 3, newest first: %q (%v)", w.Body, err)
	}
	if w := serve(t, h, Request{Method: "PUT", Path: "/config/page_size", Tenant: "alice", Body: "1000"}); w.Code != 400 {
		t.Errorf("PUT page size 1000: %d", w.Code)
	}
}

// TestInstrumentedTables: what the instrumented service records matches
// what it did.
func TestInstrumentedTables(t *testing.T) {
	s := newSchema(t)
	const entries = 32
	svc := newService(t, s, entries)
	load := NewLoad(7)
	routes := map[string]int{}
	journaled, tooLong := 0, 0
	for range 600 {
		r := load.Next()
		w := serve(t, svc.Handler(), r)
		routes[routeOf(r)]++
		if (r.Method == "POST" && w.Code == 201) || (r.Method == "DELETE" && w.Code == 204) {
			journaled++
		}
		if w.Code == 500 {
			tooLong++
		}
	}
	bad := Request{Method: "POST", Path: "/notes", Tenant: "carol", Body: `{"tag":"x","title":"` + strings.Repeat("y", 100) + `"}`}
	if w := serve(t, svc.Handler(), bad); w.Code != 500 {
		t.Fatalf("a too long title: %d", w.Code)
	}
	routes[routeOf(bad)]++
	tooLong++
	res, err := s.Query("events_statements_summary_by_digest", pfscore.Query{})
	if err != nil {
		t.Fatal(err)
	}
	digests, err := pfscore.Scan[pfscore.DigestSummary](res)
	if err != nil {
		t.Fatal(err)
	}
	byText := map[string]pfscore.DigestSummary{}
	for _, d := range digests {
		byText[d.DigestText] = d
	}
	for route, n := range routes {
		if got := byText[route].CountStar; got != uint64(n) {
			t.Errorf("route %s: COUNT_STAR %d, want %d", route, got, n)
		}
	}
	if tooLong == 0 || byText["POST /notes"].SumErrors != uint64(tooLong) {
		t.Errorf("POST /notes errors %d, want the %d too long titles", byText["POST /notes"].SumErrors, tooLong)
	}
	if d := byText["SELECT `id` , `tenant` , `tag` , `title` , `body` , `created` FROM `notes` WHERE `id` = ?"]; d.CountStar == 0 || d.SchemaName != "notes" {
		t.Errorf("the note query's digest row: %+v", d)
	}

	// The journal: one write per line.
	res, err = s.Query("file_summary_by_event_name", pfscore.Query{Where: []string{"EVENT_NAME = '" + journalName + "'"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0][columnIndex(t, res, "COUNT_WRITE")]; got != uint64(journaled) {
		t.Errorf("journal writes %v, want %d", got, journaled)
	}
	if count(t, s, "events_waits_summary_global_by_event_name", cacheLockName) == 0 {
		t.Errorf("no cache lock waits")
	}
	if count(t, s, "events_stages_summary_global_by_event_name", "stage/demo/querying") == 0 {
		t.Errorf("no querying stages")
	}
	// The cache is full: its memory is its entries'; no buffer is out.
	mem, err := s.Query("memory_summary_global_by_event_name", pfscore.Query{Where: []string{"EVENT_NAME LIKE 'memory/demo/%'"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pfscore.Scan[pfscore.MemoryGlobal](mem)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pfscore.MemoryGlobal{}
	for _, r := range rows {
		got[r.EventName] = r
	}
	if c := got[cacheMemName]; c.CurrentCountUsed != entries || c.CurrentNumberOfBytesUsed <= 0 {
		t.Errorf("cache memory: %+v, want %d entries", c, entries)
	}
	if b := got[buffersName]; b.CurrentCountUsed != 0 || b.CurrentNumberOfBytesUsed != 0 || b.HighNumberOfBytesUsed <= 0 {
		t.Errorf("buffer memory: %+v, want none out now, some once", b)
	}
}

func count(t *testing.T, s *pfscore.Schema, table, event string) uint64 {
	t.Helper()
	res, err := s.Query(table, pfscore.Query{Where: []string{"EVENT_NAME = '" + event + "'"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("%s: %d rows for %s", table, len(res.Rows), event)
	}
	return res.Rows[0][columnIndex(t, res, "COUNT_STAR")].(uint64)
}

func columnIndex(t *testing.T, res *pfscore.Result, name string) int {
	t.Helper()
	for i, c := range res.Columns {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("%s has no column %s", res.Table, name)
	return -1
}

// TestCacheRemoveKeepsSlots: removing entries, then filling again, keeps
// the cache at its bound with its memory counted once per entry.
func TestCacheRemoveKeepsSlots(t *testing.T) {
	s := newSchema(t)
	svc := newService(t, s, 4)
	ctx := context.Background()
	c := svc.cache
	for id := range int64(6) {
		c.put(ctx, id, "alice", []byte("body"), c.removed)
	}
	c.remove(ctx, 4)
	c.remove(ctx, 99) // not cached
	c.remove(ctx, 5)
	for id := int64(10); id < 13; id++ {
		c.put(ctx, id, "alice", []byte("body"), c.removed)
	}
	if len(c.entries) != 4 || len(c.slots) != 4 {
		t.Fatalf("%d entries, %d slots; want 4", len(c.entries), len(c.slots))
	}
	for i, id := range c.slots {
		if e := c.entries[id]; e == nil || e.slot != i {
			t.Fatalf("slot %d holds %d, whose entry is %+v", i, id, e)
		}
	}
	if m := memRow(t, s, cacheMemName); m.CurrentCountUsed != 4 || m.CountAlloc-m.CountFree != 4 {
		t.Errorf("cache memory: %+v, want 4 entries counted", m)
	}
}

func memRow(t *testing.T, s *pfscore.Schema, event string) pfscore.MemoryGlobal {
	t.Helper()
	res, err := s.Query("memory_summary_global_by_event_name", pfscore.Query{Where: []string{"EVENT_NAME = '" + event + "'"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pfscore.Scan[pfscore.MemoryGlobal](res)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %d rows (%v)", event, len(rows), err)
	}
	return rows[0]
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "\x00\x1f\x7f", "é€😀", "\xff\xfe bad"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q renders as %q, not JSON: %v", s, b, err)
		}
		// Each byte of invalid UTF-8 becomes U+FFFD, as encoding/json has it.
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r)
			i += n
		}
		if got != want.String() {
			t.Fatalf("%q round-trips as %q, want %q", s, got, want.String())
		}
	})
}

// TestTraceParent: with the trace hook, a request's statements, the
// route's and its SQL's, record the trace its traceparent header names.
func TestTraceParent(t *testing.T) {
	instrument.SetTraceHook(bridge.TraceContext)
	t.Cleanup(func() { instrument.SetTraceHook(nil) })
	s := newSchema(t)
	svc := newService(t, s, 8)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := Request{Method: "GET", Path: "/notes/1", Tenant: "alice", TraceParent: "00-" + trace + "-00f067aa0ba902b7-01"}
	if w := serve(t, svc.Handler(), r); w.Code != 200 {
		t.Fatalf("GET: %d", w.Code)
	}
	res, err := s.Query("events_statements_history_long", pfscore.Query{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := pfscore.Scan[pfscore.StatementEvent](res)
	if err != nil {
		t.Fatal(err)
	}
	traced := map[string]bool{}
	for _, e := range events {
		if e.TraceID == trace {
			traced[e.DigestText] = true
		}
	}
	if !traced["GET /notes/{id}"] || !traced["SELECT `id` , `tenant` , `tag` , `title` , `body` , `created` FROM `notes` WHERE `id` = ?"] {
		t.Errorf("statements in the trace: %v", traced)
	}
	// Every request of the load carries a trace.
	if tp := NewLoad(3).Next().TraceParent; len(tp) != 55 || tp[:3] != "00-" || tp[52:] != "-01" {
		t.Errorf("the load's traceparent %q", tp)
	}
}
