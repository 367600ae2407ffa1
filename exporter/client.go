package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The client side of Handler: a pfscore.Tables over HTTP.

// ErrUnreachable is wrapped by a Client's errors when the service did not
// answer at all: nothing listens at the address, the connection failed or
// timed out. The error also wraps the cause.
var ErrUnreachable = errors.New("cannot reach the service")

// DefaultClientTimeout bounds a Client's requests unless WithHTTPClient
// gives a client of its own.
const DefaultClientTimeout = 30 * time.Second

// maxAnswerBytes bounds an answer a Client reads.
const maxAnswerBytes = 1 << 30

// A ClientOption configures NewClient.
type ClientOption interface {
	applyClient(clientConfig) clientConfig
}

type clientConfig struct {
	hc *http.Client
}

type clientOptionFunc func(clientConfig) clientConfig

func (f clientOptionFunc) applyClient(c clientConfig) clientConfig { return f(c) }

// WithHTTPClient makes the Client send its requests with hc (its transport,
// timeout, TLS configuration, ...). By default, an http.Client with
// DefaultClientTimeout.
func WithHTTPClient(hc *http.Client) ClientOption {
	return clientOptionFunc(func(c clientConfig) clientConfig { c.hc = hc; return c })
}

// A Client is the other end of Handler: the tables of a service that serves
// them, seen from another process. It implements pfscore.Tables, so code
// written against that interface reads and changes a remote schema as it
// would a local one:
//
//	GET  PREFIX/catalog                 Catalog
//	GET  PREFIX/tables/NAME?format=json Query (where, order, limit)
//	POST PREFIX/tables/NAME/truncate    Truncate
//	POST PREFIX/tables/NAME/update      Update
//	POST PREFIX/tables/NAME/insert      Insert
//	POST PREFIX/tables/NAME/delete      Delete
//	POST PREFIX/setup/TABLE             Setup
//
// The changes need a handler that allows them (WithSetupChanges).
//
// Errors are pfscore's where the handler says which (its JSON "code"), so
// errors.Is works as on a *pfscore.Schema: pfscore.ErrUnknownTable,
// ErrBadQuery, ErrNotUpdatable, ErrDuplicateRow, ... Any other answer than
// 200 is a *ResponseError, with the status; a service that does not answer
// is ErrUnreachable. An answer that is not the handler's (another server's
// page, JSON of another shape or of another table) is an error that asks
// whether the address is an otelpfs handler at all. Every error of a
// request names the service.
//
// pfscore.Tables has no context: a Client's requests end when the context
// of WithContext ends, and in any case after its http.Client's timeout.
// A Client is safe for concurrent use.
type Client struct {
	base string // scheme://host:port/prefix, no trailing slash: where requests go
	name string // base with any password redacted: what messages show
	hc   *http.Client
	ctx  context.Context
}

var _ pfscore.Tables = (*Client)(nil)

// NewClient returns a Client of the handler at addr: a host:port, whose
// handler is at DefaultPrefix (http://host:port/debug/pfs), or an http or
// https URL, the handler's prefix as its path (DefaultPrefix if it has
// none). "" means DefaultAddr. It sends no request.
//
//	c, err := exporter.NewClient("127.0.0.1:6060")
//	c, err := exporter.NewClient("https://admin.example:8443/internal/pfs")
func NewClient(addr string, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{}
	for _, o := range opts {
		cfg = o.applyClient(cfg)
	}
	if cfg.hc == nil {
		cfg.hc = &http.Client{Timeout: DefaultClientTimeout}
	}
	if addr == "" {
		addr = DefaultAddr
	}
	var u *url.URL
	if strings.Contains(addr, "://") {
		var err error
		u, err = url.Parse(addr)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("exporter: service address %q: want host:port or an http:// URL", addr)
		}
		if strings.Trim(u.Path, "/") == "" {
			u.Path = DefaultPrefix
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	} else {
		_, port, err := net.SplitHostPort(addr)
		if err != nil || port == "" || strings.ContainsAny(addr, "/?#") {
			return nil, fmt.Errorf("exporter: service address %q: want host:port, as %s, or an http:// URL", addr, DefaultAddr)
		}
		u = &url.URL{Scheme: "http", Host: addr, Path: DefaultPrefix}
	}
	return &Client{base: u.String(), name: u.Redacted(), hc: cfg.hc, ctx: context.Background()}, nil
}

