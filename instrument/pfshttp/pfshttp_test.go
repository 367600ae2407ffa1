package pfshttp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
)

// newSchema returns a schema with the consumers the tests read.
func newSchema(t testing.TB) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// findRows returns the rows of table that match the WHERE conditions, as
// column-name maps.
func findRows(t testing.TB, s *pfscore.Schema, table string, where ...string) []map[string]any {
	t.Helper()
	res, err := s.Query(table, pfscore.Query{Where: where})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range res.Rows {
		m := map[string]any{}
		for i, c := range res.Columns {
			m[c.Name] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// findRow returns the one row of table that matches where.
func findRow(t testing.TB, s *pfscore.Schema, table string, where ...string) map[string]any {
	t.Helper()
	rows := findRows(t, s, table, where...)
	if len(rows) != 1 {
		t.Fatalf("%s WHERE %v: %d rows, want 1: %v", table, where, len(rows), rows)
	}
	return rows[0]
}

// server is an HTTP server on a loopback listener wrapped by instrument,
// with the handler and the connection hook of pfshttp.
type server struct {
	*httptest.Server
	s        *pfscore.Schema
	connName string // the socket class of its connections
}

// startServer starts h (instrumented by pfshttp.Server with opts) over
// plain HTTP/1.1, or TLS if tlsOn, with HTTP/2 if h2.
func startServer(t testing.TB, s *pfscore.Schema, h http.Handler, tlsOn, h2 bool, opts ...pfshttp.Option) *server {
	t.Helper()
	in := instrument.WithSchema(s)
	listen := instrument.NewSocketClass("wait/io/socket/http/server_tcpip_socket", in)
	conns := instrument.NewSocketClass("wait/io/socket/http/client_connection", in)
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = listen.WrapListener(ts.Listener, conns)
	ts.Config.ErrorLog = log.New(testLog, "", 0) // the panic test's stack
	ts.EnableHTTP2 = h2
	pfshttp.Server(ts.Config, append([]pfshttp.Option{pfshttp.WithSchema(s)}, opts...)...)
	if tlsOn {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return &server{Server: ts, s: s, connName: "wait/io/socket/http/client_connection"}
}

// do sends a request and reads its whole response, so that the connection
// goes back to the client's pool.
func (sv *server) do(t testing.TB, method, path string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, sv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := sv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// The digest rows: one per route pattern and method (a pattern for every
// method is one route a method), the unmatched requests in one row per
// method, invented methods in one; never a raw path.
func TestRouteDigests(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "user ", r.PathValue("id"))
	})
	mux.HandleFunc("POST /users", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})
	mux.Handle("/static/", http.NotFoundHandler())
	mux.HandleFunc("GET\t/tab/{id}", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("PUT   /spaces", func(w http.ResponseWriter, r *http.Request) {})
	sv := startServer(t, s, mux, false, false)

	if code, body := sv.do(t, "GET", "/users/1"); code != 200 || body != "user 1" {
		t.Fatalf("GET /users/1: %d %q", code, body)
	}
	sv.do(t, "GET", "/users/2")
	sv.do(t, "POST", "/users")
	sv.do(t, "GET", "/nowhere/3")
	sv.do(t, "GET", "/nowhere/4")
	sv.do(t, "DELETE", "/users/5") // no DELETE route: 405, unmatched
	sv.do(t, "BREW", "/pot")       // no such method
	sv.do(t, "HEAD", "/static/a.css")
	sv.do(t, "CONNECT", "/static/../user-1@example.com")
	sv.do(t, "GET", "/static/%FF/b.css")
	sv.do(t, "GET", "/tab/7")
	sv.do(t, "PUT", "/spaces")

	got := map[string]uint64{}
	for _, d := range s.EventsStatementsSummaryByDigest() {
		got[d.DigestText] = d.CountStar
	}
	want := map[string]uint64{
		"GET /users/{id}":    2,
		"POST /users":        1,
		"GET (unmatched)":    2,
		"DELETE (unmatched)": 1,
		"_OTHER (unmatched)": 1,
		"HEAD /static/":      1,
		"GET /static/":       1,
		"CONNECT /static/":   1,
		"GET /tab/{id}":      1,
		"PUT /spaces":        1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("by digest: %v\nwant %v", got, want)
	}
	r := findRow(t, s, "events_statements_summary_global_by_event_name", "EVENT_NAME = 'statement/http/request'")
	if r["COUNT_STAR"] != uint64(12) {
		t.Errorf("statement/http/request COUNT_STAR = %v, want 12", r["COUNT_STAR"])
	}
	for _, e := range s.EventsStatementsHistoryLong() {
		if e.SQLText != e.DigestText || strings.ContainsAny(e.SQLText, "12345") {
			t.Errorf("history: SQL_TEXT %q, DIGEST_TEXT %q", e.SQLText, e.DigestText)
		}
	}
}

// WithRoute names what no ServeMux routed; its result follows the method.
func TestWithRoute(t *testing.T) {
	s := newSchema(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	route := func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/orders/") {
			return "/orders/:id"
		}
		return ""
	}
	sv := startServer(t, s, h, false, false, pfshttp.WithRoute(route),
		pfshttp.WithStatementClass("statement/api/call"), pfshttp.WithThreadClass("thread/api/call"))
	sv.do(t, "GET", "/orders/1")
	sv.do(t, "PUT", "/orders/2")
	sv.do(t, "GET", "/elsewhere")
	var texts []string
	for _, d := range s.EventsStatementsSummaryByDigest() {
		texts = append(texts, fmt.Sprintf("%s=%d", d.DigestText, d.CountStar))
	}
	if got := strings.Join(texts, " "); !sameWords(got, "GET /orders/:id=1 PUT /orders/:id=1 GET (unmatched)=1") {
		t.Errorf("digests: %s", got)
	}
	if r := findRows(t, s, "events_statements_summary_global_by_event_name", "EVENT_NAME = 'statement/api/call'", "COUNT_STAR = 3"); len(r) != 1 {
		t.Errorf("statement/api/call: %v", r)
	}
	if r := findRows(t, s, "events_statements_history_long", "EVENT_NAME = 'statement/api/call'"); len(r) != 3 {
		t.Errorf("history_long: %v", r)
	}
}

// sameWords reports whether a and b have the same space-separated
// "text=count" items in any order (a digest text has spaces of its own).
func sameWords(a, b string) bool {
	split := func(s string) map[string]bool {
		m := map[string]bool{}
		for f := range strings.SplitSeq(s, " ") {
			m[f] = true
		}
		return m
	}
	return fmt.Sprint(split(a)) == fmt.Sprint(split(b))
}

// SQL the handler runs through its request's context nests in the request
// statement, at level 1, on the request's thread; so does a stage.
func TestNesting(t *testing.T) {
	s := newSchema(t)
	loading := instrument.NewStageClass("stage/app/loading", instrument.WithSchema(s))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		loading.Start(r.Context())
		q := instrument.StartSQL(r.Context(), s, "app", "SELECT email FROM users WHERE id = "+r.PathValue("id"))
		q.End(instrument.StatementResult{RowsSent: 1})
		instrument.EndStage(r.Context())
	})
	sv := startServer(t, s, mux, false, false)
	sv.do(t, "GET", "/users/7")

	req := findRow(t, s, "events_statements_history_long", "EVENT_NAME = 'statement/http/request'")
	sql := findRow(t, s, "events_statements_history_long", "EVENT_NAME = 'statement/sql/select'")
	if req["NESTING_EVENT_LEVEL"] != uint64(0) || req["NESTING_EVENT_ID"] != nil {
		t.Errorf("request statement: level %v, nests in %v", req["NESTING_EVENT_LEVEL"], req["NESTING_EVENT_ID"])
	}
	if sql["NESTING_EVENT_LEVEL"] != uint64(1) || sql["NESTING_EVENT_ID"] != req["EVENT_ID"] ||
		sql["NESTING_EVENT_TYPE"] != "STATEMENT" || sql["THREAD_ID"] != req["THREAD_ID"] {
		t.Errorf("SQL statement: level %v, nests in %v %v on thread %v; request %v on %v",
			sql["NESTING_EVENT_LEVEL"], sql["NESTING_EVENT_TYPE"], sql["NESTING_EVENT_ID"], sql["THREAD_ID"],
			req["EVENT_ID"], req["THREAD_ID"])
	}
	if sql["DIGEST_TEXT"] != "SELECT `email` FROM `users` WHERE `id` = ?" {
		t.Errorf("SQL DIGEST_TEXT %v", sql["DIGEST_TEXT"])
	}
	stage := findRow(t, s, "events_stages_history_long", "EVENT_NAME = 'stage/app/loading'")
	if stage["NESTING_EVENT_ID"] != req["EVENT_ID"] || stage["NESTING_EVENT_TYPE"] != "STATEMENT" {
		t.Errorf("stage nests in %v %v, want STATEMENT %v", stage["NESTING_EVENT_TYPE"], stage["NESTING_EVENT_ID"], req["EVENT_ID"])
	}
}

