package e2e

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/e2e/workload"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// demoEmptyToday names the panels the demo (examples/demo) may leave
// empty, with the reason. TestDashboard logs them and fails on any other
// empty panel. The demo serves SQL, HTTP routes, stages, waits and memory,
// so it fills every panel but the losses' (emptyWhenHealthy).
var demoEmptyToday = map[string]string{}

// demoSendsSpans says whether the demo sends spans: exporter.StartOTLP
// captures every sampled request's tree (its load's requests carry a
// sampled traceparent), so the test requires them at the Collector.
const demoSendsSpans = true

// emptyWhenHealthy names the panels of losses: a service that loses
// nothing leaves them empty (a counter that never moved is not exported).
// The demo loses nothing; the probe loses one digest on purpose.
var emptyWhenHealthy = map[string]bool{
	"Lost per interval": true,
	"Lost since start":  true,
}

// rateInterval is what $__rate_interval becomes: Grafana makes it at least
// four scrape intervals (1 s here), and the test's services export every
// second or less.
const rateInterval = "15s"

// TestDashboardModel checks the shipped dashboard against what Grafana
// asks of a provisioned one: a uid, unique panel ids, a query in every
// panel, data sources that the provisioning file defines (exemplars
// linking to a trace data source), variables that exist, no overlapping
// panels; and the dashboard provider file. Broken copies must fail, so
// that passing means something.
func TestDashboardModel(t *testing.T) {
	d, err := loadDashboard(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var ds provisionedDatasources
	if err := readYAML(datasourcesFile, &ds); err != nil {
		t.Fatal(err)
	}
	if ds.APIVersion != 1 || len(ds.Datasources) == 0 {
		t.Fatalf("%s: apiVersion %d, %d data sources", datasourcesFile, ds.APIVersion, len(ds.Datasources))
	}
	for _, err := range checkDashboard(d, ds.Datasources) {
		t.Errorf("%s: %v", dashboardFile, err)
	}
	var prov provisionedDashboards
	if err := readYAML(providersFile, &prov); err != nil {
		t.Fatal(err)
	}
	if prov.APIVersion != 1 || len(prov.Providers) != 1 || prov.Providers[0].Type != "file" || prov.Providers[0].Options.Path == "" {
		t.Errorf("%s: %+v, want one file provider with a path", providersFile, prov)
	}
	titles := map[string]bool{}
	for _, p := range d.queryPanels() {
		if titles[p.Title] {
			t.Errorf("two panels are titled %q (the e2e test names panels by title)", p.Title)
		}
		titles[p.Title] = true
	}
	for _, m := range []map[string]bool{emptyWhenHealthy, boolSet(demoEmptyToday)} {
		for title := range m {
			if !titles[title] {
				t.Errorf("the lists of panels allowed to be empty name %q, which the dashboard no longer has", title)
			}
		}
	}

	// The controls: each breakage is found, and named.
	for _, c := range []struct {
		name   string
		mutate func(d *dashboard)
		want   string
	}{
		{"duplicate id", func(d *dashboard) { d.Panels[2].ID = d.Panels[1].ID }, "is also panel"},
		{"no query", func(d *dashboard) { d.Panels[1].Targets = nil }, "no query"},
		{"unknown data source", func(d *dashboard) { d.Panels[1].Targets[0].Datasource = &dsRef{Type: "prometheus", UID: "nope"} }, "not provisioned"},
		{"unknown variable", func(d *dashboard) { d.Panels[1].Targets[0].Expr += ` or up{job="$nope"}` }, "$nope"},
		{"no uid", func(d *dashboard) { d.UID = "" }, "uid"},
		{"overlap", func(d *dashboard) { d.Panels[2].GridPos = d.Panels[1].GridPos }, "overlaps"},
	} {
		broken, err := loadDashboard(dashboardFile)
		if err != nil {
			t.Fatal(err)
		}
		c.mutate(broken)
		errs := checkDashboard(broken, ds.Datasources)
		if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), c.want) }) {
			t.Errorf("a dashboard with %s: %v, want an error with %q", c.name, errs, c.want)
		}
	}
	broken := ds.Datasources[0]
	broken.JSONData.ExemplarTraceIDDestinations = nil
	if errs := checkDashboard(d, append([]provisionedDatasource{broken}, ds.Datasources[1:]...)); !slices.ContainsFunc(errs, func(e error) bool {
		return strings.Contains(e.Error(), "links them to no trace data source")
	}) {
		t.Errorf("data sources without exemplar links: %v, want an error", errs)
	}
}