// URL returns the handler's base URL, as http://127.0.0.1:6060/debug/pfs
// (with any password redacted).
func (c *Client) URL() string { return c.name }

// WithContext returns a copy of c whose requests end when ctx does: a
// pfscore.Tables for one operation, or until an interrupt.
func (c *Client) WithContext(ctx context.Context) *Client {
	if ctx == nil {
		panic("exporter: Client.WithContext: nil context")
	}
	c2 := *c
	c2.ctx = ctx
	return &c2
}

// A ResponseError is an answer other than 200 OK. Handler says whether it
// is the handler's own JSON {"error": ...}; if not (a web server's 404
// page, say), the address is probably not an otelpfs handler, and Message
// says what came back. It unwraps to the pfscore error the handler's code
// names, if any.
type ResponseError struct {
	StatusCode int    // the HTTP status, as http.StatusNotFound
	Message    string // the handler's message; or the request, the status and the start of the body
	Code       string // the handler's code for a pfscore error ("unknown_table", "bad_query", ...), or ""
	Handler    bool   // the answer is the handler's JSON error
	err        error  // what Code names
}

func (e *ResponseError) Error() string { return e.Message }

// Unwrap returns the pfscore error the answer stands for, or nil.
func (e *ResponseError) Unwrap() error { return e.err }

// answer is a 200 answer.
type answer struct {
	body        []byte
	contentType string
	shown       string // the method and URL, for messages
}