// A 5xx is an error of the statement, with the status text; a 4xx is not.
func TestServerError(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database down", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /bad", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	})
	sv := startServer(t, s, mux, false, false)
	if code, _ := sv.do(t, "GET", "/fail"); code != 503 {
		t.Fatalf("status %d", code)
	}
	sv.do(t, "GET", "/fail")
	sv.do(t, "GET", "/bad")
	for _, d := range s.EventsStatementsSummaryByDigest() {
		want := map[string]uint64{"GET /fail": 2, "GET /bad": 0}[d.DigestText]
		if d.SumErrors != want {
			t.Errorf("%s: SUM_ERRORS %d, want %d", d.DigestText, d.SumErrors, want)
		}
	}
	r := findRows(t, s, "events_statements_history_long", "SQL_TEXT = 'GET /fail'", "ERRORS = 1",
		"MESSAGE_TEXT = 'Service Unavailable'")
	if len(r) != 2 {
		t.Errorf("history_long of GET /fail: %v", findRows(t, s, "events_statements_history_long"))
	}
}

// A panic is recorded, and goes on to net/http (which closes the
// connection) or to the caller.
func TestPanic(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	sv := startServer(t, s, mux, false, false)
	if _, err := sv.Client().Get(sv.URL + "/boom"); err == nil {
		t.Error("the panic did not reach net/http: the client got a response")
	}
	r := findRow(t, s, "events_statements_history_long", "SQL_TEXT = 'GET /boom'")
	if r["ERRORS"] != uint64(1) || r["MESSAGE_TEXT"] != "panic: boom" {
		t.Errorf("panicked statement: ERRORS %v, MESSAGE_TEXT %v", r["ERRORS"], r["MESSAGE_TEXT"])
	}

	// Called directly, the panic reaches the caller, and the thread ended.
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want boom", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/boom", nil))
	}()
	if d := findRow(t, s, "events_statements_summary_by_digest", "DIGEST_TEXT = 'GET /boom'"); d["SUM_ERRORS"] != uint64(2) {
		t.Errorf("SUM_ERRORS %v, want 2", d["SUM_ERRORS"])
	}
	if r := findRows(t, s, "threads", "NAME = 'thread/http/request'"); len(r) != 0 {
		t.Errorf("request threads left: %v", r)
	}
}

