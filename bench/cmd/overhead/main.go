// Command overhead measures what otelpfs costs the demo's notes service:
// CPU time per request, fully instrumented (every instrument and consumer
// on, the OTLP pipeline exporting every 2 s) against the same handlers
// built on Go's own types, so that noise cannot flip the sign.
//
//	cd bench && go run ./cmd/overhead [-rounds 20] [-requests 2000] [-workers 2] [-nospans] [-defaults]
//	cd bench && go run ./cmd/overhead -callgrind [-rounds 2] [-requests 1000]
//	cd bench && go run ./cmd/overhead -aa [-rounds 80]
//	cd bench && go run ./cmd/overhead -cpu 0 [-rounds 80]
//
// The two variants run in two child processes, each warm and holding its
// own database, and take turns: in each round both serve the same number
// of requests of the demo's mix (in-process, httptest.NewRecorder), one
// after the other, the order alternating from round to round. Each child
// measures its own CPU time (getrusage: every thread, the pipeline's and
// the garbage collector's included) from the end of its previous round to
// the end of this one, so work done between rounds is charged to the next.
// A round's overhead is the ratio of the two variants' CPU per request in
// that round; the report gives the rounds' mean ratio with a 95%
// confidence interval (Student's t), their median, the added CPU per
// request in ns, and the share of the instrumented child's CPU profile
// owned by otelpfs and OpenTelemetry code (a sample belongs to the first
// frame, from the leaf, outside Go's runtime and the standard library's
// utilities; the standard library's I/O, net/http and database/sql are the
// service's work, whoever calls them, except under gRPC: the pipeline's
// own I/O). The
// pipeline exports to an OTLP sink in this process, so the Collector's
// side of the work is not charged to the service.
//
// With -aa both children are raw: an A/A check of the harness itself,
// whose overhead should come out near zero, its confidence interval
// covering it (on the 2-core machine of README's budget table, five runs
// of 80 rounds gave means of -1.9% to +0.9%, each interval about +-3%).
//
// With -cpu N both children run on CPU N (each sees one CPU; the parent is
// not pinned), taking turns as before: a measure of what the
// instrumentation costs one core, with the other core's traffic, and much
// of the noise, out of the way (on the budget table's machine, a run's
// interval was about half as wide). It is a tool for comparing two
// versions of the code, not the budget's figure, which is measured on
// every core.
//
// With -callgrind it counts instructions per request instead, each variant
// under valgrind (see instructions): a measure no other load on the
// machine can move, of the provider's cost without the pipeline.
package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/otelpfs/otelpfs/bench/internal/demoenv"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

type config struct {
	rounds, requests, workers int
	pin                       bool // both children on CPU cpu
	cpu                       int
	child, endpoint, profile  string
	keepProfile               string
	noSpans, defaults, aa     bool
}

func run(args []string, out io.Writer) error {
	var c config
	fs := flag.NewFlagSet("overhead", flag.ContinueOnError)
	fs.IntVar(&c.rounds, "rounds", 20, "measured rounds (each variant serves -requests per round)")
	fs.IntVar(&c.requests, "requests", 2000, "requests per variant per round")
	fs.IntVar(&c.workers, "workers", 2, "goroutines serving requests, each with its own load")
	fs.StringVar(&c.child, "child", "", "internal: run as the raw or instrumented child")
	fs.StringVar(&c.endpoint, "endpoint", "", "internal: the OTLP sink's address")
	fs.StringVar(&c.profile, "cpuprofile", "", "internal: where the child writes its CPU profile")
	fs.StringVar(&c.keepProfile, "profile", "", "also write the instrumented child's CPU profile to this file (for go tool pprof)")
	fs.StringVar(analyze, "analyze", "", "only print the shares of this CPU profile (of BenchmarkDemoInstrumented, say)")
	fs.BoolVar(callgrind, "callgrind", false, "count instructions per request under valgrind instead (noise-free; no pipeline)")
	fs.BoolVar(&c.noSpans, "nospans", false, "export metrics only, no spans")
	fs.BoolVar(&c.aa, "aa", false, "A/A check: the instrumented child is a second raw one, so the report shows the harness's own noise")
	fs.BoolVar(&c.defaults, "defaults", false, "instrument with the default (MySQL's) instruments and consumers, not every one")
	fs.IntVar(topFuncs, "top", 15, "how many of the instrumentation's functions to list")
	fs.IntVar(&c.cpu, "cpu", -1, "pin both children to this one CPU (a quieter comparison of one core's cost; Linux)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.cpu < -1 {
		return fmt.Errorf("-cpu %d: a CPU number, or -1 for none", c.cpu)
	}
	c.pin = c.cpu >= 0
	if c.rounds < 2 || c.requests < 1 || c.workers < 1 {
		return errors.New("-rounds must be >= 2, -requests and -workers >= 1")
	}
	if c.child != "" {
		return child(c, os.Stdin, os.Stdout)
	}
	if *analyze != "" {
		return profileShares(out, *analyze)
	}
	if *callgrind {
		if c.aa {
			return errors.New("-aa is a check of the CPU-time harness; -callgrind counts instructions, which no noise moves")
		}
		if c.pin {
			return errors.New("-cpu pins the CPU-time harness's children; -callgrind runs one thread at a time anyway")
		}
		return instructions(c, out)
	}
	return parent(c, out)
}

