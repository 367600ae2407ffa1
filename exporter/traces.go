package exporter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Defaults of the trace pipeline, for the zero fields of traceConfig.
const (
	defaultTraceTimeout  = 10 * time.Second
	defaultTraceInterval = DefaultSpanInterval
	defaultQueueSize     = DefaultSpanQueueSize
	maxTraceBatch        = 512 // spans per export
	defaultRetryInitial  = 200 * time.Millisecond
	defaultRetryMax      = 5 * time.Second
	defaultRetryElapsed  = time.Minute
)

// Status variables the trace pipeline adds to global_status.
const (
	// StatusSpansLost counts spans the exporter dropped: the queue was
	// full, or an export failed for good (retries ran out, the receiver
	// rejected them, or shutdown's context ended with spans queued).
	StatusSpansLost = "Performance_schema_export_spans_lost"
	// StatusEventsLost counts events that never became spans: a sampled
	// tree the schema's trace queue had no room for counts its top
	// statement (pfscore.TraceStats.TreesLost), and the events of a tree
	// past its bound count one each (EventsLost).
	StatusEventsLost = "Performance_schema_export_events_lost"
)

// traceConfig configures startTraces. Zero durations and sizes take the
// defaults above.
type traceConfig struct {
	protocol    string            // ProtocolGRPC ("" too) or ProtocolHTTPProtobuf
	endpoint    string            // gRPC: host:port of an OTLP/gRPC receiver
	url         string            // http/protobuf: the URL to POST to
	insecure    bool              // plaintext; else TLS
	tlsConfig   *tls.Config       // nil and !insecure: system roots
	headers     map[string]string // sent with every export
	compression string            // "gzip" or "" (none)
	timeout     time.Duration     // per export
	interval    time.Duration     // how often the captured trees are read
	queueSize   int               // spans held for export; more are dropped and counted
	sampler     pfscore.TraceSampler
	sdk         sdktrace.SpanExporter // WithSpanExporter: spans go there, not over OTLP
	sqlText     bool                  // export SQL_TEXT as db.query.text
	resource    *resource.Resource

	// Retries of a failed export: exponential backoff from retryInitial,
	// capped at retryMax, given up retryElapsed after the first attempt.
	retryInitial, retryMax, retryElapsed time.Duration
}

// tracePipeline reads a schema's captured trees into spans and sends them
// over OTLP/gRPC or OTLP/HTTP (a traceSender). Three goroutines share it:
//
//	reader  every interval: Traces.Read, then enqueue (under mu)
//	sender  takes a batch from the queue's head, exports it (mu not held),
//	        then removes it (under mu); the only goroutine that touches
//	        the network
//	callers forceFlush and shutdown wait for the sender's progress
//
// Invariant: the queue never holds more than queueSize spans, the batch in
// flight included (it stays in the queue until sent or dropped); a span
// that finds the queue full is dropped and counted. So the pipeline's
// memory is bounded whatever the endpoint does, and nothing but the sender
// ever waits for the endpoint: enqueue takes mu only for a copy.
type tracePipeline struct {
	cfg     traceConfig
	s       *pfscore.Schema
	trees   *bridge.Traces
	sender  traceSender
	res     pcommon.Resource // converted once; copied into each request
	counter *exportCounters

	ctx    context.Context // canceled when shutdown gives up: ends the export in flight
	cancel context.CancelFunc

	mu       sync.Mutex
	queue    []bridge.Span // ring buffer of queueSize
	head, n  int
	enqueued uint64        // spans ever enqueued
	finished uint64        // spans ever removed from the queue (sent or dropped)
	progress chan struct{} // closed and replaced whenever finished moves
	lastErr  error         // the last export error, for forceFlush
	closed   bool          // shut down: enqueue drops and counts

	wake     chan struct{} // tells the sender the queue has spans (cap 1)
	kick     chan struct{} // cuts a backoff short: a flush waits (cap 1)
	stopRead chan struct{}
	stopSend chan struct{}
	readDone chan struct{}
	sendDone chan struct{}
	hook     bool       // startTraces installed the trace hook: shutdown removes it
	readMu   sync.Mutex // one Traces.Read at a time: the reader's or a flush's
	histLost uint64     // the capture's losses already added to eventsLost (under readMu)
	once     sync.Once
}