// While a request runs its thread shows its user and host, and carries
// its statement; the accounts table counts the requests.
func TestThreadsAndAccounts(t *testing.T) {
	s := newSchema(t)
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	mux.HandleFunc("GET /fast", func(w http.ResponseWriter, r *http.Request) {})
	user := pfshttp.WithUser(func(r *http.Request) string { return r.Header.Get("X-User") })
	sv := startServer(t, s, mux, false, false, user)

	done := make(chan struct{})
	go func() {
		defer close(done)
		sv.do(t, "GET", "/slow", "X-User", "alice")
	}()
	<-entered
	th := findRow(t, s, "threads", "NAME = 'thread/http/request'")
	if th["PROCESSLIST_USER"] != "alice" || th["PROCESSLIST_HOST"] != "127.0.0.1" || th["TYPE"] != "FOREGROUND" {
		t.Errorf("request thread: %v", th)
	}
	cur := findRow(t, s, "events_statements_current", fmt.Sprintf("THREAD_ID = %d", th["THREAD_ID"]))
	if cur["EVENT_NAME"] != "statement/http/request" || cur["END_EVENT_ID"] != nil || cur["SQL_TEXT"] != "GET" {
		t.Errorf("the request's current statement: %v", cur)
	}
	acct := findRow(t, s, "accounts", "USER = 'alice'")
	if acct["HOST"] != "127.0.0.1" || acct["CURRENT_CONNECTIONS"] != int64(1) {
		t.Errorf("accounts while running: %v", acct)
	}
	close(release)
	<-done
	sv.do(t, "GET", "/fast", "X-User", "alice")
	sv.do(t, "GET", "/fast", "X-User", "bob")
	acct = findRow(t, s, "accounts", "USER = 'alice'")
	if acct["CURRENT_CONNECTIONS"] != int64(0) || acct["TOTAL_CONNECTIONS"] != uint64(2) {
		t.Errorf("alice after: %v", acct)
	}
	if h := findRow(t, s, "hosts", "HOST = '127.0.0.1'"); h["TOTAL_CONNECTIONS"] != uint64(3) {
		t.Errorf("hosts: %v", h)
	}
	if r := findRows(t, s, "threads", "NAME = 'thread/http/request'"); len(r) != 0 {
		t.Errorf("request threads after the requests: %v", r)
	}
}

