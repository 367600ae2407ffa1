package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// threadMasks returns the Cpus_allowed_list of each of this process's
// threads.
func threadMasks(t *testing.T) map[string]string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string)
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that exited meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				m[f] = strings.TrimSpace(v)
			}
		}
	}
	return m
}

// TestPinned: with -cpu both children inherit the one-CPU mask (parent
// checks their /proc status before it says so), even with GOMAXPROCS in
// the environment; the parent's own threads keep their masks; and a CPU
// this process may not use is an error, not an unpinned run.
func TestPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two children")
	}
	cpu, err := firstCPU()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := allowedCPUs(os.Getpid())
	t.Setenv("GOMAXPROCS", "4")
	var out strings.Builder
	err = parent(config{rounds: 2, requests: 20, workers: 1, pin: true, cpu: cpu}, &out)
	if err != nil && !strings.Contains(err.Error(), "no samples") {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	if want := "both children pinned to CPU " + strconv.Itoa(cpu); !strings.Contains(out.String(), want) {
		t.Errorf("the report does not say %q:\n%s", want, out.String())
	}
	for f, m := range threadMasks(t) {
		if m != before {
			t.Errorf("after a pinned run, %s: CPUs %s, want the process's %s", f, m, before)
		}
	}
	for _, bad := range []int{1 << 20, 1023} {
		out.Reset()
		err = parent(config{rounds: 2, requests: 20, workers: 1, pin: true, cpu: bad}, &out)
		if err == nil || !strings.Contains(err.Error(), "-cpu") {
			t.Errorf("-cpu %d: err %v, want the pinning's error\n%s", bad, err, out.String())
		}
	}
}

// TestCPUFlag: -cpu below -1, or with -callgrind, is an error.
func TestCPUFlag(t *testing.T) {
	for _, args := range [][]string{{"-cpu", "-5"}, {"-cpu", "0", "-callgrind"}} {
		var out strings.Builder
		if err := run(args, &out); err == nil || !strings.Contains(err.Error(), "-cpu") {
			t.Errorf("%v: err %v, want an error about -cpu", args, err)
		}
	}
}