// exportCounters are a schema's export losses, shared by every pipeline
// started on it (global_status has one row per name, and a counter must
// never go down).
type exportCounters struct {
	spansLost  atomic.Uint64
	eventsLost atomic.Uint64
}

// counters holds each schema's counters, weakly: a schema no longer used
// is collected, and its entry goes with it.
var (
	countersMu sync.Mutex
	counters   = map[weak.Pointer[pfscore.Schema]]*exportCounters{}
)

// countersFor returns s's export counters, adding their rows to its
// global_status the first time.
func countersFor(s *pfscore.Schema) (*exportCounters, error) {
	countersMu.Lock()
	defer countersMu.Unlock()
	key := weak.Make(s)
	if c := counters[key]; c != nil {
		return c, nil
	}
	c := &exportCounters{}
	if err := s.AddStatus(StatusSpansLost, c.spansLost.Load); err != nil {
		return nil, err
	}
	if err := s.AddStatus(StatusEventsLost, c.eventsLost.Load); err != nil {
		return nil, err
	}
	counters[key] = c
	runtime.AddCleanup(s, func(k weak.Pointer[pfscore.Schema]) {
		countersMu.Lock()
		delete(counters, k)
		countersMu.Unlock()
	}, key)
	return c, nil
}

// startTraces turns on s's trace capture (cfg.sampler), installs
// bridge.TraceContext as the trace hook unless one is installed, and
// starts reading the trees into spans every cfg.interval and sending them
// to cfg.endpoint. It connects lazily: an endpoint that is down is not an
// error here (its spans queue, then drop and count).
func startTraces(s *pfscore.Schema, cfg traceConfig) (*tracePipeline, error) {
	if s == nil {
		return nil, errors.New("exporter: traces: nil Schema")
	}
	if cfg.endpoint == "" && cfg.url == "" && cfg.sdk == nil {
		return nil, errors.New("exporter: traces: no endpoint")
	}
	cfg = traceDefaults(cfg)
	trees, err := bridge.NewTraces(s, bridge.WithSQLText(cfg.sqlText))
	if err != nil {
		return nil, err
	}
	var sender traceSender
	switch {
	case cfg.sdk != nil:
		sender = sdkSender{}
	case cfg.protocol == ProtocolGRPC:
		sender, err = newGRPCTraceSender(cfg)
	case cfg.protocol == ProtocolHTTPProtobuf:
		sender, err = newHTTPTraceSender(cfg)
	default:
		err = fmt.Errorf("protocol %q: want grpc or http/protobuf", cfg.protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("exporter: traces: %w", err)
	}
	c, err := countersFor(s)
	if err != nil {
		_ = sender.close()
		return nil, err
	}
	p := &tracePipeline{cfg: cfg, s: s, trees: trees, sender: sender,
		res: pcommon.NewResource(), counter: c,
		queue: make([]bridge.Span, cfg.queueSize), progress: make(chan struct{}),
		wake: make(chan struct{}, 1), kick: make(chan struct{}, 1),
		stopRead: make(chan struct{}), stopSend: make(chan struct{}),
		readDone: make(chan struct{}), sendDone: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	r := cfg.resource
	if r == nil {
		r = resource.Default()
	}
	for _, kv := range r.Attributes() {
		putAttr(p.res.Attributes(), kv)
	}
	// One span pipeline a schema: the captured trees are one queue, and
	// two readers would split them.
	spanPipelinesMu.Lock()
	if spanPipelines[s] {
		spanPipelinesMu.Unlock()
		_ = sender.close()
		return nil, errors.New("exporter: traces: a span pipeline already runs on this schema (shut it down first)")
	}
	spanPipelines[s] = true
	spanPipelinesMu.Unlock()
	if !pfscore.TraceHookSet() {
		pfscore.SetTraceHook(bridge.TraceContext)
		p.hook = true
	}
	// Trees of requests that were still running when an earlier pipeline
	// shut down: stale, and counted lost rather than sent now.
	if stale := trees.Read(nil, 0); len(stale) > 0 {
		c.spansLost.Add(uint64(len(stale)))
	}
	s.EnableTraceCapture(pfscore.TraceCapture{Sampler: cfg.sampler})
	p.histLost = captureLost(s.TraceStats())
	go p.readLoop()
	go p.sendLoop()
	return p, nil
}

// spanPipelines are the schemas a span pipeline runs on.
var (
	spanPipelinesMu sync.Mutex
	spanPipelines   = map[*pfscore.Schema]bool{}
)

// captureLost is what the capture lost, in events (a tree counts its top
// statement).
func captureLost(st pfscore.TraceStats) uint64 { return st.TreesLost + st.EventsLost }

func traceDefaults(cfg traceConfig) traceConfig {
	if cfg.protocol == "" {
		cfg.protocol = ProtocolGRPC
	}
	if cfg.timeout <= 0 {
		cfg.timeout = defaultTraceTimeout
	}
	if cfg.interval <= 0 {
		cfg.interval = defaultTraceInterval
	}
	if cfg.queueSize <= 0 {
		cfg.queueSize = defaultQueueSize
	}
	if cfg.retryInitial <= 0 {
		cfg.retryInitial = defaultRetryInitial
	}
	if cfg.retryMax <= 0 {
		cfg.retryMax = defaultRetryMax
	}
	if cfg.retryElapsed <= 0 {
		cfg.retryElapsed = defaultRetryElapsed
	}
	return cfg
}

// readLoop reads the captured trees every interval until stopRead.
func (p *tracePipeline) readLoop() {
	defer close(p.readDone)
	t := time.NewTicker(p.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stopRead:
			return
		case <-t.C:
			p.readHistory()
		}
	}
}

// readHistory reads the trees that ended since the previous read and
// enqueues them.
//
// It reads while the queue has room, a few trees at a time (at most
// readChunk, and an eighth as many as the spans the queue has room for, a
// request making a few spans): a tree
// left in the capture's queue costs nothing until it is read, where one
// made into spans the queue cannot take would be work thrown away. (Past
// the capture queue's bound, new trees are dropped and counted.)
func (p *tracePipeline) readHistory() {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	// At most the trees queued now: under a steady load a read ends.
	budget := p.s.TraceStats().Queued
	for room := p.room(); room > 0 && budget > 0; room = p.room() {
		n := min(max(room/8, 1), readChunk, budget)
		budget -= n
		spans := p.trees.Read(nil, n)
		if len(spans) == 0 {
			break
		}
		p.enqueue(spans)
	}
	p.noteCaptureLosses()
}

// noteCaptureLosses adds what the capture lost since it last looked to
// the events lost. Under readMu.
func (p *tracePipeline) noteCaptureLosses() {
	if total := captureLost(p.s.TraceStats()); total > p.histLost {
		p.counter.eventsLost.Add(total - p.histLost)
		p.histLost = total
	}
}

// readChunk is how many trees readHistory reads at a time.
const readChunk = 128

// room returns how many more spans the queue takes.
func (p *tracePipeline) room() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	return len(p.queue) - p.n
}

