package pfshttp

import (
	"context"
	"encoding/binary"
	"math/bits"
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

// hexByte decodes the two hex digits at the start of s, which must hold
// two bytes, reporting whether both were lower-case hex digits.
func hexByte(s string) (byte, bool) {
	s = s[:2]
	hi, lo := unhex[s[0]], unhex[s[1]]
	return hi<<4 | lo, (hi|lo)&0xf0 == 0
}

// hex16 decodes the sixteen hex digits at the start of s, which must hold
// sixteen bytes, as a big-endian 64-bit number, reporting whether all were
// lower-case hex digits.
func hex16(s string) (uint64, bool) {
	s = s[:16]
	hi, ok1 := hex8(s)
	lo, ok2 := hex8(s[8:])
	return uint64(hi)<<32 | uint64(lo), ok1 && ok2
}

// SWAR constants: a byte value repeated in each of a word's eight bytes.
const (
	lanes    = 0x0101010101010101
	laneHigh = 0x80 * lanes
)

// hex8 decodes the eight lower-case hex digits at the start of s (which
// must hold eight bytes) as a big-endian 32-bit number, eight bytes at a
// time in one word, reporting whether all eight were digits.
//
// With every byte below 0x80 (a word with any other byte is rejected
// whatever the sums say), adding 0x80-lo to a byte sets its top bit
// exactly when the byte is at least lo, and no sum carries into the next
// byte (the largest, 0x7f + 0x80-'0', is below 0x100); so a byte is in
// [lo, hi] when its top bit is set in x+(0x80-lo) and clear in
// x+(0x80-hi-1). A digit's value is then its low nibble, plus 9 for a-f.
func hex8(s string) (uint32, bool) {
	s = s[:8]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	digit := (x + (0x80-'0')*lanes) &^ (x + (0x80-'9'-1)*lanes)
	letter := (x + (0x80-'a')*lanes) &^ (x + (0x80-'f'-1)*lanes) & laneHigh
	if x&laneHigh != 0 || (digit|letter)&laneHigh != laneHigh {
		return 0, false
	}
	v := x&(0x0f*lanes) + (letter>>7)*9 // each byte a nibble, the first digit lowest
	// Pair the nibbles (first digit high) into the low byte of each 16-bit
	// lane, then gather the four bytes, the first digit pair highest.
	v = (v&0x000f000f000f000f)<<4 | (v>>8)&0x000f000f000f000f
	v = (v | v>>8) & 0x0000ffff0000ffff
	v = (v | v>>16) & 0xffffffff
	return bits.ReverseBytes32(uint32(v)), true
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
	ver, ok := hexByte(s)
	if !ok || ver == 0xff {
		return none, false
	}
	flags, ok := hexByte(s[tpFlags:])
	if !ok {
		return none, false
	}
	if len(s) > tpLen {
		// Later versions may append fields after a "-". Version 00 may
		// not, but Extract, splitting at each "-", takes a single
		// trailing "-" for the end of the flags and accepts it.
		if s[tpLen] != '-' || ver == 0 && len(s) > tpLen+1 {
			return none, false
		}
	}
	if ver == 0 && flags > byte(trace.FlagsSampled|trace.FlagsRandom) {
		// Version 00 reserves the other flag bits.
		return none, false
	}
	t0, ok0 := hex16(s[tpTraceID:])
	t1, ok1 := hex16(s[tpTraceID+16:])
	sp, ok2 := hex16(s[tpSpanID:])
	if !ok0 || !ok1 || !ok2 || t0|t1 == 0 || sp == 0 { // all-zero ids are invalid
		return none, false
	}
	var scc trace.SpanContextConfig
	binary.BigEndian.PutUint64(scc.TraceID[:8], t0)
	binary.BigEndian.PutUint64(scc.TraceID[8:], t1)
	binary.BigEndian.PutUint64(scc.SpanID[:], sp)
	scc.TraceFlags = trace.TraceFlags(flags) & (trace.FlagsSampled | trace.FlagsRandom)
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
