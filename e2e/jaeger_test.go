package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/e2e/workload"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// envJaeger names the Jaeger v2 binary TestJaeger runs; make e2e-jaeger
// builds one (jaeger/build.sh) and sets it.
const envJaeger = "OTELPFS_JAEGER"

// A jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Logs []struct {
		Fields []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"fields"`
	} `json:"logs"`
}

// jaegerTrace asks Jaeger's query API for one trace.
func jaegerTrace(addr, traceID string) ([]jaegerSpan, error) {
	resp, err := http.Get("http://" + addr + "/api/traces/" + url.PathEscape(traceID))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var r struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%v: %s", err, body)
	}
	var out []jaegerSpan
	for _, d := range r.Data {
		out = append(out, d.Spans...)
	}
	return out, nil
}

// TestJaeger sends a request's trace through the Collector configured as
// otelcol-config/jaeger.yaml (merged with prometheus.yaml, as the README
// runs it) into a real Jaeger v2, and reads it back from Jaeger's query
// API. The request's own span comes from the OpenTelemetry SDK (an HTTP
// server span, as a service's middleware makes); inside it the workload
// serves three requests, and otelpfs's spans (exporter.StartOTLP, from the
// captured trees) must land in that trace: each request statement a child
// of the server span with its mutex wait as an event (a log, in Jaeger's
// words), its stage its child, each SQL statement a child of the stage.
// Run by make e2e-jaeger; skipped unless OTELPFS_JAEGER is set.
func TestJaeger(t *testing.T) {
	jbin := os.Getenv(envJaeger)
	if jbin == "" {
		t.Skipf("%s is unset: make e2e-jaeger builds Jaeger v2 (minutes) and runs this test", envJaeger)
	}
	bin := otelcolBinary(t)
	dir := t.TempDir()

	jOTLP, jQuery, jGRPC := freeAddr(t), freeAddr(t), freeAddr(t)
	jcfg, err := filepath.Abs(filepath.Join("jaeger", "jaeger.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jaeger := start(t, dir, "jaeger", []string{
		"JAEGER_OTLP_GRPC=" + jOTLP, "JAEGER_QUERY_HTTP=" + jQuery, "JAEGER_QUERY_GRPC=" + jGRPC,
	}, jbin, "--config="+jcfg)
	jaeger.waitTCP(jOTLP)
	jaeger.waitTCP(jQuery)

	otlp, prom := freeAddr(t), freeAddr(t)
	col := start(t, dir, "otelcol", []string{
		"OTELPFS_OTLP_LISTEN=" + otlp, "OTELPFS_PROMETHEUS_LISTEN=" + prom, "OTELPFS_JAEGER_ENDPOINT=" + jOTLP,
	}, bin, "--config="+filepath.Join(configDir, "jaeger.yaml"),
		"--config="+filepath.Join(configDir, "prometheus.yaml"), noSelfMetrics)
	col.waitTCP(otlp)

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(otlp), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", serviceName+"-frontend"))))
	defer tp.Shutdown(ctx)

	const requests = 3
	in := newInstance(t, "jaeger", otlp, 200*time.Millisecond)
	rctx, root := tp.Tracer("github.com/otelpfs/otelpfs/e2e").Start(ctx, "GET /kv", trace.WithSpanKind(trace.SpanKindServer))
	in.run(rctx, t, requests)
	root.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	in.flush(t)
	traceID := root.SpanContext().TraceID().String()

	deadline := time.Now().Add(30 * time.Second)
	for {
		spans, err := jaegerTrace(jQuery, traceID)
		if err == nil {
			if err = checkJaegerTrace(spans, root.SpanContext(), requests); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s in Jaeger after 30 s: %v\nCollector:\n%s\nJaeger:\n%s", traceID, err, col.output(), jaeger.output())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkJaegerTrace checks the trace of TestJaeger: the server span, n
// request spans under it, each with the mutex wait as an event and its
// stage as a child, and the SQL statements' spans (named by their
// db.query.summary) under their requests' stages.
func checkJaegerTrace(spans []jaegerSpan, root trace.SpanContext, n int) error {
	byID := map[string]jaegerSpan{}
	names := map[string]int{}
	for _, s := range spans {
		byID[s.SpanID] = s
		names[s.OperationName]++
	}
	want := map[string]int{"GET /kv": 1, workload.RouteDigest: n, workload.StageName: n,
		workload.SelectSummary: n, workload.InsertSummary: (n + 3) / 4}
	if !maps.Equal(names, want) {
		return fmt.Errorf("spans by name %v, want %v", names, want)
	}
	parentOf := func(s jaegerSpan) string {
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				return r.SpanID
			}
		}
		return ""
	}
	for _, s := range spans {
		switch s.OperationName {
		case workload.RouteDigest:
			if p := parentOf(s); p != root.SpanID().String() {
				return fmt.Errorf("request span %s under %q, want the server span %s", s.SpanID, p, root.SpanID())
			}
			found := false
			for _, l := range s.Logs {
				for _, f := range l.Fields {
					found = found || (f.Key == "event" && f.Value == workload.MutexName)
				}
			}
			if !found {
				return fmt.Errorf("request span %s without the %s event: %+v", s.SpanID, workload.MutexName, s.Logs)
			}
		case workload.StageName:
			if p, ok := byID[parentOf(s)]; !ok || p.OperationName != workload.RouteDigest {
				return fmt.Errorf("stage span %s under %q, want a request span", s.SpanID, parentOf(s))
			}
		case workload.SelectSummary, workload.InsertSummary:
			if p, ok := byID[parentOf(s)]; !ok || p.OperationName != workload.StageName {
				return fmt.Errorf("%s span %s under %q, want its request's stage", s.OperationName, s.SpanID, parentOf(s))
			}
		}
	}
	return nil
}
