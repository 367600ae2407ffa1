// Package pfshttp instruments net/http servers for the performance schema:
// each request is a thread running one statement, as each MySQL command is
// a statement of its connection's thread, and the time a kept-alive
// connection waits for its next request is idle time, not socket time.
//
// # Requests
//
// Handler wraps a handler, usually the service's http.ServeMux:
//
//	mux := http.NewServeMux()
//	mux.HandleFunc("GET /users/{id}", getUser)
//	srv := &http.Server{Handler: pfshttp.Handler(mux, pfshttp.WithUser(principal))}
//
// For every request it starts a thread (thread/http/request: threads shows
// it while the request runs, with the user WithUser names and the peer's
// IP as host, and accounts, users and hosts count it), and on that thread a
// statement (statement/http/request) that ends when the handler returns.
//
// The statement's text, and so its digest, is the request's route: the
// Request.Pattern http.ServeMux matched ("GET /users/{id}"), else the
// method and what WithRoute returns, else the method and "(unmatched)".
// The raw path is never used, so events_statements_summary_by_digest has
// one row per route however many ids the paths carry; methods net/http
// does not define all count as "_OTHER". ServeMux writes Pattern into the
// *Request it is given, and Handler reads it there after the handler
// returns, so Handler must hand its request to the mux itself: middleware
// between the two that copies the request (r.WithContext, or
// http.StripPrefix) hides the pattern. Put such middleware outside
// Handler (an OpenTelemetry handler, authentication that WithUser reads),
// or name the route with WithRoute. Until the handler returns, the
// statement's text is the method alone.
//
// A 5xx status makes the statement an error (ERRORS 1, MESSAGE_TEXT the
// status text, counted in SUM_ERRORS); so does a panic, whose value becomes
// MESSAGE_TEXT before the panic continues to net/http. A request whose
// client went away (its context done) counts in COUNT_CANCELLED. ROWS_SENT
// is 0: a response carries bytes, and MySQL's column counts rows.
//
// # What the handler records
//
// The request's context carries its thread (instrument.ThreadFromContext),
// so what the handler records through r.Context() belongs to the request:
// SQL run with instrument.StartSQL(r.Context(), …), directly or through a
// database/sql wrapper that passes the context, is a statement nested in
// the request's, at NESTING_EVENT_LEVEL 1 with NESTING_EVENT_ID the
// request statement's EVENT_ID; waits recorded through the Ctx and ForCtx
// methods nest in it too. A handler marks its phases with stages, which
// nest in the request statement and end with it:
//
//	var (
//		loading   = instrument.NewStageClass("stage/app/loading")
//		rendering = instrument.NewStageClass("stage/app/rendering")
//	)
//
//	func getUser(w http.ResponseWriter, r *http.Request) {
//		loading.Start(r.Context())
//		u, err := load(r.Context(), r.PathValue("id"))
//		rendering.Start(r.Context()) // loading ends here
//		…
//	}
//
// A thread is driven by one goroutine at a time: work the handler hands to
// other goroutines should not record through the request's context.
//
// The request statement carries the trace and span of the request's
// context, as every statement does through instrument.SetTraceHook: with
// OpenTelemetry's handler outside Handler, TRACE_ID and SPAN_ID link each
// row to the request's span.
//
// # Pooled threads
//
// WithThreadPool runs requests on pooled threads instead, as a connection
// pool runs its clients' work on its connections: a request takes an idle
// thread of its user and host, or starts one, and gives it back when it
// ends, if no event it began is still in progress. A thread's start and
// end (its rows, its account's connection counts, the roll-up of its
// statistics) are then paid once for many requests, most of what a
// request's thread costs. THREAD_ID, the by_thread summaries and the
// per-thread histories then span the requests a thread served, threads
// lists idle pooled threads too, and TOTAL_CONNECTIONS counts threads, not
// requests; WithThreadPool says what else changes.
//
// # The caller's trace
//
// WithTraceContext takes the caller's trace from the request's W3C
// traceparent and tracestate headers, as OpenTelemetry's propagator does
// and with the same span context, at a fraction of its cost: the request's
// context carries the caller's span, so statements record its trace and
// their spans join it (WithTraceContext names the one difference).
//
// # Idle connections
//
// A connection kept alive between requests spends most of its time
// waiting for the client. With the server's listener wrapped by instrument,
// every read of a connection is a socket wait, and that wait would dominate
// the socket summaries. ConnState (or Server, which installs it and
// Handler) records it as MySQL does, as the idle instrument:
//
//	ln, err := listenSockets.Listen("tcp", ":8080", connSockets)
//	srv := &http.Server{Handler: mux}
//	pfshttp.Server(srv)
//	err = srv.Serve(ln)
//
// Each HTTP/1 connection gets a thread (thread/http/connection) for its
// idle waits; from the moment the connection goes idle until the next
// request's first bytes arrive, its read is an idle wait of that thread
// (events_waits_summary_global_by_event_name, EVENT_NAME idle), and the
// reads of the request itself stay socket waits. The details, TLS and
// HTTP/2 are in ConnState's documentation.
//
// While a handler runs, net/http keeps a one-byte read pending on the
// connection to notice the client going away; that read is a socket wait
// as long as the handler, attributed to no thread. A request pipelined
// behind the one in progress, whose first byte that read took, counts one
// idle wait of about no time when net/http reads the rest of it.
//
// # Cost
//
// A request costs a thread start and end (none with WithThreadPool, but a
// pool's lock twice), a statement, and one allocation of the middleware's
// own, about 450 bytes: the copy of the request that carries the thread
// (net/http gives a handler no other way to pass a context on), its
// context and the ResponseWriter that records the status (and the
// caller's span, with WithTraceContext), in one object that is never
// reused, since a handler may keep its request past its return. Starting a
// thread allocates one more object. BenchmarkHandler compares a ServeMux
// route with and without Handler, and with pooled threads (less than half
// the cost without them: 0.67 against 1.5 us a request on the AMD EPYC VM)
// and the caller's trace context; TestAllocations and
// TestThreadPoolAllocations hold the counts. Threads come from the
// schema's thread table (pfscore.WithMaxThreads): each request in progress
// (each pooled thread, idle or not) and each open connection holds one. A
// request that finds the table full (and, with WithThreadPool, no idle
// thread to end) has no thread (counted in
// Performance_schema_thread_instances_lost): its statement counts in the
// global and by-digest summaries only.
package pfshttp