func boolSet(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// probeJob is the service.name of the probe, the in-process service that
// makes the data the demo does not make yet.
const probeJob = "otelpfs-dashboard-probe"

// A source is a service the dashboard is shown for: $job is its
// service.name.
type source struct {
	job        string
	allowEmpty map[string]string // panel title -> why it may be empty
}

// TestDashboard runs the demo (built as a user builds it, with only
// -duration, -addr and the OTEL_* environment) against a real Collector
// whose prometheus exporter Debian's Prometheus scrapes, and shows the
// dashboard for it as Grafana would: every query variable answers, every
// panel's every query returns a series with a number. It logs exactly
// which panels are empty; it fails on those today's demo must fill (all
// but demoEmptyToday and emptyWhenHealthy), and if the demo's metrics do
// not arrive or it does not exit 0.
//
// Beside the demo runs a probe: package workload's service (routes, SQL on
// SQLite, memory, a mutex) plus a stage and one lost digest, in-process,
// with each request inside a caller's span. For it every panel must show
// data and the values must be its own (the routes in the route panels,
// the SQL in the SQL panels, its digest lost once), and the latency
// panels' exemplars must link to the caller's trace: so every query is
// proven against real data even where the demo makes none yet. Its spans,
// and the demo's if demoSendsSpans, must reach the Collector.
func TestDashboard(t *testing.T) {
	d, err := loadDashboard(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var ds provisionedDatasources
	if err := readYAML(datasourcesFile, &ds); err != nil {
		t.Fatal(err)
	}
	otelcol, promBin := otelcolBinary(t), prometheusBinary(t)
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo")
	if out, err := exec.Command("go", "build", "-o", demo, "github.com/otelpfs/otelpfs/examples/demo").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/demo: %v\n%s", err, out)
	}

	// The test's Collector, its prometheus exporter writing OpenMetrics:
	// exemplars are only in that format.
	otlp, promAddr, out := freeAddr(t), freeAddr(t), t.TempDir()
	cfg, err := filepath.Abs(filepath.Join("testdata", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	col := start(t, out, "otelcol", collectorEnv(otlp, promAddr, out), otelcol,
		"--config="+cfg, "--config=yaml:exporters::prometheus::enable_open_metrics: true")
	col.waitTCP(otlp)
	col.waitTCP(promAddr)
	prom := startPrometheusWith(t, promBin, promAddr, "--enable-feature=exemplar-storage")
	began := time.Now()

	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xda, 0x5b, 0x0a, 0x4d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		SpanID:  trace.SpanID{0xda, 0x5b, 1, 2, 3, 4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})
	stopProbe := startProbe(t, otlp, parent)
	defer stopProbe()

	const demoFor = 12 * time.Second
	dp := start(t, dir, "demo", []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + otlp, "OTEL_METRIC_EXPORT_INTERVAL=1000",
	}, demo, "-duration", demoFor.String(), "-addr", "127.0.0.1:0", "-sql-addr", "")

	sources := []source{{job: "otelpfs-demo", allowEmpty: demoEmptyToday}, {job: probeJob}}
	// A panel's result is the first one with data, else the last: until
	// every panel that must have data has it, or the demo has stopped and
	// the rate interval has passed (rates need the demo's last increases
	// inside it).
	results := map[string]map[string]panelResult{} // job -> title -> result
	deadline := time.Now().Add(demoFor + 15*time.Second)
	for {
		waiting := 0
		for _, src := range sources {
			r, err := evalPanels(prom, d, src.job, began)
			if err != nil {
				t.Fatal(err) // a query Prometheus refuses is always a bug
			}
			if results[src.job] == nil {
				results[src.job] = r
			}
			for title, pr := range r {
				if !results[src.job][title].ok() {
					results[src.job][title] = pr
				}
				if !pr.ok() && !results[src.job][title].ok() && required(src, title) {
					waiting++
				}
			}
		}
		if waiting == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	for _, src := range sources {
		report(t, src, results[src.job])
	}
	checkProbeValues(t, results[probeJob])
	checkVariables(t, prom, d, began)
	checkExemplars(t, prom, d, ds.Datasources, parent, began)

	select {
	case <-dp.done:
	case <-time.After(demoFor + 20*time.Second):
		t.Fatalf("the demo did not exit after -duration %s:\n%s", demoFor, dp.output())
	}
	if dp.err != nil {
		t.Fatalf("the demo did not exit 0: %v\n%s", dp.err, dp.output())
	}
	stopProbe()
	checkDashboardSpans(t, filepath.Join(out, "traces.jsonl"), parent)
	// The demo as a user runs it: its default export's size.
	checkExportSize(t, filepath.Join(out, "metrics.jsonl"), prom, "otelpfs-demo")
}

// required reports whether a panel must show data for src.
func required(src source, title string) bool {
	_, allowed := src.allowEmpty[title]
	return !allowed && (src.job == probeJob || !emptyWhenHealthy[title])
}

// A panelResult is what a panel's queries returned.
type panelResult struct {
	panel   dashPanel
	queries map[string]string   // refId -> the expanded query
	series  map[string][]series // refId -> its series
}

// ok reports whether every query of the panel returned a series with a
// number.
func (pr panelResult) ok() bool { return len(pr.empty()) == 0 }

// empty returns the refIds of the queries that returned no number.
func (pr panelResult) empty() []string {
	var out []string
	for _, tg := range pr.panel.Targets {
		if !slices.ContainsFunc(pr.series[tg.RefID], series.finite) {
			out = append(out, tg.RefID)
		}
	}
	return out
}

// varValues returns the values Grafana gives the dashboard's variables
// when showing service job with everything else at All.
func varValues(d *dashboard, job string) (map[string]string, error) {
	vals := map[string]string{"__rate_interval": rateInterval}
	for _, v := range d.Templating.List {
		q, err := v.query()
		if err != nil {
			return nil, err
		}
		switch {
		case v.Type == "constant":
			vals[v.Name] = q
		case v.Name == "job":
			vals[v.Name] = job
		case v.IncludeAll:
			vals[v.Name] = v.AllValue
		default:
			return nil, fmt.Errorf("variable %s: no value to give it in the test", v.Name)
		}
		if strings.ContainsAny(vals[v.Name], `"\`) {
			return nil, fmt.Errorf("variable %s: value %q needs escaping in PromQL", v.Name, vals[v.Name])
		}
	}
	return vals, nil
}

// evalPanels runs every panel's queries for service job.
func evalPanels(p *prometheus, d *dashboard, job string, from time.Time) (map[string]panelResult, error) {
	vals, err := varValues(d, job)
	if err != nil {
		return nil, err
	}
	out := map[string]panelResult{}
	for _, pn := range d.queryPanels() {
		pr := panelResult{panel: pn, queries: map[string]string{}, series: map[string][]series{}}
		for _, tg := range pn.Targets {
			q, err := expand(tg.Expr, vals)
			if err != nil {
				return nil, fmt.Errorf("panel %q: %v", pn.Title, err)
			}
			ss, err := p.run(q, tg.instant(), from, time.Second)
			if err != nil {
				return nil, fmt.Errorf("panel %q query %s: %v", pn.Title, tg.RefID, err)
			}
			pr.queries[tg.RefID], pr.series[tg.RefID] = q, ss
		}
		out[pn.Title] = pr
	}
	return out, nil
}

// report logs, per panel, what it showed for src, and fails the test for a
// required panel that showed nothing.
func report(t *testing.T, src source, r map[string]panelResult) {
	t.Helper()
	var b strings.Builder
	for _, title := range slices.Sorted(maps.Keys(r)) {
		pr := r[title]
		n := 0
		for _, ss := range pr.series {
			n += len(ss)
		}
		switch empty := pr.empty(); {
		case len(empty) == 0:
			fmt.Fprintf(&b, "  data   %-48q %d series\n", title, n)
			if why, ok := src.allowEmpty[title]; ok {
				fmt.Fprintf(&b, "         (listed as empty today, %q: it has data now; remove it from the list)\n", why)
			}
		case !required(src, title):
			why := src.allowEmpty[title]
			if why == "" {
				why = "nothing lost"
			}
			fmt.Fprintf(&b, "  empty  %-48q queries %v: allowed, %s\n", title, empty, why)
		default:
			fmt.Fprintf(&b, "  EMPTY  %-48q queries %v\n", title, empty)
			for _, ref := range empty {
				t.Errorf("%s: panel %q, query %s returned no data: %s", src.job, title, ref, pr.queries[ref])
			}
		}
	}
	t.Logf("dashboard panels for service %s:\n%s", src.job, b.String())
}

// checkProbeValues checks that the probe's panels show the probe's own
// data: each panel selects what its title says.
func checkProbeValues(t *testing.T, r map[string]panelResult) {
	t.Helper()
	labels := func(title, ref, label string) []string {
		var out []string
		for _, s := range r[title].series[ref] {
			if s.finite() {
				out = append(out, s.labels[label])
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	value := func(title, ref, label, want string) (float64, bool) {
		for _, s := range r[title].series[ref] {
			if s.labels[label] == want && len(s.values) > 0 {
				return s.values[len(s.values)-1], true
			}
		}
		return 0, false
	}
	// The SQL panels hold the SQL only: neither the route nor the NULL row
	// (SCHEMA_NAME and DIGEST NULL: the lost digest's), which has no
	// db_system_name.
	for _, c := range []struct {
		title, ref, label string
		want              []string
	}{
		{"SQL statements by digest", "A", "pfs_digest_text", []string{workload.InsertDigest, workload.SelectDigest}},
		{"SQL statements by digest", "D", "pfs_digest_text", []string{workload.InsertDigest, workload.SelectDigest}},
		{"SQL statement time by digest (top 10)", "A", "pfs_digest_text", []string{workload.InsertDigest, workload.SelectDigest}},
		{"SQL latency by query summary: p50, p95, p99", "B", "db_query_summary", []string{workload.InsertSummary, workload.SelectSummary}},
		// And the route panels the routes only.
		{"Requests by route", "A", "http_route", []string{workload.Route}},
		{"Requests by route", "D", "http_route", []string{workload.Route}},
		{"Request latency by route: p50, p95, p99", "B", "http_route", []string{workload.Route}},
		{"Request stages by time (top 10)", "A", "pfs_event_name", []string{workload.StageName}},
	} {
		if got := labels(c.title, c.ref, c.label); !slices.Equal(got, c.want) {
			t.Errorf("probe: panel %q query %s: %s %q, want %q", c.title, c.ref, c.label, got, c.want)
		}
	}
	if got := labels("Wait time by event name (top 10)", "A", "pfs_event_name"); !slices.Contains(got, workload.MutexName) {
		t.Errorf("probe: waits %q, want %s among them", got, workload.MutexName)
	}
	const memTable = "Memory: in use and high water mark"
	used, ok1 := value(memTable, "A", "pfs_event_name", workload.MemoryName)
	high, ok2 := value(memTable, "B", "pfs_event_name", workload.MemoryName)
	if !ok1 || !ok2 || used < workload.Held*workload.BufferSize || high < used {
		t.Errorf("probe: %s in use %v (%v), high water mark %v (%v); want at least %d in use, and a mark no lower",
			workload.MemoryName, used, ok1, high, ok2, workload.Held*workload.BufferSize)
	}
	if v, ok := value("Lost since start", "A", "pfs_variable_name", "Performance_schema_digest_lost"); !ok || v != 1 {
		t.Errorf("probe: Performance_schema_digest_lost %v (%v), want 1", v, ok)
	}
}

// checkVariables runs each query variable as Grafana does when the
// dashboard loads, for the demo and the probe.
func checkVariables(t *testing.T, p *prometheus, d *dashboard, from time.Time) {
	t.Helper()
	for _, job := range []string{"otelpfs-demo", probeJob} {
		vals, err := varValues(d, job)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			q, _ := v.query()
			q, err := expand(q, vals)
			if err != nil {
				t.Fatal(err)
			}
			sel, label, err := labelValuesCall(q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.labelValues(sel, label, from)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			switch v.Name {
			case "job":
				if !slices.Contains(got, job) {
					t.Errorf("variable job: %q, want %s among them", got, job)
				}
			case "summary":
				// The SQL's query summaries, not the routes.
				if want := []string{workload.InsertSummary, workload.SelectSummary}; job == probeJob && !slices.Equal(got, want) {
					t.Errorf("variable summary for the probe: %q, want %q", got, want)
				}
			case "route":
				if want := []string{workload.Route}; job == probeJob && !slices.Equal(got, want) {
					t.Errorf("variable route for the probe: %q, want %q", got, want)
				}
			default:
				if len(got) == 0 {
					t.Errorf("variable %s for %s: no values (%s)", v.Name, job, q)
				}
			}
			t.Logf("variable %s for %s: %q", v.Name, job, got)
		}
	}
}

// checkExemplars asks for the exemplars of every query that shows them, as
// Grafana does, for the probe: each must carry the label the Prometheus
// data source links to traces by, with the probe's caller's trace. For
// the demo they are logged, and required for the panels it must fill.
func checkExemplars(t *testing.T, p *prometheus, d *dashboard, ds []provisionedDatasource, parent trace.SpanContext, from time.Time) {
	t.Helper()
	var label string
	for _, s := range ds {
		if s.Type == "prometheus" && len(s.JSONData.ExemplarTraceIDDestinations) > 0 {
			label = s.JSONData.ExemplarTraceIDDestinations[0].Name
		}
	}
	for _, src := range []source{{job: "otelpfs-demo", allowEmpty: demoEmptyToday}, {job: probeJob}} {
		vals, err := varValues(d, src.job)
		if err != nil {
			t.Fatal(err)
		}
		for _, pn := range d.queryPanels() {
			for _, tg := range pn.Targets {
				if !tg.Exemplar {
					continue
				}
				q, err := expand(tg.Expr, vals)
				if err != nil {
					t.Fatal(err)
				}
				var got []exemplarOf
				// Exemplars arrive with the scrape after a histogram's
				// export; the panels' data may be there first.
				for wait := time.Now().Add(10 * time.Second); ; {
					if got, err = p.exemplars(q, from); err != nil {
						t.Fatalf("panel %q query %s: exemplars: %v", pn.Title, tg.RefID, err)
					}
					if len(got) > 0 || !required(src, pn.Title) || time.Now().After(wait) {
						break
					}
					time.Sleep(500 * time.Millisecond)
				}
				switch {
				case len(got) == 0 && required(src, pn.Title):
					t.Errorf("%s: panel %q query %s: no exemplars: %s", src.job, pn.Title, tg.RefID, q)
				case len(got) == 0:
					t.Logf("%s: panel %q query %s: no exemplars (allowed: %s)", src.job, pn.Title, tg.RefID, src.allowEmpty[pn.Title])
				case src.job == probeJob:
					t.Logf("probe: panel %q query %s: %d exemplars", pn.Title, tg.RefID, len(got))
					for _, e := range got {
						if e.labels[label] != parent.TraceID().String() || e.value <= 0 {
							t.Errorf("probe: panel %q query %s: exemplar %v of %v: want %s=%s (the data source links by %s)",
								pn.Title, tg.RefID, e.labels, e.series, label, parent.TraceID(), label)
						}
					}
				}
			}
		}
	}
}

// checkDashboardSpans checks that the probe's request spans reached the
// Collector inside its caller's trace, and the demo's spans if it sends
// any.
func checkDashboardSpans(t *testing.T, path string, parent trace.SpanContext) {
	t.Helper()
	var demo, probe int
	deadline := time.Now().Add(15 * time.Second)
	for {
		trs, err := loadTraces(path)
		if err != nil {
			t.Fatal(err)
		}
		demo, probe = 0, 0
		for _, sp := range spans(trs) {
			switch sp.resource["service.name"] {
			case "otelpfs-demo":
				demo++
			case probeJob:
				if sp.name == workload.RouteDigest && sp.traceID == parent.TraceID().String() && sp.parent == parent.SpanID().String() {
					probe++
				}
			}
		}
		if probe > 0 && (demo > 0 || !demoSendsSpans) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if probe == 0 {
		t.Errorf("no span of the probe's requests in trace %s at the Collector", parent.TraceID())
	}
	switch {
	case demo == 0 && demoSendsSpans:
		t.Errorf("no span of the demo's at the Collector")
	case demo == 0:
		t.Logf("the demo sent no spans (demoSendsSpans is false: it records no statements yet)")
	default:
		t.Logf("the demo sent %d spans", demo)
	}
}

// startProbe starts the probe: package workload's service on a Schema of
// its own, exporting to the Collector at otlp as service probeJob with the
// default export, serving requests inside parent's trace until the
// returned function is called (it flushes and stops the export). The
// digest table has room for the workload's three digests only (and the
// NULL row, which counts among the rows as in MySQL): one more statement,
// run once, is lost.
func startProbe(t *testing.T, otlp string, parent trace.SpanContext) (stop func()) {
	t.Helper()
	s, err := workload.NewSchema(pfscore.WithDigestsSize(4)) // three digests and the NULL row
	if err != nil {
		t.Fatal(err)
	}
	svc, err := workload.New(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otl, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithEndpoint(otlp), exporter.WithInsecure(true),
		exporter.WithExportInterval(500*time.Millisecond), exporter.WithSpanInterval(500*time.Millisecond),
		exporter.WithServiceName(probeJob),
		exporter.WithResourceAttributes(attribute.String("service.instance.id", "probe")))
	if err != nil {
		svc.Close()
		t.Fatal(err)
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)

	// The first request fills the digest table; then a fourth digest.
	if err := svc.Request(ctx); err != nil {
		t.Fatal(err)
	}
	lost := instrument.NewStatementClass("statement/e2e/probe", instrument.WithSchema(s))
	st := lost.Start(ctx, "SELECT `lost` FROM `probe`")
	st.End(instrument.StatementResult{})

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if err := svc.Request(ctx); err != nil {
				t.Errorf("probe request: %v", err)
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := otl.Shutdown(sctx); err != nil {
				t.Errorf("probe: OTLP shutdown: %v", err)
			}
			svc.Close()
		})
	}
	return stop
}
