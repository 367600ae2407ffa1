package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// captureWorld is a spanWorld whose schema captures every tree, with no
// history_long consumer: spans come from capture alone.
func captureWorld(t *testing.T) (*spanWorld, *bridge.Traces) {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	w := newSpanWorldOn(t, s)
	s.EnableTraceCapture(pfscore.TraceCapture{Sampler: pfscore.TraceSampler{ParentBased: true, Ratio: 1}})
	tr, err := bridge.NewTraces(s)
	if err != nil {
		t.Fatal(err)
	}
	return w, tr
}

// TestTracesRequestTree: a request's tree becomes its spans once it ends:
// a SERVER span for the request, its stages as children, the SQL statement
// a CLIENT child of the stage it ran in, each wait an event of the span it
// nests in; all in one trace, each span once.
func TestTracesRequestTree(t *testing.T) {
	w, tr := captureWorld(t)
	ctx, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	defer th.End()
	w.request(ctx)
	spans := tr.Read(nil, 0)
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (request, 2 stages, SQL): %+v", len(spans), spans)
	}
	m := byName(t, spans)
	req, parsing, querying, sql := m["GET /users/{id}"], m["stage/app/parsing"], m["stage/app/querying"], m["SELECT users"]
	if req.Kind != trace.SpanKindServer || sql.Kind != trace.SpanKindClient || parsing.Kind != trace.SpanKindInternal {
		t.Errorf("kinds: request %v, SQL %v, stage %v", req.Kind, sql.Kind, parsing.Kind)
	}
	if req.Parent.IsValid() || !req.TraceID.IsValid() {
		t.Errorf("request: trace %v parent %v, want a root of a trace of its own", req.TraceID, req.Parent)
	}
	for _, sp := range []bridge.Span{parsing, querying, sql} {
		if sp.TraceID != req.TraceID {
			t.Errorf("%s in trace %v, want the request's %v", sp.Name, sp.TraceID, req.TraceID)
		}
	}
	if parsing.Parent != req.SpanID || querying.Parent != req.SpanID {
		t.Error("stages are not the request's children")
	}
	if sql.Parent != querying.SpanID {
		t.Errorf("the SQL statement's parent is %v, want the stage it ran in (%v)", sql.Parent, querying.SpanID)
	}
	if len(parsing.Events) != 1 || parsing.Events[0].Name != "wait/synch/mutex/app/cache" ||
		len(req.Events) != 1 || req.Events[0].Name != "wait/synch/mutex/app/pool" {
		t.Errorf("waits: parsing %+v, request %+v", parsing.Events, req.Events)
	}
	if a := attrs(sql.Attributes); a["db.query.summary"].AsString() != "SELECT users" ||
		a["db.collection.name"].AsString() != "users" || a["db.operation.name"].AsString() != "SELECT" ||
		a["db.namespace"].AsString() != "shop" || a["pfs.digest_text"].AsString() == "" {
		t.Errorf("SQL attributes %v", a)
	}
	if more := tr.Read(nil, 0); len(more) != 0 {
		t.Errorf("a second Read sent %d spans again", len(more))
	}
	if st := tr.Stats(); st.Trees != 1 || st.Spans != 4 {
		t.Errorf("stats %+v", st)
	}
}

// TestTracesJoinCallersTrace: a request whose statement recorded the
// caller's sampled span is that span's child, in its trace; one whose
// caller did not sample it sends nothing.
func TestTracesJoinCallersTrace(t *testing.T) {
	w, tr := captureWorld(t)
	_, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	defer th.End()
	caller := [16]byte{0x4b, 0xf9, 1}
	callerSpan := [8]byte{0xaa, 1}
	st := w.requests.StartOn(th, pfscore.StatementInfo{Text: "GET /a", Normalized: true, TraceID: caller, SpanID: callerSpan, Sampled: true})
	st.End(instrument.StatementResult{})
	st = w.requests.StartOn(th, pfscore.StatementInfo{Text: "GET /b", Normalized: true, TraceID: caller, SpanID: callerSpan})
	st.End(instrument.StatementResult{})
	spans := tr.Read(nil, 0)
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the sampled request's 1", len(spans))
	}
	if sp := spans[0]; sp.TraceID != caller || sp.Parent != callerSpan || !sp.RemoteParent || sp.Name != "GET /a" {
		t.Errorf("span %s: trace %v parent %v remote %v", sp.Name, sp.TraceID, sp.Parent, sp.RemoteParent)
	}
}

// TestTracesHTTPStatus: a request's span has the status its handler
// answered, and is an error for a 5xx only (error.type the status code),
// as the HTTP conventions say of a server span; an unmatched request is
// named by its method alone, with no http.route.
func TestTracesHTTPStatus(t *testing.T) {
	w, tr := captureWorld(t)
	_, th := instrument.StartThread(context.Background(), "thread/app/request", w.in)
	defer th.End()
	for _, c := range []struct {
		text   string
		status int
	}{{"GET /a/{id}", 404}, {"POST /b", 503}, {"PUT (unmatched)", 200}, {"_OTHER (unmatched)", 200}} {
		st := w.requests.StartOn(th, pfscore.StatementInfo{Text: c.text, Normalized: true})
		var res instrument.StatementResult
		if c.status >= 500 {
			res.Errors = 1
		}
		res.Protocol = &pfscore.Protocol{Status: c.status, Scheme: "https", Path: "/x/1"}
		if strings.HasPrefix(c.text, "_OTHER") {
			res.Protocol.Method = "BREW"
		}
		st.End(res)
	}
	m := byName(t, tr.Read(nil, 0))
	nf, se, um := m["GET /a/{id}"], m["POST /b"], m["PUT"]
	if a := attrs(m["HTTP"].Attributes); a["http.request.method"].AsString() != "_OTHER" || a["http.request.method_original"].AsString() != "BREW" {
		t.Errorf("a method net/http does not define: %v", a)
	}
	if _, ok := attrs(nf.Attributes)["http.request.method_original"]; ok {
		t.Error("http.request.method_original on a known method")
	}
	if a := attrs(nf.Attributes); nf.Status == codes.Error || a["http.response.status_code"].AsInt64() != 404 ||
		a["url.path"].AsString() != "/x/1" || a["url.scheme"].AsString() != "https" || a["http.route"].AsString() != "/a/{id}" {
		t.Errorf("404: status %v attributes %v", nf.Status, a)
	}
	if a := attrs(se.Attributes); se.Status != codes.Error || a["error.type"].AsString() != "503" {
		t.Errorf("503: status %v attributes %v", se.Status, a)
	}
	if a := attrs(um.Attributes); um.Kind != trace.SpanKindServer || a["http.route"].Type() != 0 || a["http.request.method"].AsString() != "PUT" {
		t.Errorf("unmatched: %s %v %v", um.Name, um.Kind, a)
	}
}
