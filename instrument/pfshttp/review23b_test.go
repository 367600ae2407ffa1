package pfshttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

const r23bTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// Failed on 13afea2 as review23b wrote it; kept as the documented
// difference (WithTraceContext's doc). OpenTelemetry's deprecated no-op
// tracer (trace.NewNoopTracerProvider) carries a remote span forward only
// if the span is of the API's own non-recording type, which pfshttp's
// remoteSpan is not: Start in the request's context returns an empty span
// where Extract's context gives the caller's. trace/noop's tracer, the
// global tracer before an SDK is installed and the SDK's read the span
// context, and carry it (TestReview23bLayeringMatchesOTel,
// TestRemoteSpanParent). If OpenTelemetry changes that tracer, this test
// fails: WithTraceContext's doc must then change too.
func TestReview23bNoopTracerCarriesRemoteSpan(t *testing.T) {
	h := tp(r23bTraceparent)
	want := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	var got context.Context
	srv := Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Context() }),
		WithTraceContext())
	req := httptest.NewRequest("GET", "/", nil)
	req.Header = h
	srv.ServeHTTP(httptest.NewRecorder(), req)

	//lint:ignore SA1019 the API's own no-op tracer, still what trace.NewNoopTracerProvider returns
	tracer := trace.NewNoopTracerProvider().Tracer("test")
	_, ws := tracer.Start(want, "child")
	_, gs := tracer.Start(got, "child")
	if !ws.SpanContext().IsValid() {
		t.Fatal("OpenTelemetry's no-op tracer dropped Extract's remote span: the test's premise is wrong")
	}
	if gs.SpanContext().IsValid() {
		t.Errorf("the deprecated no-op tracer now carries the request's span (%s): WithTraceContext's documented difference is gone",
			spanString(gs.SpanContext()))
	}
	if !trace.SpanContextFromContext(got).Equal(ws.SpanContext()) {
		t.Errorf("the request's span context %s; Extract's %s", spanString(trace.SpanContextFromContext(got)), spanString(ws.SpanContext()))
	}
}

// PASSES. The recommended no-op (trace/noop) and the context layering a
// handler may add over the request's context (WithoutCancel, WithValue,
// WithCancel, a span of its own over it) see the caller's span as over
// Extract's context.
func TestReview23bLayeringMatchesOTel(t *testing.T) {
	h := tp(r23bTraceparent)
	want := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	got := requestContext(context.Background(), traceContextCase{h: h})
	type k struct{}
	own := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}})
	layers := []struct {
		name string
		f    func(context.Context) context.Context
	}{
		{"itself", func(c context.Context) context.Context { return c }},
		{"WithoutCancel", context.WithoutCancel},
		{"WithValue", func(c context.Context) context.Context { return context.WithValue(c, k{}, 1) }},
		{"WithCancel", func(c context.Context) context.Context {
			c, cancel := context.WithCancel(c)
			t.Cleanup(cancel)
			return c
		}},
		{"ContextWithSpanContext", func(c context.Context) context.Context { return trace.ContextWithSpanContext(c, own) }},
		{"noop.Start", func(c context.Context) context.Context {
			c, _ = noop.NewTracerProvider().Tracer("t").Start(c, "x")
			return c
		}},
	}
	for _, l := range layers {
		g, w := trace.SpanContextFromContext(l.f(got)), trace.SpanContextFromContext(l.f(want))
		if !g.Equal(w) {
			t.Errorf("%s: %s; over Extract's: %s", l.name, spanString(g), spanString(w))
		}
	}
}
