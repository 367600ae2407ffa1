package exporter_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// errorCode returns the "code" of an error answer.
func errorCode(t *testing.T, r response) string {
	t.Helper()
	var e struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Errorf("not JSON: %s", r.body)
	}
	return e.Code
}

// changeOK posts a change and returns the answer.
func (f *fixture) changeOK(path, body string) exporter.ChangeResult {
	f.t.Helper()
	r := f.post(path, body)
	if r.status != http.StatusOK {
		f.t.Fatalf("POST %s %s: %d %s", path, body, r.status, r.body)
	}
	var res exporter.ChangeResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		f.t.Fatalf("POST %s: %v: %s", path, err, r.body)
	}
	return res
}

func TestChangeEndpoints(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	res := f.changeOK("/tables/setup_instruments/update", `{"where": ["NAME LIKE 'wait/synch/%/test/%'"], "set": {"ENABLED": false, "timed": "NO"}}`)
	if want := (exporter.ChangeResult{Table: "setup_instruments", Op: "update", RowsMatched: 2}); res != want {
		t.Errorf("update: %+v, want %+v", res, want)
	}
	if v, _ := cell(f.table("setup_instruments"), "NAME", mutexName, "TIMED"); v != "NO" {
		t.Errorf("after update: TIMED %v", v)
	}
	f.lock(3)
	if n, _ := cell(f.table("events_waits_summary_global_by_event_name"), "EVENT_NAME", mutexName, "COUNT_STAR"); n != uint64(10) {
		t.Errorf("a disabled mutex counted: %v", n)
	}
	res = f.changeOK("/tables/setup_actors/insert", `{"values": {"host": "localhost", "user": "app", "history": false}}`)
	if want := (exporter.ChangeResult{Table: "setup_actors", Op: "insert", RowsMatched: 1}); res != want {
		t.Errorf("insert: %+v", res)
	}
	if rows := f.table("setup_actors", "where", "USER = 'app'").Rows; len(rows) != 1 || !reflect.DeepEqual(rows[0], pfscore.Row{"localhost", "app", "%", "YES", "NO"}) {
		t.Errorf("after insert: %v", rows)
	}
	if res = f.changeOK("/tables/setup_actors/delete", `{"where": ["USER = 'app'"]}`); res.Op != "delete" || res.RowsMatched != 1 {
		t.Errorf("delete: %+v", res)
	}
	// No where: every row, as UPDATE without WHERE.
	if res = f.changeOK("/tables/setup_consumers/update", `{"set": {"ENABLED": "YES"}}`); res.RowsMatched != len(f.table("setup_consumers").Rows) {
		t.Errorf("update without where: %+v", res)
	}
	if res = f.changeOK("/tables/setup_objects/delete", `{}`); res.RowsMatched == 0 || len(f.table("setup_objects").Rows) != 0 {
		t.Errorf("delete without where: %+v", res)
	}
}

