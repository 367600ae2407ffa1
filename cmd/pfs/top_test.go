package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

func TestTopOnce(t *testing.T) {
	svc := startService(t)
	code, out, errs := pfs(t, "top", "--addr", svc.addr, "--once")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape codes in output to a non-terminal")
	}
	for _, want := range []string{
		"pfs top  http://" + svc.addr + "/debug/pfs",
		"Statement analysis",
		"Top waits by total latency",
		"Hottest instances",
		"Busiest threads",
		"Lost (global_status)",
		"total_latency",
		"nothing lost",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The workload: the mutex waited 20 times, the file was written, and
	// the test thread is the busiest, named with its user.
	section := func(title string) string {
		i := strings.Index(out, title)
		if i < 0 {
			return ""
		}
		rest := out[i+len(title):]
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	if st := section("Statement analysis"); !strings.Contains(st, "SELECT * FROM `t` WHERE `id` = ?") {
		t.Errorf("statement analysis:\n%s", st)
	} else if fields := strings.Fields(strings.SplitAfter(st, "= ?")[1]); len(fields) < 3 || fields[0] != "app" || fields[1] != "3" {
		t.Errorf("statement analysis row: %v\n%s", fields, st)
	}
	waits := section("Top waits by total latency")
	if !strings.Contains(waits, testMutex) || !strings.Contains(waits, testFile) || strings.Contains(waits, "idle") {
		t.Errorf("top waits:\n%s", waits)
	}
	if fields := fieldsOf(waits, testMutex); len(fields) < 3 || fields[1] != "20" {
		t.Errorf("top waits row for %s: %v", testMutex, fields)
	}
	if inst := section("Hottest instances"); !strings.Contains(inst, "data.log") || !strings.Contains(inst, testMutex) {
		t.Errorf("hottest instances (want the file by name):\n%s", inst)
	}
	if th := section("Busiest threads"); !strings.Contains(th, testThread) || !strings.Contains(th, "app@localhost") {
		t.Errorf("busiest threads:\n%s", th)
	}
	// sys.memory_global_by_current_bytes: the test's 3 MiB, with the Go
	// runtime's heap above it.
	mem := section("Memory by current bytes")
	if fields := fieldsOf(mem, testMemory); len(fields) < 4 || fields[1] != "1" || fields[2] != "3.00" || fields[3] != "MiB" {
		t.Errorf("memory row for %s: %v\n%s", testMemory, fields, mem)
	}
	if !strings.Contains(mem, "memory/go/heap_objects") {
		t.Errorf("memory view lacks the Go heap:\n%s", mem)
	}
	// A time is formatted as format_pico_time does.
	if !strings.Contains(waits, " ns") && !strings.Contains(waits, " us") && !strings.Contains(waits, " ms") {
		t.Errorf("no readable latency:\n%s", waits)
	}
}

// fieldsOf returns the fields of the line of s that contains key.
func fieldsOf(s, key string) []string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, key) {
			return strings.Fields(line)
		}
	}
	return nil
}

func TestTopCountAndLimit(t *testing.T) {
	svc := startService(t)
	code, out, errs := pfs(t, "top", "--addr", svc.addr, "--count", "2", "--interval", "1ms", "--limit", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "Top waits by total latency"); n != 2 {
		t.Errorf("%d reports, want 2", n)
	}
	if !strings.Contains(out, "every 1ms") {
		t.Errorf("header lacks the interval:\n%s", out)
	}
	waits := out[strings.Index(out, "Top waits"):]
	waits = waits[:strings.Index(waits, "\n\n")]
	if lines := strings.Split(strings.TrimSpace(waits), "\n"); len(lines) != 3 { // title, header, one row
		t.Errorf("--limit 1: %d lines:\n%s", len(lines), waits)
	}
}

func TestTopLostAndMissingTables(t *testing.T) {
	// A service whose schema lost a class, behind a proxy that hides the
	// instance tables (as a service of an older otelpfs would lack tables).
	s, _ := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxClasses(3))
	s.Register("wait/synch/mutex/pfs/one")
	s.Register("wait/synch/mutex/pfs/two") // over the limit: lost
	h := exporter.Handler(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "by_instance") {
			http.Error(w, `{"error":"unknown table"}`, http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	code, out, errs := pfs(t, "top", "--addr", srv.URL, "--once")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Performance_schema_classes_lost") || strings.Contains(out, "nothing lost") {
		t.Errorf("lost counters:\n%s", out)
	}
	if !strings.Contains(out, "not available from this service") {
		t.Errorf("a missing table:\n%s", out)
	}
	if !strings.Contains(out, "no timed waits yet") {
		t.Errorf("an empty section:\n%s", out)
	}
}

