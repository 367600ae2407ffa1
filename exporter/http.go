package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/pfscore"
)

// DefaultPrefix is where Handler serves unless WithPrefix says otherwise.
const DefaultPrefix = "/debug/pfs"

// MaxBodyBytes bounds the body of a POST; a longer one is refused with 413.
const MaxBodyBytes = 64 << 10

// A HandlerOption configures Handler.
type HandlerOption interface {
	applyHandler(handlerConfig) handlerConfig
}

type handlerConfig struct {
	prefix  string
	changes bool
	anyHost bool
}

type handlerOptionFunc func(handlerConfig) handlerConfig

func (f handlerOptionFunc) applyHandler(c handlerConfig) handlerConfig { return f(c) }

func newHandlerConfig(opts []HandlerOption) handlerConfig {
	c := handlerConfig{prefix: DefaultPrefix}
	for _, o := range opts {
		c = o.applyHandler(c)
	}
	return c
}

// WithSetupChanges allows (true) the requests that change something: POST
// /setup/TABLE and POST /tables/NAME/truncate, /update, /insert and
// /delete. By default they are refused with 403, and the handler only
// reads.
func WithSetupChanges(allowed bool) HandlerOption {
	return handlerOptionFunc(func(c handlerConfig) handlerConfig { c.changes = allowed; return c })
}

// WithAnyHost (true) turns off the handler's DNS-rebinding check: by
// default a request that reached a loopback address under a Host that is
// not loopback or localhost (a web page's host name re-pointed at
// 127.0.0.1) is refused with 421, wherever the handler is mounted. A
// reverse proxy on the same machine that forwards a public Host needs it.
func WithAnyHost(allowed bool) HandlerOption {
	return handlerOptionFunc(func(c handlerConfig) handlerConfig { c.anyHost = allowed; return c })
}

// WithPrefix sets the path the handler serves under, for a service that
// mounts it elsewhere than DefaultPrefix ("/debug/pfs"); a trailing slash
// is ignored, and "" or "/" serves at the root. By default, DefaultPrefix.
func WithPrefix(prefix string) HandlerOption {
	return handlerOptionFunc(func(c handlerConfig) handlerConfig {
		c.prefix = strings.TrimRight(prefix, "/")
		if c.prefix != "" && !strings.HasPrefix(c.prefix, "/") {
			c.prefix = "/" + c.prefix
		}
		return c
	})
}

// Handler returns the /debug/pfs handler over s. Mount it at its prefix:
//
//	mux.Handle("/debug/pfs/", exporter.Handler(s))
//
// It serves
//
//	GET  /debug/pfs/                       the tables and their row counts
//	GET  /debug/pfs/catalog                every table's columns and the changes it takes (JSON)
//	GET  /debug/pfs/tables/NAME            one table: format=text|json|html, where, order, limit
//	POST /debug/pfs/tables/NAME/truncate   TRUNCATE TABLE NAME
//	POST /debug/pfs/tables/NAME/update     UPDATE NAME SET ... WHERE ... (JSON body)
//	POST /debug/pfs/tables/NAME/insert     INSERT INTO NAME ... (JSON body)
//	POST /debug/pfs/tables/NAME/delete     DELETE FROM NAME WHERE ... (JSON body)
//	POST /debug/pfs/setup/TABLE            a change to a setup table, in its own JSON body
//
// Without a format parameter a page is HTML for a browser (an Accept
// header naming text/html) and text for anything else. Errors are JSON,
// {"error": "..."} (with a "code" when the error is one of pfscore's), with
// status 400 (a bad request), 403 (changes not allowed, a cross-origin
// browser request, a refused TRUNCATE, UPDATE, INSERT or DELETE), 404 (no
// such table or path), 405 (wrong method), 409 (a duplicate or full setup
// table) or 413 (a body over MaxBodyBytes); a bad where, order or limit
// on a table's HTML page is that page, status 400, with the error shown
// above the form. A refused or bad request changes nothing. See the
// package documentation for the details; Client is the other end.
//
// The handler is safe for concurrent use.
func Handler(t pfscore.Tables, opts ...HandlerOption) http.Handler {
	return &handler{s: t, cfg: newHandlerConfig(opts), cop: http.NewCrossOriginProtection()}
}

