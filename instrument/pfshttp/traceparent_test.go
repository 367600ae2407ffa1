package pfshttp

import (
	"context"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const (
	tpTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	tpSpan  = "00f067aa0ba902b7"
	tpValid = "00-" + tpTrace + "-" + tpSpan + "-01"
)

var (
	wantTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	wantSpanID  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

// traceContextCases are headers and what withTraceContext should find in
// them: ok false means no span context at all; otherwise the trace and
// span ids are wantTraceID and wantSpanID, with flags and state.
type traceContextCase struct {
	name  string
	h     http.Header
	ok    bool
	flags trace.TraceFlags
	state string
}

var traceContextCases = []traceContextCase{
	{name: "no header", h: http.Header{}},
	{name: "nil header", h: nil},
	{name: "empty traceparent", h: http.Header{"Traceparent": {""}}},
	{name: "no values", h: http.Header{"Traceparent": {}}},
	{name: "valid", h: tp(tpValid), ok: true, flags: trace.FlagsSampled},
	{name: "flags 00", h: tp("00-" + tpTrace + "-" + tpSpan + "-00"), ok: true},
	{name: "flags 01", h: tp("00-" + tpTrace + "-" + tpSpan + "-01"), ok: true, flags: 1},
	{name: "flags 02", h: tp("00-" + tpTrace + "-" + tpSpan + "-02"), ok: true, flags: trace.FlagsRandom},
	{name: "flags 03", h: tp("00-" + tpTrace + "-" + tpSpan + "-03"), ok: true, flags: 3},
	{name: "flags 04 version 00", h: tp("00-" + tpTrace + "-" + tpSpan + "-04")},
	{name: "flags ff version 00", h: tp("00-" + tpTrace + "-" + tpSpan + "-ff")},
	{name: "flags ff version 01", h: tp("01-" + tpTrace + "-" + tpSpan + "-ff"), ok: true, flags: 3},
	{name: "flags fd version cc", h: tp("cc-" + tpTrace + "-" + tpSpan + "-fd"), ok: true, flags: 1},
	{name: "flags FF", h: tp("01-" + tpTrace + "-" + tpSpan + "-FF")},
	{name: "flags one digit", h: tp("00-" + tpTrace + "-" + tpSpan + "-1")},
	{name: "flags three digits", h: tp("00-" + tpTrace + "-" + tpSpan + "-001")},
	{name: "no flags", h: tp("00-" + tpTrace + "-" + tpSpan)},
	{name: "no flags dash", h: tp("00-" + tpTrace + "-" + tpSpan + "-")},
	{name: "uppercase trace id", h: tp("00-" + strings.ToUpper(tpTrace) + "-" + tpSpan + "-01")},
	{name: "uppercase span id", h: tp("00-" + tpTrace + "-00F067AA0BA902B7-01")},
	{name: "uppercase version", h: tp("0A-" + tpTrace + "-" + tpSpan + "-01")},
	{name: "lowercase version 0a", h: tp("0a-" + tpTrace + "-" + tpSpan + "-01"), ok: true, flags: 1},
	{name: "version ff", h: tp("ff-" + tpTrace + "-" + tpSpan + "-01")},
	{name: "version fe", h: tp("fe-" + tpTrace + "-" + tpSpan + "-01"), ok: true, flags: 1},
	{name: "version one digit", h: tp("0-" + tpTrace + "-" + tpSpan + "-01")},
	{name: "version three digits", h: tp("000-" + tpTrace + "-" + tpSpan + "-01")},
	{name: "version not hex", h: tp("0g-" + tpTrace + "-" + tpSpan + "-01")},
	{name: "short trace id", h: tp("00-" + tpTrace[1:] + "-" + tpSpan + "-01")},
	{name: "long trace id", h: tp("00-0" + tpTrace + "-" + tpSpan + "-01")},
	{name: "short span id", h: tp("00-" + tpTrace + "-" + tpSpan[1:] + "-01")},
	{name: "long span id", h: tp("00-" + tpTrace + "-0" + tpSpan + "-01")},
	{name: "trace id not hex", h: tp("00-" + tpTrace[:31] + "g-" + tpSpan + "-01")},
	{name: "span id with space", h: tp("00-" + tpTrace + "-" + tpSpan[:15] + " -01")},
	{name: "zero trace id", h: tp("00-00000000000000000000000000000000-" + tpSpan + "-01")},
	{name: "zero span id", h: tp("00-" + tpTrace + "-0000000000000000-01")},
	{name: "version 00 extra field", h: tp(tpValid + "-what")},
	{name: "version 00 trailing dashes", h: tp(tpValid + "--")},
	{name: "version 00 trailing garbage", h: tp(tpValid + "x")},
	{name: "version 00 trailing space", h: tp(tpValid + " ")},
	{name: "leading space", h: tp(" " + tpValid)},
	{name: "underscores", h: tp("00_" + tpTrace + "_" + tpSpan + "_01")},
	// Extract splits at each "-": a single trailing one ends the flags.
	{name: "version 00 trailing dash", h: tp(tpValid + "-"), ok: true, flags: 1},
	{name: "future version extra fields", h: tp("01-" + tpTrace + "-" + tpSpan + "-01-what-the-future-holds"), ok: true, flags: 1},
	{name: "future version trailing dash", h: tp("01-" + tpTrace + "-" + tpSpan + "-01-"), ok: true, flags: 1},
	{name: "future version trailing garbage", h: tp("01-" + tpTrace + "-" + tpSpan + "-01x")},
	{name: "future version no extra", h: tp("01-" + tpTrace + "-" + tpSpan + "-01"), ok: true, flags: 1},
	{name: "future version short", h: tp("01-" + tpTrace + "-" + tpSpan + "-0")},
	{name: "tracestate", h: tpts(tpValid, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"), ok: true, flags: 1, state: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"},
	{name: "tracestate spaces and empty members", h: tpts(tpValid, " a=1 ,, b@c=2\t"), ok: true, flags: 1, state: "a=1,b@c=2"},
	{name: "tracestate invalid", h: tpts(tpValid, "Congo=t61rcWkgMzE"), ok: true, flags: 1},
	{name: "tracestate duplicate", h: tpts(tpValid, "a=1,a=2"), ok: true, flags: 1},
	{name: "tracestate empty", h: tpts(tpValid, ""), ok: true, flags: 1},
	{name: "tracestate without traceparent", h: http.Header{"Tracestate": {"a=1"}}},
	{name: "tracestate with invalid traceparent", h: tpts("ff-"+tpTrace+"-"+tpSpan+"-01", "a=1")},
	{name: "tracestate two values", h: http.Header{"Traceparent": {tpValid}, "Tracestate": {"a=1", "b=2"}}, ok: true, flags: 1, state: "a=1"},
	{name: "tracestate first value empty", h: http.Header{"Traceparent": {tpValid}, "Tracestate": {"", "b=2"}}, ok: true, flags: 1},
	{name: "traceparent two values", h: http.Header{"Traceparent": {tpValid, "00-" + tpTrace + "-" + tpSpan + "-00"}}, ok: true, flags: 1},
	{name: "traceparent first invalid", h: http.Header{"Traceparent": {"garbage", tpValid}}},
	{name: "traceparent first empty", h: http.Header{"Traceparent": {"", tpValid}}},
	{name: "non-canonical key", h: http.Header{"traceparent": {tpValid}}},
	{name: "non-canonical tracestate key", h: http.Header{"Traceparent": {tpValid}, "tracestate": {"a=1"}}, ok: true, flags: 1},
}

func tp(v string) http.Header { return http.Header{"Traceparent": {v}} }

func tpts(p, s string) http.Header {
	return http.Header{"Traceparent": {p}, "Tracestate": {s}}
}

// checkAgainstOTel reports where withTraceContext differs from
// propagation.TraceContext's Extract on h, from a context that may already
// hold a span context.
func checkAgainstOTel(t *testing.T, h http.Header) {
	t.Helper()
	type key struct{}
	parent := trace.ContextWithSpanContext(context.WithValue(context.Background(), key{}, 1),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}}))
	for _, ctx := range []context.Context{context.Background(), parent} {
		want := propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
		got := withTraceContext(ctx, h)
		if (got == ctx) != (want == ctx) {
			t.Errorf("%q: returns its context %v; Extract %v", h, got == ctx, want == ctx)
		}
		gsc, wsc := trace.SpanContextFromContext(got), trace.SpanContextFromContext(want)
		if !gsc.Equal(wsc) || gsc.TraceState().Len() != wsc.TraceState().Len() {
			t.Errorf("%q: span context %s; Extract's %s", h, spanString(gsc), spanString(wsc))
		}
		if got.Value(key{}) != ctx.Value(key{}) {
			t.Errorf("%q: the parent's values are lost", h)
		}
	}
}

