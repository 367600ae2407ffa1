package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/examples/notes"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
)

// The demo's service and load (examples/demo), run in-process so that the
// test knows every request it made and can read the tables after the load
// stopped: the notes API (package notes) on an instrumented listener with
// pfshttp's idle connections, every instrument and consumer on, exported
// by exporter.StartOTLP with its defaults (the default tables, spans of
// every sampled trace), the load's clients at the demo's default rate, each
// request in a sampled trace of its caller's (a traceparent header).
const (
	demoClients = 4   // the demo's -clients
	demoRate    = 200 // the demo's -rate: requests per second, all clients together
	demoRunFor  = 8 * time.Second
	demoJob     = "otelpfs-demo-e2e"
	demoInst    = "demo"
)

// A demoRequest is one request the load made, and what it got.
type demoRequest struct {
	method, path     string
	traceID, spanID  string // of the caller's span (the traceparent header)
	status           int
	route            string // the ServeMux pattern that serves it
	started, stopped time.Time
}

// demoRoute returns the pattern of the notes API that serves a request.
func demoRoute(method, path string) string {
	path, _, _ = strings.Cut(path, "?")
	switch {
	case strings.HasPrefix(path, "/notes/"):
		return "/notes/{id}"
	case path == "/notes", path == "/stats", path == "/config/page_size":
		return path
	}
	return ""
}

// TestDemoOTLP runs the demo's service at the demo's rate against a real
// Collector and Prometheus, and checks, as subtests named for each
// property, what an SRE gets from the default export: every sampled
// request's complete trace and nothing lost; the HTTP and database
// conventions' attributes on spans and metrics; histogram_quantile's p95
// per busy digest against the engine's QUANTILE_95; and the default
// export's size.
func TestDemoOTLP(t *testing.T) {
	col := startCollector(t, otelcolBinary(t), "", "", "")
	prom := startPrometheus(t, prometheusBinary(t), col.prom)

	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateConsumers("%", true); err != nil {
		t.Fatal(err)
	}
	svc, err := notes.New(notes.Config{Dir: t.TempDir(), Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	in := instrument.WithSchema(s)
	ln, err := instrument.NewSocketClass("wait/io/socket/demo/api_listener", in).
		Listen("tcp", "127.0.0.1:0", instrument.NewSocketClass("wait/io/socket/demo/api_connection", in))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: svc.Handler(), ConnState: pfshttp.ConnState(pfshttp.WithSchema(s)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()

	// As the demo: the service is built (and seeded) before the export
	// starts, with the export's defaults but for the interval and the
	// Collector's address.
	otl, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithEndpoint(col.otlp), exporter.WithInsecure(true),
		exporter.WithExportInterval(time.Second),
		exporter.WithServiceName(demoJob),
		exporter.WithResourceAttributes(attribute.String("service.instance.id", demoInst)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		otl.Shutdown(ctx)
	})

	reqs := driveDemo(t, base)
	flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := otl.ForceFlush(flushCtx); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	byStatus := map[int]int{}
	for _, r := range reqs {
		byStatus[r.status]++
	}
	t.Logf("%d requests in %v (%.0f/s) by %d clients, by status %v", len(reqs), demoRunFor, float64(len(reqs))/demoRunFor.Seconds(), demoClients, byStatus)

	t.Run("SpansComplete", func(t *testing.T) { checkDemoSpans(t, s, filepath.Join(col.out, "traces.jsonl"), reqs) })
	metrics := filepath.Join(col.out, "metrics.jsonl")
	t.Run("MetricConventions", func(t *testing.T) { checkDemoMetricConventions(t, metrics, reqs) })
	t.Run("P95AgreesWithEngine", func(t *testing.T) { checkDemoQuantiles(t, s, prom) })
	t.Run("DefaultExportSize", func(t *testing.T) { checkExportSize(t, metrics, prom, demoJob) })
}

// driveDemo runs the demo's load against base for demoRunFor, at
// demoRate, and returns the requests that got an answer.
func driveDemo(t *testing.T, base string) []demoRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), demoRunFor)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: demoClients}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var out []demoRequest
	var failed []error
	var wg sync.WaitGroup
	for i := range demoClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			load := notes.NewLoad(uint64(i) + 1)
			tick := time.NewTicker(time.Duration(demoClients) * time.Second / demoRate)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				r := load.Next()
				// Not ctx: a request the test makes is answered, so that
				// the requests made are the requests served.
				req, err := r.NewHTTP(context.Background(), base)
				if err != nil {
					t.Error(err)
					return
				}
				parts := strings.Split(r.TraceParent, "-")
				dr := demoRequest{method: r.Method, path: r.Path, traceID: parts[1], spanID: parts[2],
					route: demoRoute(r.Method, r.Path), started: time.Now()}
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				dr.status, dr.stopped = resp.StatusCode, time.Now()
				mu.Lock()
				out = append(out, dr)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d requests failed: %v", len(failed), failed[0])
	}
	if len(out) < int(demoRate*demoRunFor.Seconds())/2 {
		t.Fatalf("%d requests in %v: far from the demo's %d/s", len(out), demoRunFor, demoRate)
	}
	return out
}

