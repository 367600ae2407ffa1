package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// runner runs go test on fresh copies of the tree.
type runner struct {
	ctx         context.Context
	tree        *tree
	work        string
	timeout     time.Duration
	verbose     bool
	useBaseline bool
	userSkip    string              // -skip
	autoSkip    []string            // tests that hang or crash without mutation
	basePkgs    map[bool][]string   // by -race: the packages a baseline covers
	base        map[bool]*runResult // by -race: the baseline, once run
	baseErr     map[bool]error      // by -race: why it cannot serve
	// known holds the tests (package path + "." + name) seen failing
	// without any mutation, in either mode: in a baseline, or when a kill
	// was checked. Their failures never count.
	known map[string]bool
}

// maxBaselineTimeout caps the test binaries of a baseline run, which take
// seconds when nothing is wrong: a test that hangs without any mutation is
// found (and skipped) without waiting out the whole cap.
const maxBaselineTimeout = 2 * time.Minute

// confirmCount is how many times the tests that killed a mutant run again
// without it, to tell a kill from a flaky test.
const confirmCount = 3

func modeName(race bool) string {
	if race {
		return "-race"
	}
	return "plain"
}

// skip returns go test's -skip: the user's pattern and the tests the
// baselines found to hang or crash.
func (r *runner) skip() string {
	var alts []string
	if r.userSkip != "" {
		alts = append(alts, "(?:"+r.userSkip+")")
	}
	if len(r.autoSkip) > 0 {
		alts = append(alts, exactly(r.autoSkip))
	}
	return strings.Join(alts, "|")
}

// exactly returns a -run or -skip pattern matching the top-level tests
// names.
func exactly(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(?:" + strings.Join(quoted, "|") + ")$"
}

func (r *runner) isKnown(pkg, test string) bool { return r.known[pkg+"."+test] }

// learn adds the tests that failed in res to the known failures, and
// returns those it did not know.
func (r *runner) learn(res *runResult) []string {
	var added []string
	for _, path := range sortedKeys(res.pkgs) {
		for _, name := range leafFailures(res.pkgs[path]) {
			if k := path + "." + name; !r.known[k] {
				r.known[k] = true
				added = append(added, shortPkg(path)+"."+name)
			}
		}
	}
	return added
}

// test writes a fresh tree with changed applied and runs go test on it.
func (r *runner) test(changed map[string][]byte, t testRun) (*runResult, error) {
	if err := r.tree.write(r.work, changed); err != nil {
		return nil, err
	}
	t.skip = r.skip()
	if r.verbose {
		fmt.Printf("    go test %s\n", strings.Join(t.args()[2:], " ")) // less -json
	}
	res := goTest(r.ctx, r.work, t)
	if r.verbose {
		fmt.Printf("    ... %s\n", res.duration.Round(time.Second))
	}
	return res, nil
}

// ensureBaseline runs the unmutated tree in the given mode, once.
func (r *runner) ensureBaseline(race bool) error {
	if !r.useBaseline {
		return nil
	}
	if _, done := r.base[race]; done {
		return r.baseErr[race]
	}
	pkgs := r.basePkgs[race]
	if r.verbose || !race {
		fmt.Printf("baseline (%s, no mutation): ", modeName(race))
		if r.verbose {
			fmt.Println()
		}
	}
	var res *runResult
	var err error
	for attempt := 0; ; attempt++ {
		res, err = r.test(nil, testRun{pkgs: pkgs, race: race, timeout: min(r.timeout, maxBaselineTimeout)})
		if err != nil {
			break
		}
		var culprits []string
		culprits, err = baselineProblem(res, pkgs)
		if err == nil || len(culprits) == 0 || attempt == 3 || r.ctx.Err() != nil {
			break
		}
		// A test binary that dies without any mutation would make every
		// mutant look killed: skip its culprits in every run, loudly.
		fmt.Printf("\n    %v: skipping %s in every run; ", err, strings.Join(culprits, ", "))
		r.autoSkip = append(r.autoSkip, culprits...)
	}
	if err != nil {
		err = fmt.Errorf("baseline (%s, no mutation): %v", modeName(race), err)
		r.base[race], r.baseErr[race] = nil, err
		if r.verbose || !race {
			fmt.Println("FAILED")
		}
		return err
	}
	r.base[race] = res
	added := r.learn(res)
	msg := fmt.Sprintf("ok in %s", res.duration.Round(time.Second))
	if len(added) > 0 {
		msg = fmt.Sprintf("ignoring what fails without any mutation: %s (%s)",
			strings.Join(added, ", "), res.duration.Round(time.Second))
	}
	switch {
	case r.verbose || !race:
		fmt.Println(msg)
	case len(added) > 0:
		fmt.Printf("(baseline -race: %s) ", msg)
	}
	return nil
}

