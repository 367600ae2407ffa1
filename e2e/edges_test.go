package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/e2e/workload"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
)

// TestNonUTF8ReachesCollector gives a service instance a file whose name
// is Latin-1 ("café.log" with é as the byte 0xE9) and a user whose name
// is too ("josé"), as a file on an old disk or a user taken from a request
// header would be, and a statement whose text holds the same byte; the
// export includes every table (bridge.AllTables: files by instance and
// waits by user are opt-in). gRPC refuses to marshal a string that is not
// UTF-8, and one such value used to fail every export whole: here the
// names reach the Collector with U+FFFD for the byte, and every other
// metric arrives with the tables' values, and so do the spans.
func TestNonUTF8ReachesCollector(t *testing.T) {
	col := startCollector(t, otelcolBinary(t), "", "", "")
	s, err := workload.NewSchema(pfscore.WithInstrument("wait/io/file/e2e/%=ON"), pfscore.WithInstrument("statement/e2e/%=ON"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := workload.New(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	const inst = "latin1"
	otl, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithEndpoint(col.otlp), exporter.WithInsecure(true),
		exporter.WithExportInterval(200*time.Millisecond), exporter.WithSpanInterval(200*time.Millisecond),
		exporter.WithServiceName(serviceName),
		exporter.WithResourceAttributes(attribute.String("service.instance.id", inst), attribute.String("deployment.environment.name", "e2e")),
		exporter.WithProducerOptions(bridge.WithTables(bridge.AllTables)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		otl.Shutdown(ctx)
	})

	dir := t.TempDir()
	const user, text = "jos\xe9", "UPDATE caf\xe9 SET n = n + 1"
	file := filepath.Join(dir, "caf\xe9.log")
	if utf8.ValidString(user) || utf8.ValidString(file) {
		t.Fatal("the names are meant not to be UTF-8")
	}
	in := instrument.WithSchema(s)
	ctx, th := instrument.StartThread(context.Background(), "thread/e2e/latin1", in, instrument.WithUser(user), instrument.WithHost(workload.Host))
	defer th.End()
	st := instrument.NewStatementClass("statement/e2e/latin1", in).Start(ctx, text)
	f, err := instrument.NewFileClass("wait/io/file/e2e/latin1", in).OpenFileCtx(ctx, file, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("written by the test\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st.End(instrument.StatementResult{})
	const n = 12
	for range n {
		if err := svc.Request(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	flushCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := otl.ForceFlush(flushCtx); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}

	// Every other metric, as the tables say.
	want, err := expectations(s)
	if err != nil {
		t.Fatal(err)
	}
	got := waitForTables(t, filepath.Join(col.out, "metrics.jsonl"), map[string][]expect{inst: want})
	checkWorkload(t, got, inst, n)

	// The names, with U+FFFD for the byte that is not UTF-8.
	wantFile, wantUser := strings.ToValidUTF8(file, "\uFFFD"), "jos\uFFFD"
	byFile, byUser, badStrings := 0, 0, 0
	for _, p := range got {
		if p.instance() != inst {
			continue
		}
		if p.attrs["file.path"] == wantFile {
			byFile++
		}
		if p.attrs["pfs.user"] == wantUser {
			byUser++
		}
		for k, v := range p.attrs {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				badStrings++
			}
		}
	}
	t.Logf("%d series of file.path %q, %d of pfs.user %q", byFile, wantFile, byUser, wantUser)
	if byFile == 0 || byUser == 0 || badStrings > 0 {
		t.Errorf("%d series with file.path %q, %d with pfs.user %q (want some of each), %d attributes not UTF-8", byFile, wantFile, byUser, wantUser, badStrings)
	}
	for _, c := range []struct {
		metric string
		attrs  map[string]string
	}{
		{"pfs.file.by_instance.count", map[string]string{"file.path": wantFile}},
		{"pfs.events_waits.by_user.count", map[string]string{"pfs.user": wantUser, "pfs.event_name": "wait/io/file/e2e/latin1"}},
	} {
		if ps := find(got, inst, c.metric, c.attrs); len(ps) != 1 || ps[0].value < 1 {
			t.Errorf("%s %v: %v, want one series that counted", c.metric, c.attrs, ps)
		}
	}

	// The statement's span, its name from the text with U+FFFD.
	wantName := strings.ToValidUTF8(text, "\uFFFD")
	deadline := time.Now().Add(30 * time.Second)
	for {
		trs, err := loadTraces(filepath.Join(col.out, "traces.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		found := 0
		for _, sp := range spans(trs) {
			if sp.instance() == inst && strings.Contains(sp.name, "\uFFFD") {
				names = append(names, sp.name)
				if sp.name == wantName && slices.Contains(sp.events, "wait/io/file/e2e/latin1") {
					found++
				}
			}
		}
		if found == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q with its file waits at the Collector after 30 s (spans named with U+FFFD: %q)", wantName, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestShutdownEndpointDown stops a service instance's export while its
// endpoint is down (nothing listens) or stalled (a listener that accepts
// and never answers), over gRPC and http/protobuf, after exports and spans
// queued against it: Shutdown returns within its context's deadline (a
// Kubernetes pod has 30 s from SIGTERM), and without a deadline within the
// export timeout (10 s by default); the spans it could not send are
// counted in global_status, not dropped silently.
func TestShutdownEndpointDown(t *testing.T) {
	const deadline = 2 * time.Second
	for _, c := range []struct {
		protocol    string
		stalled     bool
		noDeadline  bool
		wantAtMost  time.Duration
		description string
	}{
		{exporter.ProtocolGRPC, false, false, deadline, "grpc/down"},
		{exporter.ProtocolGRPC, true, false, deadline, "grpc/stalled"},
		{exporter.ProtocolHTTPProtobuf, false, false, deadline, "http/down"},
		{exporter.ProtocolHTTPProtobuf, true, false, deadline, "http/stalled"},
		{exporter.ProtocolGRPC, true, true, exporter.DefaultOTLPTimeout, "grpc/stalled/no-deadline"},
	} {
		t.Run(c.description, func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			if c.stalled {
				stallAt(t, addr)
			}
			s, err := workload.NewSchema()
			if err != nil {
				t.Fatal(err)
			}
			svc, err := workload.New(s, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			endpoint := addr
			if c.protocol == exporter.ProtocolHTTPProtobuf {
				endpoint = "http://" + addr
			}
			otl, err := exporter.StartOTLP(context.Background(), s,
				exporter.WithEndpoint(endpoint), exporter.WithProtocol(c.protocol), exporter.WithInsecure(true),
				exporter.WithExportInterval(200*time.Millisecond), exporter.WithSpanInterval(200*time.Millisecond),
				exporter.WithServiceName(serviceName))
			if err != nil {
				t.Fatal(err)
			}
			// Exports fail, spans queue.
			for end := time.Now().Add(time.Second); time.Now().Before(end); {
				if err := svc.Request(context.Background()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			ctx := context.Background()
			if !c.noDeadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, deadline)
				defer cancel()
			}
			t0 := time.Now()
			err = otl.Shutdown(ctx)
			took := time.Since(t0)
			t.Logf("%s: Shutdown returned after %v (bound %v): %v", c.description, took.Round(time.Millisecond), c.wantAtMost, err)
			// A second is the margin for a loaded machine; Shutdown's own
			// is 100 ms.
			if took > c.wantAtMost+time.Second {
				t.Errorf("Shutdown took %v with the endpoint %s, want at most %v", took, map[bool]string{true: "stalled", false: "down"}[c.stalled], c.wantAtMost)
			}
			status, err := rows(s, "global_status", "VARIABLE_NAME = '"+exporter.StatusSpansLost+"'")
			if err != nil || len(status) != 1 {
				t.Fatalf("global_status %s: %v, %v", exporter.StatusSpansLost, status, err)
			}
			if lost := fmt.Sprint(status[0]["VARIABLE_VALUE"]); lost == "0" {
				t.Errorf("%s = 0 after %d requests whose spans could not be sent", exporter.StatusSpansLost, svc.Requests())
			} else {
				t.Logf("%s = %s after %d requests", exporter.StatusSpansLost, lost, svc.Requests())
			}
		})
	}
}

// stallAt listens on addr and accepts connections that it never reads
// nor answers, until the test ends.
func stallAt(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// TestHTTPProtobufThroughCollector: a service exporting over OTLP/HTTP
// with protobuf bodies (the specification's default protocol, and what
// hosted backends take) reaches a real Collector's OTLP/HTTP receiver as
// it does over gRPC: every table's metrics with the tables' values, and
// each request's spans, the SERVER span with its SQL inside.
func TestHTTPProtobufThroughCollector(t *testing.T) {
	col := startCollector(t, otelcolBinary(t), "", "", "")
	s, err := workload.NewSchema()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := workload.New(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	const inst = "over-http"
	otl, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithProtocol(exporter.ProtocolHTTPProtobuf), exporter.WithEndpoint("http://"+col.otlpHTTP),
		exporter.WithExportInterval(200*time.Millisecond), exporter.WithSpanInterval(200*time.Millisecond),
		exporter.WithServiceName(serviceName),
		exporter.WithResourceAttributes(attribute.String("service.instance.id", inst), attribute.String("deployment.environment.name", "e2e")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		otl.Shutdown(ctx)
	})
	const n = 8
	for range n {
		if err := svc.Request(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	flushCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := otl.ForceFlush(flushCtx); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	want, err := expectations(s)
	if err != nil {
		t.Fatal(err)
	}
	got := waitForTables(t, filepath.Join(col.out, "metrics.jsonl"), map[string][]expect{inst: want})
	checkWorkload(t, got, inst, n)

	deadline := time.Now().Add(30 * time.Second)
	for {
		trs, err := loadTraces(filepath.Join(col.out, "traces.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		servers, sql := 0, 0
		for _, sp := range spans(trs) {
			if sp.instance() != inst {
				continue
			}
			switch sp.kind {
			case ptrace.SpanKindServer:
				servers++
			case ptrace.SpanKindClient:
				sql++
			}
		}
		if servers == n && sql >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("over http/protobuf, %d SERVER and %d CLIENT spans at the Collector after 30 s; want %d requests' with their SQL", servers, sql, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
