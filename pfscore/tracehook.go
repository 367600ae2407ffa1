package pfscore

import (
	"context"
	"sync/atomic"
)

// A TraceHook returns the trace and span ids of the OpenTelemetry span ctx
// carries, whether that span is sampled (its W3C sampled flag), and false
// if ctx carries none. pfscore and instrument import nothing of
// OpenTelemetry: package bridge's TraceContext is the hook that reads its
// span context, installed by SetTraceHook (or by exporter.StartOTLP when
// it exports spans).
type TraceHook func(ctx context.Context) (traceID [16]byte, spanID [8]byte, sampled, ok bool)

var traceHook atomic.Pointer[TraceHook]

// SetTraceHook installs the function statements use to find the span
// their context carries (instrument's StartSQL and Start, and the database
// and HTTP wrappers, ask it); nil removes it. It is process-wide, as
// OpenTelemetry's global propagator is.
func SetTraceHook(h TraceHook) {
	if h == nil {
		traceHook.Store(nil)
		return
	}
	traceHook.Store(&h)
}

// TraceOf fills info's TraceID, SpanID and Sampled from ctx through the
// installed hook; it leaves them as they are without a hook, or when ctx
// carries no span.
func TraceOf(ctx context.Context, info *StatementInfo) {
	if h := traceHook.Load(); h != nil && ctx != nil {
		if tr, sp, sampled, ok := (*h)(ctx); ok {
			info.TraceID, info.SpanID, info.Sampled = tr, sp, sampled
		}
	}
}

// TraceHookSet reports whether a trace hook is installed: a caller's trace
// context is then worth reading (pfshttp reads the W3C traceparent header
// when it is, or when told to).
func TraceHookSet() bool { return traceHook.Load() != nil }