func spanString(sc trace.SpanContext) string {
	return sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String() +
		" state=" + sc.TraceState().String() + " remote=" + strconv.FormatBool(sc.IsRemote())
}

func TestTraceContext(t *testing.T) {
	for _, c := range traceContextCases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			got := withTraceContext(ctx, c.h)
			sc := trace.SpanContextFromContext(got)
			if !c.ok {
				if got != ctx || sc.IsValid() {
					t.Errorf("found %s; want nothing", spanString(sc))
				}
			} else {
				state, err := trace.ParseTraceState(c.state)
				if err != nil {
					t.Fatal(err)
				}
				want := trace.NewSpanContext(trace.SpanContextConfig{
					TraceID: wantTraceID, SpanID: wantSpanID, TraceFlags: c.flags, TraceState: state, Remote: true,
				})
				if !sc.Equal(want) {
					t.Errorf("found %s; want %s", spanString(sc), spanString(want))
				}
			}
			checkAgainstOTel(t, c.h)
		})
	}
}

// FuzzTraceContext compares withTraceContext with Extract. shape chooses
// how the strings are put in the header: bit 0 leaves the traceparent
// out, bit 1 the tracestate, bit 2 adds a second traceparent value
// before p, bit 3 a second tracestate value before s, bit 4 stores them
// under lower-case keys.
func FuzzTraceContext(f *testing.F) {
	for _, c := range traceContextCases {
		var p, s string
		var shape uint8
		if v, ok := c.h["Traceparent"]; ok && len(v) > 0 {
			p = v[0]
		} else {
			shape |= 1
		}
		if v, ok := c.h["Tracestate"]; ok && len(v) > 0 {
			s = v[0]
		} else {
			shape |= 2
		}
		f.Add(p, s, shape)
	}
	f.Add(tpValid, "a=1", uint8(4))
	f.Add(tpValid, "a=1", uint8(8))
	f.Add(tpValid, "a=1", uint8(16))
	f.Fuzz(func(t *testing.T, p, s string, shape uint8) {
		h := http.Header{}
		pk, sk := "Traceparent", "Tracestate"
		if shape&16 != 0 {
			pk, sk = "traceparent", "tracestate"
		}
		if shape&1 == 0 {
			if shape&4 != 0 {
				h[pk] = []string{s, p}
			} else {
				h[pk] = []string{p}
			}
		}
		if shape&2 == 0 {
			if shape&8 != 0 {
				h[sk] = []string{p, s}
			} else {
				h[sk] = []string{s}
			}
		}
		checkAgainstOTel(t, h)
	})
}

