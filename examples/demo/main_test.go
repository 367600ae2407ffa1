package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// syncBuffer is a bytes.Buffer safe for the demo's writer and the test's
// reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRun: the demo runs for its duration, serves its tables while it
// runs, and reports waits, statements by digest and by route, users and
// memory.
func TestRun(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"-duration", "3s", "-report", "2s", "-addr", "127.0.0.1:0", "-rate", "300", "-sql-addr", "127.0.0.1:0"}, &out, &errOut)
	}()
	urlRE := regexp.MustCompile(`tables at (http://\S+)/\n`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); {
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no tables URL printed:\n%s", out.String())
	}
	resp, err := http.Get(url + "/tables/events_statements_summary_by_digest?format=text")
	if err != nil {
		t.Fatalf("the tables while the demo runs: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "DIGEST_TEXT") {
		t.Errorf("GET the digest table: %d %.200s", resp.StatusCode, body)
	}
	// The MySQL endpoint, with a MySQL driver: the sys schema over the
	// demo's tables.
	m := regexp.MustCompile(`over MySQL at (\S+):`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no MySQL address printed:\n%s", out.String())
	}
	db, err := sql.Open("mysql", "pfs:@tcp("+m[1]+")/performance_schema")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	time.Sleep(500 * time.Millisecond) // some requests first
	var query string
	var count int64
	err = db.QueryRow("SELECT query, exec_count FROM sys.`x$statement_analysis` WHERE query LIKE '%FROM `notes` WHERE `id` = ?' LIMIT 1").Scan(&query, &count)
	if err != nil || count == 0 {
		t.Errorf("sys.`x$statement_analysis` over MySQL: %q %d (%v)", query, count, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	got := out.String()
	last := got[strings.LastIndex(got, "\n== "):]
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`requests \(\d+/s\): [1-9]\d* ok`),
		regexp.MustCompile("Statement analysis[^\n]*\n(  [^\n]*\n)*  [^\n]*`notes` WHERE[^\n]* notes +[1-9]"),
		regexp.MustCompile(`\n +GET /notes/\{id\} +[1-9]\d* +\d+ +\d`),
		regexp.MustCompile(`\n +alice +[1-9]`),
		regexp.MustCompile(`\n +wait/synch/mutex/demo/note_cache +[1-9]`),
		regexp.MustCompile(`\n +memory/demo/note_cache +[1-9]`),
	} {
		if !want.MatchString(last) {
			t.Errorf("the last report lacks %v:\n%s", want, last)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-clients", "0"}, {"-rate", "-1"}, {"extra"}, {"-nosuch"}} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}
