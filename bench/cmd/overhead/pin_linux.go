package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// startPinned runs start (which starts child processes) on an OS thread
// whose affinity is the one CPU cpu, so that the children, forked from
// that thread, inherit it: each sees one CPU (its GOMAXPROCS is 1), and
// both share the same core's caches, one at a time. The calling
// goroutine's thread is given back to the scheduler without the mask.
func startPinned(cpu int, start func() error) error {
	runtime.LockOSThread()
	// Not UnlockOSThread: a thread whose affinity changed is left to exit
	// with the goroutine (LockOSThread without a matching unlock when the
	// goroutine ends), so no other goroutine runs on it pinned. The caller
	// runs start on a goroutine of its own.
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("-cpu %d: %w", cpu, err)
	}
	return start()
}

// allowedCPUs returns the Cpus_allowed_list of process pid.
func allowedCPUs(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no Cpus_allowed_list in /proc/%d/status", pid)
}