// idleAndRecv returns the idle instrument's COUNT_STAR and SUM_TIMER_WAIT,
// and the connections' socket class's COUNT_READ and SUM_TIMER_READ.
func (sv *server) idleAndRecv(t testing.TB) (idleN, idleSum, recvN, recvSum uint64) {
	t.Helper()
	i := findRow(t, sv.s, "events_waits_summary_global_by_event_name", "EVENT_NAME = 'idle'")
	r := findRow(t, sv.s, "socket_summary_by_event_name", "EVENT_NAME = '"+sv.connName+"'")
	return i["COUNT_STAR"].(uint64), i["SUM_TIMER_WAIT"].(uint64), r["COUNT_READ"].(uint64), r["SUM_TIMER_READ"].(uint64)
}

const pause = 100 * time.Millisecond

// keepAlive sends two requests on one connection with a pause between
// them, and returns how much the idle and recv statistics grew across the
// pause and the second request.
func keepAlive(t *testing.T, sv *server) (idleN, idleSum, recvN, recvSum uint64) {
	t.Helper()
	var conns sync.Map
	trace := func(r *http.Request) *http.Request {
		return r.WithContext(withConnTrace(r.Context(), &conns))
	}
	get := func() {
		req, _ := http.NewRequest("GET", sv.URL+"/ok", nil)
		resp, err := sv.Client().Do(trace(req))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get()
	n0, s0, rn0, rs0 := sv.idleAndRecv(t)
	time.Sleep(pause)
	get()
	n1, s1, rn1, rs1 := sv.idleAndRecv(t)
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("the two requests used %d connections, want 1 (keep-alive)", n)
	}
	return n1 - n0, s1 - s0, rn1 - rn0, rs1 - rs0
}