func TestChangeEndpointsRefused(t *testing.T) {
	readOnly := newFixture(t)
	before := setupSnapshot(t, readOnly.s)
	for _, path := range []string{"/tables/setup_instruments/update", "/tables/setup_actors/insert", "/tables/setup_actors/delete"} {
		r := readOnly.post(path, `{}`)
		wantError(t, "read-only "+path, r, http.StatusForbidden, "changes are disabled", "WithSetupChanges")
	}
	if after := setupSnapshot(t, readOnly.s); after != before {
		t.Errorf("a refused change changed the setup")
	}

	f := newFixture(t, exporter.WithSetupChanges(true))
	before = setupSnapshot(t, f.s)
	huge := `{"set": {"ENABLED": "` + strings.Repeat("x", exporter.MaxBodyBytes) + `"}}`
	for _, tc := range []struct {
		path, body string
		status     int
		code, msg  string
	}{
		{"/tables/no_such_table/update", `{"set": {"ENABLED": "NO"}}`, 404, "unknown_table", `unknown table "no_such_table"`},
		{"/tables/setup_instruments/upsert", `{}`, 404, "", "no such path"},
		{"/tables/setup_instruments/update/x", `{}`, 404, "", "no such path"},
		{"/tables/setup_instruments/update", ``, 400, "", "empty body"},
		{"/tables/setup_instruments/update", `{"set": `, 400, "", "bad JSON"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": "NO"}} {}`, 400, "", "after the object"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": "NO"}, "values": {}}`, 400, "", `unknown field "values"`},
		{"/tables/setup_instruments/update", `{"where": "NAME LIKE '%'", "set": {"ENABLED": "NO"}}`, 400, "", "bad JSON"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": 1.5}}`, 400, "bad_value", "not an integer"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": 1e3}}`, 400, "bad_value", "not an integer"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": {"x": 1}}}`, 400, "bad_value", "an object"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": ["NO"]}}`, 400, "bad_value", "an array"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": "NO", "enabled": "YES"}}`, 400, "bad_value", "given twice"},
		{"/tables/setup_instruments/update", `{"set": {"ENABLED": "maybe"}}`, 400, "bad_value", "maybe"},
		{"/tables/setup_instruments/update", `{"set": {}}`, 400, "bad_value", "sets nothing"},
		{"/tables/setup_instruments/update", `{"set": {"COLOUR": "red"}}`, 400, "bad_value", "COLOUR"},
		{"/tables/setup_instruments/update", `{"where": ["NOPE = 1"], "set": {"ENABLED": "NO"}}`, 400, "bad_query", `unknown column "NOPE"`},
		{"/tables/setup_instruments/update", `{"set": {"NAME": "x"}}`, 403, "not_updatable", "UPDATE setup_instruments is not allowed"},
		{"/tables/events_waits_current/update", `{"set": {"EVENT_NAME": "x"}}`, 403, "not_updatable", "not allowed"},
		{"/tables/setup_timers/update", `{"where": ["NAME = 'wait'"], "set": {"TIMER_NAME": "SUNDIAL"}}`, 400, "unknown_timer", "SUNDIAL"},
		{"/tables/setup_instruments/insert", `{"values": {"NAME": "x"}}`, 403, "not_insertable", "INSERT INTO setup_instruments is not allowed"},
		{"/tables/setup_instruments/delete", `{}`, 403, "not_insertable", "DELETE FROM setup_instruments is not allowed"},
		{"/tables/setup_actors/insert", `{"values": {"HOST": "%", "USER": "%", "ROLE": "%"}}`, 409, "duplicate_row", "duplicate row"},
		{"/tables/setup_actors/insert", `{"values": {"USER": -1}}`, 400, "bad_value", "want a string"},
		{"/tables/setup_actors/insert", `{"where": ["USER = 'x'"], "values": {"USER": "x"}}`, 400, "", `unknown field "where"`},
		{"/tables/setup_actors/delete", `{"where": ["USER ="]}`, 400, "bad_query", "want a value"},
		{"/tables/setup_actors/delete", `{"set": {"USER": "x"}}`, 400, "", `unknown field "set"`},
		{"/tables/setup_objects/insert", `{"values": {"OBJECT_TYPE": "VIEW"}}`, 400, "bad_value", "OBJECT_TYPE"},
		{"/tables/setup_instruments/update?dry_run=1", `{"set": {"ENABLED": "NO"}}`, 400, "", `unknown parameter "dry_run"`},
		{"/tables/setup_instruments/update", huge, 413, "", "larger than"},
	} {
		r := f.post(tc.path, tc.body)
		what := tc.path + " " + tc.body[:min(len(tc.body), 60)]
		wantError(t, what, r, tc.status, tc.msg)
		if code := errorCode(t, r); code != tc.code {
			t.Errorf("%s: code %q, want %q", what, code, tc.code)
		}
	}
	// Only POST; and a browser on another site may not change anything.
	r := f.get("/tables/setup_instruments/update")
	wantError(t, "GET update", r, http.StatusMethodNotAllowed, "not allowed")
	if r.header.Get("Allow") != "POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	wantError(t, "cross-origin", f.post("/tables/setup_instruments/update", `{"set": {"ENABLED": "NO"}}`, "Sec-Fetch-Site", "cross-site"),
		http.StatusForbidden, "cross-origin")
	if after := setupSnapshot(t, f.s); after != before {
		t.Errorf("a refused change changed the setup:\nbefore %s\nafter %s", before, after)
	}
}

