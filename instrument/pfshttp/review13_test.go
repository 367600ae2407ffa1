package pfshttp_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/instrument/pfshttp"
)

// Defect: the raw path leaks into the digest through Request.Pattern.
// For a CONNECT request whose path lacks the trailing slash of a
// registered subtree pattern, http.ServeMux (findHandler) answers with a
// redirect and sets r.Pattern to the redirect's *path* (u.Path, i.e. the
// client's path plus "/"), not to a pattern. Handler trusts any non-empty
// r.Pattern, so every distinct path a client sends in a CONNECT request
// becomes a statement text and a new row of
// events_statements_summary_by_digest: an attacker can add digest rows at
// will (evicting the real routes' rows once the table is full), which the
// package documents as impossible ("The raw path is never used").
//
// Expected: all such requests share a bounded number of digest rows (e.g.
// "CONNECT (unmatched)"), whatever their paths. Fix: ignore r.Pattern for
// CONNECT redirects (e.g. when r.Method is CONNECT and the recorded status
// is 307 and r.Pattern == r.URL.Path+"/"), or check the pattern against
// mux.Handler's answer.
func TestReview13ConnectPathLeaksIntoDigest(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/files/{name}/", func(w http.ResponseWriter, r *http.Request) {})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s))

	before := len(s.EventsStatementsSummaryByDigest())
	const n = 50
	for i := range n {
		r := httptest.NewRequest(http.MethodConnect, fmt.Sprintf("/files/secret-id-%d", i), nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
	}
	var leaked []string
	for _, d := range s.EventsStatementsSummaryByDigest() {
		if strings.Contains(d.DigestText, "secret-id-") {
			leaked = append(leaked, d.DigestText)
		}
	}
	rows := len(s.EventsStatementsSummaryByDigest()) - before
	if len(leaked) > 0 || rows > 2 {
		t.Errorf("%d CONNECT requests with distinct paths made %d digest rows; %d carry the raw path, e.g. %q",
			n, rows, len(leaked), leaked[:min(3, len(leaked))])
	}
}

// Defect: the ResponseWriter Handler gives the handler drops optional
// interfaces the server's own has: http.CloseNotifier (deprecated but
// still implemented by net/http's HTTP/1 and HTTP/2 writers, and called by
// frameworks: gin's Context.Writer.CloseNotify does
// w.ResponseWriter.(http.CloseNotifier) unchecked, a panic behind Handler),
// and io.StringWriter (io.WriteString then copies every string to a
// []byte).
//
// Expected: a handler behind Handler sees the same optional interfaces as
// without it (pass CloseNotify through where the wrapped writer has it).
func TestReview13ResponseWriterDropsCloseNotifier(t *testing.T) {
	s := newSchema(t)
	type seen struct{ closeNotifier, stringWriter bool }
	probe := func(out *seen) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			//lint:ignore SA1019 the interface under test
			_, out.closeNotifier = w.(http.CloseNotifier)
			_, out.stringWriter = w.(interface{ WriteString(string) (int, error) })
		})
	}
	var raw, wrapped seen
	mux := http.NewServeMux()
	mux.Handle("/raw", probe(&raw))
	mux.Handle("/wrapped", pfshttp.Handler(probe(&wrapped), pfshttp.WithSchema(s)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/raw", "/wrapped"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if !raw.closeNotifier || !raw.stringWriter {
		t.Fatalf("net/http's own writer: %+v", raw)
	}
	if wrapped != raw {
		t.Errorf("behind Handler the ResponseWriter has %+v; net/http's has %+v", wrapped, raw)
	}
}

// Defect (through a real server): the CONNECT leak above is reachable by
// any client over the wire; "CONNECT /files/<anything> HTTP/1.1" is a
// request net/http serves (net/rpc's form of CONNECT).
//
// Expected: no digest text carries a client's path.
func TestReview13ConnectPathLeaksOverTheWire(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/files/{name}/", func(w http.ResponseWriter, r *http.Request) {})
	sv := startServer(t, s, mux, false, false)
	for i := range 5 {
		c, err := net.Dial("tcp", sv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT /files/attacker-%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
	}
	var leaked []string
	for _, d := range s.EventsStatementsSummaryByDigest() {
		if strings.Contains(d.DigestText, "attacker-") {
			leaked = append(leaked, d.DigestText)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("digest rows carrying the client's path: %q", leaked)
	}
}
