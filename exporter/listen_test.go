package exporter_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

func TestListenRefusesNonLoopback(t *testing.T) {
	h := http.NotFoundHandler()
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0"} {
		srv, err := exporter.Listen(addr, h)
		if err == nil {
			srv.Close()
			t.Errorf("Listen(%q) served", addr)
			continue
		}
		if !errors.Is(err, exporter.ErrNotLoopback) || !strings.Contains(err.Error(), "WithRemoteAccess") {
			t.Errorf("Listen(%q): %v", addr, err)
		}
	}
	if _, err := exporter.Listen("no-port", h); err == nil {
		t.Error("Listen without a port served")
	}
}

func TestListenServesTheHandler(t *testing.T) {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	srv, err := exporter.Listen("127.0.0.1:0", exporter.Handler(s))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL() + "/debug/pfs/tables/setup_timers?format=json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := exporter.DecodeJSON(resp.Body)
	resp.Body.Close()
	if err != nil || len(res.Rows) == 0 {
		t.Fatalf("setup_timers: %v %v", err, res)
	}

	// A request addressed to another host (DNS rebinding) is refused.
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/debug/pfs/", nil)
	req.Host = "attacker.example:6060"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(body), "loopback") {
		t.Errorf("foreign Host: %d %s", resp.StatusCode, body)
	}
	// localhost is fine.
	req.Host = "localhost:6060"
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Host localhost: %d", resp.StatusCode)
	}

	if err := srv.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after Shutdown: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/debug/pfs/"); err == nil {
		t.Error("served after Shutdown")
	}
}
