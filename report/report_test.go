package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

const (
	testMutex  = "wait/synch/mutex/test/lock"
	testMemory = "memory/test/buffers"
)

type fixture struct {
	s  *pfscore.Schema
	mu *instrument.Mutex
	n  int // guarded by mu
	t  *instrument.Thread
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("memory/test/%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	opt := instrument.WithSchema(s)
	f := &fixture{s: s, mu: instrument.NewMutex(testMutex, opt)}
	f.t = instrument.NewThread("thread/test/worker", opt, instrument.WithUser("app"), instrument.WithHost("localhost"))
	t.Cleanup(f.t.End)
	held := instrument.NewMemoryClass(testMemory, opt).AllocOn(nil, 3<<20)
	t.Cleanup(held.Free)
	ctx := instrument.ContextWithThread(context.Background(), f.t)
	for id := range 3 {
		st := instrument.StartSQL(ctx, s, "app", fmt.Sprintf("SELECT * FROM t WHERE id = %d", id))
		st.End(instrument.StatementResult{RowsSent: 1})
	}
	routes := instrument.NewStatementClass("statement/http/request", opt)
	for range 2 {
		st := routes.Start(ctx, "GET /users/{id}")
		st.End(instrument.StatementResult{})
	}
	f.work(20)
	return f
}

func (f *fixture) work(n int) {
	for range n {
		f.mu.For(f.t).Lock()
		f.n++
		f.mu.For(f.t).Unlock()
	}
}

// sectionOf returns the lines of a report's section titled title.
func sectionOf(out, title string) string {
	i := strings.Index(out, "\n"+title+" (")
	if i < 0 {
		return ""
	}
	rest := out[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestWriteSections(t *testing.T) {
	f := newFixture(t)
	var r Report
	var b bytes.Buffer
	if err := r.Write(&b, f.s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// SQL in statement analysis, the route in its own section, not the
	// other way round.
	st := sectionOf(out, StatementAnalysis)
	if !strings.Contains(st, "SELECT * FROM `t` WHERE `id` = ?") || strings.Contains(st, "GET /users") {
		t.Errorf("statement analysis:\n%s", st)
	}
	if fields := strings.Fields(strings.SplitAfter(st, "= ?")[1]); len(fields) < 3 || fields[0] != "app" || fields[1] != "3" {
		t.Errorf("statement analysis row: %v", fields)
	}
	routes := sectionOf(out, StatementsByRoute)
	if !strings.Contains(routes, "p95_latency") || strings.Contains(routes, "SELECT") {
		t.Errorf("routes:\n%s", routes)
	}
	if fields := strings.Fields(strings.SplitAfter(routes, "{id}")[1]); len(fields) < 2 || fields[0] != "2" || fields[1] != "0" {
		t.Errorf("route row: %v\n%s", fields, routes)
	}
	waits := sectionOf(out, TopWaits)
	if i := strings.Index(waits, testMutex); i < 0 {
		t.Errorf("top waits:\n%s", waits)
	} else if fields := strings.Fields(waits[i:]); fields[1] != "20" {
		t.Errorf("mutex waits %v, want 20", fields)
	}
	mem := sectionOf(out, MemoryByCurrent)
	if i := strings.Index(mem, testMemory); i < 0 {
		t.Errorf("memory:\n%s", mem)
	} else if fields := strings.Fields(mem[i:]); fields[1] != "1" || fields[2] != "3.00" || fields[3] != "MiB" {
		t.Errorf("memory row %v, want 1 allocation of 3.00 MiB", fields)
	}
	if lost := sectionOf(out, Lost); !strings.Contains(lost, "nothing lost") {
		t.Errorf("lost:\n%s", lost)
	}
	if th := sectionOf(out, BusiestThreads); !strings.Contains(th, "app@localhost") {
		t.Errorf("threads:\n%s", th)
	}
}

func TestWriteChosenSectionsAndLimit(t *testing.T) {
	f := newFixture(t)
	r := Report{Limit: 1, Sections: []string{TopWaits, StatementAnalysis}}
	var b bytes.Buffer
	if err := r.Write(&b, f.s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if i, j := strings.Index(out, StatementAnalysis), strings.Index(out, TopWaits); i < 0 || j < i {
		t.Errorf("want statement analysis, then top waits (the report's order):\n%s", out)
	}
	if strings.Contains(out, MemoryByCurrent) || strings.Contains(out, StatementsByRoute) {
		t.Errorf("sections not asked for:\n%s", out)
	}
	if lines := strings.Split(strings.TrimRight(sectionOf(out, TopWaits), "\n"), "\n"); len(lines) != 3 { // title, header, one row
		t.Errorf("top waits with limit 1 has %d lines:\n%s", len(lines), sectionOf(out, TopWaits))
	}
}

// TestInterval: from the second report on, top waits show what happened
// in the interval and rank by it.
func TestInterval(t *testing.T) {
	f := newFixture(t)
	var r Report
	first, err := topWaits(f.s, 10, &r)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Columns) != 5 {
		t.Errorf("first report has %d columns, want the 5 cumulative ones", len(first.Columns))
	}
	f.work(7)
	second, err := topWaits(f.s, 10, &r)
	if err != nil {
		t.Fatal(err)
	}
	m := columnsOf(second)
	if _, ok := m["interval"]; !ok {
		t.Fatalf("second report lacks the interval columns: %v", second.Columns)
	}
	if len(second.Rows) == 0 || m.str(second.Rows[0], "events") != testMutex {
		t.Fatalf("the mutex, the only wait since, should rank first: %v", second.Rows)
	}
	row := second.Rows[0]
	if m.uint(row, "interval") != 7 || m.uint(row, "total") != 27 || m.uint(row, "interval_latency") == 0 {
		t.Errorf("mutex row: interval %d total %d interval_latency %d; want 7, 27, > 0",
			m.uint(row, "interval"), m.uint(row, "total"), m.uint(row, "interval_latency"))
	}
	for _, row := range second.Rows[1:] {
		if m.uint(row, "interval") != 0 {
			t.Errorf("%s waited in the interval: %v", m.str(row, "events"), row)
		}
	}
}

// noTables answers every table as unknown.
type noTables struct{ pfscore.Tables }

func (noTables) Query(table string, _ pfscore.Query) (*pfscore.Result, error) {
	return nil, fmt.Errorf("%w: %s", pfscore.ErrUnknownTable, table)
}

func TestNoTables(t *testing.T) {
	var r Report
	var b bytes.Buffer
	if err := r.Write(&b, noTables{}); !errors.Is(err, ErrNoTables) || !errors.Is(err, pfscore.ErrUnknownTable) {
		t.Errorf("Write = %v, want ErrNoTables wrapping the table's error", err)
	}
	r.Sections = []string{Lost}
	if err := r.Write(&b, noTables{}); !errors.Is(err, ErrNoTables) {
		t.Errorf("one section asked for: Write = %v, want ErrNoTables", err)
	}
}

func TestIsRoute(t *testing.T) {
	for text, want := range map[string]bool{
		"GET /users/{id}":                    true,
		"POST /notes":                        true,
		"DELETE /notes/{id}":                 true,
		"/healthz":                           true,
		"GET example.com/x":                  true,
		"GET (unmatched)":                    true,
		"_OTHER (unmatched)":                 true,
		"DELETE FROM `notes` WHERE `id` = ?": false,
		"DELETE `t1` FROM `t1`":              false,
		"SELECT * FROM `t`":                  false,
		"GET":                                false,
		"":                                   false,
		"PUT 'a/b'":                          false,
	} {
		if got := IsRoute(text); got != want {
			t.Errorf("IsRoute(%q) = %v, want %v", text, got, want)
		}
	}
}

// formatBytes follows sys.format_bytes: bytes below 1 KiB, then two
// decimals of the largest unit that keeps the value at 1 or more.
func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1.00 KiB"}, {1536, "1.50 KiB"},
		{5 << 20, "5.00 MiB"}, {-2048, "-2.00 KiB"}, {3 << 40, "3.00 TiB"}, {1 << 62, "4096.00 PiB"},
	} {
		if got := formatBytes(c.n); got != c.want {
			t.Errorf("formatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
