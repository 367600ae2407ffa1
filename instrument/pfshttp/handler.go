package pfshttp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/trace"
)

// Handler returns next instrumented: each request is a thread and, on it, a
// statement, as a MySQL connection's command is a statement of its thread.
//
// The thread (class thread/http/request, WithThreadClass) has the user of
// WithUser and the host of WithHost (by default the peer's IP), shows in
// threads while the request runs, and counts in accounts, users and hosts;
// with WithThreadPool it is a pooled thread of that user and host, which
// serves one request after another. The request the handler gets carries
// it in its context, so the
// instruments the handler uses through that context (instrument.StartSQL,
// StageClass.Start, the Ctx and ForCtx methods) record on it, and
// statements begun there nest in the request's.
//
// The statement (class statement/http/request, WithStatementClass) is
// named by the request's route, which is its text and its digest: the
// request's Request.Pattern where an http.ServeMux routed it ("GET
// /users/{id}", or "/static/" for a pattern without a method), else the
// method and WithRoute's route, else the method and "(unmatched)". A
// method net/http does not define is "_OTHER", so that no client can add
// digest rows at will. The route is known once the handler has returned:
// until then the statement's text is the method alone ("GET"), which is
// what events_statements_current shows while the request runs.
//
// The statement ends when the handler returns (net/http then writes what
// remains of a buffered response), with ERRORS 1 and
// MESSAGE_TEXT the status text for a 5xx status, or, if the handler
// panics, "panic: " and the value; the panic then goes on. It counts as
// cancelled if the request's context is done by then (the client went
// away). ROWS_SENT stays 0: a response has bytes, not rows.
//
// The ResponseWriter the handler gets records the status. It passes
// http.Flusher, http.Hijacker, http.Pusher and io.ReaderFrom through to the
// ResponseWriter it wraps (Hijack and Push fail, and Flush does nothing,
// where that one cannot), and http.ResponseController reaches the wrapped
// one through its Unwrap.
func Handler(next http.Handler, opts ...Option) http.Handler {
	c := newConfig(opts)
	in := instrument.WithSchema(c.schema)
	return &handler{
		next:    next,
		threads: instrument.NewThreadClass(c.threadClass, in),
		stmts:   instrument.NewStatementClass(c.stmtClass, in),
		user:    c.user,
		host:    c.host,
		route:   c.route,
		ctx:     c.ctx,
		pool:    c.pool(),

		traceContext: c.traceContext,
	}
}

type handler struct {
	next              http.Handler
	threads           *instrument.ThreadClass
	stmts             *instrument.StatementClass
	user, host, route func(*http.Request) string
	ctx               func(*http.Request) context.Context
	pool              *threadPool // nil: a thread per request
	traceContext      bool        // WithTraceContext
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var user, host string
	if h.user != nil {
		user = h.user(r)
	}
	if h.host != nil {
		host = h.host(r)
	} else {
		host = remoteIP(r.RemoteAddr)
	}
	base := r.Context()
	if h.ctx != nil {
		if c := h.ctx(r); c != nil {
			base = c
		}
	}

	var t *instrument.Thread
	var list *idleList
	if h.pool != nil {
		t, list = h.pool.get(user, host)
	}
	if t == nil {
		t = h.threads.Start(user, host)
		if t == nil && h.pool != nil && h.pool.evict() {
			t = h.threads.Start(user, host) // the thread table was full, an idle thread's slot is free
		}
	}
	// The request's one allocation: the copy of r the handler gets, the
	// context it carries and the ResponseWriter (see request).
	q := &request{w: responseWriter{ResponseWriter: w}, list: list}
	if h.traceContext || pfscore.TraceHookSet() {
		if sc, ok := parseTraceContext(r.Header); ok {
			if spanKey != nil {
				q.ctx.setSpan(sc) // before withThread publishes q.ctx
			} else {
				base = trace.ContextWithRemoteSpanContext(base, sc)
			}
		}
	}
	ctx := q.withThread(base, t)
	q.r = *r.WithContext(ctx) // inlined: the temporary copy stays on the stack
	r = &q.r
	rw := &q.w
	// The method stands for the text until the route is known:
	// http.ServeMux sets r.Pattern on the *Request it is given, in place,
	// when it routes, so end reads it there. (Asking the mux first,
	// mux.Handler(r), would route every request twice.)
	st := h.stmts.Start(ctx, methodName(r.Method))
	// The request's span shows its scheme and path (clipped: a client
	// chooses them), and the status once the handler returns.
	q.proto = pfscore.Protocol{Scheme: "http", Path: clip(r.URL.Path, maxPath)}
	if r.TLS != nil {
		q.proto.Scheme = "https"
	}
	if methodName(r.Method) == "_OTHER" {
		q.proto.Method = clip(r.Method, maxMethod)
	}
	returned := false
	defer func() {
		if !returned {
			v := recover()
			msg := "handler exited without returning" // runtime.Goexit
			if v != nil {
				msg = fmt.Sprint("panic: ", v)
			}
			q.proto.Status = rw.status // what was sent, if anything
			h.end(&st, q, user, host, instrument.StatementResult{Errors: 1, Message: msg, Protocol: &q.proto})
			if v != nil {
				panic(v)
			}
		}
	}()
	h.next.ServeHTTP(rw, r)
	returned = true
	var res instrument.StatementResult
	if rw.status >= 500 {
		res.Errors, res.Message = 1, statusText(rw.status)
	}
	q.proto.Status = rw.status
	if q.proto.Status == 0 {
		q.proto.Status = http.StatusOK // net/http's, for a handler that wrote nothing
	}
	res.Protocol = &q.proto
	h.end(&st, q, user, host, res)
}