// checkDemoSpans waits until the Collector holds a SERVER span for every
// request, then checks every request's tree: its SERVER span in the
// caller's trace, by the HTTP conventions; its stages its children; its
// SQL CLIENT spans children of its stages, by the database conventions;
// every span within its parent's time; no span twice, no span of a trace
// the load did not make; and the export's losses at 0.
func checkDemoSpans(t *testing.T, s *pfscore.Schema, path string, reqs []demoRequest) {
	var all []span
	servers := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		trs, err := loadTraces(path)
		if err != nil {
			t.Fatal(err)
		}
		all, servers = spans(trs), 0
		for _, sp := range all {
			if sp.kind == ptrace.SpanKindServer {
				servers++
			}
		}
		if servers >= len(reqs) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // and no more come
	trs, err := loadTraces(path)
	if err != nil {
		t.Fatal(err)
	}
	all = spans(trs)
	byTrace := map[string][]span{}
	seen := map[string]bool{}
	kinds := map[ptrace.SpanKind]int{}
	for _, sp := range all {
		if seen[sp.spanID] {
			t.Errorf("span %s (%s) arrived twice", sp.spanID, sp.name)
		}
		seen[sp.spanID] = true
		byTrace[sp.traceID] = append(byTrace[sp.traceID], sp)
		kinds[sp.kind]++
	}
	t.Logf("%d requests made, all sampled; %d spans arrived in %d traces: %d SERVER, %d CLIENT (SQL), %d INTERNAL (stages)",
		len(reqs), len(all), len(byTrace), kinds[ptrace.SpanKindServer], kinds[ptrace.SpanKindClient], kinds[ptrace.SpanKindInternal])
	if kinds[ptrace.SpanKindServer] != len(reqs) {
		t.Errorf("%d SERVER spans for %d requests, every one sampled", kinds[ptrace.SpanKindServer], len(reqs))
	}
	if len(byTrace) != len(reqs) {
		t.Errorf("%d traces for %d requests, each in a trace of its own", len(byTrace), len(reqs))
	}

	var bad []string
	sqlUnderStage, sqlUnderRequest, stages, stagesUnderSQL := 0, 0, 0, 0
	for _, r := range reqs {
		tr := byTrace[r.traceID]
		delete(byTrace, r.traceID)
		var server *span
		byID := map[string]span{}
		stageUnder := map[string]bool{} // span id -> a stage is its child
		for i, sp := range tr {
			byID[sp.spanID] = sp
			if sp.kind == ptrace.SpanKindInternal {
				stageUnder[sp.parent] = true
			}
			if sp.kind == ptrace.SpanKindServer {
				if server != nil {
					bad = append(bad, fmt.Sprintf("%s %s (trace %s): two SERVER spans", r.method, r.path, r.traceID))
				}
				server = &tr[i]
			}
		}
		if server == nil {
			bad = append(bad, fmt.Sprintf("%s %s (trace %s, %d): no SERVER span (%d spans in its trace)", r.method, r.path, r.traceID, r.status, len(tr)))
			continue
		}
		if server.parent != r.spanID {
			bad = append(bad, fmt.Sprintf("%s %s: SERVER span under %q, want the caller's span %s", r.method, r.path, server.parent, r.spanID))
		}
		if err := httpServerSpan(*server, r.method, r.route, r.status); err != nil {
			bad = append(bad, fmt.Sprintf("%s %s: %v", r.method, r.path, err))
		}
		if want, _, _ := strings.Cut(r.path, "?"); server.attrs["url.path"] != want {
			bad = append(bad, fmt.Sprintf("%s %s: url.path %q, want %q", r.method, r.path, server.attrs["url.path"], want))
		}
		for _, sp := range tr {
			if sp.kind == ptrace.SpanKindServer {
				continue
			}
			up, ok := byID[sp.parent]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s %s: span %q under %q, no span of its request's tree", r.method, r.path, sp.name, sp.parent))
				continue
			}
			// A statement whose cursor stays open while the handler's
			// next stage begins (listNotes renders as it reads its rows)
			// outlives the stage it began in, and that stage nests in it,
			// as the engine has it (a stage nests in the thread's current
			// statement).
			cursor := sp.kind == ptrace.SpanKindClient && stageUnder[sp.spanID]
			if sp.start.Before(up.start) || sp.end.After(up.end) && !cursor {
				bad = append(bad, fmt.Sprintf("%s %s: span %q (%v to %v) under %q (%v to %v)", r.method, r.path, sp.name,
					sp.start.Format("05.000000"), sp.end.Format("05.000000"), up.name, up.start.Format("05.000000"), up.end.Format("05.000000")))
				continue
			}
			switch sp.kind {
			case ptrace.SpanKindInternal:
				stages++
				if up.kind == ptrace.SpanKindClient {
					stagesUnderSQL++
				}
				if !strings.HasPrefix(sp.name, "stage/demo/") || up.spanID != server.spanID && up.kind != ptrace.SpanKindClient {
					bad = append(bad, fmt.Sprintf("%s %s: INTERNAL span %q under %q, want a stage under the request (or its open statement)", r.method, r.path, sp.name, up.name))
				}
			case ptrace.SpanKindClient:
				if up.kind == ptrace.SpanKindInternal {
					sqlUnderStage++
				} else {
					sqlUnderRequest++
				}
				op := sp.attrs["db.operation.name"]
				if sp.attrs["db.system.name"] != "sqlite" || sp.attrs["db.query.summary"] != sp.name || op == "" ||
					!strings.HasPrefix(sp.name, op) || sp.attrs["pfs.digest"] == "" || sp.attrs["pfs.digest_text"] == "" {
					bad = append(bad, fmt.Sprintf("%s %s: SQL span %q: attributes %v", r.method, r.path, sp.name, sp.attrs))
				}
				if c := sp.attrs["db.collection.name"]; c != "" && !strings.HasSuffix(sp.name, " "+c) {
					bad = append(bad, fmt.Sprintf("%s %s: SQL span %q with db.collection.name %q", r.method, r.path, sp.name, c))
				}
			default:
				bad = append(bad, fmt.Sprintf("%s %s: span %q of kind %v", r.method, r.path, sp.name, sp.kind))
			}
		}
	}
	for id, tr := range byTrace {
		bad = append(bad, fmt.Sprintf("trace %s: %d spans of no request the load made (%s, ...)", id, len(tr), tr[0].name))
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		t.Errorf("the requests' trees:\n%s", strings.Join(bad, "\n"))
	}
	t.Logf("trees: %d stage spans, %d of them under a statement whose rows were still being read; %d SQL spans under a stage, %d directly under their request",
		stages, stagesUnderSQL, sqlUnderStage, sqlUnderRequest)
	if sqlUnderStage == 0 {
		t.Errorf("no SQL span under a stage: the demo runs its queries in stage/demo/querying")
	}

	// Nothing lost on the way: the export's counters, and the capture's.
	status, err := rows(s, "global_status", "VARIABLE_NAME LIKE 'Performance_schema_export_%'")
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != 2 {
		t.Errorf("global_status: %d export rows, want %s and %s", len(status), exporter.StatusSpansLost, exporter.StatusEventsLost)
	}
	for _, r := range status {
		v, _ := strconv.ParseUint(fmt.Sprint(r["VARIABLE_VALUE"]), 10, 64)
		t.Logf("global_status %s = %v", r["VARIABLE_NAME"], r["VARIABLE_VALUE"])
		if v != 0 {
			t.Errorf("global_status %s = %v, want 0 at the demo's rate", r["VARIABLE_NAME"], r["VARIABLE_VALUE"])
		}
	}
	if st := s.TraceStats(); st.TreesLost != 0 || st.EventsLost != 0 || st.Trees < uint64(len(reqs)) {
		t.Errorf("capture: %+v for %d requests", st, len(reqs))
	}
}

