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
	poolMax                        int  // WithThreadPool's bound; 0: no pool
	traceContext                   bool // WithTraceContext
}

// pool returns the thread pool WithThreadPool asks for, or nil.
func (c config) pool() *threadPool {
	if c.poolMax <= 0 {
		return nil
	}
	return newThreadPool(c.poolMax)
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

// WithTraceContext makes Handler take the caller's trace from the
// request's W3C Trace Context headers (traceparent and tracestate), as
// OpenTelemetry's propagation.TraceContext Extract does, with the same
// span context for every header: the request's context then carries the
// caller's span as a remote span context, so that with
// instrument.SetTraceHook(bridge.TraceContext) its statements record the
// caller's trace and their spans join it. It costs a fraction of the
// propagator through WithContext (about 400 ns and four allocations a
// request): it looks the headers up by their canonical names instead of
// canonicalizing "traceparent" on each request, and the request's context,
// which Handler allocates anyway, holds the caller's span itself, under
// OpenTelemetry's key (learnt once, at start-up), rather than
// wrapping its parent in a context.WithValue of a boxed span. The span is
// what OpenTelemetry's would be: the same span context, non-recording,
// with the same TracerProvider; the SDK's tracers, trace/noop's and the
// global one before an SDK is installed start its children in the
// caller's trace. One difference: the deprecated
// trace.NewNoopTracerProvider's tracer, which keeps a parent only of the
// API's own span type, starts an empty span there. The context
// WithContext derives, if any, is the one it adds the span to.
//
// A service that runs OpenTelemetry's own HTTP middleware outside Handler
// already has the span in the request's context and needs neither.
func WithTraceContext() Option { return func(c *config) { c.traceContext = true } }

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

// WithThreadPool makes Handler run requests on pooled threads, as a
// connection pool runs its clients' work on its connections, rather than
// start a thread for each request and end it after: a request takes an
// idle thread of its user and host (WithUser, WithHost) if there is one,
// else starts one, and at its end gives the thread back, keeping at most
// max idle threads in all and ending the others. Starting and ending a
// thread is most of what a request's thread costs (its rows, its account's
// connection counts, the roll-up of its statistics into the account and
// the ended threads' totals), so a pooled thread pays it once for many
// requests.
//
// What the tables show changes accordingly. A thread's THREAD_ID, its
// by_thread summaries and its per-thread histories (events_*_history)
// span the requests it served, each request being a statement of
// statement/http/request on it, as a connection's commands are statements
// of its thread; threads lists idle pooled threads as well as busy ones;
// an account's CURRENT_CONNECTIONS counts its pooled threads, idle ones
// included, and TOTAL_CONNECTIONS the threads started, not the requests
// (count those with the request statement's COUNT_STAR). A pooled thread
// keeps the INSTRUMENTED and HISTORY setup_actors gave it at its start, as
// a MySQL connection does.
//
// A request's context carries its thread until the request ends, and none
// after, so a goroutine that outlives the request and records through the
// context records on no thread, as it would on an ended thread. A thread
// handle taken from the context (instrument.ThreadFromContext, a ForCtx
// binding) must not be used after the request: like a connection used
// after its return to its pool, it records on the pooled thread, idle or
// serving a later request, whose rows may then count another request's
// events (a misuse the engine survives: rows are never torn). A thread is
// given back only settled (no wait, statement or transaction in progress:
// pfscore's Thread.Settle; a stage in progress ends), and, if anything ran
// on it while it was idle (Thread.Settled), settled again when a request
// takes it; one that is not is ended instead, so a request
// never starts with another's event in progress on its thread. Idle
// threads stay until the process ends, unless the handler's
// CloseIdleThreads ends them, and give their slots of the thread table
// (pfscore.WithMaxThreads) to requests that find it full:
//
//	h := pfshttp.Handler(mux, pfshttp.WithThreadPool(64))
//	…
//	h.(interface{ CloseIdleThreads() }).CloseIdleThreads()
//
// A max of 0 or less means no pool, the default.
func WithThreadPool(max int) Option { return func(c *config) { c.poolMax = max } }
