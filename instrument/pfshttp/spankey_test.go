package pfshttp

import (
	"context"
	"fmt"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The probe finds OpenTelemetry's span key, so requests carry the caller's
// span in their own context.
func TestSpanKeyProbed(t *testing.T) {
	if spanKey == nil {
		t.Fatal("probeSpanKey found no key: requests fall back to trace.ContextWithRemoteSpanContext")
	}
}

// requestContext is the context Handler gives a request of headers h with
// WithTraceContext, over parent.
func requestContext(parent context.Context, tc traceContextCase) context.Context {
	q := new(request)
	if sc, ok := parseTraceContext(tc.h); ok {
		q.ctx.setSpan(sc)
	}
	return q.withThread(parent, nil)
}

// A request's context answers OpenTelemetry as the context Extract returns
// would: the same span context, a non-recording span with the same tracer
// provider, the parent's values and span when the headers carry none.
func TestRequestContextMatchesOTel(t *testing.T) {
	type key struct{}
	parent := trace.ContextWithSpanContext(context.WithValue(context.Background(), key{}, 1),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}}))
	for _, c := range traceContextCases {
		for i, ctx := range []context.Context{context.Background(), parent} {
			want := propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(c.h))
			got := requestContext(ctx, c)
			gs, ws := trace.SpanFromContext(got), trace.SpanFromContext(want)
			if !gs.SpanContext().Equal(ws.SpanContext()) || gs.IsRecording() != ws.IsRecording() ||
				fmt.Sprintf("%T", gs.TracerProvider()) != fmt.Sprintf("%T", ws.TracerProvider()) {
				t.Errorf("%s, parent %d: span %s recording %v provider %T; Extract's %s %v %T", c.name, i,
					spanString(gs.SpanContext()), gs.IsRecording(), gs.TracerProvider(),
					spanString(ws.SpanContext()), ws.IsRecording(), ws.TracerProvider())
			}
			if got.Value(key{}) != ctx.Value(key{}) {
				t.Errorf("%s, parent %d: the parent's values are lost", c.name, i)
			}
		}
	}
}

// A span an OpenTelemetry SDK tracer starts in a request's context is the
// caller's span's child.
func TestRemoteSpanParent(t *testing.T) {
	prov := sdktrace.NewTracerProvider()
	defer prov.Shutdown(context.Background())
	ctx := requestContext(context.Background(), traceContextCase{h: tp("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")})
	_, span := prov.Tracer("test").Start(ctx, "child")
	defer span.End()
	ro := span.(sdktrace.ReadOnlySpan)
	if ro.Parent().SpanID().String() != "b7ad6b7169203331" || !ro.Parent().IsRemote() ||
		ro.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || !ro.SpanContext().IsSampled() {
		t.Errorf("child of the caller's span: parent %s, trace %s", spanString(ro.Parent()), spanString(ro.SpanContext()))
	}
}

// bridge.TraceContext, the statements' trace hook, asks a request's context
// for its span directly (OtelpfsSpanIDs): its answer must be what it
// finds through OpenTelemetry in the context Extract returns, for every
// header case, over a parent with and without a span of its own; and a
// context derived with a child span gives the child's.
func TestTraceHookMatchesOTel(t *testing.T) {
	parent := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}}))
	hook := func(ctx context.Context) string {
		tr, sp, sampled, ok := bridge.TraceContext(ctx)
		return fmt.Sprintf("%x/%x/%v/%v", tr, sp, sampled, ok)
	}
	direct := 0
	for _, c := range traceContextCases {
		for i, ctx := range []context.Context{context.Background(), parent} {
			want := propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(c.h))
			got := requestContext(ctx, c)
			if g, w := hook(got), hook(want); g != w {
				t.Errorf("%s, parent %d: the hook gives %s on the request's context, %s on Extract's", c.name, i, g, w)
			}
			if _, _, _, ok := got.(*threadCtx).OtelpfsSpanIDs(); ok {
				direct++
			}
		}
	}
	if direct == 0 {
		t.Error("no case answered directly: the test checked only the fallback")
	}
	prov := sdktrace.NewTracerProvider()
	defer prov.Shutdown(context.Background())
	var tc traceContextCase
	for _, c := range traceContextCases {
		if _, ok := parseTraceContext(c.h); ok {
			tc = c
			break
		}
	}
	ctx, span := prov.Tracer("t").Start(requestContext(context.Background(), tc), "child")
	defer span.End()
	if g, w := hook(ctx), fmt.Sprintf("%x/%x/%v/true", [16]byte(span.SpanContext().TraceID()), [8]byte(span.SpanContext().SpanID()),
		span.SpanContext().IsSampled()); g != w {
		t.Errorf("a child span's context: the hook gives %s, want the child's %s", g, w)
	}
}