type handler struct {
	s   pfscore.Tables
	cfg handlerConfig
	cop *http.CrossOriginProtection
}

// httpError is an error with its status, and the error it comes from, if
// any (which gives the answer its code, see errorCodes).
type httpError struct {
	status int
	msg    string
	cause  error
}

func (e *httpError) Error() string { return e.msg }
func (e *httpError) Unwrap() error { return e.cause }

func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// causef is errorf for an error caused by cause.
func causef(status int, cause error, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...), cause: cause}
}

// errorCodes name, in an error's JSON, the engine errors a client may want
// to tell apart (Client turns them back into these errors): the first one
// the error wraps gives its "code".
var errorCodes = []struct {
	code string
	err  error
}{
	{"unknown_table", pfscore.ErrUnknownTable},
	{"bad_query", pfscore.ErrBadQuery},
	{"truncate_not_allowed", pfscore.ErrTruncateNotAllowed},
	{"not_updatable", pfscore.ErrNotUpdatable},
	{"not_insertable", pfscore.ErrNotInsertable},
	{"duplicate_row", pfscore.ErrDuplicateRow},
	{"table_full", pfscore.ErrTableFull},
	{"bad_value", pfscore.ErrBadValue},
	{"bad_pattern", pfscore.ErrBadPattern},
	{"unknown_timer", hwclock.ErrUnknownTimer},
}

