package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/e2e/workload"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
		// Every exported string is UTF-8: a byte that is not becomes U+FFFD.
		a := map[string]string{"pfs.digest_text": strings.ToValidUTF8(r["DIGEST_TEXT"].(string), "\uFFFD"), "pfs.digest": r["DIGEST"].(string)}
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

// The conventions' histograms the bridge exports beside its pfs.* metrics.
const (
	dbDuration   = "db.client.operation.duration"
	httpDuration = "http.server.request.duration"
)

// defaultMetrics are metrics the default export (bridge.DefaultTables) must
// hold for the workload: the global summaries, the digests, their
// histograms and the conventions' histograms. (The request threads have
// ended; global_status's counters are all zero, nothing lost, and zero
// rows are left out.)
var defaultMetrics = []string{
	"pfs.events_waits.count", "pfs.events_waits.time", "pfs.events_waits.time.max",
	"pfs.events_stages.count", "pfs.events_stages.time",
	"pfs.events_statements.count", "pfs.events_statements.time", "pfs.events_statements.rows_sent",
	"pfs.events_statements.by_digest.count", "pfs.events_statements.by_digest.time",
	"pfs.events_statements.by_digest.duration",
	"pfs.memory.alloc.count", "pfs.memory.used.bytes",
	dbDuration, httpDuration,
}

// optInMetric reports whether a metric is one the default export leaves
// out: the summaries by thread, account, user, host and instance, the
// actor tables, and the digests' quantile gauges (the histogram carries
// them).
func optInMetric(name string) bool {
	for _, v := range []string{".by_thread.", ".by_account.", ".by_user.", ".by_host.", ".by_instance."} {
		if strings.Contains(name, v) {
			return true
		}
	}
	return strings.HasPrefix(name, "pfs.accounts.") || strings.HasPrefix(name, "pfs.users.") || strings.HasPrefix(name, "pfs.hosts.") ||
		strings.HasPrefix(name, "pfs.events_statements.by_digest.time.p")
}

// checkShape checks what every exported point of an instance must be,
// whatever the values: the resource, the scope, the names (the default
// export's, none of the opt-in tables'), cumulative monotonic sums with a
// start time, histograms whose buckets add up, valid attribute keys.
func checkShape(t *testing.T, got map[string]point, inst string) {
	t.Helper()
	names := map[string]bool{}
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
		if !strings.HasPrefix(p.metric, "pfs.") && p.metric != dbDuration && p.metric != httpDuration {
			t.Errorf("metric %s: neither under pfs. nor a conventions' metric", p.metric)
		}
		if optInMetric(p.metric) {
			t.Errorf("metric %s %v: exported by default, but its table is opt-in (bridge.DefaultTables)", p.metric, p.attrs)
		}
		for _, k := range []string{"thread.id", "pfs.user", "pfs.host", "pfs.object_instance"} {
			if _, ok := p.attrs[k]; ok {
				t.Errorf("metric %s %v: attribute %s in the default export", p.metric, p.attrs, k)
			}
		}
		switch p.kind {
		case pmetric.MetricTypeSum:
			if !p.monotonic || !p.cumul || p.start.IsZero() || p.start.After(p.time) || p.value < 0 {
				t.Errorf("%s %v: monotonic %v, cumulative %v, start %v, time %v, value %v",
					p.metric, p.attrs, p.monotonic, p.cumul, p.start, p.time, p.value)
			}
		case pmetric.MetricTypeHistogram:
			var n uint64
			for _, c := range p.buckets {
				n += c
			}
			if len(p.buckets) != len(p.bounds)+1 || n != p.count || !slices.IsSorted(p.bounds) || !p.cumul || p.start.IsZero() {
				t.Errorf("histogram %s %v: %d bounds %v, %d buckets adding up to %d, count %d, cumulative %v, start %v",
					p.metric, p.attrs, len(p.bounds), p.bounds, len(p.buckets), n, p.count, p.cumul, p.start)
			}
		}
	}
	for _, want := range defaultMetrics {
		if !names[want] {
			t.Errorf("instance %s: no %s among the %d metrics exported", inst, want, len(names))
		}
	}
	t.Logf("instance %s: %d metrics", inst, len(names))
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
		{"pfs.events_stages.count", map[string]string{"pfs.event_name": workload.StageName}, float64(n)},
		{"pfs.events_statements.count", map[string]string{"pfs.event_name": workload.RequestName}, float64(n)},
		{"pfs.events_statements.by_digest.count", map[string]string{"pfs.digest_text": workload.RouteDigest}, float64(n)},
		{"pfs.events_statements.by_digest.count", map[string]string{"pfs.digest_text": workload.SelectDigest}, float64(n)},
		{"pfs.events_statements.by_digest.rows_sent", map[string]string{"pfs.digest_text": workload.SelectDigest}, float64(n)},
		{"pfs.events_statements.by_digest.count", map[string]string{"pfs.digest_text": workload.InsertDigest}, float64((n + 3) / 4)},
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

