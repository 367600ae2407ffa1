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

// FAILS on main. Low severity. OpenTelemetry's no-op tracer
// (trace.NewNoopTracerProvider, deprecated but still the API's no-op)
// carries a remote span forward: Start in a context holding the caller's
// span (trace.ContextWithRemoteSpanContext's nonRecordingSpan) returns that
// span, so its context is propagated downstream without an SDK (the
// specification's "behavior in the absence of an installed SDK"). It
// recognizes the span by its type; pfshttp's remoteSpan is another type,
// and Start replaces it with an empty span: the caller's trace is dropped
// where Extract's context would have kept it.
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
	if !gs.SpanContext().Equal(ws.SpanContext()) {
		t.Errorf("no-op tracer's span in the request's context: %s; in Extract's: %s",
			spanString(gs.SpanContext()), spanString(ws.SpanContext()))
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
