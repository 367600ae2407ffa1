package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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

// A serverError is an error the handler answered with.
type serverError struct {
	status int
	msg    string
}

func (e *serverError) Error() string { return e.msg }

// do sends a request and returns the body of a 200 answer, or an error that
// says whether the service was unreachable or what it refused.
func (c *client) do(method, path string, q url.Values, body []byte) ([]byte, error) {
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
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the service at %s: %v (is it serving exporter.Handler there? set --addr or PFS_ADDR)", c.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %v", c.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, &serverError{resp.StatusCode, e.Error}
		}
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, &serverError{resp.StatusCode, fmt.Sprintf("%s %s: %s: %s (is this an otelpfs /debug/pfs handler?)", method, u, resp.Status, msg)}
	}
	return b, nil
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
	return c.do(http.MethodGet, path, q, nil)
}

func (c *client) post(path string, body []byte) ([]byte, error) {
	if body == nil {
		body = []byte{}
	}
	return c.do(http.MethodPost, path, nil, body)
}

// table fetches a table as JSON and decodes it.
func (c *client) table(name string, q url.Values) (*pfscore.Result, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("format", "json")
	b, err := c.get("/tables/"+url.PathEscape(name), q)
	if err != nil {
		return nil, err
	}
	return exporter.DecodeJSON(bytes.NewReader(b))
}

// isNotFound reports whether err is the service's 404 (an unknown table).
func isNotFound(err error) bool {
	var se *serverError
	return errors.As(err, &se) && se.status == http.StatusNotFound
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
