package pfshttp

import (
	"context"
	"net/http"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The default class names.
const (
	// DefaultThreadClass is the thread class of a request.
	DefaultThreadClass = "thread/http/request"
	// DefaultStatementClass is the statement class of a request.
	DefaultStatementClass = "statement/http/request"
	// DefaultConnectionThreadClass is the thread class of a connection,
	// which ConnState starts for its idle waits.
	DefaultConnectionThreadClass = "thread/http/connection"
)

// An Option configures Handler, ConnState or Server. Each takes all of
// them and uses those that concern it.
type Option func(*config)

type config struct {
	schema                         *pfscore.Schema
	threadClass, stmtClass, connTh string
	user, host, route              func(*http.Request) string
	ctx                            func(*http.Request) context.Context
}

func newConfig(opts []Option) config {
	c := config{threadClass: DefaultThreadClass, stmtClass: DefaultStatementClass, connTh: DefaultConnectionThreadClass}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithSchema makes the threads and statements report to s. By default they
// report to pfscore.Default().
func WithSchema(s *pfscore.Schema) Option { return func(c *config) { c.schema = s } }

// WithUser sets the function that names a request's user: its thread's
// PROCESSLIST_USER, the account its statistics roll up into, and the key
// setup_actors matches. It runs before the handler, so it sees what earlier
// middleware put in the request (an authenticated principal in its
// context, say). By default a request has no user.
func WithUser(f func(*http.Request) string) Option { return func(c *config) { c.user = f } }

// WithHost sets the function that names a request's host: its thread's
// PROCESSLIST_HOST. By default it is the IP of Request.RemoteAddr, the
// peer of the connection, without the port; behind a proxy, a function
// that trusts the proxy's X-Forwarded-For gives the client's.
func WithHost(f func(*http.Request) string) Option { return func(c *config) { c.host = f } }

// WithRoute sets the function that names a request's route when the
// request has no Request.Pattern (no http.ServeMux routed it, or none
// matched): the statement's text is then the method, a space, and what f
// returns. It runs after the handler, with the request the handler was
// given, so a router that records its matched route there can be read. f
// must return a route template ("/users/{id}"), never the raw path: the
// text is the statement's digest, one row of
// events_statements_summary_by_digest per distinct text. An empty result
// is taken as "(unmatched)", the default.
func WithRoute(f func(*http.Request) string) Option { return func(c *config) { c.route = f } }

// WithContext sets the function that derives a request's context before
// Handler adds the request's thread to it, so that both reach the handler
// in the one copy of the request Handler makes: OpenTelemetry's
// propagation, for instance, which would otherwise be middleware of its own
// copying the request again.
//
//	var prop propagation.TraceContext
//	pfshttp.WithContext(func(r *http.Request) context.Context {
//		return prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
//	})
//
// By default, and when f returns nil, the context is r.Context().
func WithContext(f func(*http.Request) context.Context) Option {
	return func(c *config) { c.ctx = f }
}

// WithThreadClass sets the thread class of the requests (by default
// DefaultThreadClass).
func WithThreadClass(name string) Option { return func(c *config) { c.threadClass = name } }

// WithStatementClass sets the statement class of the requests (by default
// DefaultStatementClass).
func WithStatementClass(name string) Option { return func(c *config) { c.stmtClass = name } }

// WithConnectionThreadClass sets the thread class of the connections
// ConnState follows (by default DefaultConnectionThreadClass).
func WithConnectionThreadClass(name string) Option {
	return func(c *config) { c.connTh = name }
}
