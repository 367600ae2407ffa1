package exporter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/pfscore"
)

// sentinels are the errors a caller of pfscore.Tables tells apart with
// errors.Is; a Client must give the same answer as a *pfscore.Schema.
var sentinels = []error{
	pfscore.ErrUnknownTable, pfscore.ErrBadQuery, pfscore.ErrBadValue, pfscore.ErrBadPattern,
	pfscore.ErrNotUpdatable, pfscore.ErrNotInsertable, pfscore.ErrTruncateNotAllowed,
	pfscore.ErrDuplicateRow, pfscore.ErrTableFull, hwclock.ErrUnknownTimer,
}

// sameError checks that the remote error is the local one as errors.Is
// sees it: both nil, or both wrapping the same sentinels.
func sameError(t *testing.T, what string, local, remote error) {
	t.Helper()
	if (local == nil) != (remote == nil) {
		t.Errorf("%s: schema says %v, client says %v", what, local, remote)
		return
	}
	for _, s := range sentinels {
		if errors.Is(local, s) != errors.Is(remote, s) {
			t.Errorf("%s: errors.Is(%v): schema %v (%v), client %v (%v)", what, s, errors.Is(local, s), local, errors.Is(remote, s), remote)
		}
	}
}

func newClient(t *testing.T, base string) *exporter.Client {
	t.Helper()
	c, err := exporter.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClientQueriesAsTheSchema reads every table, with and without
// filters, orders and limits, through the client and directly: the same
// results, Matched included, and the same errors.
func TestClientQueriesAsTheSchema(t *testing.T) {
	f := newFixture(t)
	c := newClient(t, f.base)
	var remote pfscore.Tables = c

	cat, err := remote.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := f.s.Catalog(); !reflect.DeepEqual(cat, want) {
		t.Errorf("catalog:\n got %+v\nwant %+v", cat, want)
	}

	for _, ti := range cat {
		if ti.Name == "performance_timers" {
			continue // calibrated anew on every read
		}
		for _, q := range []pfscore.Query{
			{},
			{Limit: 1},
			{Limit: -1},
			{Limit: 1 << 40}, // more than the handler's bound: every row, as the schema does
			{Order: ti.Columns[0].Name + " desc", Limit: 2},
			{Where: []string{ti.Columns[0].Name + " IS NOT NULL", ""}, Order: ti.Columns[len(ti.Columns)-1].Name},
		} {
			want, lerr := f.s.Query(ti.Name, q)
			got, rerr := remote.Query(ti.Name, q)
			what := fmt.Sprintf("Query(%s, %+v)", ti.Name, q)
			sameError(t, what, lerr, rerr)
			// PROCESSLIST_TIME counts seconds: the two reads may fall on
			// either side of a tick. The memory/go/* rows are the Go
			// runtime's memory, sampled anew on every read.
			for _, res := range []*pfscore.Result{want, got} {
				if res == nil {
					continue
				}
				if ti.Name == "memory_summary_global_by_event_name" {
					res.Rows = slices.DeleteFunc(res.Rows, func(r pfscore.Row) bool {
						name, _ := r[0].(string)
						return strings.HasPrefix(name, "memory/go/")
					})
				}
				for i, c := range res.Columns {
					if c.Name == "PROCESSLIST_TIME" {
						for _, row := range res.Rows {
							row[i] = nil
						}
					}
				}
			}
			if lerr == nil && rerr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
			}
		}
	}
	// A filtered and limited read of the workload.
	q := pfscore.Query{Where: []string{"EVENT_NAME LIKE 'wait/synch/%'", "COUNT_STAR > 0"}, Order: "COUNT_STAR desc", Limit: 1}
	got, err := remote.Query("events_waits_summary_global_by_event_name", q)
	if err != nil || len(got.Rows) != 1 || got.Rows[0][0] != mutexName || got.Matched != 2 {
		t.Errorf("Query(%+v) = %+v, %v; want the mutex's row, 2 matched", q, got, err)
	}

	for _, tc := range []struct {
		table string
		q     pfscore.Query
	}{
		{"no_such_table", pfscore.Query{}},
		{"", pfscore.Query{}},
		{"threads/x", pfscore.Query{}},
		{"THREADS", pfscore.Query{}},
		{"threads", pfscore.Query{Where: []string{"NOPE = 1"}}},
		{"threads", pfscore.Query{Where: []string{"NAME ="}}},
		{"threads", pfscore.Query{Where: []string{"NAME = 'a' OR NAME = 'b'"}}},
		{"threads", pfscore.Query{Order: "NAME sideways"}},
		{"threads", pfscore.Query{Where: []string{strings.Repeat("NAME = 'x' AND ", 400) + "NAME = 'x'"}}},
	} {
		_, lerr := f.s.Query(tc.table, tc.q)
		_, rerr := remote.Query(tc.table, tc.q)
		if rerr == nil {
			t.Errorf("Query(%q, %+v): no error", tc.table, tc.q)
		}
		sameError(t, fmt.Sprintf("Query(%q, %+v)", tc.table, tc.q), lerr, rerr)
	}
}