// checkDemoMetricConventions checks the conventions' histograms of the
// demo's default export: db.client.operation.duration by db.system.name
// (sqlite), db.query.summary and db.operation.name; and
// http.server.request.duration by http.request.method and http.route, for
// every route the load asked for, with the count of requests it made.
func checkDemoMetricConventions(t *testing.T, path string, reqs []demoRequest) {
	want := map[[2]string]uint64{}
	for _, r := range reqs {
		want[[2]string{r.method, r.route}]++
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, err := loadMetrics(path)
		if err != nil {
			t.Fatal(err)
		}
		got := latest(points(ms))
		var bad []string
		routes := map[[2]string]uint64{}
		summaries := 0
		for _, p := range got {
			if p.instance() != demoInst {
				continue
			}
			switch p.metric {
			case dbDuration:
				summaries++
				if p.attrs["db.system.name"] != "sqlite" || p.attrs["db.query.summary"] == "" || p.attrs["db.operation.name"] == "" ||
					!strings.HasPrefix(p.attrs["db.query.summary"], p.attrs["db.operation.name"]) || p.unit != "s" {
					bad = append(bad, fmt.Sprintf("%s %v (unit %q)", p.metric, p.attrs, p.unit))
				}
				for k := range p.attrs {
					if !strings.HasPrefix(k, "db.") {
						bad = append(bad, fmt.Sprintf("%s %v: %s", p.metric, p.attrs, k))
					}
				}
			case httpDuration:
				routes[[2]string{p.attrs["http.request.method"], p.attrs["http.route"]}] += p.count
				for k := range p.attrs {
					if k != "http.request.method" && k != "http.route" {
						bad = append(bad, fmt.Sprintf("%s %v: %s", p.metric, p.attrs, k))
					}
				}
			}
		}
		if !maps.Equal(routes, want) {
			bad = append(bad, fmt.Sprintf("%s counts by method and route %v, want the requests made %v", httpDuration, routes, want))
		}
		if summaries == 0 {
			bad = append(bad, "no "+dbDuration)
		}
		if len(bad) == 0 {
			t.Logf("%d %s series (by db.query.summary), %d %s series (by method and route)", summaries, dbDuration, len(routes), httpDuration)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s:\n%s", strings.Join(bad, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkDemoQuantiles compares, for every busy digest (SQL or route), the
// p95 Prometheus computes from its exported histogram
// (histogram_quantile(0.95, ...) over the buckets since the start) with
// the engine's QUANTILE_95 of events_statements_summary_by_digest, once
// the load has stopped and the tables no longer move: within 15%.
func checkDemoQuantiles(t *testing.T, s *pfscore.Schema, prom *prometheus) {
	digests, err := rows(s, "events_statements_summary_by_digest", "COUNT_STAR >= 100")
	if err != nil {
		t.Fatal(err)
	}
	if len(digests) < 4 {
		t.Fatalf("%d digests with 100 statements or more", len(digests))
	}
	sort.Slice(digests, func(i, j int) bool { return num(digests[i]["COUNT_STAR"]) > num(digests[j]["COUNT_STAR"]) })
	var report strings.Builder
	for _, r := range digests {
		dg, text := r["DIGEST"].(string), r["DIGEST_TEXT"].(string)
		sel := `{exported_job="` + demoJob + `", pfs_digest="` + dg + `"}`
		// The last export's histogram, once Prometheus has it.
		prom.waitQuery(t, `pfs_events_statements_by_digest_duration_seconds_count`+sel, func(ss []sample) error {
			if len(ss) != 1 || ss[0].value != float64(num(r["COUNT_STAR"])) {
				return fmt.Errorf("%v, want COUNT_STAR %d", ss, num(r["COUNT_STAR"]))
			}
			return nil
		})
		ss := prom.waitQuery(t, `histogram_quantile(0.95, pfs_events_statements_by_digest_duration_seconds_bucket`+sel+`)`,
			func(ss []sample) error {
				if len(ss) != 1 || math.IsNaN(ss[0].value) {
					return fmt.Errorf("%v", ss)
				}
				return nil
			})
		engine := bridge.Seconds(num(r["QUANTILE_95"]))
		got := ss[0].value
		diff := (got - engine) / engine
		fmt.Fprintf(&report, "  %6d  engine %9.1f us  prometheus %9.1f us  %+6.1f%%  %.60s\n", num(r["COUNT_STAR"]), engine*1e6, got*1e6, diff*100, text)
		if math.Abs(diff) > 0.15 {
			t.Errorf("%s: histogram_quantile(0.95) %v s, the engine's QUANTILE_95 %v s: %+.1f%%, more than 15%% apart", text, got, engine, diff*100)
		}
	}
	t.Logf("p95 per busy digest (statements, the engine's QUANTILE_95, Prometheus's histogram_quantile(0.95)):\n%s", report.String())
}

// checkExportSize logs and bounds the size of an instance's default
// export: data points per collection (at most 1,000, the budget),
// metrics, and the series Prometheus holds for it (a histogram point is
// one series per bucket there); and that no series names a thread, an
// object instance or a client.
func checkExportSize(t *testing.T, path string, prom *prometheus, job string) {
	ms, err := loadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	// A collection's points share their instance and time.
	type collection struct {
		inst string
		at   time.Time
	}
	perCollection := map[collection]int{}
	metrics := map[string]bool{}
	histograms := 0
	var last time.Time
	for _, p := range points(ms) {
		if p.resource["service.name"] != job {
			continue
		}
		perCollection[collection{p.instance(), p.time}]++
		metrics[p.metric] = true
		if p.time.After(last) {
			last = p.time
		}
		if optInMetric(p.metric) {
			t.Errorf("%s %v: an opt-in table's metric in the default export", p.metric, p.attrs)
		}
		for _, k := range []string{"thread.id", "pfs.object_instance", "pfs.user", "pfs.host", "file.path", "network.peer.port", "client.port"} {
			if _, ok := p.attrs[k]; ok {
				t.Errorf("%s %v: attribute %s in the default export", p.metric, p.attrs, k)
			}
		}
	}
	most, lastPoints := 0, 0
	for c, n := range perCollection {
		most = max(most, n)
		if c.at.Equal(last) {
			lastPoints = n
		}
	}
	for _, p := range latest(points(ms)) {
		if p.resource["service.name"] == job && p.time.Equal(last) && p.kind == pmetric.MetricTypeHistogram {
			histograms++
		}
	}
	ss := prom.waitQuery(t, `count({exported_job="`+job+`"})`, func(ss []sample) error {
		if len(ss) != 1 {
			return fmt.Errorf("%v", ss)
		}
		return nil
	})
	t.Logf("default export of %s: %d data points in its largest collection (%d in the last, %d of them histograms), %d metrics, %d collections; %d series in Prometheus",
		job, most, lastPoints, histograms, len(metrics), len(perCollection), int(ss[0].value))
	if most == 0 || most > 1000 {
		t.Errorf("%d data points per collection, want 1 to 1000", most)
	}
}
