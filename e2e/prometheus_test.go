package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A prometheus is a running Prometheus (Debian's package) that scrapes a
// Collector's prometheus exporter every second.
type prometheus struct {
	*process
	addr string
}

// shippedTarget is the exporter address otelcol-config/prometheus/prometheus.yml
// scrapes.
const shippedTarget = "127.0.0.1:8889"

// startPrometheus starts Prometheus with otelcol-config/prometheus/prometheus.yml,
// its target changed to target and its scrape interval to 1 s, a data
// directory of its own and a free port, and waits until it is ready.
func startPrometheus(t *testing.T, bin, target string) *prometheus {
	t.Helper()
	shipped, err := os.ReadFile(filepath.Join("..", "otelcol-config", "prometheus", "prometheus.yml"))
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
	p := start(t, dir, "prometheus", nil, bin,
		"--config.file="+path,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	p.waitTCP(addr)
	pr := &prometheus{process: p, addr: addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return pr
			}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("prometheus not ready at %s: %v\n%s", addr, err, p.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A sample is one series of an instant query's answer.
type sample struct {
	labels map[string]string
	value  float64
}

// query runs an instant PromQL query through the HTTP API.
func (p *prometheus) query(q string) ([]sample, error) {
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: %v: %s", q, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s: %s", q, r.Status, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: a %s, not a vector", q, r.Data.ResultType)
	}
	out := make([]sample, 0, len(r.Data.Result))
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %v", q, s.Value[1], err)
		}
		out = append(out, sample{labels: s.Metric, value: v})
	}
	return out, nil
}

// waitQuery runs q until check accepts its answer, and fails the test with
// the last answer if 30 s pass first (Prometheus scrapes every second; the
// Collector's page changes as exports arrive).
func (p *prometheus) waitQuery(t *testing.T, q string, check func([]sample) error) []sample {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := p.query(q)
		if err == nil {
			if err = check(s); err == nil {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("PromQL %s: %v (after 30 s)", q, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