// The wait for the next request on a kept-alive connection is idle, not a
// socket read; reading the request is.
func TestKeepAliveIdle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls, h2 bool
	}{{"http", false, false}, {"https", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSchema(t)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
			sv := startServer(t, s, mux, tc.tls, tc.h2)
			idleN, idleSum, recvN, recvSum := keepAlive(t, sv)
			ps := uint64(pause.Nanoseconds()) * 1000
			if idleN != 1 || idleSum < ps*9/10 {
				t.Errorf("idle grew by %d waits, %v; want 1, about %v", idleN, time.Duration(idleSum/1000), pause)
			}
			if recvN == 0 || recvSum > ps/2 {
				t.Errorf("recv grew by %d reads, %v; want some, far below %v", recvN, time.Duration(recvSum/1000), pause)
			}
			// The connection's thread has the idle waits, and no user or
			// host; it ends with the connection.
			th := findRow(t, s, "threads", "NAME = 'thread/http/connection'")
			if th["PROCESSLIST_USER"] != nil || th["PROCESSLIST_HOST"] != nil {
				t.Errorf("connection thread: %v", th)
			}
			w := findRow(t, s, "events_waits_summary_by_thread_by_event_name",
				fmt.Sprintf("THREAD_ID = %d", th["THREAD_ID"]), "EVENT_NAME = 'idle'")
			// Before the first request (not over TLS: its handshake comes
			// first), and between the two.
			if want := map[bool]uint64{false: 2, true: 1}[tc.tls]; w["COUNT_STAR"] != want {
				t.Errorf("connection thread's idle: %v, want COUNT_STAR %d", w, want)
			}
			// The client has its response a little before the server waits
			// for the next request.
			eventually(t, func() string {
				cur := findRow(t, s, "events_waits_current", fmt.Sprintf("THREAD_ID = %d", th["THREAD_ID"]))
				if cur["EVENT_NAME"] != "idle" || cur["END_EVENT_ID"] != nil {
					return fmt.Sprintf("connection thread's current wait: %v", cur)
				}
				return ""
			})
			sv.Client().CloseIdleConnections()
			sv.Close()
			if r := findRows(t, s, "threads", "NAME = 'thread/http/connection'"); len(r) != 0 {
				t.Errorf("connection threads after Close: %v", r)
			}
		})
	}
}

// Without the marks (an unwrapped hook's HTTP/2, here over TLS) the same
// pause is a socket read: the comparison TestKeepAliveIdle makes is not
// vacuous, and HTTP/2 is left alone.
func TestHTTP2NotMarked(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			t.Errorf("protocol %s", r.Proto)
		}
	})
	sv := startServer(t, s, mux, true, true)
	idleN, _, _, recvSum := keepAlive(t, sv)
	if idleN != 0 {
		t.Errorf("HTTP/2: %d idle waits", idleN)
	}
	if ps := uint64(pause.Nanoseconds()) * 1000; recvSum < ps*9/10 {
		t.Errorf("HTTP/2: recv grew by %v, want about %v", time.Duration(recvSum/1000), pause)
	}
	if r := findRows(t, s, "threads", "NAME = 'thread/http/connection'"); len(r) != 0 {
		t.Errorf("HTTP/2 connection threads: %v", r)
	}
}

// A server whose listener is not wrapped: the hook does nothing, the
// handler still works.
func TestUnwrappedListener(t *testing.T) {
	s := newSchema(t)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	pfshttp.Server(ts.Config, pfshttp.WithSchema(s))
	pfshttp.Server(ts.Config, pfshttp.WithSchema(s)) // a second call wraps the handler once
	ts.Start()
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := findRows(t, s, "threads", "NAME = 'thread/http/connection'"); len(r) != 0 {
		t.Errorf("connection threads: %v", r)
	}
	if r := findRow(t, s, "events_statements_summary_global_by_event_name", "EVENT_NAME = 'statement/http/request'"); r["COUNT_STAR"] != uint64(1) {
		t.Errorf("requests: %v", r)
	}
}