// end names and ends the statement, then the thread, or returns it to the
// pool once the request's context no longer carries it.
func (h *handler) end(st *instrument.Statement, q *request, user, host string, res instrument.StatementResult) {
	defer h.release(q, user, host) // whatever happens below
	if !st.Active() {
		return
	}
	r := &q.r
	res.Cancelled = r.Context().Err() != nil
	defer func() {
		if st.Active() { // WithRoute's function panicked: the statement ends, then the panic goes on
			v := recover()
			st.End(instrument.StatementResult{Errors: 1, Message: fmt.Sprint("panic: ", v), Cancelled: res.Cancelled})
			if v != nil {
				panic(v)
			}
		}
	}()
	st.EndWithText(h.text(r), true, res) // the route is known now: one write to the row for both
}

// release ends the request's thread, or gives it back to the pool once
// the request's context no longer carries it.
func (h *handler) release(q *request, user, host string) {
	t := q.ctx.t.Load()
	if h.pool == nil {
		t.End() // the context keeps the ended thread, as ContextWithThread's would
		return
	}
	q.ctx.t.Store(nil)
	h.pool.put(q.list, user, host, t)
}

// CloseIdleThreads ends the idle threads WithThreadPool keeps; threads of
// requests in progress end when their requests do. Without WithThreadPool
// it does nothing. The handler goes on serving: later requests start
// threads again.
func (h *handler) CloseIdleThreads() {
	if h.pool != nil {
		h.pool.closeIdle()
	}
}

// text is the statement text of r, once handled.
func (h *handler) text(r *http.Request) string {
	// A CONNECT that ServeMux redirects to its path with a slash added gets
	// that path as its Pattern: the client's, not a route.
	if r.Pattern != "" && !(r.Method == http.MethodConnect && r.Pattern == r.URL.Path+"/") {
		i := strings.IndexAny(r.Pattern, " \t")
		if i < 0 {
			// A pattern for every method ("/notes/"): the route is still
			// the request's method and the pattern.
			return methodName(r.Method) + " " + r.Pattern
		}
		if rest := r.Pattern[i:]; rest[0] != ' ' || len(rest) > 1 && (rest[1] == ' ' || rest[1] == '\t') {
			// "GET\t/x", "GET   /x": ServeMux takes any blanks between
			// the method and the path; the route has one space.
			return r.Pattern[:i] + " " + strings.TrimLeft(rest, " \t")
		}
		return r.Pattern
	}
	if h.route != nil {
		if route := h.route(r); route != "" {
			return methodName(r.Method) + " " + route
		}
	}
	return unmatched(r.Method)
}

// maxPath bounds the url.path a request's span carries: a client chooses
// its path, up to net/http's header limit (1 MB), and one such span would
// make an export too large for a Collector to take.
const maxPath = 2048

// maxMethod bounds the method a span names as the client sent it, when
// net/http defines no such method (http.request.method_original).
const maxMethod = 32

// clip returns s cut to at most max bytes, at a rune boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// methodName returns m if net/http defines it, else "_OTHER".
func methodName(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// unmatched returns the text of a request of method m without a route,
// allocating nothing.
func unmatched(m string) string {
	switch m {
	case http.MethodGet:
		return "GET (unmatched)"
	case http.MethodHead:
		return "HEAD (unmatched)"
	case http.MethodPost:
		return "POST (unmatched)"
	case http.MethodPut:
		return "PUT (unmatched)"
	case http.MethodPatch:
		return "PATCH (unmatched)"
	case http.MethodDelete:
		return "DELETE (unmatched)"
	case http.MethodConnect:
		return "CONNECT (unmatched)"
	case http.MethodOptions:
		return "OPTIONS (unmatched)"
	case http.MethodTrace:
		return "TRACE (unmatched)"
	}
	return "_OTHER (unmatched)"
}

// statusText is the MESSAGE_TEXT of a 5xx status.
func statusText(code int) string {
	if s := http.StatusText(code); s != "" {
		return s
	}
	return "server error"
}

// remoteIP returns the IP of a RemoteAddr, without the port; an address it
// cannot split (a Unix socket's) as it is.
func remoteIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// responseWriter records the status a handler writes.
type responseWriter struct {
	http.ResponseWriter
	status int // 0 until the header is written
}

// Unwrap returns the wrapped ResponseWriter, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *responseWriter) WriteHeader(code int) {
	// 1xx but 101 are informational: the final status comes later.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush is http.Flusher's; it does nothing if the wrapped writer cannot.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError flushes, as http.ResponseController.Flush.
func (w *responseWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack is http.Hijacker's, through http.ResponseController.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Push is http.Pusher's; http.ErrNotSupported if the wrapped writer is not
// one.
func (w *responseWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// ReadFrom is io.ReaderFrom's: net/http's own ReadFrom (sendfile) when the
// wrapped writer has one.
func (w *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{w.ResponseWriter}, r)
}

type writerOnly struct{ io.Writer }

// WriteString is io.StringWriter's, as net/http's writer has it: no copy
// of the string into a byte slice.
func (w *responseWriter) WriteString(s string) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.WriteString(w.ResponseWriter, s)
}

// CloseNotify is http.CloseNotifier's, which net/http's writer still has
// and frameworks assert; a channel that never fires if the wrapped writer
// is not one.
func (w *responseWriter) CloseNotify() <-chan bool {
	//lint:ignore SA1019 passed through for handlers that still use it
	if cn, ok := w.ResponseWriter.(http.CloseNotifier); ok {
		return cn.CloseNotify()
	}
	return make(chan bool)
}