// checkConventions checks the attributes of the digests' series by the
// semantic conventions (a SQL digest's db.*, a route's http.*, never the
// other's), and that db.client.operation.duration and
// http.server.request.duration are the digests' histograms added up by
// those attributes.
func checkConventions(t *testing.T, got map[string]point, inst string) {
	t.Helper()
	sqlAttrs := map[string]map[string]string{
		workload.SelectDigest: {"db.system.name": workload.DBSystem, "db.query.summary": workload.SelectSummary,
			"db.operation.name": "SELECT", "db.collection.name": "kv"},
		workload.InsertDigest: {"db.system.name": workload.DBSystem, "db.query.summary": workload.InsertSummary,
			"db.operation.name": "INSERT", "db.collection.name": "kv"},
	}
	routeAttrs := map[string]string{"http.request.method": workload.Method, "http.route": workload.Route}
	for _, p := range got {
		if p.instance() != inst || !strings.HasPrefix(p.metric, "pfs.events_statements.by_digest.") {
			continue
		}
		text := p.attrs["pfs.digest_text"]
		want, isSQL := sqlAttrs[text]
		if text == workload.RouteDigest {
			want = routeAttrs
		}
		if want == nil {
			t.Errorf("instance %s: %s %v: a digest the workload does not run", inst, p.metric, p.attrs)
			continue
		}
		for k, v := range want {
			if p.attrs[k] != v {
				t.Errorf("instance %s: %s of %q: %s = %q, want %q (attributes %v)", inst, p.metric, text, k, p.attrs[k], v, p.attrs)
			}
		}
		for k := range p.attrs {
			if isSQL && strings.HasPrefix(k, "http.") || !isSQL && strings.HasPrefix(k, "db.") {
				t.Errorf("instance %s: %s of %q has %s: %v", inst, p.metric, text, k, p.attrs)
			}
		}
	}
	// Each conventions' series is the one digest of its attributes here.
	for _, c := range []struct {
		metric, digest string
		attrs          map[string]string
	}{
		{dbDuration, workload.SelectDigest, sqlAttrs[workload.SelectDigest]},
		{dbDuration, workload.InsertDigest, sqlAttrs[workload.InsertDigest]},
		{httpDuration, workload.RouteDigest, routeAttrs},
	} {
		conv := find(got, inst, c.metric, c.attrs)
		dg := find(got, inst, "pfs.events_statements.by_digest.duration", map[string]string{"pfs.digest_text": c.digest})
		if len(conv) != 1 || len(dg) != 1 {
			t.Errorf("instance %s: %d %s points %v, %d digest histograms of %q", inst, len(conv), c.metric, c.attrs, len(dg), c.digest)
			continue
		}
		if p, q := conv[0], dg[0]; p.unit != "s" || p.count != q.count || !sameFloat(p.sum, q.sum) ||
			!slices.Equal(p.bounds, q.bounds) || !slices.Equal(p.buckets, q.buckets) {
			t.Errorf("instance %s: %s %v: count %d sum %v buckets %v; the digest's: count %d sum %v buckets %v",
				inst, c.metric, p.attrs, p.count, p.sum, p.buckets, q.count, q.sum, q.buckets)
		}
		for k := range conv[0].attrs {
			if !slices.Contains(slices.Collect(maps.Keys(c.attrs)), k) && k != "db.namespace" {
				t.Errorf("instance %s: %s has attribute %s beyond the conventions': %v", inst, c.metric, k, conv[0].attrs)
			}
		}
	}
}

