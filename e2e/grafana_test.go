package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// What Grafana reads from otelcol-config/grafana, and asks Prometheus when
// it shows the dashboard: the dashboard model, the provisioned data
// sources, the PromQL of every panel with its variables expanded, and the
// query, query_range, label values and query_exemplars calls of Prometheus's
// HTTP API that Grafana's Prometheus data source makes.

// grafanaDir holds the shipped dashboard and its provisioning.
var grafanaDir = filepath.Join(configDir, "grafana")

// The shipped files.
var (
	dashboardFile   = filepath.Join(grafanaDir, "dashboards", "otelpfs.json")
	datasourcesFile = filepath.Join(grafanaDir, "provisioning", "datasources", "otelpfs.yaml")
	providersFile   = filepath.Join(grafanaDir, "provisioning", "dashboards", "otelpfs.yaml")
)

// A dashboard is the part of a Grafana dashboard model the tests read.
type dashboard struct {
	UID        string
	Title      string
	Templating struct {
		List []dashVar
	}
	Panels []dashPanel
}

// A dashVar is a template variable.
type dashVar struct {
	Type       string
	Name       string
	Datasource *dsRef
	// Query is a string (a constant's value, or a label_values(...) in the
	// older form) or an object whose query field is the query.
	Query      json.RawMessage
	Multi      bool
	IncludeAll bool
	AllValue   string
}

// query returns the variable's query (a constant's value).
func (v dashVar) query() (string, error) {
	var s string
	if err := json.Unmarshal(v.Query, &s); err == nil {
		return s, nil
	}
	var o struct{ Query string }
	if err := json.Unmarshal(v.Query, &o); err != nil {
		return "", fmt.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
	}
	return o.Query, nil
}

// A dsRef is a data source reference, as Grafana writes it since 8.3.
type dsRef struct {
	Type string
	UID  string
}

// A dashPanel is a panel, or a row (whose panels, when it is collapsed,
// are inside it).
type dashPanel struct {
	ID         int
	Type       string
	Title      string
	Datasource *dsRef
	GridPos    struct{ X, Y, W, H int }
	Targets    []dashTarget
	Panels     []dashPanel
}

// A dashTarget is a panel's query.
type dashTarget struct {
	RefID      string
	Datasource *dsRef
	Expr       string
	Instant    bool
	Range      bool
	Format     string
	Exemplar   bool
}

// datasourceOf returns the target's data source, else its panel's.
func (tg dashTarget) datasourceOf(p dashPanel) *dsRef { return cmp.Or(tg.Datasource, p.Datasource) }

// instant reports whether Grafana runs the target as an instant query (a
// table's value now) rather than a range query (a graph).
func (tg dashTarget) instant() bool { return tg.Instant && !tg.Range }

// provisionedDatasources is a Grafana data source provisioning file.
type provisionedDatasources struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []provisionedDatasource
}

type provisionedDatasource struct {
	Name     string
	UID      string
	Type     string
	URL      string
	JSONData struct {
		TimeInterval                string `yaml:"timeInterval"`
		ExemplarTraceIDDestinations []struct {
			Name          string
			DatasourceUID string `yaml:"datasourceUid"`
		} `yaml:"exemplarTraceIdDestinations"`
	} `yaml:"jsonData"`
}

// provisionedDashboards is a Grafana dashboard provider file.
type provisionedDashboards struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name    string
		Type    string
		Options struct{ Path string }
	}
}

// readYAML decodes a YAML file into v; fields v does not declare are
// ignored (Grafana's files have many more).
func readYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// loadDashboard reads a dashboard model; a field of the wrong type (a data
// source given by name, as a string) is an error.
func loadDashboard(path string) (*dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &d, nil
}