// enqueue adds spans to the queue; those that do not fit are dropped and
// counted.
func (p *tracePipeline) enqueue(spans []bridge.Span) {
	if len(spans) == 0 {
		return
	}
	p.mu.Lock()
	size := len(p.queue)
	fit := min(len(spans), size-p.n)
	if p.closed {
		fit = 0
	}
	for i := range fit {
		p.queue[(p.head+p.n+i)%size] = spans[i]
	}
	p.n += fit
	p.enqueued += uint64(fit)
	p.mu.Unlock()
	if dropped := len(spans) - fit; dropped > 0 {
		p.counter.spansLost.Add(uint64(dropped))
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// sendLoop exports the queue's head batch by batch until stopSend.
func (p *tracePipeline) sendLoop() {
	defer close(p.sendDone)
	for {
		batch := p.peek()
		if len(batch) == 0 {
			select {
			case <-p.stopSend:
				return
			case <-p.wake:
				continue
			}
		}
		sent := p.exportWithRetry(batch)
		p.remove(len(batch), sent)
		select {
		case <-p.stopSend:
			return
		default:
		}
	}
}

// peek copies up to maxTraceBatch spans from the queue's head.
func (p *tracePipeline) peek() []bridge.Span {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(p.n, maxTraceBatch)
	out := make([]bridge.Span, n)
	for i := range n {
		out[i] = p.queue[(p.head+i)%len(p.queue)]
	}
	return out
}

// remove takes the n spans at the queue's head out, counting them lost
// unless sent, and wakes the waiters of forceFlush.
func (p *tracePipeline) remove(n int, sent bool) {
	p.mu.Lock()
	n = min(n, p.n)
	for i := range n {
		p.queue[(p.head+i)%len(p.queue)] = bridge.Span{} // let the attributes go
	}
	p.head = (p.head + n) % len(p.queue)
	p.n -= n
	p.finished += uint64(n)
	close(p.progress)
	p.progress = make(chan struct{})
	p.mu.Unlock()
	if !sent {
		p.counter.spansLost.Add(uint64(n))
	}
}

// exportWithRetry exports batch, retrying transient failures with
// exponential backoff until retryElapsed has passed since the first
// attempt, or the pipeline stops. It reports whether the batch was sent.
func (p *tracePipeline) exportWithRetry(batch []bridge.Span) bool {
	if p.cfg.sdk != nil {
		// The application's exporter: it retries as it was configured to.
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.timeout)
		defer cancel()
		err := p.cfg.sdk.ExportSpans(ctx, bridge.ReadOnlySpans(batch, p.cfg.resource))
		p.setErr(err)
		return err == nil
	}
	req := ptraceotlp.NewExportRequestFromTraces(p.traces(batch))
	first := time.Now()
	wait := p.cfg.retryInitial
	for {
		rejected, err := p.export(req)
		if err == nil {
			if rejected > 0 {
				p.counter.spansLost.Add(uint64(min(rejected, int64(len(batch)))))
			}
			p.setErr(nil)
			return true
		}
		p.setErr(err)
		// The receiver may say when to come back (Retry-After, RetryInfo):
		// then that, rather than the backoff.
		delay := wait
		if d := retryDelay(err); d > 0 {
			delay = d
		}
		if !retryable(err) || time.Since(first)+delay > p.cfg.retryElapsed {
			return false
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-p.kick:
			t.Stop()
		case <-p.ctx.Done():
			t.Stop()
			return false
		}
		wait = min(2*wait, p.cfg.retryMax)
	}
}

// export sends one request with the per-export timeout, and returns the
// spans the receiver rejected.
func (p *tracePipeline) export(req ptraceotlp.ExportRequest) (int64, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.timeout)
	defer cancel()
	rejected, msg, err := p.sender.export(ctx, req)
	if err == nil && msg != "" {
		// A partial success: the receiver took the export, rejected
		// some spans (counted by the caller) or warns. Not retried.
		otel.Handle(fmt.Errorf("exporter: traces: the receiver rejected %d spans: %s", rejected, msg))
	}
	return rejected, err
}

