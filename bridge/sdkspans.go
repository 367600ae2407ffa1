package bridge

import (
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// ReadOnlySpans returns spans as the OpenTelemetry SDK's read-only spans,
// of resource res (nil: none) and the bridge's scope, for an application's
// own trace pipeline: any sdktrace.SpanExporter takes them
// (exporter.WithSpanExporter sends a schema's spans that way). Every span
// is sampled: it was captured because its trace was.
func ReadOnlySpans(spans []Span, res *resource.Resource) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	scope := instrumentation.Scope{Name: ScopeName}
	for i := range spans {
		sp := &spans[i]
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: sp.TraceID, SpanID: sp.SpanID,
			TraceFlags: trace.FlagsSampled})
		var parent trace.SpanContext
		if sp.Parent.IsValid() {
			parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: sp.TraceID, SpanID: sp.Parent,
				TraceFlags: trace.FlagsSampled, Remote: sp.RemoteParent})
		}
		var events []sdktrace.Event
		if len(sp.Events) > 0 {
			events = make([]sdktrace.Event, len(sp.Events))
			for j, e := range sp.Events {
				events[j] = sdktrace.Event{Name: e.Name, Time: e.Time, Attributes: e.Attributes}
			}
		}
		out[i] = tracetest.SpanStub{Name: sp.Name, SpanContext: sc, Parent: parent, SpanKind: sp.Kind,
			StartTime: sp.Start, EndTime: sp.End, Attributes: sp.Attributes, Events: events,
			Status: sdktrace.Status{Code: sp.Status, Description: sp.StatusMessage}, Resource: res,
			InstrumentationScope: scope}.Snapshot()
	}
	return out
}
