package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The environment the tests read:
//
//	OTELPFS_OTELCOL     the Collector binary (make otelcol builds it; make
//	                    test and make e2e pass its path here)
//	OTELPFS_PROMETHEUS  the Prometheus binary (by default prometheus on PATH:
//	                    apt-get install prometheus)
//	OTELPFS_E2E=skip    skip the tests that need either binary when it is
//	                    missing, instead of failing
const (
	envOtelcol    = "OTELPFS_OTELCOL"
	envPrometheus = "OTELPFS_PROMETHEUS"
	envE2E        = "OTELPFS_E2E"
)

// missing fails the test, or skips it when OTELPFS_E2E=skip, for a binary
// the test cannot run without.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(envE2E) == "skip" {
		t.Skipf("%s (skipped: %s=skip)", msg, envE2E)
	}
	t.Fatalf("%s\n(set %s=skip to skip the end-to-end tests that need it)", msg, envE2E)
}

// otelcolBinary returns the Collector binary: $OTELPFS_OTELCOL, else the one
// otelcol/build.sh cached for the current manifest.
func otelcolBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envOtelcol); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing(t, "%s=%s: not an executable file; build the Collector with `make otelcol`", envOtelcol, p)
		}
		return p
	}
	out, err := exec.Command("bash", filepath.Join("otelcol", "build.sh"), "--path").Output()
	p := strings.TrimSpace(string(out))
	if err != nil || p == "" {
		missing(t, "no OpenTelemetry Collector binary (%s is unset and none is cached at %q): build it with `make otelcol` (about 5 minutes the first time), or point %s at one",
			envOtelcol, p, envOtelcol)
	}
	return p
}

// prometheusBinary returns the Prometheus binary: $OTELPFS_PROMETHEUS, else
// prometheus on PATH.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envPrometheus); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		missing(t, "no prometheus binary on PATH: install Debian's package (apt-get install prometheus), or set %s", envPrometheus)
	}
	return p
}

// freeAddr returns a 127.0.0.1 address with a port no one listened on a
// moment ago. Another process may take it before the caller does; the
// processes started here then fail to start, and say so.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// A process is a program the test started, with its output in a log file.
type process struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
}

// start starts a program with its output in dir/<name>.log; the test's
// cleanup stops it.
func start(t *testing.T, dir, name string, env []string, bin string, args ...string) *process {
	t.Helper()
	log := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{t: t, name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process with SIGTERM, and SIGKILL after 10 s.
func (p *process) stop() {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Logf("%s did not exit 10 s after SIGTERM; killing it", p.name)
		p.cmd.Process.Kill()
		<-p.done
	}
}

// output returns the end of the process's log.
func (p *process) output() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 8000 {
		b = append([]byte("...\n"), b[len(b)-8000:]...)
	}
	return string(b)
}

// waitTCP waits until addr accepts connections, failing the test if the
// process exits or 30 s pass first.
func (p *process) waitTCP(addr string) {
	p.t.Helper()
	if err := p.listening(addr); err != nil {
		p.t.Fatal(err)
	}
}