// TestCollectorExport sends two service instances' default export (tables
// and captured traces) through a real Collector over OTLP, and checks what
// its file exporter wrote against the tables (and the workload's own
// counts): values, the default tables only, histograms, exemplars, the
// conventions' attributes and histograms, spans; then what Prometheus
// scraped from its prometheus exporter: each instance's value, a digest
// summed across both, and the conventions' histograms summed.
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
		checkConventions(t, got, id)
	}

	for id, in := range insts {
		checkHistograms(t, got, id, in.svc.Schema(), parents[id])
	}
	checkSpans(t, filepath.Join(col.out, "traces.jsonl"), requests, parents)

	// Prometheus: one series per instance, and the fleet's sum by digest.
	const perInstance = `pfs_events_statements_by_digest_count_total{pfs_digest_text="` + workload.SelectDigest + `"}`
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
	const fleet = `sum by (pfs_digest_text) (` + perInstance + `)`
	prom.waitQuery(t, fleet, func(ss []sample) error {
		if len(ss) != 1 || ss[0].value != float64(requests["a"]+requests["b"]) {
			return fmt.Errorf("%v, want one series of %d", ss, requests["a"]+requests["b"])
		}
		return nil
	})
	// The conventions' histograms, summed across the fleet by their
	// attributes, as a dashboard does.
	for q, want := range map[string]float64{
		`sum by (db_system_name, db_query_summary, db_operation_name) (db_client_operation_duration_seconds_count{db_query_summary="` +
			workload.SelectSummary + `", db_system_name="` + workload.DBSystem + `", db_operation_name="SELECT"})`: float64(requests["a"] + requests["b"]),
		`sum by (http_request_method, http_route) (http_server_request_duration_seconds_count{http_request_method="GET", http_route="` +
			workload.Route + `"})`: float64(requests["a"] + requests["b"]),
	} {
		prom.waitQuery(t, q, func(ss []sample) error {
			if len(ss) != 1 || ss[0].value != want {
				return fmt.Errorf("%v, want one series of %v", ss, want)
			}
			return nil
		})
	}
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
// instance's spans, then checks them, request by request: the request a
// SERVER span named by its route with the HTTP conventions' attributes,
// placed in the trace of the span the request ran in (or a root), with its
// mutex wait as an event; its stage a child of it; each SQL statement a
// CLIENT span named by its db.query.summary, a child of the stage, with
// the database conventions' attributes. No span twice, none left out.
func checkSpans(t *testing.T, path string, requests map[string]int, parents map[string]trace.SpanContext) {
	t.Helper()
	total := 0
	for _, n := range requests {
		total += n + n + n + (n+3)/4 // request, stage, SELECT, INSERT
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
			if sp.instance() != inst {
				continue
			}
			if _, dup := byID[sp.spanID]; dup {
				t.Errorf("instance %s: span %s (%s) sent twice", inst, sp.spanID, sp.name)
			}
			byID[sp.spanID] = sp
			names[sp.name]++
		}
		want := map[string]int{workload.RouteDigest: n, workload.StageName: n,
			workload.SelectSummary: n, workload.InsertSummary: (n + 3) / 4}
		if !maps.Equal(names, want) {
			t.Errorf("instance %s: spans by name %v, want %v", inst, names, want)
		}
		parent := parents[inst]
		for _, sp := range byID {
			if sp.resource["service.name"] != serviceName || !sp.start.Before(sp.end) {
				t.Errorf("instance %s: span %s: resource %v, %v to %v", inst, sp.name, sp.resource, sp.start, sp.end)
			}
			up, ok := byID[sp.parent]
			within := ok && up.traceID == sp.traceID && !sp.start.Before(up.start) && !sp.end.After(up.end)
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
				if err := httpServerSpan(sp, workload.Method, workload.Route, 200); err != nil {
					t.Errorf("instance %s: %v", inst, err)
				}
			case workload.StageName:
				if !within || up.name != workload.RouteDigest {
					t.Errorf("instance %s: stage span (trace %s) under %s (%s), want a child of its request's span", inst, sp.traceID, sp.parent, up.name)
				}
			default:
				if !within || up.name != workload.StageName {
					t.Errorf("instance %s: span %s (trace %s) under %s (%s), want a child of its request's stage", inst, sp.name, sp.traceID, sp.parent, up.name)
				}
				op, _, _ := strings.Cut(sp.name, " ")
				if err := dbClientSpan(sp, workload.DBSystem, op, "kv"); err != nil {
					t.Errorf("instance %s: %v", inst, err)
				}
			}
		}
	}
}