// The wrapped ResponseWriter passes Flusher, Hijacker and
// http.ResponseController through; a hijacked connection's thread ends.
func TestResponseWriterInterfaces(t *testing.T) {
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "a")
		w.(http.Flusher).Flush()
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
			t.Errorf("SetWriteDeadline: %v", err)
		}
		fmt.Fprint(w, "b")
	})
	mux.HandleFunc("GET /hijack", func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
		brw.Flush()
		c.Close()
	})
	sv := startServer(t, s, mux, false, false)
	if _, body := sv.do(t, "GET", "/stream"); body != "ab" {
		t.Errorf("stream: %q", body)
	}
	if _, body := sv.do(t, "GET", "/hijack"); body != "hi" {
		t.Errorf("hijack: %q", body)
	}
	// The client has the hijacked response before the handler returns.
	eventually(t, func() string {
		d := findRows(t, s, "events_statements_summary_by_digest", "DIGEST_TEXT = 'GET /hijack'")
		if len(d) != 1 || d[0]["SUM_ERRORS"] != uint64(0) {
			return fmt.Sprintf("hijacked request: %v", d)
		}
		return ""
	})
	sv.Client().CloseIdleConnections()
	sv.Close()
	if r := findRows(t, s, "threads"); len(r) != 0 {
		t.Errorf("threads left: %v", r)
	}
}

// A request whose client goes away counts as cancelled.
func TestCancelled(t *testing.T) {
	s := newSchema(t)
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /wait", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})
	sv := startServer(t, s, mux, false, false)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", sv.URL+"/wait", nil)
	go func() { <-entered; cancel() }()
	if _, err := sv.Client().Do(req); err == nil {
		t.Fatal("no error from a cancelled request")
	}
	eventually(t, func() string {
		rows := findRows(t, s, "events_statements_summary_by_digest", "DIGEST_TEXT = 'GET /wait'")
		if len(rows) != 1 || rows[0]["COUNT_CANCELLED"] != uint64(1) {
			return fmt.Sprintf("the cancelled request's digest row: %v", rows)
		}
		return ""
	})
}

// eventually calls check until it returns "", for 5 seconds at most, and
// fails with its last result.
func eventually(t testing.TB, check func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// withConnTrace records the connections requests use in conns.
func withConnTrace(ctx context.Context, conns *sync.Map) context.Context {
	return httptraceWithGotConn(ctx, func(c net.Conn) { conns.Store(c.LocalAddr().String(), true) })
}

// The request statement carries the span of the request's context through
// the trace hook; WithHost names the host.
func TestTraceAndHost(t *testing.T) {
	type spanKey struct{}
	instrument.SetTraceHook(func(ctx context.Context) (tr [16]byte, sp [8]byte, sampled, ok bool) {
		if ctx.Value(spanKey{}) == nil {
			return tr, sp, false, false
		}
		tr[0], sp[0] = 0xab, 0xcd
		return tr, sp, true, true
	})
	defer instrument.SetTraceHook(nil)
	s := newSchema(t)
	entered, release := make(chan struct{}), make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	h := pfshttp.Handler(inner, pfshttp.WithSchema(s),
		pfshttp.WithHost(func(r *http.Request) string { return r.Header.Get("X-Forwarded-For") }))
	// A tracing middleware outside Handler.
	traced := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), spanKey{}, true)))
	})
	ts := httptest.NewServer(traced)
	defer ts.Close()
	go func() {
		<-entered
		defer close(release)
		th := findRow(t, s, "threads", "NAME = 'thread/http/request'")
		if th["PROCESSLIST_HOST"] != "198.51.100.7" {
			t.Errorf("host: %v", th["PROCESSLIST_HOST"])
		}
	}()
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := findRow(t, s, "events_statements_history_long", "EVENT_NAME = 'statement/http/request'")
	if tr, _ := r["TRACE_ID"].(string); !strings.HasPrefix(tr, "ab00") {
		t.Errorf("TRACE_ID %v", r["TRACE_ID"])
	}
	if sp, _ := r["SPAN_ID"].(string); !strings.HasPrefix(sp, "cd00") {
		t.Errorf("SPAN_ID %v", r["SPAN_ID"])
	}
	if r["SQL_TEXT"] != "GET (unmatched)" {
		t.Errorf("SQL_TEXT %v", r["SQL_TEXT"])
	}
}

