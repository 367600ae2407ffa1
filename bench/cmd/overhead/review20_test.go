package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestReview20_TQuantileBeyond30 shows that the t quantile used for the
// confidence interval is too small beyond 30 degrees of freedom (2.000
// from 31 to 60, 1.96 beyond), so the interval is narrower than 95% for
// -rounds 32 to ~200. Reference values: t(0.975; 31) = 2.0395,
// t(0.975; 45) = 2.0141, t(0.975; 61) = 1.9996, t(0.975; 120) = 1.9799.
func TestReview20_TQuantileBeyond30(t *testing.T) {
	for df, want := range map[int]float64{30: 2.0423, 31: 2.0395, 45: 2.0141, 61: 1.9996, 120: 1.9799, 1000: 1.9623} {
		if got := tQuantile975(df); math.Abs(got-want) > 0.002 {
			t.Errorf("tQuantile975(%d) = %.4f, want %.4f", df, got, want)
		}
	}
}

// TestReview20_PipelineIOOwner shows that the OTLP pipeline's network
// writes (gRPC's transport calling net.Conn.Write, down to the syscall)
// are charged to "the service": the rule that the standard library's I/O
// is the service's work whoever calls it holds for otelpfs's wrappers of
// the service's own I/O, but the plain variant makes no gRPC call at all.
func TestReview20_PipelineIOOwner(t *testing.T) {
	stack := []string{ // leaf first
		"syscall.Syscall",
		"internal/poll.(*FD).Write",
		"net.(*conn).Write",
		"google.golang.org/grpc/internal/transport.(*bufWriter).flushKeepBuffer",
		"google.golang.org/grpc/internal/transport.(*loopyWriter).run",
	}
	got := sharesOf(t, stack)
	if !strings.Contains(got, "OpenTelemetry SDK, gRPC") {
		t.Errorf("a sample of gRPC's socket write is not the pipeline's:\n%s", got)
	}
	// The service's own file write through otelpfs's wrapper stays the
	// service's.
	got = sharesOf(t, []string{"syscall.Syscall", "internal/poll.(*FD).Write", "os.(*File).Write",
		"github.com/otelpfs/otelpfs/instrument.(*FileFor).Write",
		"github.com/otelpfs/otelpfs/examples/notes.(*Service).journalf"})
	if !strings.Contains(got, "the service") || strings.Contains(got, "OpenTelemetry") {
		t.Errorf("the journal's write through the wrapper:\n%s", got)
	}
}

// sharesOf writes a profile of one sample with stack and returns
// profileShares's first share line.
func sharesOf(t *testing.T, stack []string) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
	}
	s := &profile.Sample{Value: []int64{1, 10000000}}
	for i, fn := range stack {
		f := &profile.Function{ID: uint64(i + 1), Name: fn}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		s.Location = append(s.Location, l)
	}
	p.Sample = []*profile.Sample{s}
	path := filepath.Join(t.TempDir(), "p.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var b strings.Builder
	if err := profileShares(&b, path); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), "%") && strings.HasPrefix(sc.Text(), "  ") {
			return sc.Text()
		}
	}
	return b.String()
}

// TestMain lets the test binary be the overhead command's child: parent
// starts os.Executable with -child. The child's commands are logged to
// REVIEW20_LOG_DIR/VARIANT.
func TestMain(m *testing.M) {
	for i, a := range os.Args {
		if a == "-child" && i+1 < len(os.Args) {
			if dir := os.Getenv("REVIEW20_LOG_DIR"); dir != "" {
				log, err := os.Create(filepath.Join(dir, os.Args[i+1]))
				if err != nil {
					panic(err)
				}
				r, w, err := os.Pipe()
				if err != nil {
					panic(err)
				}
				stdin := os.Stdin
				go func() {
					io.Copy(io.MultiWriter(w, log), stdin)
					w.Close()
				}()
				os.Stdin = r
			}
			if err := run(os.Args[1:], os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// TestReview20_ProfilerOnBothSides shows that only the instrumented child
// runs the CPU profiler during the measured rounds: the profiler's own
// cost (SIGPROF handling and stack unwinding on every thread, the
// profile's encoding) is work the raw child does not do, charged to the
// instrumented variant's CPU per request.
func TestReview20_ProfilerOnBothSides(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two children")
	}
	dir := t.TempDir()
	t.Setenv("REVIEW20_LOG_DIR", dir)
	var out strings.Builder
	// So few requests that the profile may have no sample: that error is
	// not this test's.
	if err := parent(config{rounds: 2, requests: 20, workers: 1}, &out); err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	profiled := map[string]bool{}
	for _, v := range []string{"raw", "instrumented"} {
		b, err := os.ReadFile(filepath.Join(dir, v))
		if err != nil {
			t.Fatal(err)
		}
		profiled[v] = strings.Contains(string(b), "profile\n")
	}
	if profiled["raw"] != profiled["instrumented"] {
		t.Errorf("profiled during the measured rounds: %v", profiled)
	}
}