// ---- the child: one variant ----

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// child serves rounds on command: "round N" serves N requests and answers
// "cpu NS" (CPU since the previous answer); "quit" stops the profile and
// the service and answers "done METRICS TRACES" (the exports the pipeline
// made).
func child(c config, in io.Reader, out io.Writer) error {
	instrumented := c.child == "instrumented"
	if !instrumented && c.child != "raw" {
		return fmt.Errorf("-child %q: raw or instrumented", c.child)
	}
	svc, err := demoenv.Start(demoenv.Options{Instrumented: instrumented, Endpoint: c.endpoint, NoSpans: c.noSpans, Defaults: c.defaults})
	if err != nil {
		return err
	}
	clients := make([]*demoenv.Client, c.workers)
	for i := range clients {
		clients[i] = demoenv.NewClient(uint64(i) + 1)
	}
	var prof *os.File
	last := cpuTime()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "profile": // from now on
			if prof, err = os.Create(c.profile); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				return err
			}
			fmt.Fprintln(out, "ok")
		case "round":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return err
			}
			if err := serve(svc, clients, n); err != nil {
				return err
			}
			now := cpuTime()
			fmt.Fprintln(out, "cpu", int64(now-last))
			last = now
		case "quit":
			if prof != nil {
				pprof.StopCPUProfile()
				prof.Close()
			}
			if err := svc.Close(); err != nil {
				return err
			}
			fmt.Fprintln(out, "done")
			return nil
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

