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
// that thread, inherit it: each sees one CPU, and both share that core's
// caches, one at a time. The thread's own mask is put back before it
// returns to the scheduler, so the parent itself is not pinned.
func startPinned(cpu int, start func() error) error {
	if cpu < 0 {
		return fmt.Errorf("-cpu %d: not a CPU number", cpu)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("-cpu %d: %w", cpu, err)
	}
	if !old.IsSet(cpu) { // also a CPU beyond what a CPUSet holds
		allowed, _ := allowedCPUs(os.Getpid())
		return fmt.Errorf("-cpu %d: this process may run on CPUs %s only", cpu, allowed)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("-cpu %d: %w", cpu, err)
	}
	err := start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// The thread cannot be trusted to the scheduler: keep it locked,
		// so that it ends with this goroutine (or, the main thread,
		// sleeps) and runs nothing else.
		runtime.LockOSThread()
	}
	return err
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

// firstCPU returns a CPU this process may run on.
func firstCPU() (int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, err
	}
	for i := range 1024 { // a CPUSet's size
		if set.IsSet(i) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("an empty affinity mask")
}
