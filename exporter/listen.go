package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultAddr is where Listen serves when given no address: loopback, the
// port net/http/pprof examples use.
const DefaultAddr = "127.0.0.1:6060"

// ErrNotLoopback is returned by Listen for an address that is not a
// loopback address, unless WithRemoteAccess allows it.
var ErrNotLoopback = errors.New("exporter: refusing to serve on a non-loopback address")

// A ListenOption configures Listen.
type ListenOption interface {
	applyListen(listenConfig) listenConfig
}

type listenConfig struct {
	remote bool
}

type listenOptionFunc func(listenConfig) listenConfig

func (f listenOptionFunc) applyListen(c listenConfig) listenConfig { return f(c) }

// WithRemoteAccess lets Listen serve on any address, not only loopback. The
// tables then reach whoever reaches the address: put authentication in front
// of the handler (Listen adds none). By default, Listen serves only on
// loopback addresses and answers only requests whose Host is a loopback
// address or "localhost", which keeps other web sites out through DNS
// rebinding.
func WithRemoteAccess(allowed bool) ListenOption {
	return listenOptionFunc(func(c listenConfig) listenConfig { c.remote = allowed; return c })
}

// A Server is an HTTP server Listen started.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error // the Serve error, once done is closed
}

// Listen starts serving h on addr ("" means DefaultAddr; port 0 picks a free
// port) in a goroutine of its own and returns at once. Without
// WithRemoteAccess it refuses (ErrNotLoopback) an address that is not
// loopback: an empty or unspecified host ("", "0.0.0.0", "::") included.
// Stop the server with Close or Shutdown.
//
//	srv, err := exporter.Listen("", exporter.Handler(pfscore.Default()))
func Listen(addr string, h http.Handler, opts ...ListenOption) (*Server, error) {
	var cfg listenConfig
	for _, o := range opts {
		cfg = o.applyListen(cfg)
	}
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("exporter: listen address %q: %w", addr, err)
	}
	if !cfg.remote {
		if ip := net.ParseIP(host); host == "" || ip != nil && !ip.IsLoopback() {
			return nil, fmt.Errorf("%w: %q (use 127.0.0.1, [::1] or localhost, or exporter.WithRemoteAccess)", ErrNotLoopback, addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	if !cfg.remote {
		// A name resolved to something: check what was bound.
		if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
			ln.Close()
			return nil, fmt.Errorf("%w: %q is %s", ErrNotLoopback, addr, ln.Addr())
		}
		h = loopbackHostOnly(h)
	}
	s := &Server{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on, as host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL, as http://127.0.0.1:6060.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close stops the server at once, closing its connections, and waits for
// its goroutine. It returns the error serving met, if any.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil // closed before
	}
	<-s.done
	return errors.Join(err, s.err)
}

// Shutdown stops the server gracefully, as http.Server.Shutdown does, and
// waits for its goroutine.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loopbackHostOnly answers 421 to a request whose Host header is not a
// loopback address or localhost: a browser sent it to a name an attacker
// pointed at 127.0.0.1 (DNS rebinding).
func loopbackHostOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			writeError(w, errorf(http.StatusMisdirectedRequest, "host %q refused: this server answers only to loopback addresses and localhost", r.Host))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether a Host header names a loopback address or
// localhost.
func isLoopbackHost(host string) bool {
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost")
}

// rebound reports the signature of DNS rebinding: a request that reached a
// loopback address under a name that is not loopback (a web page's own
// host name, re-pointed at 127.0.0.1).
func rebound(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ta, ok := la.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback() && !isLoopbackHost(r.Host)
}
