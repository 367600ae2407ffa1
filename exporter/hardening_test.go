package exporter_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// hostRequest sends a request with the given Host header to the fixture's
// server (a loopback listener).
func hostRequest(t *testing.T, f *fixture, method, path, host string, body io.Reader) int {
	t.Helper()
	req, err := http.NewRequest(method, f.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRebindingRefused: a mounted handler (not only exporter.Listen)
// refuses requests that reached a loopback address under a foreign Host,
// the signature of DNS rebinding, for reads and for changes alike.
func TestRebindingRefused(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	port := f.srv.Listener.Addr().String()[strings.LastIndex(f.srv.Listener.Addr().String(), ":"):]
	if code := hostRequest(t, f, "POST", "/setup/consumers", "rebind.attacker.example"+port,
		strings.NewReader(`{"name":"%","enabled":false}`)); code != http.StatusMisdirectedRequest {
		t.Errorf("rebound POST: status %d, want 421", code)
	}
	if !f.s.ConsumerEnabled(pfscore.ConsumerGlobalInstrumentation) {
		t.Fatal("a rebound request changed setup_consumers")
	}
	if code := hostRequest(t, f, "GET", "/tables/threads", "rebind.attacker.example"+port, nil); code != http.StatusMisdirectedRequest {
		t.Errorf("rebound GET: status %d, want 421", code)
	}
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "[::1]" + port} {
		if code := hostRequest(t, f, "GET", "/tables/threads", host, nil); code != http.StatusOK {
			t.Errorf("Host %s: status %d, want 200", host, code)
		}
	}
	g := newFixture(t, exporter.WithAnyHost(true))
	if code := hostRequest(t, g, "GET", "/tables/threads", "pfs.internal.example", nil); code != http.StatusOK {
		t.Errorf("WithAnyHost: status %d, want 200", code)
	}
}

// TestQueryBounds: where clauses that would cost seconds of CPU are refused.
func TestQueryBounds(t *testing.T) {
	f := newFixture(t)
	for name, where := range map[string]string{
		"too long":     "EVENT_NAME LIKE '" + strings.Repeat("%", 5000) + "'",
		"too many":     strings.Repeat("EVENT_ID > 0 AND ", 70) + "EVENT_ID > 0",
		"long pattern": "EVENT_NAME LIKE '" + strings.Repeat("%a", 300) + "'",
		"long number":  "EVENT_ID > " + strings.Repeat("9", 100),
	} {
		r := f.do("GET", "/tables/events_waits_history_long?format=json&where="+url.QueryEscape(where), nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400: %s", name, r.status, r.body)
		}
	}
}