// raceBuild reports whether the test binary has the race detector, under
// which allocation counts mean nothing. (The package's raceEnabled is in
// package pfshttp_test, out of reach of these internal tests.)
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// withTraceContext allocates no more for a traceparent than storing the
// span context it finds in the context does.
func TestTraceContextAllocs(t *testing.T) {
	if raceBuild() {
		t.Skip("allocation counts under the race detector mean nothing")
	}
	ctx := context.Background()
	h := tp(tpValid)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: wantTraceID, SpanID: wantSpanID, TraceFlags: 1, Remote: true})
	var sink context.Context
	base := testing.AllocsPerRun(1000, func() { sink = trace.ContextWithRemoteSpanContext(ctx, sc) })
	got := testing.AllocsPerRun(1000, func() { sink = withTraceContext(ctx, h) })
	if got > base {
		t.Errorf("withTraceContext: %v allocations; ContextWithRemoteSpanContext alone makes %v", got, base)
	}
	bad := tp("ff" + tpValid[2:])
	if invalid := testing.AllocsPerRun(1000, func() { sink = withTraceContext(ctx, bad) }); invalid != 0 {
		t.Errorf("withTraceContext: %v allocations for an invalid traceparent; want 0", invalid)
	}
	_ = sink
}

var benchHeaders = []struct {
	name string
	h    http.Header
}{
	{"traceparent", tp(tpValid)},
	{"tracestate", tpts(tpValid, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")},
	{"none", http.Header{"Accept": {"*/*"}}},
}

func BenchmarkTraceContextOTel(b *testing.B) {
	for _, c := range benchHeaders {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			var prop propagation.TraceContext
			for b.Loop() {
				_ = prop.Extract(ctx, propagation.HeaderCarrier(c.h))
			}
		})
	}
}

func BenchmarkTraceContextOwn(b *testing.B) {
	for _, c := range benchHeaders {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				_ = withTraceContext(ctx, c.h)
			}
		})
	}
}

// TestHex8EveryByte puts every byte value at every position of a run of
// eight valid digits and checks hex8 against the byte-at-a-time table: the
// word-at-a-time range checks must accept exactly the lower-case digits,
// with no carry from one byte's check into the next byte's.
func TestHex8EveryByte(t *testing.T) {
	scalar := func(s string) (uint32, bool) {
		var v uint32
		for i := range 8 {
			d := unhex[s[i]]
			if d > 0xf {
				return 0, false
			}
			v = v<<4 | uint32(d)
		}
		return v, true
	}
	for _, base := range []string{"00000000", "ffffffff", "0a1b2c3d", "9f8e7d6c", "a0a0a0a0"} {
		for pos := range 8 {
			for c := range 256 {
				b := []byte(base)
				b[pos] = byte(c)
				s := string(b)
				got, gotOK := hex8(s)
				want, wantOK := scalar(s)
				if got != want || gotOK != wantOK {
					t.Fatalf("hex8(%q) = %#x, %v; want %#x, %v", s, got, gotOK, want, wantOK)
				}
			}
		}
	}
	// Two bad bytes at once, each of which alone is caught: neither may
	// hide the other.
	for c1 := range 256 {
		for c2 := range 256 {
			b := []byte("12345678")
			b[2], b[3] = byte(c1), byte(c2)
			s := string(b)
			got, gotOK := hex8(s)
			want, wantOK := scalar(s)
			if got != want || gotOK != wantOK {
				t.Fatalf("hex8(%q) = %#x, %v; want %#x, %v", s, got, gotOK, want, wantOK)
			}
		}
	}
}
