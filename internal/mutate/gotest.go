package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// events of the go command.
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events
	Test        string
	Output      string
	FailedBuild string
}

// pkgResult is what one package's test binary did.
type pkgResult struct {
	result      string          // "ok", "fail", "skip"; "" if none was reported
	failed      map[string]bool // tests (and subtests) reported failed
	running     map[string]bool // tests started and not finished
	raced       map[string]bool // failed tests that reported a data race
	out         map[string][]string
	crashed     string // the first "panic:" or "fatal error:" line, if any
	timedOut    bool   // the binary's -timeout fired
	buildFailed bool
}

// runResult is one `go test` run over some packages.
type runResult struct {
	pkgs     map[string]*pkgResult
	build    []string // compiler output, if a build failed
	hang     bool     // the run outlived its wall-clock cap and was killed
	stderr   string
	exitErr  error
	duration time.Duration
}

// maxOut bounds the output lines kept per test, for -v.
const maxOut = 12

// testRun is one go test command.
type testRun struct {
	pkgs    []string
	race    bool
	timeout time.Duration // the test binaries' -timeout
	skip    string        // -skip, if not empty
	run     string        // -run, if not empty
	count   int           // -count; 1 if 0
}

func (t testRun) args() []string {
	args := []string{"test", "-json", fmt.Sprintf("-count=%d", max(t.count, 1)), "-short", "-vet=off", "-trimpath",
		"-timeout=" + t.timeout.String()}
	if t.race {
		args = append(args, "-race")
	}
	if t.run != "" {
		args = append(args, "-run="+t.run)
	}
	if t.skip != "" {
		args = append(args, "-skip="+t.skip)
	}
	return append(args, t.pkgs...)
}

// goTest runs go test in dir and parses its -json output. The run as a
// whole (builds included) is killed a few minutes after the binaries'
// timeout.
func goTest(ctx context.Context, dir string, t testRun) *runResult {
	ctx, cancel := context.WithTimeout(ctx, t.timeout+3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", t.args()...)
	cmd.Dir = dir
	// The user's GOCACHE and GOFLAGS are inherited: builds are incremental
	// across mutations and runs (-trimpath keeps the temp dir's path out of
	// the cache keys). GOWORK=off: no go.work above the temp dir applies.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	r := &runResult{pkgs: map[string]*pkgResult{}}
	start := time.Now()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		r.exitErr = err
		return r
	}
	r.parse(stdout)
	r.exitErr = cmd.Wait()
	r.duration = time.Since(start)
	r.hang = ctx.Err() == context.DeadlineExceeded
	r.stderr = stderr.String()
	return r
}

func (r *runResult) pkg(p string) *pkgResult {
	pr := r.pkgs[p]
	if pr == nil {
		pr = &pkgResult{failed: map[string]bool{}, running: map[string]bool{},
			raced: map[string]bool{}, out: map[string][]string{}}
		r.pkgs[p] = pr
	}
	return pr
}

// parse reads go test -json output. Lines that are not JSON (there should
// be none) are kept as build output.
func (r *runResult) parse(rd io.Reader) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			r.build = append(r.build, string(line))
			continue
		}
		switch e.Action {
		case "build-output":
			r.build = append(r.build, strings.TrimRight(e.Output, "\n"))
			continue
		case "build-fail":
			r.pkg(e.ImportPath).buildFailed = true
			continue
		}
		if e.Package == "" {
			continue
		}
		p := r.pkg(e.Package)
		switch e.Action {
		case "run":
			p.running[e.Test] = true
		case "pass", "skip", "fail":
			if e.Test == "" {
				p.result = map[string]string{"pass": "ok", "skip": "skip", "fail": "fail"}[e.Action]
				if e.FailedBuild != "" {
					p.buildFailed = true
				}
				break
			}
			delete(p.running, e.Test)
			if e.Action == "fail" {
				p.failed[e.Test] = true
			}
		case "output":
			o := strings.TrimRight(e.Output, "\n")
			if len(p.out[e.Test]) < maxOut {
				p.out[e.Test] = append(p.out[e.Test], o)
			}
			t := strings.TrimSpace(o)
			switch {
			case strings.HasPrefix(t, "panic: test timed out"):
				p.timedOut = true
			case p.crashed == "" && (strings.HasPrefix(o, "panic: ") || strings.HasPrefix(o, "fatal error: ")):
				p.crashed = t
			case strings.Contains(t, "race detected during execution of test") && e.Test != "":
				p.raced[e.Test] = true
			}
		}
	}
}

// broken reports why the run says nothing about the tests: a build that
// failed, or a go command that gave no result. "" if the run is usable.
func (r *runResult) broken(pkgs []string) string {
	for _, p := range sortedKeys(r.pkgs) {
		if r.pkgs[p].buildFailed {
			msg := "build failed: " + p
			for _, l := range r.build {
				if l != "" && !strings.HasPrefix(l, "#") {
					msg += ": " + strings.TrimSpace(l)
					break
				}
			}
			return msg
		}
	}
	if r.hang {
		return ""
	}
	for _, p := range r.pkgs {
		if p.result != "" {
			return ""
		}
	}
	msg := fmt.Sprintf("go test %s gave no result", strings.Join(pkgs, " "))
	if r.exitErr != nil {
		msg += ": " + r.exitErr.Error()
	}
	if s := strings.TrimSpace(r.stderr + "\n" + strings.Join(r.build, "\n")); s != "" {
		msg += "\n" + indent(s)
	}
	return msg
}

