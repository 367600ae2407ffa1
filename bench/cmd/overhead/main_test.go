package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestMeanCI(t *testing.T) {
	// Mean 2, sample sd 1, n 4: half width t(3) * 1/2 = 3.182/2.
	mean, lo, hi := meanCI([]float64{1, 2, 3, 2})
	sd := math.Sqrt(2.0 / 3)
	half := 3.182 * sd / 2
	if mean != 2 || math.Abs(lo-(2-half)) > 1e-9 || math.Abs(hi-(2+half)) > 1e-9 {
		t.Errorf("meanCI = %v [%v, %v], want 2 [%v, %v]", mean, lo, hi, 2-half, 2+half)
	}
	if m := median([]float64{5, 1, 3, 2}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
	if q := tQuantile975(1); q != 12.706 {
		t.Errorf("t(1) = %v", q)
	}
}

func TestOwner(t *testing.T) {
	for fn, want := range map[string]string{
		"runtime.mallocgc":                                 "",
		"sync.(*Mutex).Lock":                               "",
		"strconv.AppendInt":                                "",
		"database/sql.(*DB).QueryContext":                  "the service",
		"net/http.(*ServeMux).ServeHTTP":                   "the service",
		"syscall.Syscall6":                                 "the service",
		"github.com/otelpfs/otelpfs/pfscore.(*Thread).End": "otelpfs",
		"github.com/otelpfs/otelpfs/instrument/pfshttp.(*handler).ServeHTTP":                    "otelpfs",
		"github.com/otelpfs/otelpfs/examples/notes.(*Service).getNote":                          "the service",
		"github.com/otelpfs/otelpfs/bench/internal/demoenv.(*Client).Do":                        "the service",
		"go.opentelemetry.io/otel/propagation.extractPart":                                      "OpenTelemetry SDK, gRPC",
		"modernc.org/sqlite/lib._sqlite3VdbeExec":                                               "the service",
		"github.com/XSAM/otelsql.(*otConn).QueryContext":                                        ownerOtelInstrumentation,
		"github.com/felixge/httpsnoop.Wrap":                                                     ownerOtelInstrumentation,
		"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp.(*middleware).serveHTTP": ownerOtelInstrumentation,
		"go.opentelemetry.io/otel/sdk/trace.(*tracer).newRecordingSpan":                         "OpenTelemetry SDK, gRPC",
	} {
		if got := owner(fn); got != want {
			t.Errorf("owner(%q) = %q, want %q", fn, got, want)
		}
	}
	if p := packageOf("github.com/a/b.(*T).M"); p != "github.com/a/b" {
		t.Errorf("packageOf = %q", p)
	}
}

// TestKeepProfile: -profile writes the instrumented child's CPU profile,
// one that go tool pprof (profile.Parse) reads.
func TestKeepProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two children")
	}
	path := filepath.Join(t.TempDir(), "inst.pprof")
	var out strings.Builder
	// So few requests that the profile may have no sample: that error is
	// not this test's, and comes after the profile is written.
	err := parent(config{rounds: 2, requests: 20, workers: 1, keepProfile: path}, &out)
	if err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := profile.Parse(f); err != nil {
		t.Fatalf("the kept profile: %v", err)
	}
}

// TestAA: with -aa both children are raw: the report says so, and the
// pipeline (which only the instrumented variant runs) receives nothing.
func TestAA(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two children")
	}
	var out strings.Builder
	err := parent(config{rounds: 2, requests: 20, workers: 1, aa: true}, &out)
	if err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "A/A check") || !strings.Contains(out.String(), "exports received: 0 metrics, 0 traces") {
		t.Errorf("the report does not say it is an A/A check, or the pipeline ran:\n%s", out.String())
	}
}

// roundLine is a round of the report: each variant's CPU per request, and
// each but the first's difference from it.
var roundLine = regexp.MustCompile(`^round +\d+:((?:  \w+ +[\d.]+ µs/req(?: +[+-][\d.]+%)?)+)$`)

var roundField = regexp.MustCompile(`(\w+) +([\d.]+) µs/req`)

// parseReport returns the variants of the report's round lines, in their
// order (failing if the rounds disagree or there are not want of them),
// and its "LABEL: spans exported per request X" figures.
func parseReport(t *testing.T, out string, rounds int) (labels []string, spansPerReq map[string]float64) {
	t.Helper()
	spansPerReq = map[string]float64{}
	spansLine := regexp.MustCompile(`^(\w+): spans exported per request ([\d.]+); added CPU per exported span -?\d+ ns \(95% CI -?\d+ to -?\d+ ns\)$`)
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "round ") {
			m := roundLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("a round line that does not parse: %q", line)
			}
			var got []string
			for _, f := range roundField.FindAllStringSubmatch(m[1], -1) {
				if v, err := strconv.ParseFloat(f[2], 64); err != nil || v <= 0 {
					t.Errorf("%q: CPU per request %q", line, f[2])
				}
				got = append(got, f[1])
			}
			if labels != nil && !slices.Equal(got, labels) {
				t.Fatalf("round lines with variants %v and %v", labels, got)
			}
			labels = got
			n++
		}
		if m := spansLine.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			spansPerReq[m[1]] = v
		}
	}
	if n != rounds {
		t.Fatalf("%d round lines, want %d:\n%s", n, rounds, out)
	}
	return labels, spansPerReq
}

