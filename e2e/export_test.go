package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/e2e/workload"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// serviceName is the service.name of the test's service instances.
const serviceName = "otelpfs-e2e"

// An instance is one service instance of the test: a workload on a Schema
// of its own, exported by exporter.StartOTLP with its own
// service.instance.id.
type instance struct {
	id  string
	svc *workload.Service
	otl *exporter.OTLP
}

// newInstance starts a service instance exporting to the Collector at
// endpoint every interval.
func newInstance(t *testing.T, id, endpoint string, interval time.Duration) *instance {
	t.Helper()
	s, err := workload.NewSchema()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := workload.New(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	otl, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithEndpoint(endpoint), exporter.WithInsecure(true),
		exporter.WithExportInterval(interval), exporter.WithSpanInterval(interval),
		exporter.WithServiceName(serviceName),
		exporter.WithResourceAttributes(
			attribute.String("service.instance.id", id),
			attribute.String("deployment.environment.name", "e2e")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		otl.Shutdown(ctx)
	})
	return &instance{id: id, svc: svc, otl: otl}
}

// run serves n requests on two goroutines, with ctx (and the span it may
// carry).
func (in *instance) run(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 2 {
				if err := in.svc.Request(ctx); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("instance %s: request: %v", in.id, err)
	}
}

// flush sends the instance's tables now.
func (in *instance) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := in.otl.ForceFlush(ctx); err != nil {
		t.Fatalf("instance %s: ForceFlush: %v", in.id, err)
	}
}

// rows reads a table of s as maps from column name to value.
func rows(s *pfscore.Schema, table string, where ...string) ([]map[string]pfscore.Value, error) {
	res, err := s.Query(table, pfscore.Query{Where: where})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]pfscore.Value, len(res.Rows))
	for i, r := range res.Rows {
		m := make(map[string]pfscore.Value, len(r))
		for j, c := range res.Columns {
			m[c.Name] = r[j]
		}
		out[i] = m
	}
	return out, nil
}

func num(v pfscore.Value) uint64 {
	switch x := v.(type) {
	case uint64:
		return x
	case int64:
		if x > 0 {
			return uint64(x)
		}
	}
	return 0
}