// allPanels returns the dashboard's panels, the panels inside collapsed
// rows included, rows included.
func (d *dashboard) allPanels() []dashPanel {
	var out []dashPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

// queryPanels returns the panels that are not rows.
func (d *dashboard) queryPanels() []dashPanel {
	var out []dashPanel
	for _, p := range d.allPanels() {
		if p.Type != "row" {
			out = append(out, p)
		}
	}
	return out
}

// builtins are the Grafana variables the dashboard may use besides its
// own.
var builtins = map[string]bool{"__rate_interval": true}

// varRef matches a variable reference: $name or ${name}.
var varRef = regexp.MustCompile(`\$(?:\{(\w+)\}|(\w+))`)

// expand replaces every variable of expr by its value in vals, as Grafana
// does before it sends a query; a variable vals lacks is an error.
func expand(expr string, vals map[string]string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(expr, func(m string) string {
		sm := varRef.FindStringSubmatch(m)
		name := cmp.Or(sm[1], sm[2])
		v, ok := vals[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown variables %v in %s", missing, expr)
	}
	return out, nil
}

// checkDashboard lists what Grafana would refuse or show broken in a
// dashboard provisioned beside the data sources ds: no uid, duplicate
// panel ids, a panel without a query, a data source that is not
// provisioned, a variable that is not defined, panels on top of each
// other, exemplars without a trace data source to link to.
func checkDashboard(d *dashboard, ds []provisionedDatasource) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`).MatchString(d.UID) {
		bad("uid %q: want 1 to 40 letters, digits, - or _", d.UID)
	}
	if d.Title == "" {
		bad("no title")
	}
	byUID := map[string]provisionedDatasource{}
	for _, s := range ds {
		byUID[s.UID] = s
	}
	resolve := func(where string, r *dsRef) (provisionedDatasource, bool) {
		if r == nil {
			bad("%s: no data source", where)
			return provisionedDatasource{}, false
		}
		s, ok := byUID[r.UID]
		if !ok || s.Type != r.Type {
			bad("%s: data source %+v is not provisioned (%s)", where, *r, datasourcesFile)
			return provisionedDatasource{}, false
		}
		return s, true
	}
	vars := map[string]bool{}
	for k := range builtins {
		vars[k] = true
	}
	for _, v := range d.Templating.List {
		if v.Name == "" || vars[v.Name] {
			bad("variable %q: no name, or defined twice", v.Name)
		}
		vars[v.Name] = true
		q, err := v.query()
		if err != nil {
			bad("%v", err)
		}
		switch v.Type {
		case "constant":
		case "query":
			resolve("variable "+v.Name, v.Datasource)
			if !strings.HasPrefix(q, "label_values(") {
				bad("variable %s: query %q: want label_values(...)", v.Name, q)
			}
			if v.IncludeAll && v.AllValue != ".*" {
				bad("variable %s: All is %q; the queries match it with =~, and want .*", v.Name, v.AllValue)
			}
		default:
			bad("variable %s: type %q (the test expands constant and query variables)", v.Name, v.Type)
		}
	}
	for _, v := range d.Templating.List {
		q, _ := v.query()
		for _, m := range varRef.FindAllStringSubmatch(q, -1) {
			if n := cmp.Or(m[1], m[2]); !vars[n] {
				bad("variable %s uses $%s, which is not defined", v.Name, n)
			}
		}
	}

	ids := map[int]string{}
	exemplars := 0
	var boxes []dashPanel
	for _, p := range d.allPanels() {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 {
			bad("%s: id must be positive", where)
		} else if other, dup := ids[p.ID]; dup {
			bad("%s: id %d is also panel %q's", where, p.ID, other)
		}
		ids[p.ID] = p.Title
		if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			bad("%s: gridPos %+v outside the 24-column grid", where, g)
		}
		for _, o := range boxes {
			a, b := p.GridPos, o.GridPos
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				bad("%s overlaps panel %d %q", where, o.ID, o.Title)
			}
		}
		boxes = append(boxes, p)
		if p.Type == "row" {
			if len(p.Targets) > 0 {
				bad("%s: a row with queries", where)
			}
			continue
		}
		if p.Title == "" {
			bad("panel %d: no title", p.ID)
		}
		if len(p.Targets) == 0 {
			bad("%s: no query", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			tw := where + " query " + tg.RefID
			if tg.RefID == "" || refs[tg.RefID] {
				bad("%s: no refId, or a refId used twice", tw)
			}
			refs[tg.RefID] = true
			if strings.TrimSpace(tg.Expr) == "" {
				bad("%s: no expression", tw)
			}
			for _, m := range varRef.FindAllStringSubmatch(tg.Expr, -1) {
				if n := cmp.Or(m[1], m[2]); !vars[n] {
					bad("%s uses $%s, which is not defined", tw, n)
				}
			}
			s, ok := resolve(tw, tg.datasourceOf(p))
			if ok && s.Type != "prometheus" {
				bad("%s: data source %s is a %s, not prometheus", tw, s.UID, s.Type)
			}
			if !tg.Exemplar {
				continue
			}
			exemplars++
			if ok && len(s.JSONData.ExemplarTraceIDDestinations) == 0 {
				bad("%s asks for exemplars, and data source %s links them to no trace data source", tw, s.UID)
			}
			for _, dst := range s.JSONData.ExemplarTraceIDDestinations {
				t, found := byUID[dst.DatasourceUID]
				if dst.Name == "" || !found || t.Type != "jaeger" && t.Type != "tempo" {
					bad("data source %s: exemplar destination %+v: want a label name and a provisioned jaeger or tempo data source", s.UID, dst)
				}
			}
		}
	}
	if exemplars == 0 {
		bad("no query asks for exemplars: the latency panels link to traces through them")
	}
	return errs
}

// promAPI calls Prometheus's HTTP API and decodes the data of a success:
// a POST, as Grafana's data source sends queries (httpMethod: POST), or
// for the label values endpoint, which takes only GET, a GET.
func (p *prometheus) promAPI(path string, params url.Values, data any) error {
	var resp *http.Response
	var err error
	if strings.HasPrefix(path, "/api/v1/label/") {
		resp, err = http.Get("http://" + p.addr + path + "?" + params.Encode())
	} else {
		resp, err = http.PostForm("http://"+p.addr+path, params)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r struct {
		Status string
		Error  string
		Data   json.RawMessage
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s %v: %v: %.300s", path, params, err, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s %v: %s: %s", path, params, r.Status, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

// A series is one series of a query's answer: its labels and values (an
// instant query's one, a range query's many).
type series struct {
	labels map[string]string
	values []float64
}

// finite reports whether the series has a value that is a number (not
// NaN, as a quantile of no observations is, nor infinite).
func (s series) finite() bool {
	return slices.ContainsFunc(s.values, func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) })
}

// run runs a panel query as Grafana does: an instant query at now, or a
// range query over [from, now] at one point per step.
func (p *prometheus) run(expr string, instant bool, from time.Time, step time.Duration) ([]series, error) {
	now := time.Now()
	ts := func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64) }
	value := func(pair [2]any) (float64, error) {
		s, _ := pair[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	if instant {
		var d struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
		if err := p.promAPI("/api/v1/query", url.Values{"query": {expr}, "time": {ts(now)}}, &d); err != nil {
			return nil, err
		}
		if d.ResultType != "vector" {
			return nil, fmt.Errorf("%s: a %s, not a vector", expr, d.ResultType)
		}
		out := make([]series, 0, len(d.Result))
		for _, r := range d.Result {
			v, err := value(r.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", expr, err)
			}
			out = append(out, series{labels: r.Metric, values: []float64{v}})
		}
		return out, nil
	}
	var d struct {
		ResultType string
		Result     []struct {
			Metric map[string]string
			Values [][2]any
		}
	}
	params := url.Values{"query": {expr}, "start": {ts(from)}, "end": {ts(now)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	if err := p.promAPI("/api/v1/query_range", params, &d); err != nil {
		return nil, err
	}
	if d.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: a %s, not a matrix", expr, d.ResultType)
	}
	out := make([]series, 0, len(d.Result))
	for _, r := range d.Result {
		s := series{labels: r.Metric}
		for _, pair := range r.Values {
			v, err := value(pair)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", expr, err)
			}
			s.values = append(s.values, v)
		}
		out = append(out, s)
	}
	return out, nil
}

// labelValues answers a label_values(selector, label) variable query, as
// Grafana asks it: the label's values among the series selector matches.
func (p *prometheus) labelValues(selector, label string, from time.Time) ([]string, error) {
	var vals []string
	params := url.Values{"match[]": {selector}, "start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(time.Now().Unix()+1, 10)}}
	err := p.promAPI("/api/v1/label/"+label+"/values", params, &vals)
	return vals, err
}

// labelValuesCall splits a label_values(selector, label) query.
func labelValuesCall(q string) (selector, label string, err error) {
	m := regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`).FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return "", "", fmt.Errorf("%q is not label_values(selector, label)", q)
	}
	return strings.TrimSpace(m[1]), m[2], nil
}