// A traceSender sends one export request to a receiver: over gRPC
// (grpcTraceSender) or HTTP (httpTraceSender). export returns the spans
// the receiver rejected and its message (a partial success), or an error
// that retryable and retryDelay classify.
type traceSender interface {
	export(ctx context.Context, req ptraceotlp.ExportRequest) (rejected int64, msg string, err error)
	close() error
}

// sdkSender stands for the application's SpanExporter (traceConfig.sdk),
// which exportWithRetry calls itself: the application owns it, and
// shuts it down.
type sdkSender struct{}

func (sdkSender) export(context.Context, ptraceotlp.ExportRequest) (int64, string, error) {
	return 0, "", errors.New("exporter: traces: the SpanExporter takes spans, not requests")
}
func (sdkSender) close() error { return nil }

// grpcTraceSender sends with pdata's ptraceotlp gRPC client.
type grpcTraceSender struct {
	conn    *grpc.ClientConn
	client  ptraceotlp.GRPCClient
	md      metadata.MD
	callOpt []grpc.CallOption
}

func newGRPCTraceSender(cfg traceConfig) (*grpcTraceSender, error) {
	var creds credentials.TransportCredentials
	switch {
	case cfg.insecure:
		creds = insecure.NewCredentials()
	case cfg.tlsConfig != nil:
		creds = credentials.NewTLS(cfg.tlsConfig.Clone())
	default:
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	// gRPC's own reconnection backoff grows to two minutes by default: a
	// receiver back after an outage would wait that long for its spans.
	// Cap it with the export retries' backoff.
	conn, err := grpc.NewClient(cfg.endpoint, grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: cfg.retryInitial, Multiplier: 1.6, Jitter: 0.2,
				MaxDelay: cfg.retryMax},
			MinConnectTimeout: cfg.timeout,
		}))
	if err != nil {
		return nil, err
	}
	g := &grpcTraceSender{conn: conn, client: ptraceotlp.NewGRPCClient(conn)}
	if len(cfg.headers) > 0 {
		g.md = metadata.New(cfg.headers)
	}
	if cfg.compression == "gzip" {
		g.callOpt = append(g.callOpt, grpc.UseCompressor(gzip.Name))
	}
	return g, nil
}