// do sends a request and returns the 200 answer, or an error that says
// whether the service was unreachable or what it answered instead.
func (c *Client) do(method, path string, q url.Values, body []byte) (*answer, error) {
	u, shown := c.base+path, c.name+path
	if len(q) > 0 {
		u += "?" + q.Encode()
		shown += "?" + q.Encode()
	}
	shown = method + " " + shown
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%s: %w", shown, cerr)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.name, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err == nil && len(b) > maxAnswerBytes {
		err = fmt.Errorf("longer than %d bytes", maxAnswerBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", c.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
			Code  string `json:"code"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, &ResponseError{StatusCode: resp.StatusCode, Message: e.Error, Code: e.Code, Handler: true, err: codeError(e.Code)}
		}
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, &ResponseError{StatusCode: resp.StatusCode,
			Message: fmt.Sprintf("%s: %s: %s (is this an otelpfs /debug/pfs handler?)", shown, resp.Status, msg)}
	}
	return &answer{body: b, contentType: resp.Header.Get("Content-Type"), shown: shown}, nil
}

// unwrapURLError drops *url.Error's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// wrap names what failed and where, for the handler's refusals; other
// errors name the service already.
func (c *Client) wrap(what string, err error) error {
	if re := (*ResponseError)(nil); errors.As(err, &re) && re.Handler {
		return fmt.Errorf("%s of %s: %w", what, c.name, err)
	}
	return err
}

// unknownTable makes a code-less 404 of the handler (one from an older
// otelpfs) mean an unknown table, on requests whose path exists.
func unknownTable(err error) {
	if re := (*ResponseError)(nil); errors.As(err, &re) && re.Handler && re.err == nil && re.StatusCode == http.StatusNotFound {
		re.err = pfscore.ErrUnknownTable
	}
}

// notHandler is the error for a 200 answer that is not what the handler
// sends.
func notHandler(a *answer, what, format string, args ...any) error {
	return fmt.Errorf("%s answered %s, not %s (is this an otelpfs /debug/pfs handler?)", a.shown, fmt.Sprintf(format, args...), what)
}

// decodeAnswer decodes a JSON answer into v, or says it is not one.
func decodeAnswer(a *answer, what string, v any) error {
	if mt, _, _ := mime.ParseMediaType(a.contentType); mt != "application/json" {
		return notHandler(a, what, "with content type %q", a.contentType)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return notHandler(a, what, "a JSON %s", te.Value)
		}
		return notHandler(a, what, "JSON that does not decode as one (%v)", err)
	}
	return nil
}

// tablePath is the path of a table, or of one of its POSTs; a name that
// cannot be a table is pfscore.ErrUnknownTable before any request.
func tablePath(table, op string) (string, error) {
	if table == "" || table == "." || table == ".." || strings.ContainsAny(table, "/?#") {
		return "", fmt.Errorf("%w %q", pfscore.ErrUnknownTable, table)
	}
	p := "/tables/" + url.PathEscape(table)
	if op != "" {
		p += "/" + op
	}
	return p, nil
}

// Catalog lists every table of the service, in name order: GET
// PREFIX/catalog.
func (c *Client) Catalog() ([]pfscore.TableInfo, error) {
	a, err := c.do(http.MethodGet, "/catalog", nil, nil)
	if err != nil {
		return nil, c.wrap("the catalog", err)
	}
	const what = "an otelpfs catalog"
	var raw jsonCatalog
	if err := decodeAnswer(a, what, &raw); err != nil {
		return nil, err
	}
	if raw.Tables == nil {
		return nil, notHandler(a, what, "JSON without a list of tables")
	}
	cat := make([]pfscore.TableInfo, len(raw.Tables))
	for i, t := range raw.Tables {
		cols, err := parseColumns(t.Columns)
		if err != nil {
			return nil, notHandler(a, what, "table %s, %v", t.Name, err)
		}
		if t.Name == "" || len(cols) == 0 {
			return nil, notHandler(a, what, "a table without a name or columns")
		}
		cat[i] = pfscore.TableInfo{Name: t.Name, Columns: cols, Truncatable: t.Truncatable, Insertable: t.Insertable}
		if len(t.Updatable) > 0 {
			cat[i].Updatable = t.Updatable
		}
	}
	return cat, nil
}

// Query returns a snapshot of table filtered, ordered and limited by q, as
// the service's schema computes it: GET PREFIX/tables/NAME?format=json
// with where, order and limit. Result.Matched counts the rows the WHERE
// clause matched, before the limit.
func (c *Client) Query(table string, q pfscore.Query) (*pfscore.Result, error) {
	path, err := tablePath(table, "")
	if err != nil {
		return nil, err
	}
	v := url.Values{"format": {"json"}}
	for _, w := range q.Where {
		v.Add("where", w)
	}
	if q.Order != "" {
		v.Set("order", q.Order)
	}
	// A Query's Limit 0 is no limit, the handler's limit=0 no rows; and
	// more rows than the handler's bound are all of them.
	if q.Limit > 0 && q.Limit <= maxLimit {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	a, err := c.do(http.MethodGet, path, v, nil)
	if err != nil {
		unknownTable(err)
		if re := (*ResponseError)(nil); errors.As(err, &re) && re.Handler && re.err == nil && re.StatusCode == http.StatusBadRequest {
			re.err = pfscore.ErrBadQuery // the only 400 of a table's GET, from an older otelpfs
		}
		return nil, c.wrap("table "+table, err)
	}
	const what = "an otelpfs table"
	if mt, _, _ := mime.ParseMediaType(a.contentType); mt != "application/json" {
		return nil, notHandler(a, what, "with content type %q", a.contentType)
	}
	res, err := DecodeJSON(bytes.NewReader(a.body))
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return nil, notHandler(a, what, "a JSON %s", te.Value)
	case err != nil:
		return nil, notHandler(a, what, "JSON that does not decode as a table (%v)", err)
	case res.Table == "" && len(res.Columns) == 0:
		return nil, notHandler(a, what, "JSON without a table's name and columns")
	case !strings.EqualFold(res.Table, table):
		return nil, notHandler(a, what, "JSON of table %q", res.Table)
	case len(res.Columns) == 0:
		return nil, notHandler(a, what, "JSON of a table without columns")
	}
	return res, nil
}

// Truncate is TRUNCATE TABLE table: POST PREFIX/tables/NAME/truncate.
func (c *Client) Truncate(table string) error {
	path, err := tablePath(table, "truncate")
	if err != nil {
		return err
	}
	a, err := c.do(http.MethodPost, path, nil, []byte{})
	if err != nil {
		unknownTable(err)
		return c.wrap("table "+table, err)
	}
	var res struct {
		Table     string `json:"table"`
		Truncated bool   `json:"truncated"`
	}
	if err := decodeAnswer(a, "the answer to a TRUNCATE", &res); err != nil {
		return err
	}
	if !res.Truncated || res.Table != table {
		return notHandler(a, "the answer to a TRUNCATE", "%s", bytes.TrimSpace(a.body))
	}
	return nil
}

// Update is UPDATE table SET set WHERE where: POST
// PREFIX/tables/NAME/update. It returns the rows the WHERE clause matched.
// A value is a string, a bool, an integer or nil (what JSON carries).
func (c *Client) Update(table string, where []string, set map[string]pfscore.Value) (int, error) {
	values, err := wireValues(set)
	if err != nil {
		return 0, err
	}
	return c.change(table, "update", struct {
		Where []string       `json:"where,omitempty"`
		Set   map[string]any `json:"set"`
	}{where, values})
}

// Insert is INSERT INTO table: POST PREFIX/tables/NAME/insert. A value is
// a string, a bool, an integer or nil.
func (c *Client) Insert(table string, values map[string]pfscore.Value) error {
	v, err := wireValues(values)
	if err != nil {
		return err
	}
	_, err = c.change(table, "insert", struct {
		Values map[string]any `json:"values"`
	}{v})
	return err
}

// Delete is DELETE FROM table WHERE where: POST PREFIX/tables/NAME/delete.
// It returns the rows deleted.
func (c *Client) Delete(table string, where []string) (int, error) {
	return c.change(table, "delete", struct {
		Where []string `json:"where,omitempty"`
	}{where})
}

// change posts an update, insert or delete and returns rows_matched.
func (c *Client) change(table, op string, req any) (int, error) {
	path, err := tablePath(table, op)
	if err != nil {
		return 0, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %s: %v", pfscore.ErrBadValue, op, table, err)
	}
	a, err := c.do(http.MethodPost, path, nil, body)
	if err != nil {
		return 0, c.wrap("table "+table, err)
	}
	res, err := decodeChange(a, table, op)
	return res.RowsMatched, err
}

// Setup posts body, a JSON object the package documentation lists, to
// PREFIX/setup/TABLE (TABLE: instruments, consumers, threads, timers,
// actors or objects, the setup_ prefix optional), and returns the
// handler's answer.
//
//	res, err := c.Setup("instruments", []byte(`{"name": "wait/synch/%", "enabled": false}`))
func (c *Client) Setup(table string, body []byte) (ChangeResult, error) {
	if table == "" || table == "." || table == ".." || strings.ContainsAny(table, "/?#") {
		return ChangeResult{}, fmt.Errorf("exporter: no setup table %q", table)
	}
	if body == nil {
		body = []byte{}
	}
	a, err := c.do(http.MethodPost, "/setup/"+url.PathEscape(table), nil, body)
	if err != nil {
		return ChangeResult{}, c.wrap("setup "+table, err)
	}
	return decodeChange(a, "setup_"+strings.TrimPrefix(strings.ToLower(table), "setup_"), "")
}

// decodeChange decodes the answer to a change of table, or says it is not
// one; op, if not "", is the op it must name.
func decodeChange(a *answer, table, op string) (ChangeResult, error) {
	const what = "the answer to a change"
	var res struct {
		ChangeResult
		RowsMatched *int `json:"rows_matched"`
	}
	if err := decodeAnswer(a, what, &res); err != nil {
		return ChangeResult{}, err
	}
	if res.RowsMatched == nil || res.Table != table || op != "" && res.Op != op {
		return ChangeResult{}, notHandler(a, what, "%.200s", bytes.TrimSpace(a.body))
	}
	res.ChangeResult.RowsMatched = *res.RowsMatched
	return res.ChangeResult, nil
}

// wireValues checks that values are what JSON carries to the handler:
// strings, bools, integers and nils.
func wireValues(values map[string]pfscore.Value) (map[string]any, error) {
	if values == nil {
		return nil, nil
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		switch v := v.(type) {
		case nil, string, bool, uint64, int64, int, int8, int16, int32, uint, uint8, uint16, uint32:
			out[k] = v
		default:
			return nil, fmt.Errorf("%w: %s = %v: a %T does not go over HTTP; want a string, a bool, an integer or nil", pfscore.ErrBadValue, k, v, v)
		}
	}
	return out, nil
}
