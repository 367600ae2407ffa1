package main

import (
	"math"
	"testing"
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