// errorCode returns the code of the first of errorCodes err wraps, or "".
func errorCode(err error) string {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// codeError returns the error a code names, or nil.
func codeError(code string) error {
	for _, c := range errorCodes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !h.cfg.anyHost && rebound(r) {
		writeError(w, errorf(http.StatusMisdirectedRequest, "host %q refused on a loopback address: a page's name re-pointed at 127.0.0.1 (DNS rebinding)? exporter.WithAnyHost allows it", r.Host))
		return
	}
	if err := h.serve(w, r); err != nil {
		writeError(w, err)
	}
}

func (h *handler) serve(w http.ResponseWriter, r *http.Request) error {
	p := h.cfg.prefix
	rest, ok := strings.CutPrefix(r.URL.Path, p)
	if !ok || (rest != "" && rest[0] != '/') {
		return errorf(http.StatusNotFound, "no such path %q: the tables are under %s/", r.URL.Path, p)
	}
	switch {
	case rest == "":
		if err := allowMethods(w, r, http.MethodGet, http.MethodHead); err != nil {
			return err
		}
		http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
		return nil
	case rest == "/" || rest == "/tables" || rest == "/tables/":
		if err := allowMethods(w, r, http.MethodGet, http.MethodHead); err != nil {
			return err
		}
		return h.serveIndex(w, r)
	case rest == "/catalog":
		if err := allowMethods(w, r, http.MethodGet, http.MethodHead); err != nil {
			return err
		}
		return h.serveCatalog(w, r)
	case strings.HasPrefix(rest, "/tables/"):
		name, op, hasOp := strings.Cut(strings.TrimPrefix(rest, "/tables/"), "/")
		if hasOp && !tableOps[op] {
			return errorf(http.StatusNotFound, "no such path %q: want %s/tables/NAME, or %s/tables/NAME/OP for OP truncate, update, insert or delete", r.URL.Path, p, p)
		}
		if err := h.checkTable(name); err != nil {
			return err
		}
		if hasOp {
			if err := allowMethods(w, r, http.MethodPost); err != nil {
				return err
			}
			if op == "truncate" {
				return h.serveTruncate(w, r, name)
			}
			return h.serveChange(w, r, name, op)
		}
		if err := allowMethods(w, r, http.MethodGet, http.MethodHead); err != nil {
			return err
		}
		return h.serveTable(w, r, name)
	case strings.HasPrefix(rest, "/setup/"):
		name := strings.TrimPrefix(rest, "/setup/")
		u := setupUpdaters[strings.TrimPrefix(strings.ToLower(name), "setup_")]
		if u == nil {
			return errorf(http.StatusNotFound, "no setup table %q: want one of instruments, consumers, actors, objects, threads, timers", name)
		}
		if err := allowMethods(w, r, http.MethodPost); err != nil {
			return err
		}
		return h.serveSetup(w, r, u)
	default:
		return errorf(http.StatusNotFound, "no such path %q: want %s/, %s/catalog, %s/tables/NAME or %s/setup/TABLE", r.URL.Path, p, p, p, p)
	}
}

// catalogError is the answer when the schema cannot list its tables (a
// Tables that is itself remote): the service behind it failed.
func catalogError(err error) error {
	return errorf(http.StatusBadGateway, "listing the tables: %v", err)
}

// checkTable returns 404 for an unknown table.
func (h *handler) checkTable(name string) error {
	cat, err := h.s.Catalog()
	if err != nil {
		return catalogError(err)
	}
	for _, t := range cat {
		if t.Name == name {
			return nil
		}
	}
	return causef(http.StatusNotFound, pfscore.ErrUnknownTable, "unknown table %q: GET %s/ lists the tables", name, h.cfg.prefix)
}

// allowMethods returns 405, with an Allow header, unless r's method is one
// of methods.
func allowMethods(w http.ResponseWriter, r *http.Request, methods ...string) error {
	for _, m := range methods {
		if r.Method == m {
			return nil
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	return errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(methods, " or "))
}

// checkParams returns 400 for a parameter not in allowed or given twice.
func checkParams(v url.Values, allowed ...string) error {
	for k, vs := range v {
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
			}
		}
		if !known {
			if len(allowed) == 0 {
				return errorf(http.StatusBadRequest, "unknown parameter %q: this request takes none", k)
			}
			return errorf(http.StatusBadRequest, "unknown parameter %q: want %s", k, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 && k != "where" {
			return errorf(http.StatusBadRequest, "parameter %q given %d times", k, len(vs))
		}
	}
	return nil
}

type format uint8

const (
	formatText format = iota
	formatJSON
	formatHTML
)

// pickFormat reads the format parameter, or chooses HTML for a browser and
// text otherwise.
func pickFormat(r *http.Request, v url.Values) (format, error) {
	switch f := strings.ToLower(v.Get("format")); f {
	case "text", "txt":
		return formatText, nil
	case "json":
		return formatJSON, nil
	case "html":
		return formatHTML, nil
	case "":
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			return formatHTML, nil
		}
		return formatText, nil
	default:
		return 0, errorf(http.StatusBadRequest, "unknown format %q: want text, json or html", f)
	}
}

func setContentType(w http.ResponseWriter, f format) {
	switch f {
	case formatJSON:
		w.Header().Set("Content-Type", "application/json")
	case formatHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
}

// tableInfos lists the tables and counts their rows.
func (h *handler) tableInfos() ([]TableInfo, error) {
	cat, err := h.s.Catalog()
	if err != nil {
		return nil, catalogError(err)
	}
	infos := make([]TableInfo, 0, len(cat))
	for _, t := range cat {
		res, err := h.s.Query(t.Name, pfscore.Query{})
		if err != nil {
			continue
		}
		infos = append(infos, TableInfo{Name: t.Name, Rows: len(res.Rows), Truncatable: t.Truncatable})
	}
	return infos, nil
}

// tableLinks lists the tables without counting rows (performance_timers,
// for one, calibrates the timers on every read), for a page's navigation.
func (h *handler) tableLinks() []TableInfo {
	cat, _ := h.s.Catalog() // navigation only: a page without links still shows its table
	infos := make([]TableInfo, len(cat))
	for i, t := range cat {
		infos[i] = TableInfo{Name: t.Name, Rows: -1}
	}
	return infos
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	if err := checkParams(v, "format"); err != nil {
		return err
	}
	f, err := pickFormat(r, v)
	if err != nil {
		return err
	}
	infos, err := h.tableInfos()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch f {
	case formatJSON:
		err = writeIndexJSON(&buf, infos)
	case formatHTML:
		err = writeHTML(&buf, &htmlPage{Prefix: h.cfg.prefix, Title: "performance_schema", Tables: infos, Index: true, Changes: h.cfg.changes})
	default:
		err = writeIndexText(&buf, infos)
	}
	return writeBody(w, f, &buf, err)
}

// serveCatalog answers GET /catalog: every table's columns and the changes
// it takes, as pfscore.Tables.Catalog says, without reading any rows.
func (h *handler) serveCatalog(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	cat, err := h.s.Catalog()
	if err != nil {
		return catalogError(err)
	}
	var buf bytes.Buffer
	err = writeCatalogJSON(&buf, cat)
	return writeBody(w, formatJSON, &buf, err)
}

func (h *handler) serveTable(w http.ResponseWriter, r *http.Request, name string) error {
	v := r.URL.Query()
	if err := checkParams(v, "format", "where", "order", "limit"); err != nil {
		return err
	}
	f, err := pickFormat(r, v)
	if err != nil {
		return err
	}
	q, none, err := queryOf(v)
	var res *pfscore.Result
	if err == nil {
		res, err = h.s.Query(name, q)
		switch {
		case errors.Is(err, pfscore.ErrUnknownTable):
			return causef(http.StatusNotFound, err, "unknown table %q", name)
		case err != nil:
			err = causef(http.StatusBadRequest, err, "%v", err)
		}
	}
	if err != nil {
		if f == formatHTML {
			return h.serveTableError(w, v, name, err)
		}
		return err
	}
	if none { // limit=0
		res.Rows = res.Rows[:0]
	}
	var buf bytes.Buffer
	switch f {
	case formatJSON:
		err = WriteJSON(&buf, res)
	case formatHTML:
		sample := ""
		if i := whereStringColumn(res.Columns); i >= 0 {
			sample = sampleString(res.Rows, i)
		}
		p := h.tablePage(v, name, res.Columns, sample)
		p.Rows, p.Total = htmlRows(res.Columns, res.Rows), res.Matched
		err = writeHTML(&buf, p)
	default:
		err = WriteText(&buf, res)
	}
	return writeBody(w, f, &buf, err)
}

// tablePage is the HTML page of table name for a request with parameters
// v, without its rows: the form with v's values and placeholders for cols
// (sample is a value of the where example's string column, see
// placeholders), and the headers.
func (h *handler) tablePage(v url.Values, name string, cols []pfscore.Column, sample string) *htmlPage {
	wherePH, orderPH := placeholders(cols, sample)
	return &htmlPage{
		Prefix: h.cfg.prefix, Title: name + " · performance_schema", Tables: h.tableLinks(), Current: name,
		Columns: htmlColumns(cols, v),
		Where:   strings.Join(v["where"], " AND "), Order: v.Get("order"), Limit: v.Get("limit"),
		WherePH: wherePH, OrderPH: orderPH, LimitPH: "20",
		TextURL: withFormat(v, "text"), JSONURL: withFormat(v, "json"),
		Changes: h.cfg.changes,
	}
}

// serveTableError answers a browser's table request whose where, order or
// limit failed (qerr, a 400) with the table's page: the error, the form
// with the values sent, and the headers without rows, so that the reader
// corrects the query where it was typed. Other errors stay JSON.
func (h *handler) serveTableError(w http.ResponseWriter, v url.Values, name string, qerr error) error {
	var he *httpError
	if !errors.As(qerr, &he) || he.status != http.StatusBadRequest {
		return qerr
	}
	cat, err := h.s.Catalog()
	if err != nil {
		return catalogError(err)
	}
	var cols []pfscore.Column
	for _, t := range cat {
		if t.Name == name {
			cols = t.Columns
		}
	}
	// The rows give the where example its value, as on a page that worked;
	// none (a remote table that failed, say) leaves the example generic.
	sample := ""
	if i := whereStringColumn(cols); i >= 0 {
		if res, err := h.s.Query(name, pfscore.Query{}); err == nil && len(res.Columns) == len(cols) {
			sample = sampleString(res.Rows, i)
		}
	}
	p := h.tablePage(v, name, cols, sample)
	p.Error = qerr.Error()
	var buf bytes.Buffer
	if err := writeHTML(&buf, p); err != nil {
		return errorf(http.StatusInternalServerError, "rendering: %v", err)
	}
	setContentType(w, formatHTML)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusBadRequest)
	buf.WriteTo(w) // an error here is the client's going away: nothing to tell it
	return nil
}

// maxLimit bounds limit=; more rows than this are never asked for.
const maxLimit = 1 << 30

// queryOf returns the query of a table request's where, order and limit
// parameters (see pfscore.Query). none reports limit=0, which asks for no
// rows (a pfscore.Query's zero Limit means no limit).
func queryOf(v url.Values) (q pfscore.Query, none bool, err error) {
	q = pfscore.Query{Where: v["where"], Order: v.Get("order")}
	if l := strings.TrimSpace(v.Get("limit")); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > maxLimit {
			return q, false, causef(http.StatusBadRequest, pfscore.ErrBadQuery, "%v: limit %q: want an integer from 0 to %d", pfscore.ErrBadQuery, v.Get("limit"), maxLimit)
		}
		q.Limit, none = n, n == 0
	}
	return q, none, nil
}