// TestErrorCodes: the refusals of the other requests name the engine's
// error too.
func TestErrorCodes(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	for _, tc := range []struct {
		method, path, body string
		code               string
	}{
		{"GET", "/tables/no_such_table", "", "unknown_table"},
		{"GET", "/tables/threads?where=NOPE%20%3D%201", "", "bad_query"},
		{"GET", "/tables/threads?limit=-1", "", "bad_query"},
		{"GET", "/tables/threads?format=xml", "", ""},
		{"GET", "/nope", "", ""},
		{"POST", "/tables/performance_timers/truncate", "", "truncate_not_allowed"},
		{"POST", "/tables/no_such_table/truncate", "", "unknown_table"},
		{"POST", "/setup/instruments", `{"name":"wait/\u0001%","enabled":false}`, "bad_pattern"},
		{"POST", "/setup/instruments", `{"name":"%"}`, ""},
		{"POST", "/setup/actors", `{"op":"insert","host":"%","user":"%","role":"%"}`, "duplicate_row"},
		{"POST", "/setup/timers", `{"name":"wait","timer_name":"SUNDIAL"}`, "unknown_timer"},
	} {
		r := f.do(tc.method, tc.path, strings.NewReader(tc.body))
		if r.status == http.StatusOK {
			t.Errorf("%s %s: 200", tc.method, tc.path)
			continue
		}
		if code := errorCode(t, r); code != tc.code {
			t.Errorf("%s %s: code %q, want %q (%s)", tc.method, tc.path, code, tc.code, r.body)
		}
	}
}

func TestCatalog(t *testing.T) {
	f := newFixture(t)
	r := f.get("/catalog")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /catalog: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var cat struct {
		Tables []struct {
			Name    string `json:"name"`
			Columns []struct {
				Name, Type, Role string
			} `json:"columns"`
			Truncatable bool     `json:"truncatable"`
			Updatable   []string `json:"updatable"`
			Insertable  bool     `json:"insertable"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(r.body, &cat); err != nil {
		t.Fatal(err)
	}
	want, _ := f.s.Catalog()
	if len(cat.Tables) != len(want) {
		t.Fatalf("%d tables, want %d", len(cat.Tables), len(want))
	}
	for i, ti := range cat.Tables {
		w := want[i]
		if ti.Name != w.Name || ti.Truncatable != w.Truncatable || ti.Insertable != w.Insertable || len(ti.Columns) != len(w.Columns) ||
			ti.Updatable == nil || len(ti.Updatable) != len(w.Updatable) {
			t.Errorf("catalog entry %d: %+v, want %+v", i, ti, w)
			continue
		}
		for j, c := range ti.Columns {
			wc := w.Columns[j]
			if c.Name != wc.Name || c.Type != exporter.ColumnTypeName(wc.Type) || (wc.Role != 0 && c.Role != wc.Role.String()) {
				t.Errorf("%s column %d: %+v, want %+v", ti.Name, j, c, wc)
			}
		}
	}
	if !strings.Contains(string(r.body), `{"name":"setup_instruments","columns":[{"name":"NAME","type":"string","role":"dim"}`) ||
		!strings.Contains(string(r.body), `"updatable":["ENABLED","TIMED"],"insertable":false}`) {
		t.Errorf("setup_instruments in the catalog: %s", r.body)
	}
	wantError(t, "catalog with a parameter", f.get("/catalog?format=text"), http.StatusBadRequest, `unknown parameter "format"`)
	wantError(t, "POST catalog", f.post("/catalog", ""), http.StatusMethodNotAllowed, "not allowed")
	if r := f.do(http.MethodHead, "/catalog", nil); r.status != http.StatusOK {
		t.Errorf("HEAD /catalog: %d", r.status)
	}
}

// TestLimitedJSON: a table's JSON says how many rows the where matched
// when the limit left some out, limit=0 included.
func TestLimitedJSON(t *testing.T) {
	f := newFixture(t)
	all := f.table("setup_consumers")
	if strings.Contains(string(f.get("/tables/setup_consumers?format=json").body), `"matched"`) {
		t.Errorf("matched without a limit")
	}
	for _, limit := range []int{0, 1, 3} {
		res := f.table("setup_consumers", "limit", strconv.Itoa(limit))
		if len(res.Rows) != limit || res.Matched != len(all.Rows) {
			t.Errorf("limit=%d: %d rows, %d matched; want %d and %d", limit, len(res.Rows), res.Matched, limit, len(all.Rows))
		}
	}
}