// serve serves n requests, split among the clients, each on a goroutine.
func serve(svc *demoenv.Service, clients []*demoenv.Client, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, cl := range clients {
		share := n / len(clients)
		if i < n%len(clients) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range share {
				if err := cl.Do(svc.Handler); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ---- the parent ----

type proc struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func (p *proc) ask(line string) (string, error) {
	if _, err := fmt.Fprintln(p.in, line); err != nil {
		return "", fmt.Errorf("%s child: %w", p.name, err)
	}
	if !p.out.Scan() {
		err := p.out.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return "", fmt.Errorf("%s child: %w (its stderr is above)", p.name, err)
	}
	return p.out.Text(), nil
}

func (p *proc) round(n int) (time.Duration, error) {
	ans, err := p.ask("round " + strconv.Itoa(n))
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimPrefix(ans, "cpu "), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s child answered %q", p.name, ans)
	}
	return time.Duration(ns), nil
}

func start(c config, variant, endpoint, profile string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-child", variant, "-endpoint", endpoint, "-cpuprofile", profile,
		"-workers", strconv.Itoa(c.workers), "-nospans="+strconv.FormatBool(c.noSpans),
		"-defaults="+strconv.FormatBool(c.defaults))
	cmd.Stderr = os.Stderr
	if c.pin {
		// A GOMAXPROCS from the environment would give the child more
		// Ps than its one CPU.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{name: variant, cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}, nil
}

func parent(c config, out io.Writer) error {
	sink, err := demoenv.StartSink()
	if err != nil {
		return err
	}
	defer sink.Stop()
	dir, err := os.MkdirTemp("", "otelpfs-overhead")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	profPath := filepath.Join(dir, "instrumented.pprof")
	second := "instrumented"
	if c.aa {
		second = "raw" // the A/A check: the same variant twice
	}
	// Both children run the profiler, so that its cost (SIGPROF on every
	// thread, the profile's encoding) is on both sides; the raw one's
	// profile is not read.
	var raw, inst *proc
	startBoth := func() error {
		var err error
		if raw, err = start(c, "raw", "", filepath.Join(dir, "raw.pprof")); err != nil {
			return err
		}
		if inst, err = start(c, second, sink.Addr, profPath); err != nil {
			raw.in.Close() // the raw child sees its input end, and exits
			raw.cmd.Wait()
			return err
		}
		return nil
	}
	if !c.pin {
		err = startBoth()
	} else {
		done := make(chan error)
		go func() { done <- startPinned(c.cpu, startBoth) }()
		err = <-done
	}
	if err != nil {
		return err
	}
	defer raw.cmd.Wait()
	if c.aa {
		inst.name = "second raw"
		fmt.Fprintln(out, "A/A check (-aa): both children are raw; the \"instrumented\" figures below are the second raw child's")
	}
	defer inst.cmd.Wait()
	defer raw.in.Close()
	defer inst.in.Close()

	what := "metrics and spans"
	if c.noSpans {
		what = "metrics only"
	}
	config := "every instrument and consumer on"
	if c.defaults {
		config = "the default instruments and consumers"
	}
	if c.aa {
		config, what = "nothing instrumented on either side", "idle"
	}
	if c.pin {
		// Both children must have inherited the mask: else the report
		// would say pinned of an unpinned measurement.
		for _, p := range []*proc{raw, inst} {
			got, err := allowedCPUs(p.cmd.Process.Pid)
			if err != nil {
				return err
			}
			if got != strconv.Itoa(c.cpu) {
				return fmt.Errorf("-cpu %d: the %s child may run on CPUs %s", c.cpu, p.name, got)
			}
		}
		fmt.Fprintf(out, "both children pinned to CPU %d (each sees one CPU, and they take turns)\n", c.cpu)
	}
	fmt.Fprintf(out, "overhead: %d rounds of %d requests per variant, %d workers; %s; pipeline (%s) every %s\n",
		c.rounds, c.requests, c.workers, config, what, demoenv.ExportInterval)
	// A warm-up round each, not measured: caches, pools, the JIT-free
	// equivalents (SQLite's page cache, the digest cache).
	for _, p := range []*proc{raw, inst} {
		if _, err := p.round(c.requests); err != nil {
			return err
		}
	}
	for _, p := range []*proc{raw, inst} {
		if _, err := p.ask("profile"); err != nil {
			return err
		}
	}
	var rawPer, instPer, ratios []float64
	for r := range c.rounds {
		order := []*proc{raw, inst}
		if r%2 == 1 {
			order = []*proc{inst, raw}
		}
		var got [2]time.Duration
		for _, p := range order {
			d, err := p.round(c.requests)
			if err != nil {
				return err
			}
			if p == raw {
				got[0] = d
			} else {
				got[1] = d
			}
		}
		rp, ip := float64(got[0])/float64(c.requests), float64(got[1])/float64(c.requests)
		rawPer, instPer, ratios = append(rawPer, rp), append(instPer, ip), append(ratios, ip/rp)
		fmt.Fprintf(out, "round %2d: raw %7.1f µs/req  instrumented %7.1f µs/req  %+6.2f%%\n",
			r+1, rp/1e3, ip/1e3, (ip/rp-1)*100)
	}
	for _, p := range []*proc{raw, inst} {
		if _, err := p.ask("quit"); err != nil {
			return err
		}
	}

	mean, lo, hi := meanCI(ratios)
	dMean, dLo, dHi := meanCI(diffs(instPer, rawPer))
	fmt.Fprintf(out, "\nCPU per request: raw %.1f µs, instrumented %.1f µs (medians of %d rounds)\n",
		median(rawPer)/1e3, median(instPer)/1e3, c.rounds)
	fmt.Fprintf(out, "overhead: %+.2f%% (95%% CI %+.2f%% to %+.2f%%), median %+.2f%%; instrumented slower in %d of %d rounds\n",
		(mean-1)*100, (lo-1)*100, (hi-1)*100, (median(ratios)-1)*100, countAbove(ratios, 1), len(ratios))
	fmt.Fprintf(out, "added CPU per request: %.0f ns (95%% CI %.0f to %.0f ns)\n", dMean, dLo, dHi)
	fmt.Fprintf(out, "pipeline exports received: %d metrics, %d traces\n", sink.Metrics.Load(), sink.Traces.Load())
	if c.keepProfile != "" {
		b, err := os.ReadFile(profPath)
		if err == nil {
			err = os.WriteFile(c.keepProfile, b, 0o644)
		}
		if err != nil {
			return fmt.Errorf("-profile: %w", err)
		}
	}
	return profileShares(out, profPath)
}

func diffs(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

func countAbove(xs []float64, v float64) int {
	n := 0
	for _, x := range xs {
		if x > v {
			n++
		}
	}
	return n
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// meanCI returns the mean of xs and its 95% confidence interval (Student's
// t, two-sided).
func meanCI(xs []float64) (mean, lo, hi float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	t := tQuantile975(len(xs) - 1)
	return mean, mean - t*se, mean + t*se
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom (df >= 1): a table to 30, then the Cornish-Fisher expansion
// about the normal's (within 1e-4 from 30 on).
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	z3, z5, z7, z9 := z*z*z, math.Pow(z, 5), math.Pow(z, 7), math.Pow(z, 9)
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v) +
		(3*z7+19*z5+17*z3-15*z)/(384*v*v*v) +
		(79*z9+776*z7+1482*z5-1920*z3-945*z)/(92160*v*v*v*v)
}

// ---- instructions ----

// instructions counts the instructions each variant executes per request,
// under valgrind's callgrind: the same for the same binary and input
// whatever else the machine does, so noise cannot flip the comparison.
// Each variant serves n and then 3n requests in two fresh runs, and the
// difference over 2n cancels start-up and seeding; with GOMAXPROCS=1 (and
// no asynchronous preemption, which callgrind's signal handling does not
// survive) the runtime has no idle spinning to count. The pipeline is off:
// its intervals are wall time, and under valgrind the service runs about
// fifty times slower than the timer.
func instructions(c config, out io.Writer) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("-callgrind needs valgrind (apt-get install valgrind)")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	run := func(variant string, n int) (float64, error) {
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
			self, "-child", variant, "-workers", strconv.Itoa(c.workers), "-defaults="+strconv.FormatBool(c.defaults))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
		cmd.Stdin = strings.NewReader(fmt.Sprintf("round %d\nquit\n", n))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("valgrind %s: %w\n%s", variant, err, stderr.String())
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if _, v, ok := strings.Cut(line, "Collected : "); ok {
				return strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
		return 0, fmt.Errorf("valgrind %s: no instruction count in its output", variant)
	}
	n := c.requests
	fmt.Fprintf(out, "instructions per request under callgrind: %d and %d requests per run, %d repetitions\n", n, 3*n, c.rounds)
	var per [2][]float64
	for r := range c.rounds {
		for i, v := range []string{"raw", "instrumented"} {
			lo, err := run(v, n)
			if err != nil {
				return err
			}
			hi, err := run(v, 3*n)
			if err != nil {
				return err
			}
			per[i] = append(per[i], (hi-lo)/float64(2*n))
		}
		fmt.Fprintf(out, "repetition %d: raw %.0f, instrumented %.0f (%+.1f%%)\n", r+1, per[0][r], per[1][r], (per[1][r]/per[0][r]-1)*100)
	}
	raw, inst := median(per[0]), median(per[1])
	fmt.Fprintf(out, "medians: raw %.0f, instrumented %.0f instructions per request: %+.0f (%+.1f%%)\n", raw, inst, inst-raw, (inst/raw-1)*100)
	return nil
}

// ---- the profile ----

// owner classifies a function by its package: "" for the runtime and the
// standard library's utilities (memory, locks, atomics, formatting: the
// sample belongs to a caller), else whose work it is. The standard
// library's I/O, networking, HTTP and database/sql are the service's work
// whoever calls them: otelpfs's wrappers call them on the service's
// behalf, and the plain variant makes the same calls. profileShares makes
// one exception: I/O whose nearest caller outside the standard library is
// OpenTelemetry's or gRPC's is the pipeline's.
func owner(fn string) string {
	pkg := packageOf(fn)
	first, _, _ := strings.Cut(pkg, "/")
	switch {
	case !strings.Contains(first, "."):
		for _, p := range []string{"net", "database/sql", "os", "syscall", "internal/poll", "internal/syscall",
			"io", "bufio", "crypto/tls", "mime", "encoding/json"} {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return "the service"
			}
		}
		return ""
	case strings.HasPrefix(pkg, "github.com/otelpfs/otelpfs/examples/"),
		strings.HasPrefix(pkg, "github.com/otelpfs/otelpfs/bench"):
		return "the service"
	case strings.HasPrefix(pkg, "github.com/otelpfs/otelpfs/"):
		return "otelpfs"
	case strings.HasPrefix(pkg, "go.opentelemetry.io/"), strings.HasPrefix(pkg, "google.golang.org/"),
		strings.HasPrefix(pkg, "golang.org/x/net/"):
		return ownerPipeline
	}
	return "the service" // SQLite and the rest of its dependencies
}

// stdlib reports whether fn is the standard library's.
func stdlib(fn string) bool {
	first, _, _ := strings.Cut(packageOf(fn), "/")
	return !strings.Contains(first, ".")
}

// ownerPipeline is owner's name for the OTLP pipeline's packages.
const ownerPipeline = "OpenTelemetry SDK, gRPC"

// packageOf returns the import path of a function's symbol name:
// "github.com/a/b.(*T).M" is "github.com/a/b".
func packageOf(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// profileShares prints who owns the instrumented child's CPU samples.
var (
	topFuncs  = new(int)
	analyze   = new(string)
	callgrind = new(bool)
)

func profileShares(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return fmt.Errorf("the profile: %w", err)
	}
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	shares := map[string]int64{}
	funcs := map[string]int64{} // otelpfs's and OpenTelemetry's owning functions
	var total int64
	for _, s := range p.Sample {
		who, fn := "Go runtime alone (GC workers, scheduler)", ""
		inIO := false // the standard library's I/O was found first
	stack:
		for _, loc := range s.Location { // leaf first
			for _, line := range loc.Line { // the inlined frames, innermost first
				name := line.Function.Name
				o := owner(name)
				if o == "" {
					continue
				}
				if inIO {
					// The I/O's nearest caller outside the standard
					// library: the pipeline's gRPC does I/O the plain
					// variant never does.
					if !stdlib(name) {
						if o == ownerPipeline {
							who, fn = o, name
						}
						break stack
					}
					continue
				}
				who, fn = o, name
				if o != "the service" || !stdlib(name) {
					break stack
				}
				inIO = true
			}
		}
		shares[who] += s.Value[vi]
		if who != "the service" && fn != "" {
			funcs[fn] += s.Value[vi]
		}
		total += s.Value[vi]
	}
	if total == 0 {
		return errors.New("the profile has no samples")
	}
	type share struct {
		who string
		v   int64
	}
	var all []share
	for k, v := range shares {
		all = append(all, share{k, v})
	}
	slices.SortFunc(all, func(a, b share) int { return cmp.Compare(b.v, a.v) })
	fmt.Fprintf(out, "\ninstrumented child's CPU profile (%.1f s of samples), by owner of the sample:\n", time.Duration(total).Seconds())
	for _, s := range all {
		fmt.Fprintf(out, "  %-42s %5.1f%%\n", s.who, float64(s.v)*100/float64(total))
	}
	all = all[:0]
	for k, v := range funcs {
		all = append(all, share{k, v})
	}
	slices.SortFunc(all, func(a, b share) int { return cmp.Compare(b.v, a.v) })
	fmt.Fprintf(out, "the instrumentation's samples by owning function (top %d):\n", min(len(all), *topFuncs))
	for _, s := range all[:min(len(all), *topFuncs)] {
		fmt.Fprintf(out, "  %5.1f%%  %s\n", float64(s.v)*100/float64(total), s.who)
	}
	return nil
}
