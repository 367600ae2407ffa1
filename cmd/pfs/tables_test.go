package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

const (
	testMutex  = "wait/synch/mutex/pfs/test_lock"
	testFile   = "wait/io/file/pfs/test_file"
	testThread = "thread/pfs/test_worker"
	testMemory = "memory/test/cache"
)

// service is a schema with a workload, served by exporter on a loopback
// port, as a running service would serve it.
type service struct {
	s      *pfscore.Schema
	addr   string
	mu     *instrument.Mutex
	thread *instrument.Thread
	n      int
}

func startService(t *testing.T, opts ...exporter.HandlerOption) *service {
	t.Helper()
	t.Setenv("PFS_ADDR", "") // the tests say --addr, or mean the default
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("memory/test/%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	opt := instrument.WithSchema(s)
	// 3 MiB held (by no thread), for the memory view.
	held := instrument.NewMemoryClass(testMemory, opt).AllocOn(nil, 3<<20)
	t.Cleanup(held.Free)
	svc := &service{s: s, mu: instrument.NewMutex(testMutex, opt)}
	svc.thread = instrument.NewThread(testThread, opt, instrument.WithUser("app"), instrument.WithHost("localhost"))
	t.Cleanup(svc.thread.End)
	svc.work(20)
	ctx := instrument.ContextWithThread(context.Background(), svc.thread)
	for id := range 3 {
		st := instrument.StartSQL(ctx, s, "app", fmt.Sprintf("SELECT * FROM t WHERE id = %d", id))
		st.End(instrument.StatementResult{RowsSent: 1})
	}
	f, err := instrument.NewFileClass(testFile, opt).Create(filepath.Join(t.TempDir(), "data.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.For(svc.thread).Write([]byte("a line of the log\n"))
	f.Close()
	srv, err := exporter.Listen("127.0.0.1:0", exporter.Handler(s, opts...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	svc.addr = srv.Addr()
	return svc
}

// work locks the test mutex n times from the test thread.
func (svc *service) work(n int) {
	for range n {
		svc.mu.For(svc.thread).Lock()
		svc.n++
		svc.mu.For(svc.thread).Unlock()
	}
}

// pfs runs the command line and returns its exit status and output.
func pfs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestTablesText(t *testing.T) {
	svc := startService(t)
	code, out, errs := pfs(t, "tables", "--addr", svc.addr, "events_waits_summary_global_by_event_name",
		"--where", "EVENT_NAME LIKE 'wait/synch/%'", "--order", "SUM_TIMER_WAIT desc", "--limit", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "EVENT_NAME") || !strings.HasPrefix(lines[1], testMutex) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	// COUNT_STAR, then times as format_pico_time writes them.
	fields := strings.Fields(lines[1])
	if fields[1] != "20" || !strings.HasSuffix(lines[1], "s") {
		t.Errorf("row %q", lines[1])
	}
	for _, unit := range []string{" ps", " ns", " us", " ms", " s"} {
		if strings.Contains(lines[1], unit) {
			return
		}
	}
	t.Errorf("no readable time in %q", lines[1])
}

func TestTablesJSON(t *testing.T) {
	svc := startService(t)
	// Flags may follow the name; --where repeats.
	code, out, errs := pfs(t, "tables", "threads", "--addr", svc.addr, "--json", "--where", "NAME LIKE 'thread/pfs/%'", "--where", "PROCESSLIST_USER = 'app'")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	res, err := exporter.DecodeJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Table != "threads" || len(res.Rows) != 1 || res.Rows[0][1] != testThread {
		t.Errorf("threads: %+v", res)
	}
}

func TestTablesList(t *testing.T) {
	svc := startService(t)
	code, out, errs := pfs(t, "tables", "--addr", svc.addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, n := range svc.s.TableNames() {
		if !strings.Contains(out, n) {
			t.Errorf("list lacks %s", n)
		}
	}
	t.Setenv("PFS_ADDR", svc.addr) // the address from the environment
	code, out, errs = pfs(t, "tables", "--json")
	var idx struct {
		Tables []exporter.TableInfo `json:"tables"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &idx) != nil || len(idx.Tables) != len(svc.s.TableNames()) {
		t.Errorf("tables --json with PFS_ADDR: exit %d %s %s", code, errs, out)
	}
	// A base URL works as well.
	if code, _, errs = pfs(t, "tables", "--addr", "http://"+svc.addr+"/debug/pfs/", "setup_timers"); code != 0 {
		t.Errorf("--addr as a URL: exit %d %s", code, errs)
	}
}

func TestTablesTruncate(t *testing.T) {
	svc := startService(t, exporter.WithSetupChanges(true))
	const table = "events_waits_summary_global_by_event_name"
	code, out, errs := pfs(t, "tables", "--addr", svc.addr, "--truncate", table)
	if code != 0 || !strings.Contains(out, "truncated "+table) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	svc.work(3)
	code, out, _ = pfs(t, "tables", "--addr", svc.addr, "--json", table, "--where", "EVENT_NAME = '"+testMutex+"'")
	res, err := exporter.DecodeJSON(strings.NewReader(out))
	if code != 0 || err != nil || len(res.Rows) != 1 || res.Rows[0][1] != uint64(3) {
		t.Errorf("after TRUNCATE and 3 waits: %s", out)
	}
}

func TestTablesErrors(t *testing.T) {
	svc := startService(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"tables", "--addr", svc.addr, "no_such_table"}, 1, `unknown table "no_such_table"`},
		{[]string{"tables", "--addr", svc.addr, "threads", "--where", "NAME ="}, 1, "want a value"},
		{[]string{"tables", "--addr", svc.addr, "threads", "--order", "NOPE"}, 1, `unknown column "NOPE"`},
		{[]string{"tables", "--addr", svc.addr, "--truncate", "threads"}, 1, "changes are disabled"},
		{[]string{"tables", "--addr", svc.addr, "threads", "users"}, 2, "one table at a time"},
		{[]string{"tables", "--addr", svc.addr, "--limit", "3"}, 2, "need a table NAME"},
		{[]string{"tables", "--addr", svc.addr, "--truncate", "--limit", "3", "threads"}, 2, "--truncate takes no"},
		{[]string{"tables", "--addr", "nonsense", "threads"}, 2, "want host:port"},
		{[]string{"tables", "--addr", "ftp://x/", "threads"}, 2, "want host:port or an http:// URL"},
		{[]string{"tables", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"tables", "-h"}, 0, "usage: pfs tables"},
	} {
		code, _, errs := pfs(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("pfs %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
}

func TestTablesUnreachable(t *testing.T) {
	// A port that was just free: nothing listens there.
	svc := startService(t)
	srv, err := exporter.Listen("127.0.0.1:0", exporter.Handler(svc.s))
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Close()
	code, out, errs := pfs(t, "tables", "--addr", addr, "threads")
	if code != 1 || out != "" || !strings.Contains(errs, "cannot reach the service at http://"+addr) || !strings.Contains(errs, "--addr") {
		t.Errorf("unreachable: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestTablesNegativeLimit(t *testing.T) {
	svc := startService(t)
	if code, _, errs := pfs(t, "tables", "--addr", svc.addr, "--limit", "-3", "threads"); code != 2 || !strings.Contains(errs, "--limit -3") {
		t.Errorf("--limit -3: exit %d, stderr %q; want a usage error", code, errs)
	}
}