// twins are two schemas in the same state: one served by the handler and
// read through a client, one called directly.
type twins struct {
	local  *pfscore.Schema
	remote pfscore.Tables
}

func newTwins(t *testing.T) *twins {
	t.Helper()
	mk := func() *pfscore.Schema {
		s, err := pfscore.New(pfscore.WithoutEnvironment())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{mutexName, rwName, fileName} {
			s.Register(n)
		}
		return s
	}
	served := mk()
	srv := httptest.NewServer(exporter.Handler(served, exporter.WithSetupChanges(true)))
	t.Cleanup(srv.Close)
	return &twins{local: mk(), remote: newClient(t, srv.URL)}
}

// same compares every setup table of the twins.
func (tw *twins) same(t *testing.T, after string) {
	t.Helper()
	cat, _ := tw.local.Catalog()
	for _, ti := range cat {
		if ti.Updatable == nil && !ti.Insertable && !strings.HasPrefix(ti.Name, "setup_") {
			continue
		}
		want, err := tw.local.Query(ti.Name, pfscore.Query{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := tw.remote.Query(ti.Name, pfscore.Query{})
		if err != nil {
			t.Fatalf("after %s: %s: %v", after, ti.Name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("after %s, %s differs:\n client %v\n schema %v", after, ti.Name, got.Rows, want.Rows)
		}
	}
}

// TestClientChangesAsTheSchema makes the same changes through the client
// and directly: the same rows matched, the same errors, the same tables
// after.
func TestClientChangesAsTheSchema(t *testing.T) {
	tw := newTwins(t)
	tw.same(t, "nothing")
	type set = map[string]pfscore.Value
	for _, tc := range []struct {
		op     string // update, insert, delete, truncate
		table  string
		where  []string
		values set
	}{
		{"update", "setup_instruments", []string{"NAME LIKE 'wait/synch/%'"}, set{"ENABLED": "NO"}},
		{"update", "setup_instruments", []string{"NAME LIKE 'wait/%'"}, set{"timed": false, "Enabled": true}},
		{"update", "setup_instruments", nil, set{"TIMED": "yes"}},
		{"update", "setup_consumers", []string{"NAME LIKE 'events_waits_%'"}, set{"ENABLED": true}},
		{"update", "setup_threads", []string{"NAME LIKE 'thread/%'"}, set{"HISTORY": "NO"}},
		{"update", "setup_timers", []string{"NAME = 'wait'"}, set{"TIMER_NAME": "MILLISECOND"}},
		{"update", "setup_timers", []string{"NAME = 'wait'"}, set{"TIMER_NAME": "SUNDIAL"}},
		{"update", "setup_instruments", nil, set{"NAME": "x"}},
		{"update", "setup_instruments", nil, set{"COLOUR": "red"}},
		{"update", "setup_instruments", nil, set{}},
		{"update", "setup_instruments", nil, nil},
		{"update", "setup_instruments", nil, set{"ENABLED": "maybe"}},
		{"update", "setup_instruments", nil, set{"ENABLED": 1}},
		{"update", "setup_instruments", nil, set{"ENABLED": nil}},
		{"update", "setup_instruments", []string{"NAME LIKE"}, set{"ENABLED": "NO"}},
		{"update", "events_waits_current", nil, set{"EVENT_NAME": "x"}},
		{"update", "no_such_table", nil, set{"ENABLED": "NO"}},
		{"insert", "setup_actors", nil, set{"HOST": "localhost", "USER": "app", "ENABLED": true, "HISTORY": "NO"}},
		{"insert", "setup_actors", nil, set{"HOST": "localhost", "USER": "app"}},
		{"insert", "setup_actors", nil, set{"USER": nil}},
		{"insert", "setup_actors", nil, set{"USER": uint64(7)}},
		{"insert", "setup_objects", nil, set{"OBJECT_TYPE": "file", "OBJECT_SCHEMA": "/tmp", "TIMED": false}},
		{"insert", "setup_objects", nil, set{"OBJECT_TYPE": "VIEW"}},
		{"insert", "setup_objects", nil, set{"OBJECT_TYPE": "FILE", "OBJECT_SCHEMA": "%", "OBJECT_NAME": "%"}},
		{"insert", "setup_instruments", nil, set{"NAME": "x"}},
		{"insert", "no_such_table", nil, set{"NAME": "x"}},
		{"update", "setup_actors", []string{"USER = 'app'"}, set{"ENABLED": "NO"}},
		{"update", "setup_objects", []string{"OBJECT_TYPE = 'FILE'"}, set{"ENABLED": "NO"}},
		{"delete", "setup_actors", []string{"USER = 'app'"}, nil},
		{"delete", "setup_objects", []string{"OBJECT_TYPE = 'SOCKET'"}, nil},
		{"delete", "setup_objects", []string{"NOPE = 1"}, nil},
		{"delete", "setup_instruments", nil, nil},
		{"delete", "no_such_table", nil, nil},
		{"truncate", "setup_actors", nil, nil},
		{"truncate", "events_waits_history_long", nil, nil},
		{"truncate", "events_waits_summary_global_by_event_name", nil, nil},
		{"truncate", "performance_timers", nil, nil},
		{"truncate", "setup_instruments", nil, nil},
		{"truncate", "no_such_table", nil, nil},
		{"delete", "setup_objects", nil, nil},
	} {
		what := fmt.Sprintf("%s %s %v %v", tc.op, tc.table, tc.where, tc.values)
		var ln, rn int
		var lerr, rerr error
		switch tc.op {
		case "update":
			ln, lerr = tw.local.Update(tc.table, tc.where, tc.values)
			rn, rerr = tw.remote.Update(tc.table, tc.where, tc.values)
		case "insert":
			lerr = tw.local.Insert(tc.table, tc.values)
			rerr = tw.remote.Insert(tc.table, tc.values)
		case "delete":
			ln, lerr = tw.local.Delete(tc.table, tc.where)
			rn, rerr = tw.remote.Delete(tc.table, tc.where)
		case "truncate":
			lerr = tw.local.Truncate(tc.table)
			rerr = tw.remote.Truncate(tc.table)
		}
		sameError(t, what, lerr, rerr)
		if ln != rn {
			t.Errorf("%s: client matched %d rows, schema %d", what, rn, ln)
		}
		tw.same(t, what)
	}

	// A full table: the 129th row.
	var lerr, rerr error
	for i := 0; lerr == nil && i < 200; i++ {
		v := map[string]pfscore.Value{"USER": fmt.Sprintf("u%d", i)}
		lerr, rerr = tw.local.Insert("setup_actors", v), tw.remote.Insert("setup_actors", v)
		sameError(t, fmt.Sprintf("insert %d", i), lerr, rerr)
	}
	if !errors.Is(rerr, pfscore.ErrTableFull) {
		t.Errorf("inserting 200 actors: %v, want ErrTableFull", rerr)
	}
	tw.same(t, "filling setup_actors")

	// Values JSON cannot carry are refused before any request.
	if _, err := tw.remote.Update("setup_instruments", nil, map[string]pfscore.Value{"ENABLED": 1.5}); !errors.Is(err, pfscore.ErrBadValue) {
		t.Errorf("a float: %v, want ErrBadValue", err)
	}
}

// TestClientErrors: what a caller learns when the service does not answer,
// refuses, or is not the handler.
func TestClientErrors(t *testing.T) {
	f := newFixture(t) // read-only
	c := newClient(t, f.base)

	// The handler's refusal: its status, message and code, and the service.
	_, err := c.Query("no_such_table", pfscore.Query{})
	var re *exporter.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound || !re.Handler || re.Code != "unknown_table" ||
		!strings.Contains(re.Message, `unknown table "no_such_table"`) || !strings.Contains(err.Error(), f.base) {
		t.Errorf("unknown table: %v (%+v)", err, re)
	}
	err = c.Truncate("events_waits_history")
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || !strings.Contains(err.Error(), "changes are disabled") {
		t.Errorf("truncate on a read-only handler: %v", err)
	}
	for _, change := range []func() error{
		func() error {
			_, err := c.Update("setup_instruments", nil, map[string]pfscore.Value{"ENABLED": "NO"})
			return err
		},
		func() error { return c.Insert("setup_actors", map[string]pfscore.Value{"USER": "x"}) },
		func() error { _, err := c.Delete("setup_actors", nil); return err },
		func() error { _, err := c.Setup("instruments", []byte(`{"name":"%","enabled":false}`)); return err },
	} {
		if err := change(); !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.Code != "" {
			t.Errorf("a change on a read-only handler: %v", err)
		}
	}
	if res := f.table("setup_instruments", "where", "ENABLED = 'NO'"); len(res.Rows) != 0 {
		t.Errorf("a refused change disabled instruments")
	}

	// Nothing listening.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	cg := newClient(t, gone.URL)
	if _, err := cg.Query("threads", pfscore.Query{}); !errors.Is(err, exporter.ErrUnreachable) || !strings.Contains(err.Error(), "cannot reach the service at "+gone.URL+"/debug/pfs") {
		t.Errorf("unreachable: %v", err)
	}
	if cat, err := cg.Catalog(); cat != nil || !errors.Is(err, exporter.ErrUnreachable) {
		t.Errorf("Catalog of nothing: %v, %v", cat, err)
	}

	// A context that ended.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.WithContext(ctx).Query("threads", pfscore.Query{}); !errors.Is(err, context.Canceled) || errors.Is(err, exporter.ErrUnreachable) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := c.Query("threads", pfscore.Query{}); err != nil {
		t.Errorf("WithContext changed the original client: %v", err)
	}

	// Something else than the handler.
	answer := func(status int, contentType, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	for name, h := range map[string]http.Handler{
		"404 page":      http.NotFoundHandler(),
		"HTML":          answer(http.StatusOK, "text/html", "<html>welcome</html>"),
		"other JSON":    answer(http.StatusOK, "application/json", `{"status":"ok"}`),
		"JSON array":    answer(http.StatusOK, "application/json", `[1,2]`),
		"other table":   answer(http.StatusOK, "application/json", `{"table":"other","columns":[{"name":"A","type":"string"}],"rows":[]}`),
		"bad catalog":   answer(http.StatusOK, "application/json", `{"tables":[{"name":"","columns":[]}]}`),
		"teapot":        answer(http.StatusTeapot, "text/plain", "short and stout"),
		"200 to a POST": answer(http.StatusOK, "application/json", `{}`),
	} {
		srv := httptest.NewServer(h)
		c := newClient(t, srv.URL)
		for op, call := range map[string]func() error{
			"catalog":  func() error { _, err := c.Catalog(); return err },
			"query":    func() error { _, err := c.Query("threads", pfscore.Query{}); return err },
			"truncate": func() error { return c.Truncate("threads") },
			"update": func() error {
				_, err := c.Update("setup_actors", nil, map[string]pfscore.Value{"ENABLED": "NO"})
				return err
			},
			"setup": func() error { _, err := c.Setup("instruments", []byte(`{}`)); return err },
		} {
			err := call()
			if err == nil || !strings.Contains(err.Error(), "otelpfs") || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("%s, %s: %v; want an error naming %s that asks for an otelpfs handler", name, op, err, srv.URL)
			}
			if errors.Is(err, pfscore.ErrUnknownTable) {
				t.Errorf("%s, %s: %v is not an unknown table", name, op, err)
			}
		}
		srv.Close()
	}

	// An older handler's code-less 404 on a table is an unknown table.
	old := httptest.NewServer(answer(http.StatusNotFound, "application/json", `{"error":"unknown table"}`))
	defer old.Close()
	if _, err := newClient(t, old.URL).Query("threads", pfscore.Query{}); !errors.Is(err, pfscore.ErrUnknownTable) {
		t.Errorf("code-less 404: %v", err)
	}
}

func TestNewClient(t *testing.T) {
	for _, tc := range []struct{ addr, url string }{
		{"", "http://" + exporter.DefaultAddr + "/debug/pfs"},
		{"127.0.0.1:7070", "http://127.0.0.1:7070/debug/pfs"},
		{"[::1]:7070", "http://[::1]:7070/debug/pfs"},
		{"localhost:7070", "http://localhost:7070/debug/pfs"},
		{"http://127.0.0.1:7070", "http://127.0.0.1:7070/debug/pfs"},
		{"http://127.0.0.1:7070/", "http://127.0.0.1:7070/debug/pfs"},
		{"https://admin.example/internal/pfs/?x=1#y", "https://admin.example/internal/pfs"},
		{"http://user:secret@127.0.0.1:7070/pfs", "http://user:xxxxx@127.0.0.1:7070/pfs"},
	} {
		c, err := exporter.NewClient(tc.addr)
		if err != nil || c.URL() != tc.url {
			t.Errorf("NewClient(%q): %v, %v; want %s", tc.addr, c, err, tc.url)
		}
	}
	for _, bad := range []string{"nonsense", "127.0.0.1", "127.0.0.1:", "host:1/path", "::1:80", "ftp://x/", "http://", "http:///pfs"} {
		if _, err := exporter.NewClient(bad); err == nil {
			t.Errorf("NewClient(%q): no error", bad)
		}
	}
	// A client of one's own: its transport carries the requests.
	f := newFixture(t)
	var seen int
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		seen++
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err := exporter.NewClient(f.base, exporter.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query("setup_timers", pfscore.Query{}); err != nil || seen != 1 {
		t.Errorf("WithHTTPClient: %v, %d requests seen", err, seen)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHandlerOverClient: a Client is a pfscore.Tables, so a handler can
// serve one, a proxy of another service's tables.
func TestHandlerOverClient(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	proxy := httptest.NewServer(exporter.Handler(newClient(t, f.base), exporter.WithSetupChanges(true)))
	defer proxy.Close()
	c := newClient(t, proxy.URL)
	got, err := c.Query("setup_instruments", pfscore.Query{Order: "NAME"})
	want, _ := f.s.Query("setup_instruments", pfscore.Query{Order: "NAME"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("through a proxy: %v\n got %v\nwant %v", err, got, want)
	}
	if _, err := c.Setup("consumers", []byte(`{"name":"events_waits_%","enabled":false}`)); err != nil {
		t.Fatal(err)
	}
	if res := f.table("setup_consumers", "where", "NAME LIKE 'events_waits_%' AND ENABLED = 'YES'"); len(res.Rows) != 0 {
		t.Errorf("a setup change through the proxy did not reach the service: %v", res.Rows)
	}
	if _, err := c.Update("setup_instruments", nil, map[string]pfscore.Value{"NAME": "x"}); !errors.Is(err, pfscore.ErrNotUpdatable) {
		t.Errorf("through a proxy: %v, want ErrNotUpdatable", err)
	}
}