// outcome is the verdict on one mutation.
type outcome struct {
	killed bool
	err    bool // not judged: does not build, or no usable baseline
	status string
	flaky  []string // killing tests that failed without the mutation too
}

// mutant runs mutation m (its changed files), plain and, if that does not
// kill it and m asks for it, under -race.
func (r *runner) mutant(m mutation, changed map[string][]byte) outcome {
	modes := []bool{false}
	if m.race {
		modes = append(modes, true)
	}
	var flaky []string
	for _, race := range modes {
		if err := r.ensureBaseline(race); err != nil {
			return outcome{err: true, status: "ERROR (" + err.Error() + ")"}
		}
		res, err := r.test(changed, testRun{pkgs: m.pkgs, race: race, timeout: r.timeout})
		if err != nil {
			return outcome{err: true, status: "ERROR (" + err.Error() + ")"}
		}
		if r.ctx.Err() != nil {
			return outcome{err: true, status: "interrupted"}
		}
		if msg := res.broken(m.pkgs); msg != "" {
			return outcome{err: true, status: "BROKEN (the mutated code does not build: " + msg + ")"}
		}
		v := judge(res, r.base[race], r.isKnown, m.area)
		if v.killed && !v.hang && !v.crash {
			// Tests that fail without the mutation too did not kill it.
			added, err := r.confirm(res, race, m.pkgs)
			if err != nil {
				return outcome{err: true, status: "ERROR (" + err.Error() + ")"}
			}
			if len(added) > 0 {
				flaky = append(flaky, added...)
				v = judge(res, r.base[race], r.isKnown, m.area)
			}
		}
		if r.verbose {
			if len(v.ignored) > 0 {
				fmt.Printf("    ignored: failures of %d test(s) that fail without the mutation too\n", len(v.ignored))
			}
			for _, d := range v.details {
				fmt.Println("    | " + d)
			}
		}
		if v.killed {
			status := "KILLED"
			if v.hang {
				status += " by a hang"
			}
			if race {
				status += " under -race"
			}
			return outcome{killed: true, status: status + " (" + strings.Join(v.reasons, ", ") + ")", flaky: flaky}
		}
	}
	status := "SURVIVED"
	if m.race {
		status += " (plain and -race)"
	}
	if len(flaky) > 0 {
		status += " (failing only in tests that fail without it too: " + strings.Join(flaky, ", ") + ")"
	}
	return outcome{status: status, flaky: flaky}
}

// confirm runs the tests that newly failed in res again on the unmutated
// tree, confirmCount times, and learns those that fail there too: they are
// flaky, and did not kill the mutant. It returns them.
func (r *runner) confirm(res *runResult, race bool, pkgs []string) ([]string, error) {
	var tops []string
	for _, path := range sortedKeys(res.pkgs) {
		for _, name := range leafFailures(res.pkgs[path]) {
			if r.isKnown(path, name) {
				continue
			}
			top, _, _ := strings.Cut(name, "/")
			if !slices.Contains(tops, top) {
				tops = append(tops, top)
			}
		}
	}
	if len(tops) == 0 {
		return nil, nil
	}
	sort.Strings(tops)
	if r.verbose {
		fmt.Printf("    checking the killing tests without the mutation (%d runs):\n", confirmCount)
	}
	again, err := r.test(nil, testRun{pkgs: pkgs, race: race, timeout: r.timeout, run: exactly(tops), count: confirmCount})
	if err != nil {
		return nil, err
	}
	if msg := again.broken(pkgs); msg != "" {
		return nil, fmt.Errorf("checking %s without the mutation: %s", strings.Join(tops, ", "), msg)
	}
	added := r.learn(again)
	if len(added) > 0 && r.verbose {
		fmt.Printf("    flaky, failing without any mutation too, ignored from now on: %s\n", strings.Join(added, ", "))
	}
	return added, nil
}
