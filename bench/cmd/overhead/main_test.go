package main

import (
	"math"
	"os"
	"path/filepath"
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
		"github.com/otelpfs/otelpfs/instrument/pfshttp.(*handler).ServeHTTP": "otelpfs",
		"github.com/otelpfs/otelpfs/examples/notes.(*Service).getNote":       "the service",
		"github.com/otelpfs/otelpfs/bench/internal/demoenv.(*Client).Do":     "the service",
		"go.opentelemetry.io/otel/propagation.extractPart":                   "OpenTelemetry SDK, gRPC",
		"modernc.org/sqlite/lib._sqlite3VdbeExec":                            "the service",
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
