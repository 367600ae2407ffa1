package pfshttp

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"
)

// The canonical forms of the W3C Trace Context header names: an
// http.Header's keys are canonical, so looking these up directly finds
// what Header.Get("traceparent") finds, without canonicalizing the key on
// every request.
const (
	traceparentKey = "Traceparent"
	tracestateKey  = "Tracestate"
)

// A traceparent is version "-" trace-id "-" parent-id "-" trace-flags, of
// 2, 32, 16 and 2 lower-case hex digits; a version after 00 may append
// fields of its own after a further "-".
const (
	tpTraceID = 3              // offset of the trace-id
	tpSpanID  = tpTraceID + 33 // offset of the parent-id
	tpFlags   = tpSpanID + 17  // offset of the trace-flags
	tpLen     = tpFlags + 2    // length of a version 00 traceparent
)

// unhex maps each lower-case hex digit to its value and every other byte,
// upper-case A-F included (the specification disallows them), to 0xff:
// no digit's value has a bit of the upper nibble set, so OR-ing the values
// of a run of digits together detects any invalid byte among them at once.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// decodeHex decodes the 2*len(dst) hex digits at the start of s into dst,
// reporting whether they all were lower-case hex digits. s must hold at
// least 2*len(dst) bytes.
func decodeHex(dst []byte, s string) bool {
	s = s[:2*len(dst)]
	var bad byte
	for i := range dst {
		if len(s) < 2 { // never: bounds the indexes below for the compiler
			return false
		}
		hi, lo := unhex[s[0]], unhex[s[1]]
		s = s[2:]
		dst[i] = hi<<4 | lo
		bad |= hi | lo
	}
	return bad&0xf0 == 0
}

// withTraceContext returns ctx carrying the caller's trace context from
// h's W3C traceparent and tracestate headers as a remote span context,
// exactly as OpenTelemetry's propagation.TraceContext Extract does, or
// ctx itself when h has no valid traceparent.
//
// As Extract does (through Header.Get), it reads only the first value of
// each header, keeps only the sampled and random bits of the trace flags,
// and lets a tracestate that does not parse leave the trace state empty
// rather than reject the traceparent.
func withTraceContext(ctx context.Context, h http.Header) context.Context {
	if sc, ok := parseTraceContext(h); ok {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// parseTraceContext returns the remote span context of h's traceparent and
// tracestate headers, and false if h has no valid traceparent: what
// withTraceContext adds to a context.
func parseTraceContext(h http.Header) (trace.SpanContext, bool) {
	var none trace.SpanContext
	v := h[traceparentKey]
	if len(v) == 0 {
		return none, false
	}
	s := v[0]
	if len(s) < tpLen || s[tpTraceID-1] != '-' || s[tpSpanID-1] != '-' || s[tpFlags-1] != '-' {
		return none, false
	}
	var ver, flags [1]byte
	if !decodeHex(ver[:], s) || ver[0] == 0xff {
		return none, false
	}
	if !decodeHex(flags[:], s[tpFlags:]) {
		return none, false
	}
	if len(s) > tpLen {
		// Later versions may append fields after a "-". Version 00 may
		// not, but Extract, splitting at each "-", takes a single
		// trailing "-" for the end of the flags and accepts it.
		if s[tpLen] != '-' || ver[0] == 0 && len(s) > tpLen+1 {
			return none, false
		}
	}
	if ver[0] == 0 && flags[0] > byte(trace.FlagsSampled|trace.FlagsRandom) {
		// Version 00 reserves the other flag bits.
		return none, false
	}
	var scc trace.SpanContextConfig
	if !decodeHex(scc.TraceID[:], s[tpTraceID:]) || !decodeHex(scc.SpanID[:], s[tpSpanID:]) ||
		!scc.TraceID.IsValid() || !scc.SpanID.IsValid() {
		return none, false
	}
	scc.TraceFlags = trace.TraceFlags(flags[0]) & (trace.FlagsSampled | trace.FlagsRandom)
	if st := h[tracestateKey]; len(st) > 0 && st[0] != "" {
		// A tracestate that does not parse must not affect the
		// traceparent: the trace state is left empty.
		scc.TraceState, _ = trace.ParseTraceState(st[0])
	}
	scc.Remote = true
	return trace.NewSpanContext(scc), true
}

// spanKey is the key OpenTelemetry's trace package keeps a context's span
// under (trace.ContextWithSpan), learnt once by asking: a context that
// records the key trace.SpanFromContext asks it for (keyProbe), checked
// against a context trace.ContextWithRemoteSpanContext made. With it, a
// request's threadCtx answers for the caller's span itself (remoteSpan,
// in the request's one allocation) instead of wrapping its parent in a
// context.WithValue of a boxed span: two allocations and a layer fewer
// for every Value and Done. nil if the check fails (a later OpenTelemetry
// that finds spans otherwise): the request's context then wraps its
// parent with trace.ContextWithRemoteSpanContext.
var spanKey any

func init() { spanKey = probeSpanKey() }

// keyProbe is a context that records the keys it is asked for.
type keyProbe struct {
	context.Context
	keys []any
}

func (p *keyProbe) Value(key any) any {
	p.keys = append(p.keys, key)
	return nil
}

func probeSpanKey() any {
	p := &keyProbe{Context: context.Background()}
	trace.SpanFromContext(p)
	if len(p.keys) != 1 || p.keys[0] == nil {
		return nil
	}
	key := p.keys[0]
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1},
		TraceFlags: trace.FlagsSampled, Remote: true})
	otel := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	if s, ok := otel.Value(key).(trace.Span); !ok || !s.SpanContext().Equal(sc) || s.IsRecording() {
		return nil
	}
	var c threadCtx
	c.Context = context.Background()
	c.setSpan(sc)
	spanKey = key // for c's Value, until init stores the result
	if !trace.SpanContextFromContext(&c).Equal(sc) {
		return nil
	}
	return key
}

// remoteSpan is the caller's span as OpenTelemetry's context would hold
// it (trace.ContextWithRemoteSpanContext's non-recording span): sc, and
// for every other method, what OpenTelemetry's own no-op span does.
type remoteSpan struct {
	trace.Span // OpenTelemetry's no-op span
	sc         trace.SpanContext
}

// noSpan is OpenTelemetry's no-op span, which its non-recording span
// embeds.
var noSpan = trace.SpanFromContext(context.Background())

func (s *remoteSpan) SpanContext() trace.SpanContext { return s.sc }
