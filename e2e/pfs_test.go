package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

// buildPfs builds cmd/pfs into a temporary directory, as a user's go build
// would, and returns the binary's path.
func buildPfs(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pfs")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/otelpfs/otelpfs/cmd/pfs")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/pfs: %v\n%s", err, out)
	}
	return bin
}

// TestPfsTimersJSON runs the built binary and checks DESIGN.md's contract for
// pfs timers --json: the five timers, NANOSECOND at 1e9, and on linux/amd64
// a CYCLE frequency within 2% of the TSC frequency the kernel measured.
func TestPfsTimersJSON(t *testing.T) {
	out, err := exec.Command(buildPfs(t), "timers", "--json").Output()
	if err != nil {
		t.Fatalf("pfs timers --json: %v", err)
	}
	var rows []struct {
		Name       string  `json:"TIMER_NAME"`
		Frequency  uint64  `json:"TIMER_FREQUENCY"`
		Resolution uint64  `json:"TIMER_RESOLUTION"`
		Overhead   *uint64 `json:"TIMER_OVERHEAD"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := []string{"CYCLE", "NANOSECOND", "MICROSECOND", "MILLISECOND", "TICK"}
	if len(rows) != len(want) {
		t.Fatalf("got %d timers, want 5:\n%s", len(rows), out)
	}
	for i, r := range rows {
		if r.Name != want[i] || r.Overhead == nil {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if rows[1].Frequency != 1_000_000_000 {
		t.Errorf("NANOSECOND frequency %d, want 1000000000", rows[1].Frequency)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	log, _ := exec.Command("dmesg").Output()
	if len(log) == 0 {
		log, _ = os.ReadFile("/var/log/kern.log")
	}
	// The refined calibration where the kernel made one, else its first figure.
	m := regexp.MustCompile(`tsc: Refined TSC clocksource calibration: ([0-9.]+) MHz`).FindSubmatch(log)
	if m == nil {
		m = regexp.MustCompile(`tsc: Detected ([0-9.]+) MHz processor`).FindSubmatch(log)
	}
	if m == nil {
		t.Log("the kernel's TSC frequency is not in its log; CYCLE not cross-checked")
		return
	}
	mhz, _ := strconv.ParseFloat(string(m[1]), 64)
	got := float64(rows[0].Frequency) / 1e6
	if math.Abs(got-mhz)/mhz > 0.02 {
		t.Errorf("CYCLE %.3f MHz vs kernel TSC %.3f MHz: more than 2%% apart", got, mhz)
	}
	t.Logf("CYCLE %.3f MHz, kernel TSC %.3f MHz", got, mhz)
}