// find returns the latest points of one instance's metric whose attributes
// include want.
func find(got map[string]point, inst, metric string, want map[string]string) []point {
	var out []point
	for _, p := range got {
		if p.instance() != inst || p.metric != metric {
			continue
		}
		ok := true
		for k, v := range want {
			if p.attrs[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// expect is one exported value the tables predict: a metric's one point
// whose attributes include attrs.
type expect struct {
	metric string
	attrs  map[string]string
	value  float64 // picoseconds already turned into seconds where the unit is s
}

// expectations reads an instance's tables and lists what its export must
// hold after a final flush: every row of the waits summary by event name;
// every digest's count, time and rows sent; the workload's memory class.
func expectations(s *pfscore.Schema) ([]expect, error) {
	var out []expect
	waits, err := rows(s, "events_waits_summary_global_by_event_name", "COUNT_STAR > 0")
	if err != nil {
		return nil, err
	}
	for _, r := range waits {
		a := map[string]string{"pfs.event_name": r["EVENT_NAME"].(string)}
		out = append(out,
			expect{"pfs.events_waits.count", a, float64(num(r["COUNT_STAR"]))},
			expect{"pfs.events_waits.time", a, bridge.Seconds(num(r["SUM_TIMER_WAIT"]))},
			expect{"pfs.events_waits.time.max", a, bridge.Seconds(num(r["MAX_TIMER_WAIT"]))})
	}
	digests, err := rows(s, "events_statements_summary_by_digest")
	if err != nil {
		return nil, err
	}
	for _, r := range digests {
		a := map[string]string{"db.query.summary": r["DIGEST_TEXT"].(string), "pfs.digest": r["DIGEST"].(string)}
		out = append(out,
			expect{"pfs.events_statements.by_digest.count", a, float64(num(r["COUNT_STAR"]))},
			expect{"pfs.events_statements.by_digest.time", a, bridge.Seconds(num(r["SUM_TIMER_WAIT"]))},
			expect{"pfs.events_statements.by_digest.rows_sent", a, float64(num(r["SUM_ROWS_SENT"]))})
	}
	mem, err := rows(s, "memory_summary_global_by_event_name", "EVENT_NAME = '"+workload.MemoryName+"'")
	if err != nil {
		return nil, err
	}
	for _, r := range mem {
		a := map[string]string{"pfs.event_name": workload.MemoryName}
		out = append(out,
			expect{"pfs.memory.alloc.count", a, float64(num(r["COUNT_ALLOC"]))},
			expect{"pfs.memory.alloc.bytes", a, float64(num(r["SUM_NUMBER_OF_BYTES_ALLOC"]))},
			expect{"pfs.memory.used.bytes", a, float64(num(r["CURRENT_NUMBER_OF_BYTES_USED"]))},
			expect{"pfs.memory.used.bytes.high", a, float64(num(r["HIGH_NUMBER_OF_BYTES_USED"]))})
	}
	if len(waits) == 0 || len(digests) == 0 || len(mem) != 1 {
		return nil, fmt.Errorf("the workload left %d wait rows, %d digests and %d memory rows", len(waits), len(digests), len(mem))
	}
	return out, nil
}

// mismatches compares an instance's latest exported points with what its
// tables say, and returns what differs (nothing when all agree).
func mismatches(got map[string]point, inst string, want []expect) []string {
	var bad []string
	for _, e := range want {
		ps := find(got, inst, e.metric, e.attrs)
		switch {
		case len(ps) == 0:
			bad = append(bad, fmt.Sprintf("%s %s %v: not exported (want %v)", inst, e.metric, e.attrs, e.value))
		case len(ps) > 1:
			bad = append(bad, fmt.Sprintf("%s %s %v: %d series", inst, e.metric, e.attrs, len(ps)))
		case !sameFloat(ps[0].value, e.value):
			bad = append(bad, fmt.Sprintf("%s %s %v: exported %v, tables %v", inst, e.metric, e.attrs, ps[0].value, e.value))
		}
	}
	return bad
}

// waitForTables reads the Collector's metrics file until every instance's
// latest points agree with its expectations, and returns those points; it
// fails the test with the differences if 30 s pass first.
func waitForTables(t *testing.T, path string, want map[string][]expect) map[string]point {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, err := loadMetrics(path)
		if err != nil {
			t.Fatal(err)
		}
		got := latest(points(ms))
		var bad []string
		for _, inst := range slices.Sorted(maps.Keys(want)) {
			bad = append(bad, mismatches(got, inst, want[inst])...)
		}
		if len(bad) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			if len(bad) > 20 {
				bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
			}
			t.Fatalf("after 30 s, %s (%d exports) does not match the tables:\n%s", path, len(ms), strings.Join(bad, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkShape checks what every exported point of an instance must be,
// whatever the values: the resource, the scope, the names, cumulative
// monotonic sums with a start time, histograms whose buckets add up.
func checkShape(t *testing.T, got map[string]point, inst string) {
	t.Helper()
	names := map[string]bool{}
	histograms := 0
	for _, p := range got {
		if p.instance() != inst {
			continue
		}
		names[p.metric] = true
		for k, v := range map[string]string{"service.name": serviceName, "deployment.environment.name": "e2e", "telemetry.sdk.language": "go"} {
			if p.resource[k] != v {
				t.Fatalf("%s: resource %s = %q, want %q (resource %v)", p.metric, k, p.resource[k], v, p.resource)
			}
		}
		if p.resource["pfs.timer.wait"] == "" || p.resource["pfs.timer.wait.frequency"] == "" {
			t.Fatalf("%s: resource without the wait timer (pfs.timer.wait): %v", p.metric, p.resource)
		}
		if p.scope != bridge.ScopeName {
			t.Fatalf("%s: scope %q, want %q", p.metric, p.scope, bridge.ScopeName)
		}
		if !strings.HasPrefix(p.metric, "pfs.") {
			t.Errorf("metric %s: not under pfs.", p.metric)
		}
		switch p.kind {
		case pmetric.MetricTypeSum:
			if !p.monotonic || !p.cumul || p.start.IsZero() || p.start.After(p.time) || p.value < 0 {
				t.Errorf("%s %v: monotonic %v, cumulative %v, start %v, time %v, value %v",
					p.metric, p.attrs, p.monotonic, p.cumul, p.start, p.time, p.value)
			}
		case pmetric.MetricTypeHistogram:
			histograms++
			var n uint64
			for _, c := range p.buckets {
				n += c
			}
			if len(p.buckets) != len(p.bounds)+1 || n != p.count || !slices.IsSorted(p.bounds) {
				t.Errorf("histogram %s %v: %d bounds %v, %d buckets adding up to %d, count %d",
					p.metric, p.attrs, len(p.bounds), p.bounds, len(p.buckets), n, p.count)
			}
		}
	}
	for _, want := range []string{
		// The request threads have ended, so the by_thread tables are
		// empty; global_status's counters are all zero (nothing lost), and
		// zero rows are left out.
		"pfs.events_waits.count", "pfs.events_waits.time", "pfs.events_waits.time.max",
		"pfs.events_waits.by_user.count", "pfs.events_waits.by_instance.count",
		"pfs.events_statements.count", "pfs.events_statements.time", "pfs.events_statements.rows_sent",
		"pfs.events_statements.by_digest.count", "pfs.events_statements.by_digest.time",
		"pfs.events_statements.by_digest.time.p95", "pfs.events_statements.by_account.count",
		"pfs.memory.alloc.count", "pfs.memory.used.bytes", "pfs.memory.by_user.used.bytes.high",
		"pfs.accounts.connections",
	} {
		if !names[want] {
			t.Errorf("instance %s: no %s among the %d metrics exported", inst, want, len(names))
		}
	}
	t.Logf("instance %s: %d metrics", inst, len(names))
	if histograms == 0 {
		t.Logf("instance %s: no histograms exported yet (the statements' buckets are not bridged)", inst)
	}
}

// The workload's own arithmetic, independent of the tables: what each
// instance must have counted after n requests.
func checkWorkload(t *testing.T, got map[string]point, inst string, n int) {
	t.Helper()
	for _, c := range []struct {
		metric string
		attrs  map[string]string
		want   float64
	}{
		{"pfs.events_waits.count", map[string]string{"pfs.event_name": workload.MutexName}, float64(n)},
		{"pfs.events_statements.by_digest.count", map[string]string{"db.query.summary": workload.SelectDigest}, float64(n)},
		{"pfs.events_statements.by_digest.rows_sent", map[string]string{"db.query.summary": workload.SelectDigest}, float64(n)},
		{"pfs.events_statements.by_digest.count", map[string]string{"db.query.summary": workload.InsertDigest}, float64((n + 3) / 4)},
		{"pfs.memory.alloc.count", map[string]string{"pfs.event_name": workload.MemoryName}, float64(n)},
		{"pfs.memory.alloc.bytes", map[string]string{"pfs.event_name": workload.MemoryName}, float64(n * workload.BufferSize)},
		{"pfs.memory.used.bytes", map[string]string{"pfs.event_name": workload.MemoryName}, float64(workload.Held * workload.BufferSize)},
	} {
		ps := find(got, inst, c.metric, c.attrs)
		if len(ps) != 1 || ps[0].value != c.want {
			t.Errorf("instance %s after %d requests: %s %v = %v, want %v", inst, n, c.metric, c.attrs, ps, c.want)
		}
	}
}

// TestCollectorExport sends two service instances' tables and history
// through a real Collector over OTLP, and checks what its file exporter
// wrote against the tables (and the workload's own counts): values,
// histograms, exemplars, spans; then what Prometheus scraped from its
// prometheus exporter: each instance's value, and a digest summed across
// both.
func TestCollectorExport(t *testing.T) {
	col := startCollector(t, otelcolBinary(t), "", "", "")
	prom := startPrometheus(t, prometheusBinary(t), col.prom)

	requests := map[string]int{"a": 40, "b": 25}
	// Instance a serves its requests inside a span of the caller's (a
	// remote parent: an upstream service's); instance b outside any.
	parents := map[string]trace.SpanContext{"a": trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xe2, 0xe0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		SpanID:  trace.SpanID{0xe2, 0xe0, 1, 2, 3, 4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})}
	insts := map[string]*instance{}
	for id, n := range requests {
		in := newInstance(t, id, col.otlp, 200*time.Millisecond)
		insts[id] = in
		in.run(trace.ContextWithRemoteSpanContext(context.Background(), parents[id]), t, n)
	}
	want := map[string][]expect{}
	for id, in := range insts {
		in.flush(t) // the workload has stopped: the tables no longer move
		e, err := expectations(in.svc.Schema())
		if err != nil {
			t.Fatal(err)
		}
		want[id] = e
	}
	got := waitForTables(t, filepath.Join(col.out, "metrics.jsonl"), want)
	for id, n := range requests {
		checkShape(t, got, id)
		checkWorkload(t, got, id, n)
	}

	for id, in := range insts {
		checkHistograms(t, got, id, in.svc.Schema(), parents[id])
	}
	checkSpans(t, filepath.Join(col.out, "traces.jsonl"), requests, parents)

	// Prometheus: one series per instance, and the fleet's sum by digest.
	const perInstance = `pfs_events_statements_by_digest_count_total{db_query_summary="` + workload.SelectDigest + `"}`
	prom.waitQuery(t, perInstance, func(ss []sample) error {
		byInst := map[string]float64{}
		for _, s := range ss {
			byInst[s.labels["exported_instance"]] = s.value
			if s.labels["exported_job"] != serviceName {
				return fmt.Errorf("exported_job %q, want %q: %v", s.labels["exported_job"], serviceName, s.labels)
			}
		}
		for id, n := range requests {
			if byInst[id] != float64(n) {
				return fmt.Errorf("instance %s: %v, want %d (%v)", id, byInst[id], n, ss)
			}
		}
		if len(ss) != len(requests) {
			return fmt.Errorf("%d series, want %d: %v", len(ss), len(requests), ss)
		}
		return nil
	})
	const fleet = `sum by (db_query_summary) (` + perInstance + `)`
	prom.waitQuery(t, fleet, func(ss []sample) error {
		if len(ss) != 1 || ss[0].value != float64(requests["a"]+requests["b"]) {
			return fmt.Errorf("%v, want one series of %d", ss, requests["a"]+requests["b"])
		}
		return nil
	})
	// A time in seconds, as the tables have it in picoseconds.
	wantTime := find(got, "a", "pfs.events_waits.time", map[string]string{"pfs.event_name": workload.MutexName})
	if len(wantTime) != 1 {
		t.Fatalf("instance a: %d mutex time series", len(wantTime))
	}
	prom.waitQuery(t, `pfs_events_waits_time_seconds_total{exported_instance="a",pfs_event_name="`+workload.MutexName+`"}`,
		func(ss []sample) error {
			if len(ss) != 1 || !sameFloat(ss[0].value, wantTime[0].value) {
				return fmt.Errorf("%v, want %v", ss, wantTime[0].value)
			}
			return nil
		})
}

// checkHistograms checks an instance's digest histograms against
// events_statements_histogram_by_digest: the engine's 450 buckets, each
// counted in the explicit bucket that holds its upper bound; the count and
// sum against the summary; and, for an instance whose requests ran inside a
// span, the exemplar (the query sample) pointing at that span.
func checkHistograms(t *testing.T, got map[string]point, inst string, s *pfscore.Schema, parent trace.SpanContext) {
	t.Helper()
	digests, err := rows(s, "events_statements_summary_by_digest")
	if err != nil {
		t.Fatal(err)
	}
	engine := pfscore.StatementHistogramBounds()
	for _, r := range digests {
		schema, _ := r["SCHEMA_NAME"].(string)
		dg, text := r["DIGEST"].(string), r["DIGEST_TEXT"].(string)
		ps := find(got, inst, "pfs.events_statements.by_digest.duration", map[string]string{"pfs.digest": dg})
		if len(ps) != 1 {
			t.Errorf("instance %s, %s: %d histogram points", inst, text, len(ps))
			continue
		}
		p := ps[0]
		b, ok := s.DigestBuckets(schema, dg)
		counts := b.Counts
		if !ok {
			t.Fatalf("instance %s, %s: no histogram in the table", inst, text)
		}
		want := make([]uint64, len(p.bounds)+1)
		var total uint64
		for i, c := range counts {
			up := bridge.Seconds(engine[min(i+1, len(engine)-1)])
			j := 0
			for j < len(p.bounds) && up > p.bounds[j] {
				j++
			}
			want[j] += c
			total += c
		}
		if p.kind != pmetric.MetricTypeHistogram || !p.cumul || p.start.IsZero() || p.unit != "s" {
			t.Errorf("instance %s, %s: kind %v, cumulative %v, start %v, unit %q", inst, text, p.kind, p.cumul, p.start, p.unit)
		}
		if !slices.Equal(p.bounds, bridge.DefaultStatementBuckets) || !slices.Equal(p.buckets, want) {
			t.Errorf("instance %s, %s: bounds %v buckets %v; want bounds %v buckets %v (from the engine's)",
				inst, text, p.bounds, p.buckets, bridge.DefaultStatementBuckets, want)
		}
		if p.count != total || p.count != num(r["COUNT_STAR"]) || !sameFloat(p.sum, bridge.Seconds(num(r["SUM_TIMER_WAIT"]))) {
			t.Errorf("instance %s, %s: count %d sum %v; engine buckets %d, COUNT_STAR %d, SUM_TIMER_WAIT %v s",
				inst, text, p.count, p.sum, total, num(r["COUNT_STAR"]), bridge.Seconds(num(r["SUM_TIMER_WAIT"])))
		}
		switch {
		case !parent.IsValid():
			if len(p.exemplars) != 0 {
				t.Errorf("instance %s, %s: exemplars %+v, but no request ran in a span", inst, text, p.exemplars)
			}
		case len(p.exemplars) != 1 || p.exemplars[0].traceID != parent.TraceID().String() ||
			p.exemplars[0].spanID != parent.SpanID().String() || p.exemplars[0].value <= 0:
			t.Errorf("instance %s, %s: exemplars %+v, want one in span %s of trace %s",
				inst, text, p.exemplars, parent.SpanID(), parent.TraceID())
		}
	}
}

// checkSpans waits until the Collector's traces file holds every
// instance's spans, then checks them: a span per request (RouteDigest),
// placed in the trace of the span the request ran in (or a root), with its
// mutex wait as an event; a span per SQL statement, the child of its
// request's span.
func checkSpans(t *testing.T, path string, requests map[string]int, parents map[string]trace.SpanContext) {
	t.Helper()
	total := 0
	for _, n := range requests {
		total += n + n + (n+3)/4
	}
	var all []span
	deadline := time.Now().Add(30 * time.Second)
	for {
		trs, err := loadTraces(path)
		if err != nil {
			t.Fatal(err)
		}
		if all = spans(trs); len(all) >= total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans in %s after 30 s, want %d", len(all), path, total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for inst, n := range requests {
		byID := map[string]span{}
		names := map[string]int{}
		for _, sp := range all {
			if sp.instance() == inst {
				byID[sp.spanID] = sp
				names[sp.name]++
			}
		}
		want := map[string]int{workload.RouteDigest: n, workload.SelectDigest: n, workload.InsertDigest: (n + 3) / 4}
		if !maps.Equal(names, want) {
			t.Errorf("instance %s: spans by name %v, want %v", inst, names, want)
		}
		parent := parents[inst]
		for _, sp := range byID {
			if sp.resource["service.name"] != serviceName || !sp.start.Before(sp.end) {
				t.Errorf("instance %s: span %s: resource %v, %v to %v", inst, sp.name, sp.resource, sp.start, sp.end)
			}
			switch sp.name {
			case workload.RouteDigest:
				if parent.IsValid() && (sp.traceID != parent.TraceID().String() || sp.parent != parent.SpanID().String()) {
					t.Errorf("instance %s: request span in trace %s under %s, want trace %s under %s",
						inst, sp.traceID, sp.parent, parent.TraceID(), parent.SpanID())
				}
				if !parent.IsValid() && sp.parent != "" {
					t.Errorf("instance %s: request span under %s, want a root", inst, sp.parent)
				}
				if !slices.Contains(sp.events, workload.MutexName) {
					t.Errorf("instance %s: request span's events %v, want %s", inst, sp.events, workload.MutexName)
				}
			default:
				req, ok := byID[sp.parent]
				if !ok || req.name != workload.RouteDigest || req.traceID != sp.traceID {
					t.Errorf("instance %s: span %s (trace %s) under %s, want its request's span", inst, sp.name, sp.traceID, sp.parent)
				}
				if sp.attrs["db.query.summary"] != sp.name || sp.start.Before(req.start) || sp.end.After(req.end) {
					t.Errorf("instance %s: span %s: db.query.summary %q, %v to %v, its request %v to %v",
						inst, sp.name, sp.attrs["db.query.summary"], sp.start, sp.end, req.start, req.end)
				}
			}
		}
	}
}
