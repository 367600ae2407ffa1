package e2e

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoServesTables runs the demo service as a user would, finds its
// /debug/pfs address in its first line, reads tables from it with the pfs
// command while it runs, and checks that it exits 0 after -duration.
func TestDemoServesTables(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo")
	if out, err := exec.Command("go", "build", "-o", demo, "github.com/otelpfs/otelpfs/examples/demo").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/demo: %v\n%s", err, out)
	}
	pfs := buildPfs(t)

	cmd := exec.Command(demo, "-duration", "4s", "-report", "1s", "-addr", "127.0.0.1:0", "-sql-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatal("the demo printed nothing")
	}
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/debug/pfs/`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("no address in %q", lines.Text())
	}
	addr := m[1]
	var rest strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
	}()

	time.Sleep(1500 * time.Millisecond) // let the load run; the checks below need events, not a time
	out, err := exec.Command(pfs, "tables", "--addr", addr, "--json", "events_waits_summary_global_by_event_name").Output()
	if err != nil {
		t.Fatalf("pfs tables: %v", err)
	}
	var res struct {
		Columns []struct{ Name string }
		Rows    [][]any
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("pfs tables --json: %v\n%s", err, out)
	}
	counts := map[string]float64{}
	for _, r := range res.Rows {
		counts[r[0].(string)] = r[1].(float64)
	}
	for _, name := range []string{"wait/synch/mutex/demo/note_cache", "wait/synch/rwlock/demo/config", "wait/io/file/demo/journal",
		"wait/io/socket/demo/api_connection", "idle"} {
		if counts[name] == 0 {
			t.Errorf("%s: no waits counted while the demo ran (%v)", name, counts)
		}
	}
	if out, err := exec.Command(pfs, "top", "--addr", addr, "--once").Output(); err != nil || !strings.Contains(string(out), "wait/synch/mutex/demo/note_cache") ||
		!strings.Contains(string(out), "GET /notes/{id}") {
		t.Errorf("pfs top --once: %v\n%s", err, out)
	}

	<-done // stdout closed: the demo is exiting
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the demo did not exit 0: %v", err)
	}
	if !strings.Contains(rest.String(), "Top waits by total latency") || !strings.Contains(rest.String(), "Statements by route") {
		t.Errorf("no report printed:\n%s", rest.String())
	}
}
