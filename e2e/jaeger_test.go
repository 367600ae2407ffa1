package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// TestJaeger sends a trace through the Collector configured as
// otelcol-config/jaeger.yaml (merged with prometheus.yaml, as the README
// runs it) into a real Jaeger v2, and reads it back from Jaeger's query
// API: a request span with a statement span inside it and a wait as a span
// event. The trace is made with the OpenTelemetry SDK, in the shape the
// span pipeline gives a statement; otelpfs's own spans (history as spans)
// are not exported yet, and this test is where to check them once they are.
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
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", serviceName+"-jaeger"))))
	defer tp.Shutdown(ctx)
	tr := tp.Tracer("github.com/otelpfs/otelpfs/e2e")
	rctx, req := tr.Start(ctx, "GET /users/{id}", trace.WithSpanKind(trace.SpanKindServer))
	_, stmt := tr.Start(rctx, workload.SelectDigest, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.query.summary", workload.SelectDigest)))
	stmt.AddEvent(workload.MutexName, trace.WithAttributes(attribute.Float64("pfs.timer_wait", 0.000012)))
	stmt.End()
	req.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	traceID := req.SpanContext().TraceID().String()

	deadline := time.Now().Add(30 * time.Second)
	for {
		spans, err := jaegerTrace(jQuery, traceID)
		if err == nil {
			if err = checkJaegerTrace(spans, req.SpanContext(), stmt.SpanContext()); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s in Jaeger after 30 s: %v\nCollector:\n%s\nJaeger:\n%s", traceID, err, col.output(), jaeger.output())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkJaegerTrace checks that the statement span is the request span's
// child and carries the wait as an event (a log, in Jaeger's words).
func checkJaegerTrace(spans []jaegerSpan, req, stmt trace.SpanContext) error {
	if len(spans) != 2 {
		return fmt.Errorf("%d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if s.SpanID != stmt.SpanID().String() {
			continue
		}
		if s.OperationName != workload.SelectDigest {
			return fmt.Errorf("statement span named %q", s.OperationName)
		}
		parent := false
		for _, r := range s.References {
			parent = parent || (r.RefType == "CHILD_OF" && r.SpanID == req.SpanID().String())
		}
		if !parent {
			return fmt.Errorf("statement span's references %+v: not a child of the request span %s", s.References, req.SpanID())
		}
		for _, l := range s.Logs {
			for _, f := range l.Fields {
				if f.Key == "event" && f.Value == workload.MutexName {
					return nil
				}
			}
		}
		return fmt.Errorf("statement span without the %s event: %+v", workload.MutexName, s.Logs)
	}
	return fmt.Errorf("no span %s among %+v", stmt.SpanID(), spans)
}