// leafFailures returns the failed tests of p, leaving out a parent whose
// subtest failed (it fails because of it).
func leafFailures(p *pkgResult) []string {
	var out []string
	for name := range p.failed {
		leaf := true
		for other := range p.failed {
			if strings.HasPrefix(other, name+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// topRunning returns the tests still running when the binary died.
func topRunning(p *pkgResult) []string {
	var out []string
	for name := range p.running {
		if name != "" && !strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// verdict is what a run says about a mutation, against the baseline run of
// the same mode: which tests newly failed, and whether a binary crashed or
// hung.
type verdict struct {
	killed  bool
	hang    bool     // a run or a binary timed out
	crash   bool     // a binary died otherwise
	reasons []string // failing tests, or "panic in …", "timeout in …"
	ignored []string // failures the baseline has too
	details []string // output of the new failures, for -v
}

// judge judges run r. known reports the tests that fail without any
// mutation (in a baseline, or when a kill was confirmed), which do not count;
// base is the baseline run of the same mode, or nil.
func judge(r, base *runResult, known func(pkg, test string) bool, area string) verdict {
	var v verdict
	label := func(pkgPath, name string) string {
		if short := shortPkg(pkgPath); short != area {
			return short + "." + name
		}
		return name
	}
	if r.hang {
		v.killed, v.hang = true, true
		v.reasons = append(v.reasons, "the whole run exceeded its cap")
	}
	for _, path := range sortedKeys(r.pkgs) {
		p := r.pkgs[path]
		var bp *pkgResult
		if base != nil {
			bp = base.pkgs[path]
		}
		for _, name := range leafFailures(p) {
			if known(path, name) {
				v.ignored = append(v.ignored, label(path, name))
				continue
			}
			v.killed = true
			l := label(path, name)
			if p.raced[name] {
				l += " (data race)"
			}
			v.reasons = append(v.reasons, l)
			v.details = append(v.details, p.out[name]...)
		}
		switch {
		case p.timedOut:
			v.killed, v.hang = true, true
			v.reasons = append(v.reasons, "timeout in "+runningIn(path, p, label))
			v.details = append(v.details, p.out[""]...)
		case p.crashed != "":
			v.killed, v.crash = true, true
			v.reasons = append(v.reasons, "crash in "+runningIn(path, p, label)+": "+p.crashed)
			v.details = append(v.details, p.out[""]...)
		case p.result == "fail" && len(p.failed) == 0 && (bp == nil || bp.result != "fail"):
			v.killed, v.crash = true, true
			v.reasons = append(v.reasons, "FAIL "+shortPkg(path)+" without a failing test")
			v.details = append(v.details, p.out[""]...)
		}
	}
	return v
}

func runningIn(path string, p *pkgResult, label func(string, string) string) string {
	names := topRunning(p)
	if len(names) == 0 {
		return shortPkg(path)
	}
	for i, n := range names {
		names[i] = label(path, n)
	}
	return strings.Join(names, ", ")
}

// shortPkg turns an import path of the module into its directory.
func shortPkg(p string) string {
	if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok {
		return rest
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// baselineProblem reports why a baseline run cannot serve: a build failure,
// no result, or a test binary that crashed or hung, which kills the tests
// after the culprit and would make every mutant look killed. In the last
// case it returns the top-level tests to blame (those running when the
// binary died, and those that failed), which the caller may skip.
func baselineProblem(r *runResult, pkgs []string) (culprits []string, err error) {
	if msg := r.broken(pkgs); msg != "" {
		return nil, errors.New(msg)
	}
	if r.hang {
		return nil, errors.New("the run exceeded its cap")
	}
	var why []string
	for _, path := range sortedKeys(r.pkgs) {
		p := r.pkgs[path]
		if !p.timedOut && p.crashed == "" {
			continue
		}
		what := "timed out"
		if !p.timedOut {
			what = "crashed (" + p.crashed + ")"
		}
		names := topRunning(p)
		for _, f := range leafFailures(p) {
			top, _, _ := strings.Cut(f, "/")
			if !slices.Contains(names, top) {
				names = append(names, top)
			}
		}
		sort.Strings(names)
		why = append(why, fmt.Sprintf("%s %s in %s", shortPkg(path), what, strings.Join(names, ", ")))
		if len(names) == 0 {
			return nil, errors.New(strings.Join(why, "; "))
		}
		culprits = append(culprits, names...)
	}
	if len(why) > 0 {
		return culprits, errors.New(strings.Join(why, "; "))
	}
	return nil, nil
}
