package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// The client side of exporter's /debug/pfs handler, shared by pfs tables,
// pfs setup and pfs top.

// defaultAddr is the service pfs talks to without --addr or PFS_ADDR.
const defaultAddr = exporter.DefaultAddr

// addrFlag adds --addr to fs.
func addrFlag(fs *flag.FlagSet) *string {
	return fs.String("addr", "", "the service: host:port, or a base URL such as http://host:port/debug/pfs\n(default $PFS_ADDR, else "+defaultAddr+")")
}

// client talks to one service's /debug/pfs.
type client struct {
	base string // http://host:port/debug/pfs, no trailing slash
	http *http.Client
	ctx  context.Context // requests end when it does (pfs top: on Ctrl-C)
}

// newClient resolves addr (the --addr flag; "" means $PFS_ADDR, then
// defaultAddr) to the handler's base URL.
func newClient(addr string) (*client, error) {
	if addr == "" {
		addr = os.Getenv("PFS_ADDR")
	}
	if addr == "" {
		addr = defaultAddr
	}
	base := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%w: --addr %q: want host:port or an http:// URL", errUsage, addr)
		}
		if strings.Trim(u.Path, "/") == "" {
			u.Path = exporter.DefaultPrefix
		}
		u.RawQuery, u.Fragment = "", ""
		base = strings.TrimRight(u.String(), "/")
	} else {
		if strings.ContainsAny(addr, "/?#") || !strings.Contains(addr, ":") {
			return nil, fmt.Errorf("%w: --addr %q: want host:port, as %s", errUsage, addr, defaultAddr)
		}
		base = "http://" + addr + exporter.DefaultPrefix
	}
	return &client{base: base, http: &http.Client{Timeout: 30 * time.Second}, ctx: context.Background()}, nil
}

// A serverError is a refusal: an answer other than 200. handler says
// whether it came as the handler's JSON {"error": "..."}; anything else
// (a web server's 404 page, say) is from something that is not the handler.
type serverError struct {
	status  int
	msg     string
	handler bool
}

func (e *serverError) Error() string { return e.msg }

// do sends a request and returns the body and Content-Type of a 200 answer,
// or an error that says whether the service was unreachable or what it
// refused.
func (c *client) do(method, path string, q url.Values, body []byte) (_ []byte, contentType string, _ error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u, rd)
	if err != nil {
		return nil, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach the service at %s: %v (is it serving exporter.Handler there? set --addr or PFS_ADDR)", c.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, "", fmt.Errorf("reading the answer of %s: %v", c.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, "", &serverError{status: resp.StatusCode, msg: e.Error, handler: true}
		}
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, "", &serverError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %s (is this an otelpfs /debug/pfs handler?)", method, u, resp.Status, msg)}
	}
	return b, resp.Header.Get("Content-Type"), nil
}

// unwrapURLError drops *url.Error's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *client) get(path string, q url.Values) ([]byte, error) {
	b, _, err := c.do(http.MethodGet, path, q, nil)
	return b, err
}

func (c *client) post(path string, body []byte) ([]byte, error) {
	if body == nil {
		body = []byte{}
	}
	b, _, err := c.do(http.MethodPost, path, nil, body)
	return b, err
}

// table fetches a table as JSON and decodes it. Every error names the
// service. An answer other than the handler's JSON of table name (another
// content type, JSON of another shape or of another table) is an error
// that asks whether the address is an otelpfs handler at all.
func (c *client) table(name string, q url.Values) (*pfscore.Result, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("format", "json")
	path := "/tables/" + url.PathEscape(name)
	b, ct, err := c.do(http.MethodGet, path, q, nil)
	if err != nil {
		if se := (*serverError)(nil); errors.As(err, &se) && se.handler {
			return nil, fmt.Errorf("table %s of %s: %w", name, c.base, err)
		}
		return nil, err // it names the service already
	}
	notATable := func(format string, args ...any) error {
		return fmt.Errorf("GET %s%s answered %s, not an otelpfs table (is this an otelpfs /debug/pfs handler?)",
			c.base, path, fmt.Sprintf(format, args...))
	}
	if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" {
		return nil, notATable("with content type %q", ct)
	}
	res, err := exporter.DecodeJSON(bytes.NewReader(b))
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return nil, notATable("a JSON %s", te.Value)
	case err != nil:
		return nil, notATable("JSON that does not decode as a table (%v)", err)
	case res.Table == "" && len(res.Columns) == 0:
		return nil, notATable("JSON without a table's name and columns")
	case !strings.EqualFold(res.Table, name):
		return nil, notATable("JSON of table %q", res.Table)
	case len(res.Columns) == 0:
		return nil, notATable("JSON of a table without columns")
	}
	return res, nil
}

// isNotFound reports whether err is the handler's 404 (an unknown table).
// A 404 from anything else is not: that address has no handler at all.
func isNotFound(err error) bool {
	var se *serverError
	return errors.As(err, &se) && se.handler && se.status == http.StatusNotFound
}

// multiFlag is a flag that may be repeated.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " AND ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseInterspersed parses flags that may come before, between or after
// positional arguments (pfs tables threads --json), and returns the
// positional ones. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, true); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