func (g *grpcTraceSender) export(ctx context.Context, req ptraceotlp.ExportRequest) (int64, string, error) {
	if g.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, g.md)
	}
	resp, err := g.client.Export(ctx, req, g.callOpt...)
	if err != nil {
		return 0, "", err
	}
	ps := resp.PartialSuccess()
	return ps.RejectedSpans(), ps.ErrorMessage(), nil
}

func (g *grpcTraceSender) close() error { return g.conn.Close() }

// retryable reports whether an export error is worth another attempt, as
// the OTLP specification lists the transient gRPC codes and HTTP statuses
// (429, 502, 503, 504); an HTTP request that got no answer (refused,
// reset, timed out) is retried too.
func retryable(err error) bool {
	var he *httpExportError
	if errors.As(err, &he) {
		return he.retryable()
	}
	switch status.Code(err) {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange,
		codes.Unavailable, codes.DataLoss, codes.ResourceExhausted:
		return true
	}
	return false
}

// retryDelay is how long the receiver asked the exporter to wait before
// the next attempt: HTTP's Retry-After, gRPC's RetryInfo; 0 if it did not
// say.
func retryDelay(err error) time.Duration {
	var he *httpExportError
	if errors.As(err, &he) {
		return he.retryAfter
	}
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
				return max(ri.GetRetryDelay().AsDuration(), 0)
			}
		}
	}
	return 0
}

func (p *tracePipeline) setErr(err error) {
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}

// forceFlush reads the trees now and waits until every span queued by
// then is sent or dropped, or ctx ends. It returns the last export error
// when spans were dropped meanwhile, ctx's error when it ended first.
func (p *tracePipeline) forceFlush(ctx context.Context) error {
	select {
	case <-p.readDone:
		return errors.New("exporter: traces: shut down")
	default:
	}
	lost := p.counter.spansLost.Load() // before the read: its spans may fail before drain looks
	p.readHistory()
	return p.drain(ctx, lost)
}