// TestVariantOtel: -variant otel runs raw against the OpenTelemetry SDK
// variant; its pipeline exports spans (at least otelhttp's server span a
// request), the batch processor drops none, and the report's lines parse.
func TestVariantOtel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two children")
	}
	var out strings.Builder
	const rounds, requests = 3, 40
	err := parent(config{rounds: rounds, requests: requests, workers: 2, variant: "otel"}, &out)
	if err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	report := out.String()
	labels, spans := parseReport(t, report, rounds)
	if !slices.Equal(labels, []string{"raw", "otel"}) {
		t.Errorf("variants %v, want raw and otel", labels)
	}
	if spans["otel"] < 1 {
		t.Errorf("otel: %v spans exported per request, want at least the server span's 1\n%s", spans["otel"], report)
	}
	ended := regexp.MustCompile(`(?m)^otel: spans ended (\d+), exported (\d+) \(the batch span processor dropped (-?\d+)\)$`).FindStringSubmatch(report)
	if ended == nil || ended[1] != ended[2] || ended[3] != "0" {
		t.Errorf("the otel variant's spans ended and exported: %q\n%s", ended, report)
	}
	for _, want := range []string{"otel: overhead ", "otel: added CPU per request ", "otel: pipeline exports received: "} {
		if !strings.Contains(report, "\n"+want) {
			t.Errorf("no %q line:\n%s", want, report)
		}
	}
	if strings.Contains(report, "otelpfs") {
		t.Errorf("-variant otel ran the otelpfs variant:\n%s", report)
	}
}

// TestVariantAll: -variant all is one interleaved run of three children,
// raw, otelpfs and otel, every round each; the report compares both with
// raw, and their costs per exported span with each other.
func TestVariantAll(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three children")
	}
	var out strings.Builder
	const rounds = 3
	err := parent(config{rounds: rounds, requests: 40, workers: 1, variant: "all"}, &out)
	if err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	report := out.String()
	labels, spans := parseReport(t, report, rounds)
	if !slices.Equal(labels, []string{"raw", "otelpfs", "otel"}) {
		t.Errorf("variants %v, want raw, otelpfs and otel", labels)
	}
	if spans["otel"] < 1 {
		t.Errorf("otel: %v spans exported per request\n%s", spans["otel"], report)
	}
	for _, l := range []string{"otelpfs", "otel"} {
		if !strings.Contains(report, "\n"+l+": added CPU per request ") {
			t.Errorf("no added CPU per request for %s:\n%s", l, report)
		}
	}
	if !strings.Contains(report, "\notelpfs: events lost before they became spans ") {
		t.Errorf("no otelpfs losses line:\n%s", report)
	}
	ratio := strings.Contains(report, "\nadded CPU per exported span, otelpfs / otel: ")
	if ratio != (spans["otelpfs"] > 0 && spans["otel"] > 0) {
		t.Errorf("the per-span ratio line is there: %v, otelpfs exported %v spans per request\n%s", ratio, spans["otelpfs"], report)
	}
}

// TestVariantFlag: an unknown -variant, or one with -aa, is an error.
func TestVariantFlag(t *testing.T) {
	for _, args := range [][]string{{"-variant", "sdk"}, {"-aa", "-variant", "otel"}, {"-callgrind", "-variant", "x"}} {
		var out strings.Builder
		if err := run(args, &out); err == nil || !strings.Contains(err.Error(), "-variant") {
			t.Errorf("%v: err %v, want an error about -variant", args, err)
		}
	}
}

// TestPermutations: the rounds' orders are every permutation once, the
// first the variants' own order (with two, alternating as before).
func TestPermutations(t *testing.T) {
	if got := permutations(2); !slices.EqualFunc(got, [][]int{{0, 1}, {1, 0}}, slices.Equal) {
		t.Errorf("permutations(2) = %v", got)
	}
	got := permutations(3)
	seen := map[string]bool{}
	for _, p := range got {
		q := slices.Clone(p)
		slices.Sort(q)
		if !slices.Equal(q, []int{0, 1, 2}) {
			t.Errorf("%v is not a permutation of 0, 1, 2", p)
		}
		seen[fmt.Sprint(p)] = true
	}
	if len(got) != 6 || len(seen) != 6 || !slices.Equal(got[0], []int{0, 1, 2}) {
		t.Errorf("permutations(3) = %v", got)
	}
}

// TestParseDone: a child's answer to quit, as the parent and the
// callgrind runs read it.
func TestParseDone(t *testing.T) {
	ended, events, spans, err := parseDone("done 12 3 4")
	if err != nil || ended != 12 || events != 3 || spans != 4 {
		t.Errorf("parseDone = %d, %d, %d, %v", ended, events, spans, err)
	}
	for _, bad := range []string{"done", "done 12", "cpu 5"} {
		if _, _, _, err := parseDone(bad); err == nil {
			t.Errorf("parseDone(%q) took it", bad)
		}
	}
}