// WithContext's context reaches the handler with the request's thread in
// it; a nil result leaves the request's own.
func TestWithContext(t *testing.T) {
	s := newSchema(t)
	type key struct{}
	var got []string
	var threads int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := r.Context().Value(key{}).(string)
		got = append(got, v)
		if instrument.ThreadFromContext(r.Context()) != nil {
			threads++
		}
	})
	derive := func(r *http.Request) context.Context {
		if r.URL.Path == "/nil" {
			return nil
		}
		return context.WithValue(r.Context(), key{}, r.Header.Get("X-Caller"))
	}
	hh := pfshttp.Handler(h, pfshttp.WithSchema(s), pfshttp.WithContext(derive))
	for _, path := range []string{"/a", "/nil"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-Caller", "upstream")
		hh.ServeHTTP(httptest.NewRecorder(), req)
	}
	if len(got) != 2 || got[0] != "upstream" || got[1] != "" || threads != 2 {
		t.Errorf("the handler saw %q with %d threads; want [upstream \"\"] and 2", got, threads)
	}
}

// TestRequestProtocolForSpans: a captured request carries its status,
// scheme and path for its span (pfscore.Protocol), the path clipped to 2
// KiB (a client chooses it); a request whose handler panicked carries its
// scheme and path, and no status it did not send; a method net/http does
// not define, as the client sent it.
func TestRequestProtocolForSpans(t *testing.T) {
	s := newSchema(t)
	s.EnableTraceCapture(pfscore.TraceCapture{Sampler: pfscore.TraceSampler{Ratio: 1}})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /notes/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) })
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s))
	long := "/notes/" + strings.Repeat("é", 3000)
	for _, path := range []string{"/notes/7", long, "/boom"} {
		func() {
			defer func() { _ = recover() }()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		}()
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/pot", nil))
	odd := httptest.NewRequest("GET", "/pot", nil)
	odd.Method = "B" + strings.Repeat("é", 20) // 41 bytes: cut inside an é at 32
	h.ServeHTTP(httptest.NewRecorder(), odd)
	got := map[string]pfscore.Protocol{}
	trees := s.ReadTraces(nil, 0)
	for _, tr := range trees {
		if tr.Protocol == nil {
			t.Fatalf("a tree without its request's protocol: %+v", tr.Top())
		}
		got[tr.Top().DigestText+" "+tr.Protocol.Path[:min(len(tr.Protocol.Path), 10)]] = *tr.Protocol
	}
	if p := got["GET /notes/{id} /notes/7"]; p != (pfscore.Protocol{Status: 404, Scheme: "http", Path: "/notes/7"}) {
		t.Errorf("404: %+v (all: %v)", p, got)
	}
	var clipped pfscore.Protocol
	for k, p := range got {
		if strings.HasPrefix(k, "GET /notes/{id} /notes/\xc3") {
			clipped = p
		}
	}
	if n := len(clipped.Path); n == 0 || n > 2048 || !utf8.ValidString(clipped.Path) || !strings.HasPrefix(long, clipped.Path) {
		t.Errorf("a %d-byte path: %d bytes kept, valid UTF-8 %v", len(long), n, utf8.ValidString(clipped.Path))
	}
	if p := got["GET /boom /boom"]; p != (pfscore.Protocol{Scheme: "http", Path: "/boom"}) {
		t.Errorf("panic: %+v", p)
	}
	var methods []string
	for _, tr := range trees {
		if tr.Protocol != nil && tr.Protocol.Method != "" {
			methods = append(methods, tr.Protocol.Method)
		}
	}
	if len(methods) != 2 || methods[0] != "BREW" || !utf8.ValidString(methods[1]) || len(methods[1]) > 32 ||
		!strings.HasPrefix(odd.Method, methods[1]) {
		t.Errorf("methods net/http does not define, as sent (clipped to 32 bytes at a rune): %q", methods)
	}
}