// writeBody sends a rendered page, or the error that rendering it met.
func writeBody(w http.ResponseWriter, f format, buf *bytes.Buffer, err error) error {
	if err != nil {
		return errorf(http.StatusInternalServerError, "rendering: %v", err)
	}
	setContentType(w, f)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	buf.WriteTo(w) // an error here is the client's going away: nothing to tell it
	return nil
}

// withFormat is the query v with format=f, as a relative URL.
func withFormat(v url.Values, f string) string {
	c := url.Values{}
	for k, vs := range v {
		c[k] = vs
	}
	c.Set("format", f)
	return "?" + c.Encode()
}

// checkChange refuses a change the application did not allow, or one a
// browser sends from another origin.
func (h *handler) checkChange(r *http.Request) error {
	if !h.cfg.changes {
		return errorf(http.StatusForbidden, "changes are disabled: the application serves %s read-only (exporter.WithSetupChanges enables them)", h.cfg.prefix)
	}
	if err := h.cop.Check(r); err != nil {
		return errorf(http.StatusForbidden, "cross-origin request refused: %v", err)
	}
	return nil
}

func (h *handler) serveTruncate(w http.ResponseWriter, r *http.Request, name string) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	if err := h.checkChange(r); err != nil {
		return err
	}
	if err := h.s.Truncate(name); err != nil {
		switch {
		case errors.Is(err, pfscore.ErrUnknownTable):
			return causef(http.StatusNotFound, err, "unknown table %q", name)
		case errors.Is(err, pfscore.ErrTruncateNotAllowed):
			return causef(http.StatusForbidden, err, "TRUNCATE TABLE %s is not allowed: MySQL does not truncate this table", name)
		default:
			return errorf(http.StatusInternalServerError, "truncate %s: %v", name, err)
		}
	}
	return writeJSONStatus(w, http.StatusOK, map[string]any{"table": name, "truncated": true})
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// writeError writes err as {"error": "..."} with its status (500 if it has
// none), and its "code" if it is one of errorCodes.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	body := map[string]string{"error": err.Error()}
	if code := errorCode(err); code != "" {
		body["code"] = code
	}
	writeJSONStatus(w, status, body)
}