// listening waits until addr accepts connections, and says why not if the
// process exits or 30 s pass first.
func (p *process) listening(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited (%v) before listening on %s:\n%s", p.name, p.err, addr, p.output())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: nothing listens on %s after 30 s:\n%s", p.name, addr, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A collector is a running Collector with the test configuration
// (testdata/collector.yaml): OTLP gRPC in, JSON lines out (files in its
// out directory), and a prometheus exporter.
type collector struct {
	*process
	otlp, prom string // host:port of the OTLP receiver and of the /metrics page
	otlpHTTP   string // host:port of the OTLP/HTTP receiver
	out        string // where the file exporters write
}

// startCollector starts the Collector on the given addresses (fresh ones
// if empty), writing into out (a fresh temporary directory if empty), and
// waits until its OTLP receiver and its /metrics page accept connections.
func startCollector(t *testing.T, bin, otlp, prom, out string) *collector {
	t.Helper()
	if otlp == "" {
		otlp = freeAddr(t)
	}
	if prom == "" {
		prom = freeAddr(t)
	}
	if out == "" {
		out = t.TempDir()
	}
	cfg, err := filepath.Abs(filepath.Join("testdata", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// freeAddr's ports are free when it returns, not when the Collector
	// binds them: another test (or process) may take one in between. So a
	// Collector that could not bind is started again on other ports (those
	// the caller did not choose).
	pickOTLP, pickProm := otlp == "", prom == ""
	for attempt := 1; ; attempt++ {
		otlpHTTP := freeAddr(t)
		name := "otelcol" // its log: otelcol.log, then otelcol-2.log, ...
		if attempt > 1 {
			name = fmt.Sprintf("otelcol-%d", attempt)
		}
		p := start(t, out, name, collectorEnv(otlp, prom, out, otlpHTTP), bin, "--config="+cfg)
		err := p.listening(otlp)
		if err == nil {
			err = p.listening(prom)
		}
		if err == nil {
			err = p.listening(otlpHTTP)
		}
		if err == nil {
			return &collector{process: p, otlp: otlp, prom: prom, otlpHTTP: otlpHTTP, out: out}
		}
		if attempt == 3 || !p.exited() || !strings.Contains(p.output(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("the Collector could not bind a port another took (attempt %d); again on other ports", attempt)
		if pickOTLP {
			otlp = freeAddr(t)
		}
		if pickProm {
			prom = freeAddr(t)
		}
	}
}

// collectorEnv is the environment testdata/collector.yaml reads; the
// OTLP/HTTP receiver's address is otlpHTTP, or a free port if none is
// given.
func collectorEnv(otlp, prom, out string, otlpHTTP ...string) []string {
	httpAddr := "127.0.0.1:0"
	if len(otlpHTTP) > 0 {
		httpAddr = otlpHTTP[0]
	} else if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		httpAddr = l.Addr().String()
		l.Close()
	}
	return []string{"E2E_OTLP_ENDPOINT=" + otlp, "E2E_PROMETHEUS_ENDPOINT=" + prom, "E2E_OUT_DIR=" + out,
		"E2E_OTLP_HTTP_ENDPOINT=" + httpAddr}
}

// jsonLines returns the complete lines of a file the file exporter writes
// (a line it is still writing is left out), none if it does not exist yet.
func jsonLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines [][]byte
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // io.EOF: line is empty or unfinished
			return lines, nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			lines = append(lines, line)
		}
	}
}

// loadMetrics parses the metrics the file exporter wrote to path: one OTLP
// JSON ExportMetricsServiceRequest per line.
func loadMetrics(path string) ([]pmetric.Metrics, error) {
	lines, err := jsonLines(path)
	if err != nil {
		return nil, err
	}
	var u pmetric.JSONUnmarshaler
	out := make([]pmetric.Metrics, 0, len(lines))
	for i, l := range lines {
		m, err := u.UnmarshalMetrics(l)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// loadTraces parses the traces the file exporter wrote to path: one OTLP
// JSON ExportTraceServiceRequest per line.
func loadTraces(path string) ([]ptrace.Traces, error) {
	lines, err := jsonLines(path)
	if err != nil {
		return nil, err
	}
	var u ptrace.JSONUnmarshaler
	out := make([]ptrace.Traces, 0, len(lines))
	for i, l := range lines {
		tr, err := u.UnmarshalTraces(l)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, tr)
	}
	return out, nil
}

// A span is one span as it arrived, flattened with its resource.
type span struct {
	resource        map[string]string
	traceID, spanID string // hex
	parent          string // hex; empty for a root span
	name            string
	kind            ptrace.SpanKind
	status          ptrace.StatusCode
	attrs           map[string]string
	events          []string // their names
	start, end      time.Time
}

// instance is the span's service.instance.id.
func (s span) instance() string { return s.resource["service.instance.id"] }

// spans flattens exported traces into spans, in arrival order.
func spans(trs []ptrace.Traces) []span {
	var out []span
	for _, td := range trs {
		for _, rs := range td.ResourceSpans().All() {
			res := attrMap(rs.Resource().Attributes())
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					x := span{resource: res, traceID: sp.TraceID().String(), spanID: sp.SpanID().String(),
						name: sp.Name(), kind: sp.Kind(), status: sp.Status().Code(), attrs: attrMap(sp.Attributes()),
						start: sp.StartTimestamp().AsTime(), end: sp.EndTimestamp().AsTime()}
					if !sp.ParentSpanID().IsEmpty() {
						x.parent = sp.ParentSpanID().String()
					}
					for _, ev := range sp.Events().All() {
						x.events = append(x.events, ev.Name())
					}
					out = append(out, x)
				}
			}
		}
	}
	return out
}