// httpServerSpan checks a request's span against the HTTP server span of
// the semantic conventions: kind SERVER, named "METHOD ROUTE", with
// http.request.method, http.route, http.response.status_code, url.path and
// url.scheme (required or, for http.route and url.*, conditionally
// required when known), and a 5xx an error with error.type its code.
func httpServerSpan(sp span, method, route string, status int) error {
	code := strconv.Itoa(status)
	var bad []string
	if sp.kind != ptrace.SpanKindServer {
		bad = append(bad, "kind "+sp.kind.String())
	}
	if want := method + " " + route; sp.name != want {
		bad = append(bad, fmt.Sprintf("name %q, want %q", sp.name, want))
	}
	for k, v := range map[string]string{"http.request.method": method, "http.route": route, "http.response.status_code": code, "url.scheme": "http"} {
		if sp.attrs[k] != v {
			bad = append(bad, fmt.Sprintf("%s=%q, want %q", k, sp.attrs[k], v))
		}
	}
	if p := sp.attrs["url.path"]; !strings.HasPrefix(p, "/") || strings.Contains(p, "?") {
		bad = append(bad, fmt.Sprintf("url.path=%q", p))
	}
	if status >= 500 {
		if sp.status != ptrace.StatusCodeError || sp.attrs["error.type"] != code {
			bad = append(bad, fmt.Sprintf("status %v, error.type %q; want an error of type %s", sp.status, sp.attrs["error.type"], code))
		}
	} else if sp.status == ptrace.StatusCodeError || sp.attrs["error.type"] != "" {
		bad = append(bad, fmt.Sprintf("status %v, error.type %q: a %d is no server error", sp.status, sp.attrs["error.type"], status))
	}
	for k := range sp.attrs {
		if strings.HasPrefix(k, "db.") {
			bad = append(bad, "has "+k)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("server span %s %q: %s (attributes %v)", sp.spanID, sp.name, strings.Join(bad, "; "), sp.attrs)
	}
	return nil
}

// dbClientSpan checks a SQL statement's span against the database client
// span of the semantic conventions: kind CLIENT, db.system.name (required),
// db.query.summary and the span's name from it, db.operation.name and
// db.collection.name (conditionally required: known here), and otelpfs's
// own pfs.digest and pfs.digest_text; no http.*.
func dbClientSpan(sp span, system, operation, collection string) error {
	var bad []string
	if sp.kind != ptrace.SpanKindClient {
		bad = append(bad, "kind "+sp.kind.String())
	}
	for k, v := range map[string]string{"db.system.name": system, "db.query.summary": sp.name,
		"db.operation.name": operation, "db.collection.name": collection} {
		if sp.attrs[k] != v {
			bad = append(bad, fmt.Sprintf("%s=%q, want %q", k, sp.attrs[k], v))
		}
	}
	if sp.name != operation+" "+collection {
		bad = append(bad, fmt.Sprintf("name %q, want %q", sp.name, operation+" "+collection))
	}
	if sp.attrs["pfs.digest"] == "" || sp.attrs["pfs.digest_text"] == "" {
		bad = append(bad, "no pfs.digest or pfs.digest_text")
	}
	for k := range sp.attrs {
		if strings.HasPrefix(k, "http.") || strings.HasPrefix(k, "url.") {
			bad = append(bad, "has "+k)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("SQL span %s %q: %s (attributes %v)", sp.spanID, sp.name, strings.Join(bad, "; "), sp.attrs)
	}
	return nil
}
