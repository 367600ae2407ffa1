package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

const modulePath = "github.com/otelpfs/otelpfs"

// Exit statuses.
const (
	exitAllKilled = 0
	exitSurvivors = 1
	exitSetup     = 2
)

func main() { os.Exit(run()) }

func run() int {
	runRE := flag.String("run", "", "run only the mutations whose name or `description` matches this regexp")
	verbose := flag.Bool("v", false, "print the go test commands, timings and the output of the tests that fail")
	list := flag.Bool("list", false, "check that every mutation applies, list them, and run nothing")
	timeout := flag.Duration("timeout", 5*time.Minute, "cap of one go test run (its -timeout); a run that exceeds it counts as killed by a hang")
	baseline := flag.Bool("baseline", true, "first run the tests without any mutation: ignore the tests that fail there, skip those that hang or crash")
	skip := flag.String("skip", "", "skip the top-level tests whose name matches this `regexp` (no slashes), in every run")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./internal/mutate [-run REGEXP] [-v] [-list] [-timeout D] [-skip REGEXP] [-baseline=false]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		return exitSetup
	}
	re, err := regexp.Compile(*runRE)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: -run: %v\n", err)
		return exitSetup
	}
	if _, err := regexp.Compile(*skip); err != nil || strings.Contains(*skip, "/") {
		fmt.Fprintf(os.Stderr, "mutate: -skip: want a regexp of top-level test names, without slashes\n")
		return exitSetup
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", args...)
		return exitSetup
	}

	root, err := repoRoot()
	if err != nil {
		return fail("%v", err)
	}
	tr, err := snapshot(root)
	if err != nil {
		return fail("%v", err)
	}
	if !bytes.Contains(tr.files["go.mod"].data, []byte("module "+modulePath+"\n")) {
		return fail("%s is not the root of module %s", root, modulePath)
	}

	// Every mutation must apply, selected or not: a list that no longer
	// matches the code fails here, loudly, before anything runs.
	changes := make([]map[string][]byte, len(mutations))
	var bad []string
	names := map[string]bool{}
	for i, m := range mutations {
		if names[m.name] {
			bad = append(bad, fmt.Sprintf("mutation %s: duplicate name", m.name))
		}
		names[m.name] = true
		if changes[i], err = apply(m, tr.files); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintf(os.Stderr, "mutate: %s\n", b)
		}
		return fail("%d of %d mutations no longer match the code: fix them in internal/mutate/mutations.go", len(bad), len(mutations))
	}

	var sel []int
	for i, m := range mutations {
		if re.MatchString(m.name) || re.MatchString(m.area+": "+m.desc) {
			sel = append(sel, i)
		}
	}
	if *list {
		for _, i := range sel {
			m := mutations[i]
			race := ""
			if m.race {
				race = " (+race)"
			}
			fmt.Printf("%-28s %s: %s  [%s%s]\n", m.name, m.area, m.desc, strings.Join(m.pkgs, " "), race)
		}
		fmt.Printf("%d mutations, all apply to %s\n", len(sel), root)
		return exitAllKilled
	}
	if len(sel) == 0 {
		return fail("-run %q matches no mutation", *runRE)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmp, err := os.MkdirTemp("", "otelpfs-mutate-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "module")

	r := &runner{ctx: ctx, tree: tr, work: work, timeout: *timeout, verbose: *verbose,
		userSkip: *skip, base: map[bool]*runResult{}, baseErr: map[bool]error{},
		known: map[string]bool{}}
	var plainPkgs, racePkgs []string
	for _, i := range sel {
		plainPkgs = union(plainPkgs, mutations[i].pkgs)
		if mutations[i].race {
			racePkgs = union(racePkgs, mutations[i].pkgs)
		}
	}
	r.basePkgs = map[bool][]string{false: plainPkgs, true: racePkgs}
	r.useBaseline = *baseline

	fmt.Printf("mutation check of %s: %d of %d mutations, %d files (uncommitted work included), go test -short, cap %v per run\n",
		root, len(sel), len(mutations), len(tr.files), *timeout)
	start := time.Now()
	if *baseline {
		if err := r.ensureBaseline(false); err != nil {
			return fail("%v", err)
		}
	}

	var survivors, errs, flaky []string
	killed := 0
	for k, i := range sel {
		m := mutations[i]
		head := fmt.Sprintf("[%d/%d] %s: %s ...", k+1, len(sel), m.area, m.desc)
		if *verbose {
			fmt.Println(head)
		} else {
			fmt.Print(head + " ")
		}
		t0 := time.Now()
		out := r.mutant(m, changes[i])
		if ctx.Err() != nil {
			fmt.Println()
			return fail("interrupted")
		}
		flaky = append(flaky, out.flaky...)
		line := out.status
		if *verbose {
			line = head + " " + line
		}
		fmt.Printf("%s  [%s]\n", line, time.Since(t0).Round(time.Second))
		switch {
		case out.err:
			errs = append(errs, fmt.Sprintf("%s (%s): %s", m.name, m.area, out.status))
		case out.killed:
			killed++
		default:
			survivors = append(survivors, fmt.Sprintf("%s: %s: %s", m.name, m.area, m.desc))
		}
	}

	fmt.Printf("\nkilled %d of %d mutations in %s\n", killed, len(sel), time.Since(start).Round(time.Second))
	if len(survivors) > 0 {
		fmt.Printf("survivors (%d):\n", len(survivors))
		for _, s := range survivors {
			fmt.Println("  " + s)
		}
	}
	if len(flaky) > 0 {
		fmt.Printf("flaky tests, seen failing without any mutation and ignored: %s\n", strings.Join(flaky, ", "))
	}
	if len(errs) > 0 {
		fmt.Printf("not judged (%d):\n", len(errs))
		for _, e := range errs {
			fmt.Println("  " + e)
		}
		return exitSetup
	}
	if len(survivors) > 0 {
		return exitSurvivors
	}
	return exitAllKilled
}

// repoRoot returns the root of the git repository around the current
// directory.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse --show-toplevel: %v (run from inside the otelpfs repository)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}