func TestTopErrors(t *testing.T) {
	svc := startService(t)
	srv, _ := exporter.Listen("127.0.0.1:0", exporter.Handler(svc.s))
	gone := srv.Addr()
	srv.Close()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"top", "--addr", gone, "--once"}, 1, "cannot reach the service"},
		{[]string{"top", "--addr", svc.addr, "--once", "--count", "3"}, 2, "--once and --count"},
		{[]string{"top", "--addr", svc.addr, "--limit", "0"}, 2, "--limit"},
		{[]string{"top", "--addr", svc.addr, "--interval", "0s"}, 2, "--interval"},
		{[]string{"top", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"top", "-h"}, 0, "usage: pfs top"},
	} {
		code, _, errs := pfs(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("pfs %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
}

// TestTopNotAHandler: a server that is not an otelpfs /debug/pfs handler
// makes top fail, naming the address, instead of printing empty sections.
func TestTopNotAHandler(t *testing.T) {
	t.Setenv("PFS_ADDR", "")
	answer := func(status int, contentType, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{
		{"404 everywhere", http.NotFoundHandler()},
		{"JSON 404 everywhere", answer(http.StatusNotFound, "application/json", `{"error":"not found"}`)},
		{"HTML page", answer(http.StatusOK, "text/html; charset=utf-8", "<!doctype html><html><body><h1>Welcome</h1></body></html>")},
		{"plain text", answer(http.StatusOK, "text/plain; charset=utf-8", "ok\n")},
		{"unrelated JSON", answer(http.StatusOK, "application/json", `{"status":"ok","items":[1,2,3]}`)},
		{"JSON array", answer(http.StatusOK, "application/json", `[{"table":"x"}]`)},
		{"a table of another name", answer(http.StatusOK, "application/json", `{"table":"other","columns":[{"name":"A","type":"string"}],"rows":[]}`)},
		{"a table without columns", answer(http.StatusOK, "application/json", `{"table":"events_waits_summary_global_by_event_name","columns":[],"rows":[]}`)},
		{"table JSON as text", otelpfsAs("text/plain; charset=utf-8")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			for _, args := range [][]string{
				{"top", "--addr", srv.URL, "--once"},
				{"top", "--addr", srv.URL, "--count", "2", "--interval", "1ms"},
			} {
				code, out, errs := pfs(t, args...)
				if code != 1 || out != "" || !strings.Contains(errs, srv.URL) || !strings.Contains(errs, "otelpfs") {
					t.Errorf("pfs %v: exit %d, stdout %q, stderr %q; want exit 1, no report, and an error naming %s",
						args, code, out, errs, srv.URL)
				}
			}
		})
	}
}

// otelpfsAs serves a real handler's answers under another content type.
func otelpfsAs(contentType string) http.Handler {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	h := exporter.Handler(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// TestTopUnreachable: nothing listening at the address is an error, not a
// report of empty sections.
func TestTopUnreachable(t *testing.T) {
	t.Setenv("PFS_ADDR", "")
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close() // the port was just free: nothing listens there now
	for _, args := range [][]string{
		{"top", "--addr", addr, "--once"},
		{"top", "--addr", addr, "--count", "2", "--interval", "1ms"},
		{"top", "--addr", "http://" + addr + "/debug/pfs", "--once"},
	} {
		code, out, errs := pfs(t, args...)
		if code != 1 || out != "" || !strings.Contains(errs, "cannot reach the service at http://"+addr) {
			t.Errorf("pfs %v: exit %d, stdout %q, stderr %q; want exit 1, no report, and the address", args, code, out, errs)
		}
	}
}

// TestTopHandlerErrorNamesService: an error the handler answers with is
// reported with the table and the service it came from.
func TestTopHandlerErrorNamesService(t *testing.T) {
	t.Setenv("PFS_ADDR", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"rendering: out of paper"}`)
	}))
	defer srv.Close()
	code, out, errs := pfs(t, "top", "--addr", srv.URL, "--once")
	want := "table events_statements_summary_by_digest of " + srv.URL + "/debug/pfs: rendering: out of paper"
	if code != 1 || out != "" || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errs, want)
	}
}