// A point is one data point as it arrived, flattened with its resource,
// scope and metric.
type point struct {
	resource  map[string]string
	scope     string
	metric    string
	unit      string
	kind      pmetric.MetricType
	monotonic bool
	cumul     bool // AggregationTemporalityCumulative
	attrs     map[string]string
	start     time.Time
	time      time.Time
	value     float64 // a number point's value (int or double)
	isInt     bool
	// histograms
	count     uint64
	sum       float64
	bounds    []float64
	buckets   []uint64
	exemplars []exemplar
}

// An exemplar is a histogram point's exemplar: a measurement and the span
// it was made in.
type exemplar struct {
	traceID, spanID string // hex; empty if none
	value           float64
}

// instance is the point's service.instance.id.
func (p point) instance() string { return p.resource["service.instance.id"] }

// key identifies a point's series: instance, metric and attributes.
func (p point) key() string { return seriesKey(p.instance(), p.metric, p.attrs) }

func seriesKey(instance, metric string, attrs map[string]string) string {
	var b strings.Builder
	b.WriteString(instance + "|" + metric)
	for _, k := range sortedKeys(attrs) {
		b.WriteString("|" + k + "=" + attrs[k])
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func attrMap(m pcommon.Map) map[string]string {
	out := make(map[string]string, m.Len())
	for k, v := range m.All() {
		out[k] = v.AsString()
	}
	return out
}

// points flattens exported metrics into data points, in arrival order.
func points(ms []pmetric.Metrics) []point {
	var out []point
	for _, md := range ms {
		for _, rm := range md.ResourceMetrics().All() {
			res := attrMap(rm.Resource().Attributes())
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					base := point{resource: res, scope: sm.Scope().Name(), metric: m.Name(), unit: m.Unit(), kind: m.Type()}
					var nps pmetric.NumberDataPointSlice
					switch m.Type() {
					case pmetric.MetricTypeSum:
						base.monotonic = m.Sum().IsMonotonic()
						base.cumul = m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
						nps = m.Sum().DataPoints()
					case pmetric.MetricTypeGauge:
						nps = m.Gauge().DataPoints()
					case pmetric.MetricTypeHistogram:
						base.cumul = m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
						for _, dp := range m.Histogram().DataPoints().All() {
							p := base
							p.attrs = attrMap(dp.Attributes())
							p.start, p.time = dp.StartTimestamp().AsTime(), dp.Timestamp().AsTime()
							p.count, p.sum = dp.Count(), dp.Sum()
							p.bounds = dp.ExplicitBounds().AsRaw()
							p.buckets = dp.BucketCounts().AsRaw()
							for _, e := range dp.Exemplars().All() {
								x := exemplar{value: e.DoubleValue()}
								if !e.TraceID().IsEmpty() {
									x.traceID, x.spanID = e.TraceID().String(), e.SpanID().String()
								}
								p.exemplars = append(p.exemplars, x)
							}
							out = append(out, p)
						}
						continue
					default:
						continue // none exported today; add here when one is
					}
					for _, dp := range nps.All() {
						p := base
						p.attrs = attrMap(dp.Attributes())
						p.start, p.time = dp.StartTimestamp().AsTime(), dp.Timestamp().AsTime()
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							p.value, p.isInt = float64(dp.IntValue()), true
						} else {
							p.value = dp.DoubleValue()
						}
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}

// latest returns, per series, its most recent point.
func latest(ps []point) map[string]point {
	out := map[string]point{}
	for _, p := range ps {
		k := p.key()
		if prev, ok := out[k]; !ok || !p.time.Before(prev.time) {
			out[k] = p
		}
	}
	return out
}

// sameFloat reports whether two values exported as seconds agree: the
// same float64 division of the same picoseconds, up to the rounding of
// JSON's decimal form.
func sameFloat(a, b float64) bool {
	if a == b {
		return true
	}
	d := a - b
	if d < 0 {
		d = -d
	}
	m := max(a, -a, b, -b)
	return d <= 1e-12*m
}