// drain waits until the spans enqueued so far are finished. It returns
// the last export error if spans were lost since the count lost.
func (p *tracePipeline) drain(ctx context.Context, lost uint64) error {
	p.mu.Lock()
	target := p.enqueued
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	for {
		p.mu.Lock()
		done, ch, err := p.finished >= target, p.progress, p.lastErr
		p.mu.Unlock()
		if done {
			if p.counter.spansLost.Load() != lost && err != nil {
				return fmt.Errorf("exporter: traces: spans dropped: %w", err)
			}
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// shutdown stops reading, sends what is queued (a last read included)
// within ctx, and closes the connection. Spans still queued when ctx ends
// are dropped and counted. Later calls return nil.
func (p *tracePipeline) shutdown(ctx context.Context) error {
	var err error
	p.once.Do(func() {
		close(p.stopRead)
		<-p.readDone
		// No more trees: the capture would fill its queue for nobody.
		// Those already queued are sent below.
		p.s.DisableTraceCapture()
		if p.hook {
			pfscore.SetTraceHook(nil)
		}
		lost := p.counter.spansLost.Load()
		p.readHistory()
		err = p.drain(ctx, lost)
		p.cancel() // ends an export or backoff in flight
		close(p.stopSend)
		<-p.sendDone
		p.mu.Lock()
		left := p.n
		p.head, p.n, p.closed = 0, 0, true
		clear(p.queue)
		// The dropped spans are finished too: a forceFlush waiting for
		// them (with no deadline) returns, rather than wait for ever.
		p.finished += uint64(left)
		close(p.progress)
		p.progress = make(chan struct{})
		p.mu.Unlock()
		p.counter.spansLost.Add(uint64(left))
		// Trees the queue had no room for at the last read are lost too.
		// (A request still running ends after this: its tree waits in the
		// capture's queue, and the next pipeline on the schema counts it
		// lost as it starts.)
		p.readMu.Lock()
		if rest := p.trees.Read(nil, 0); len(rest) > 0 {
			p.counter.spansLost.Add(uint64(len(rest)))
		}
		p.noteCaptureLosses()
		p.readMu.Unlock()
		err = errors.Join(err, p.sender.close())
		// Last: until here, this pipeline reads the schema's trees, and a
		// new one must not start beside it.
		spanPipelinesMu.Lock()
		delete(spanPipelines, p.s)
		spanPipelinesMu.Unlock()
	})
	return err
}

// traces converts a batch to pdata: one resource, one scope.
func (p *tracePipeline) traces(batch []bridge.Span) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	p.res.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(bridge.ScopeName)
	spans := ss.Spans()
	spans.EnsureCapacity(len(batch))
	for i := range batch {
		toPdata(&batch[i], spans.AppendEmpty())
	}
	return td
}

// OTLP span flags: the W3C trace flags in the low byte (sampled), and
// whether the parent is remote.
const (
	flagSampled        = 0x01
	flagHasIsRemote    = 0x100
	flagParentIsRemote = 0x200
)

func toPdata(s *bridge.Span, out ptrace.Span) {
	out.SetTraceID(pcommon.TraceID(s.TraceID))
	out.SetSpanID(pcommon.SpanID(s.SpanID))
	flags := uint32(flagSampled | flagHasIsRemote)
	if s.Parent.IsValid() {
		out.SetParentSpanID(pcommon.SpanID(s.Parent))
		if s.RemoteParent {
			flags |= flagParentIsRemote
		}
	}
	out.SetFlags(flags)
	out.SetName(s.Name)
	out.SetKind(spanKind(s.Kind))
	out.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
	out.SetEndTimestamp(pcommon.NewTimestampFromTime(s.End))
	attrs := out.Attributes()
	attrs.EnsureCapacity(len(s.Attributes))
	for _, kv := range s.Attributes {
		putAttr(attrs, kv)
	}
	evs := out.Events()
	evs.EnsureCapacity(len(s.Events))
	for _, e := range s.Events {
		ev := evs.AppendEmpty()
		ev.SetName(e.Name)
		ev.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
		for _, kv := range e.Attributes {
			putAttr(ev.Attributes(), kv)
		}
	}
	switch s.Status {
	case otelcodes.Error:
		out.Status().SetCode(ptrace.StatusCodeError)
		out.Status().SetMessage(s.StatusMessage)
	case otelcodes.Ok:
		out.Status().SetCode(ptrace.StatusCodeOk)
	}
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	case trace.SpanKindUnspecified:
		return ptrace.SpanKindUnspecified
	}
	return ptrace.SpanKindInternal
}

// putAttr sets an OTel attribute in a pdata map.
func putAttr(m pcommon.Map, kv attribute.KeyValue) {
	k := string(kv.Key)
	switch v := kv.Value; v.Type() {
	case attribute.BOOL:
		m.PutBool(k, v.AsBool())
	case attribute.INT64:
		m.PutInt(k, v.AsInt64())
	case attribute.FLOAT64:
		m.PutDouble(k, v.AsFloat64())
	case attribute.STRING:
		m.PutStr(k, v.AsString())
	case attribute.BOOLSLICE:
		s := m.PutEmptySlice(k)
		for _, b := range v.AsBoolSlice() {
			s.AppendEmpty().SetBool(b)
		}
	case attribute.INT64SLICE:
		s := m.PutEmptySlice(k)
		for _, x := range v.AsInt64Slice() {
			s.AppendEmpty().SetInt(x)
		}
	case attribute.FLOAT64SLICE:
		s := m.PutEmptySlice(k)
		for _, x := range v.AsFloat64Slice() {
			s.AppendEmpty().SetDouble(x)
		}
	case attribute.STRINGSLICE:
		s := m.PutEmptySlice(k)
		for _, x := range v.AsStringSlice() {
			s.AppendEmpty().SetStr(x)
		}
	default:
		m.PutStr(k, v.String())
	}
}