// An exemplarOf is one exemplar Prometheus holds: its labels (trace_id,
// span_id) and value.
type exemplarOf struct {
	series map[string]string
	labels map[string]string
	value  float64
}

// exemplars asks for the exemplars of expr's series over [from, now], as
// Grafana does for a query with exemplars on.
func (p *prometheus) exemplars(expr string, from time.Time) ([]exemplarOf, error) {
	var d []struct {
		SeriesLabels map[string]string
		Exemplars    []struct {
			Labels map[string]string
			Value  string
		}
	}
	params := url.Values{"query": {expr}, "start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(time.Now().Unix()+1, 10)}}
	if err := p.promAPI("/api/v1/query_exemplars", params, &d); err != nil {
		return nil, err
	}
	var out []exemplarOf
	for _, s := range d {
		for _, e := range s.Exemplars {
			v, err := strconv.ParseFloat(e.Value, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, exemplarOf{series: s.SeriesLabels, labels: e.Labels, value: v})
		}
	}
	return out, nil
}

// startPrometheusWith is startPrometheus with more command-line flags
// (--enable-feature=exemplar-storage: Prometheus keeps no exemplars
// without it).
func startPrometheusWith(t *testing.T, bin, target string, flags ...string) *prometheus {
	t.Helper()
	shipped, err := os.ReadFile(filepath.Join(configDir, "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(shipped)
	for _, r := range [][2]string{{"'" + shippedTarget + "'", "'" + target + "'"}, {"scrape_interval: 15s", "scrape_interval: 1s"}} {
		if !strings.Contains(cfg, r[0]) {
			t.Fatalf("otelcol-config/prometheus/prometheus.yml no longer has %s, which this test replaces", r[0])
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	args := append([]string{"--config.file=" + path, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}, flags...)
	p := start(t, dir, "prometheus", nil, bin, args...)
	p.waitTCP(addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &prometheus{process: p, addr: addr}
			}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("prometheus not ready at %s: %v\n%s", addr, err, p.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
