package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/e2e/workload"
)

// configDir holds the configurations otelpfs ships for users.
var configDir = filepath.Join("..", "otelcol-config")

// cleanEnv is the environment without the variables the shipped
// configurations read, so that they are validated with their defaults.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTELPFS_") && !strings.HasPrefix(kv, "E2E_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// validate runs `otelcol validate` on configuration files (merged, in
// order, as the Collector merges several --config).
func validate(bin string, env []string, files ...string) error {
	args := []string{"validate"}
	for _, f := range files {
		args = append(args, "--config="+f)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// TestConfigsValidate has the real Collector validate every configuration
// under otelcol-config/, alone and merged as its README runs them, and this
// package's own; promtool checks the Prometheus configuration. A broken copy
// must fail, so that a passing validate means something.
func TestConfigsValidate(t *testing.T) {
	bin := otelcolBinary(t)
	files, err := filepath.Glob(filepath.Join(configDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
		if err := validate(bin, cleanEnv(), f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, want := range []string{"agent.yaml", "gateway.yaml", "jaeger.yaml", "tempo.yaml", "prometheus.yaml"} {
		if !names[want] {
			t.Errorf("otelcol-config/%s is missing", want)
		}
	}
	for _, merged := range [][]string{{"jaeger.yaml", "prometheus.yaml"}, {"tempo.yaml", "prometheus.yaml"}} {
		paths := []string{filepath.Join(configDir, merged[0]), filepath.Join(configDir, merged[1])}
		if err := validate(bin, cleanEnv(), paths...); err != nil {
			t.Errorf("%v merged: %v", merged, err)
		}
	}
	if err := validate(bin, cleanEnv(collectorEnv("127.0.0.1:1", "127.0.0.1:2", t.TempDir())...),
		filepath.Join("testdata", "collector.yaml")); err != nil {
		t.Errorf("testdata/collector.yaml: %v", err)
	}

	// The control: an unknown key, and a component this build lacks.
	gw, err := os.ReadFile(filepath.Join(configDir, "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"metric_expiration:", "metric_expirashun:", "metric_expirashun"},
		{"  batch:\n", "  batch:\n  memory_limiter/unbuilt:\n    limit_mib: 100\n", "memory_limiter"},
	} {
		bad := strings.Replace(string(gw), c.from, c.to, 1)
		if bad == string(gw) {
			t.Fatalf("gateway.yaml has no %q to break", c.from)
		}
		path := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := validate(bin, cleanEnv(), path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate of a gateway.yaml with %s: %v, want an error naming it", c.want, err)
		}
	}

	promtool := filepath.Join(filepath.Dir(prometheusBinary(t)), "promtool")
	if _, err := os.Stat(promtool); err != nil {
		missing(t, "no promtool beside prometheus (Debian's prometheus package has it)")
	}
	if out, err := exec.Command(promtool, "check", "config", filepath.Join(configDir, "prometheus", "prometheus.yml")).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

// scrape reads a Prometheus text page and returns the value of the one
// sample of metric whose labels include every label="value" given.
func scrape(addr, metric string, labels map[string]string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var found []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
outer:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		for k, v := range labels {
			if !strings.Contains(line, k+`="`+v+`"`) {
				continue outer
			}
		}
		found = append(found, line)
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("%s %v: %d samples on %s/metrics: %v", metric, labels, len(found), addr, found)
	}
	f := strings.Fields(found[0])
	return strconv.ParseFloat(f[len(f)-1], 64)
}

// waitScrape scrapes until the sample equals want, failing the test if 30 s
// pass first.
func waitScrape(t *testing.T, addr, metric string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := scrape(addr, metric, labels)
		if err == nil && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("scraping %s: %v, %v; want %v (after 30 s)", addr, v, err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// noSelfMetrics is a configuration layer that turns off the Collector's own
// metrics, whose default port (8888) two Collectors on one machine would
// share.
const noSelfMetrics = "--config=yaml:service::telemetry::metrics::level: none"

// TestShippedConfigsRun runs the shipped configurations as a user would,
// on free loopback ports set through their environment variables: a
// service instance sends to an agent (agent.yaml), which forwards to a
// gateway (gateway.yaml) whose prometheus exporter shows the instance's
// counts; and the README's single Collector (jaeger.yaml merged with
// prometheus.yaml) does the same for cmd/otlpload's two instances and for
// the demo service (make demo) with OTEL_EXPORTER_OTLP_ENDPOINT set.
func TestShippedConfigsRun(t *testing.T) {
	bin := otelcolBinary(t)
	dir := t.TempDir()
	const requests = 12

	t.Run("agent-gateway", func(t *testing.T) {
		gwOTLP, gwProm, agentOTLP := freeAddr(t), freeAddr(t), freeAddr(t)
		gw := start(t, dir, "gateway", []string{
			"OTELPFS_GATEWAY_LISTEN=" + gwOTLP, "OTELPFS_PROMETHEUS_LISTEN=" + gwProm,
			"OTELPFS_TRACES_ENDPOINT=" + freeAddr(t), // nothing there: no spans are sent yet
		}, bin, "--config="+filepath.Join(configDir, "gateway.yaml"), noSelfMetrics)
		gw.waitTCP(gwOTLP)
		agent := start(t, dir, "agent", []string{
			"OTELPFS_AGENT_LISTEN=" + agentOTLP, "OTELPFS_GATEWAY_ENDPOINT=" + gwOTLP,
		}, bin, "--config="+filepath.Join(configDir, "agent.yaml"))
		agent.waitTCP(agentOTLP)

		in := newInstance(t, "chain", agentOTLP, 200*time.Millisecond)
		in.run(context.Background(), t, requests)
		in.flush(t)
		waitScrape(t, gwProm, "pfs_events_waits_count_total",
			map[string]string{"pfs_event_name": workload.MutexName, "instance": "chain", "job": serviceName}, requests)
	})

	t.Run("jaeger+prometheus", func(t *testing.T) {
		// The README's way: cmd/otlpload, two instances, into one Collector.
		load := filepath.Join(dir, "otlpload")
		if out, err := exec.Command("go", "build", "-o", load, "./cmd/otlpload").CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/otlpload: %v\n%s", err, out)
		}
		otlp, prom := freeAddr(t), freeAddr(t)
		col := start(t, dir, "single", []string{
			"OTELPFS_OTLP_LISTEN=" + otlp, "OTELPFS_PROMETHEUS_LISTEN=" + prom,
			"OTELPFS_JAEGER_ENDPOINT=" + freeAddr(t),
		}, bin, "--config="+filepath.Join(configDir, "jaeger.yaml"),
			"--config="+filepath.Join(configDir, "prometheus.yaml"), noSelfMetrics)
		col.waitTCP(otlp)
		col.waitTCP(prom)
		cmd := exec.Command(load, "-duration", "2s", "-instances", "2", "-rate", "20", "-interval", "500ms")
		cmd.Env = cleanEnv("OTEL_EXPORTER_OTLP_ENDPOINT=http://" + otlp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("otlpload: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`(?m)^instance (\S+): (\d+) requests$`).FindAllStringSubmatch(string(out), -1)
		if len(m) != 2 {
			t.Fatalf("otlpload printed %d instance lines, want 2:\n%s", len(m), out)
		}
		for _, l := range m {
			n, _ := strconv.Atoi(l[2])
			if n == 0 {
				t.Errorf("instance %s served no request", l[1])
			}
			waitScrape(t, prom, "pfs_events_waits_count_total",
				map[string]string{"pfs_event_name": workload.MutexName, "instance": l[1], "job": "otelpfs-load"}, float64(n))
		}

		// And make demo's way: the demo service, with the OTLP endpoint set.
		demo := filepath.Join(dir, "demo")
		if out, err := exec.Command("go", "build", "-o", demo, "github.com/otelpfs/otelpfs/examples/demo").CombinedOutput(); err != nil {
			t.Fatalf("go build examples/demo: %v\n%s", err, out)
		}
		cmd = exec.Command(demo, "-duration", "2s", "-addr", "127.0.0.1:0", "-sql-addr", "")
		cmd.Env = cleanEnv("OTEL_EXPORTER_OTLP_ENDPOINT=http://"+otlp, "OTEL_METRIC_EXPORT_INTERVAL=500")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "sending OTLP to http://"+otlp) {
			t.Fatalf("demo: %v\n%s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			v, err := scrape(prom, "pfs_events_waits_count_total",
				map[string]string{"pfs_event_name": "wait/synch/mutex/demo/note_cache", "job": "otelpfs-demo"})
			if err == nil && v > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the demo's mutex waits on the Collector's page: %v, %v (after 30 s)", v, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}
