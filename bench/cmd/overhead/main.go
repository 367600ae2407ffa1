// Command overhead measures what otelpfs costs the demo's notes service:
// CPU time per request, fully instrumented (every instrument and consumer
// on, the OTLP pipeline exporting every 2 s) against the same handlers
// built on Go's own types, so that noise cannot flip the sign; and what
// the OpenTelemetry SDK alone costs the same service, instrumented as a Go
// team would otherwise deploy it (otelhttp, XSAM/otelsql, W3C trace
// context, the SDK's batch span processor and periodic reader exporting
// OTLP/gRPC every 2 s: bench/internal/demoenv's otel.go).
//
//	cd bench && go run ./cmd/overhead [-variant otelpfs|otel|all] [-rounds 20] [-requests 2000] [-workers 2] [-nospans] [-defaults]
//	cd bench && go run ./cmd/overhead -callgrind [-variant ...] [-rounds 2] [-requests 1000]
//	cd bench && go run ./cmd/overhead -aa [-rounds 80]
//	cd bench && go run ./cmd/overhead -cpu 0 [-rounds 80]
//	cd bench && go run ./cmd/overhead -variant all [-spaninterval 200ms] [-spanqueue 65536]
//
// -variant says what runs against the raw baseline: otelpfs (the
// default), otel (the OpenTelemetry SDK variant), or all (both, a
// three-way run: raw, otelpfs, otel). The variants run in child
// processes, each warm and holding its own database, and take turns: in
// each round each serves the same number of requests of the demo's mix
// (in-process, httptest.NewRecorder), one after the other, the order
// going through every permutation of the variants from round to round
// (with two, alternating). Each child
// measures its own CPU time (getrusage: every thread, the pipeline's and
// the garbage collector's included) from the end of its previous round to
// the end of this one, so work done between rounds is charged to the next.
// A round's overhead is the ratio of a variant's CPU per request to the
// raw one's in that round; the report gives, for each variant, the
// rounds' mean ratio with a 95% confidence interval (Student's t), their
// median, the added CPU per request in ns, the spans its pipeline
// exported per request (counted by the sink), the added CPU per exported
// span (the figure of issue 27's budget: otelpfs's at most a quarter of
// the SDK's; in a three-way run the report gives the ratio), and the
// share of its child's CPU profile owned by otelpfs and OpenTelemetry
// code (a sample belongs to the first
// frame, from the leaf, outside Go's runtime and the standard library's
// utilities; the standard library's I/O, net/http and database/sql are the
// service's work, whoever calls them, except under gRPC: the pipeline's
// own I/O). Each
// variant's pipeline exports to an OTLP/gRPC sink of its own in this
// process, so the Collector's side of the work is not charged to the
// service, and both pay for the same OTLP encoding and transport.
//
// The spans exported are what the sinks received. The otel variant's batch
// span processor has a queue of 65536 spans (demoenv's otelQueueSize: its
// default of 2048 drops spans at the benchmark's rate); the report gives
// the spans it ended and dropped. The otelpfs pipeline reads the trees its
// engine captured every -spaninterval (default 2 s) into a queue of
// -spanqueue spans (default the exporter's, 8192): at the benchmark's
// rate (far above the demo's) a read's spans overflow it, and the capture's
// queue of 4096 trees fills between two reads, so it exports a fraction of
// its requests (the report gives its global_status losses), which the cost
// per exported span counts against it; -spaninterval 200ms -spanqueue
// 65536 exports them all.
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
// machine can move, of the provider's cost without the pipeline (the otel
// variant's spans go through its batch processor to an exporter that drops
// them: the report gives its instructions per span).
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
	variant                   string // against raw: otelpfs, otel or all
	spanInterval              time.Duration
	spanQueue                 int
}

// A variant is one child's service.
type variant struct {
	child string // its -child value: raw, instrumented or otel
	label string // its name in the report
}

var (
	variantRaw     = variant{"raw", "raw"}
	variantOtelpfs = variant{"instrumented", "otelpfs"}
	variantOtel    = variant{"otel", "otel"}
)

// variants returns the children's variants, raw first.
func (c config) variants() ([]variant, error) {
	var vs []variant
	switch c.variant {
	case "", "otelpfs":
		vs = []variant{variantRaw, variantOtelpfs}
	case "otel":
		vs = []variant{variantRaw, variantOtel}
	case "all":
		vs = []variant{variantRaw, variantOtelpfs, variantOtel}
	default:
		return nil, fmt.Errorf("-variant %q: otelpfs, otel or all", c.variant)
	}
	if c.aa {
		if c.variant != "" && c.variant != "otelpfs" {
			return nil, errors.New("-aa runs two raw children: no -variant")
		}
		vs = []variant{variantRaw, {"raw", "raw2"}}
	}
	return vs, nil
}

func run(args []string, out io.Writer) error {
	var c config
	fs := flag.NewFlagSet("overhead", flag.ContinueOnError)
	fs.IntVar(&c.rounds, "rounds", 20, "measured rounds (each variant serves -requests per round)")
	fs.IntVar(&c.requests, "requests", 2000, "requests per variant per round")
	fs.IntVar(&c.workers, "workers", 2, "goroutines serving requests, each with its own load")
	fs.StringVar(&c.variant, "variant", "otelpfs", "what runs against raw: otelpfs, otel (the OpenTelemetry SDK: otelhttp, otelsql) or all (both, one interleaved run)")
	fs.StringVar(&c.child, "child", "", "internal: run as the raw, instrumented (otelpfs) or otel child")
	fs.StringVar(&c.endpoint, "endpoint", "", "internal: the OTLP sink's address")
	fs.StringVar(&c.profile, "cpuprofile", "", "internal: where the child writes its CPU profile")
	fs.StringVar(&c.keepProfile, "profile", "", "also write the instrumented child's CPU profile to this file (for go tool pprof; with -variant all, the otel child's to NAME.otel.EXT beside it)")
	fs.StringVar(analyze, "analyze", "", "only print the shares of this CPU profile (of BenchmarkDemoInstrumented, say)")
	fs.BoolVar(callgrind, "callgrind", false, "count instructions per request under valgrind instead (noise-free; no pipeline)")
	fs.BoolVar(&c.noSpans, "nospans", false, "export metrics only, no spans")
	fs.BoolVar(&c.aa, "aa", false, "A/A check: the instrumented child is a second raw one, so the report shows the harness's own noise")
	fs.BoolVar(&c.defaults, "defaults", false, "instrument with the default (MySQL's) instruments and consumers, not every one")
	fs.DurationVar(&c.spanInterval, "spaninterval", demoenv.ExportInterval, "how often the otelpfs pipeline reads its captured trees for spans (0: the metrics' interval)")
	fs.IntVar(&c.spanQueue, "spanqueue", 0, "the otelpfs pipeline's span queue (0: the exporter's default; the otel variant's batch span processor holds 65536)")
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
	if c.spanInterval < 0 || c.spanQueue < 0 {
		return errors.New("-spaninterval and -spanqueue must be >= 0 (0: the default)")
	}
	if c.child != "" {
		return child(c, os.Stdin, os.Stdout)
	}
	if _, err := c.variants(); err != nil {
		return err
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
// the service (the pipeline's last export) and answers "done ENDED EVENTS
// SPANS": the spans the otel variant's SDK ended, and the events and spans
// the otelpfs variant's pipeline lost (each 0 for the other variants).
func child(c config, in io.Reader, out io.Writer) error {
	o := demoenv.Options{Endpoint: c.endpoint, NoSpans: c.noSpans, Defaults: c.defaults,
		SpanInterval: c.spanInterval, SpanQueueSize: c.spanQueue}
	switch c.child {
	case "raw":
		o.Endpoint = ""
	case "instrumented":
		o.Instrumented = true
	case "otel":
		o.Otel = true
	default:
		return fmt.Errorf("-child %q: raw, instrumented or otel", c.child)
	}
	svc, err := demoenv.Start(o)
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
			events, spans := svc.ExportLosses()
			fmt.Fprintln(out, "done", svc.SpansEnded(), events, spans)
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

// parseDone parses a child's answer to "quit": "done ENDED EVENTS SPANS".
func parseDone(ans string) (ended, eventsLost, spansLost int64, err error) {
	_, err = fmt.Sscanf(ans, "done %d %d %d", &ended, &eventsLost, &spansLost)
	return ended, eventsLost, spansLost, err
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
		"-defaults="+strconv.FormatBool(c.defaults),
		"-spaninterval", c.spanInterval.String(), "-spanqueue", strconv.Itoa(c.spanQueue))
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

// A childRun is one variant's child in the parent, with its sink and what
// it measured.
type childRun struct {
	v       variant
	p       *proc
	sink    *demoenv.Sink // the variant's pipeline's; nil for the raw baseline
	profile string
	per     []float64 // CPU per request each round, ns
	// Its "done" answer: the spans its SDK ended (the otel variant),
	// the events and spans its pipeline lost (the otelpfs variant).
	ended, eventsLost, spansLost int64
}

func parent(c config, out io.Writer) error {
	vs, err := c.variants()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "otelpfs-overhead")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Every child runs the profiler, so that its cost (SIGPROF on every
	// thread, the profile's encoding) is on every side; the raw one's
	// profile is not read. Every child but the raw baseline has a sink
	// of its own, which counts its pipeline's exports and spans.
	runs := make([]*childRun, len(vs))
	for i, v := range vs {
		runs[i] = &childRun{v: v, profile: filepath.Join(dir, fmt.Sprintf("%d-%s.pprof", i, v.label))}
		if i == 0 {
			continue
		}
		if runs[i].sink, err = demoenv.StartSink(); err != nil {
			return err
		}
		defer runs[i].sink.Stop()
	}
	startAll := func() error {
		for _, r := range runs {
			endpoint := ""
			if r.sink != nil {
				endpoint = r.sink.Addr
			}
			p, err := start(c, r.v.child, endpoint, r.profile)
			if err != nil {
				for _, q := range runs {
					if q.p != nil { // it sees its input end, and exits
						q.p.in.Close()
						q.p.cmd.Wait()
						q.p = nil
					}
				}
				return err
			}
			p.name = r.v.label
			r.p = p
		}
		return nil
	}
	if !c.pin {
		err = startAll()
	} else {
		done := make(chan error)
		go func() { done <- startPinned(c.cpu, startAll) }()
		err = <-done
	}
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range runs {
			r.p.in.Close()
		}
		for _, r := range runs {
			r.p.cmd.Wait()
		}
	}()
	if c.aa {
		fmt.Fprintln(out, "A/A check (-aa): both children are raw; the \"raw2\" figures below are the second raw child's")
	}

	what := "metrics and spans"
	if c.noSpans {
		what = "metrics only"
	}
	if c.pin {
		// Every child must have inherited the mask: else the report
		// would say pinned of an unpinned measurement.
		for _, r := range runs {
			got, err := allowedCPUs(r.p.cmd.Process.Pid)
			if err != nil {
				return err
			}
			if got != strconv.Itoa(c.cpu) {
				return fmt.Errorf("-cpu %d: the %s child may run on CPUs %s", c.cpu, r.p.name, got)
			}
		}
		children := "both children"
		if len(runs) > 2 {
			children = fmt.Sprintf("all %d children", len(runs))
		}
		fmt.Fprintf(out, "%s pinned to CPU %d (each sees one CPU, and they take turns)\n", children, c.cpu)
	}
	fmt.Fprintf(out, "overhead: %d rounds of %d requests per variant, %d workers\n", c.rounds, c.requests, c.workers)
	for _, r := range runs[1:] {
		switch {
		case c.aa:
			fmt.Fprintf(out, "  %s: nothing instrumented, idle\n", r.v.label)
		case r.v == variantOtelpfs:
			config := "every instrument and consumer on"
			if c.defaults {
				config = "the default instruments and consumers"
			}
			queue, interval := "the exporter's default", demoenv.ExportInterval
			if c.spanQueue > 0 {
				queue = strconv.Itoa(c.spanQueue)
			}
			if c.spanInterval > 0 {
				interval = c.spanInterval
			}
			fmt.Fprintf(out, "  %s: %s; pipeline (%s) every %s (spans every %s, span queue %s), OTLP/gRPC to a sink in this process\n",
				r.v.label, config, what, demoenv.ExportInterval, interval, queue)
		case r.v == variantOtel:
			fmt.Fprintf(out, "  %s: the OpenTelemetry SDK alone: otelhttp, otelsql, W3C trace context; "+
				"batch span processor (parentbased_always_on) and periodic reader (%s) every %s, OTLP/gRPC to a sink in this process\n",
				r.v.label, what, demoenv.ExportInterval)
		}
	}
	// A warm-up round each, not measured: caches, pools, the JIT-free
	// equivalents (SQLite's page cache, the digest cache).
	for _, r := range runs {
		if _, err := r.p.round(c.requests); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if _, err := r.p.ask("profile"); err != nil {
			return err
		}
	}
	orders := permutations(len(runs))
	got := make([]time.Duration, len(runs))
	for round := range c.rounds {
		for _, i := range orders[round%len(orders)] {
			if got[i], err = runs[i].p.round(c.requests); err != nil {
				return err
			}
		}
		line := fmt.Sprintf("round %2d:", round+1)
		base := float64(got[0]) / float64(c.requests)
		for i, r := range runs {
			per := float64(got[i]) / float64(c.requests)
			r.per = append(r.per, per)
			line += fmt.Sprintf("  %s %7.1f µs/req", r.v.label, per/1e3)
			if i > 0 {
				line += fmt.Sprintf(" %+6.2f%%", (per/base-1)*100)
			}
		}
		fmt.Fprintln(out, line)
	}
	for _, r := range runs {
		ans, err := r.p.ask("quit")
		if err != nil {
			return err
		}
		if r.ended, r.eventsLost, r.spansLost, err = parseDone(ans); err != nil {
			return fmt.Errorf("%s child answered %q", r.p.name, ans)
		}
	}
	report(c, runs, out)
	if c.keepProfile != "" {
		for i, r := range runs[1:] {
			path := c.keepProfile
			if i > 0 { // the otel child's in a three-way run
				ext := filepath.Ext(path)
				path = strings.TrimSuffix(path, ext) + "." + r.v.label + ext
			}
			b, err := os.ReadFile(r.profile)
			if err == nil {
				err = os.WriteFile(path, b, 0o644)
			}
			if err != nil {
				return fmt.Errorf("-profile: %w", err)
			}
		}
	}
	var errs []error
	for _, r := range runs[1:] {
		if err := profileSharesOf(out, r.v.label, r.profile); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.v.label, err))
		}
	}
	return errors.Join(errs...)
}

// report prints what the rounds measured: each variant against the raw
// baseline, runs[0].
func report(c config, runs []*childRun, out io.Writer) {
	raw := runs[0]
	fmt.Fprintf(out, "\nCPU per request (medians of %d rounds):", c.rounds)
	for i, r := range runs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(out, "%s %s %.1f µs", sep, r.v.label, median(r.per)/1e3)
	}
	fmt.Fprintln(out)
	// Every request a child served, the warm-up round's too, made spans
	// the sink counted; the last ones with the pipeline's last export.
	served := float64((c.rounds + 1) * c.requests)
	perSpan := map[variant]float64{}
	for _, r := range runs[1:] {
		l := r.v.label
		ratios := make([]float64, len(r.per))
		for i := range ratios {
			ratios[i] = r.per[i] / raw.per[i]
		}
		mean, lo, hi := meanCI(ratios)
		dMean, dLo, dHi := meanCI(diffs(r.per, raw.per))
		fmt.Fprintf(out, "%s: overhead %+.2f%% (95%% CI %+.2f%% to %+.2f%%), median %+.2f%%; slower than raw in %d of %d rounds\n",
			l, (mean-1)*100, (lo-1)*100, (hi-1)*100, (median(ratios)-1)*100, countAbove(ratios, 1), len(ratios))
		fmt.Fprintf(out, "%s: added CPU per request %.0f ns (95%% CI %.0f to %.0f ns)\n", l, dMean, dLo, dHi)
		spans := r.sink.Spans.Load()
		fmt.Fprintf(out, "%s: pipeline exports received: %d metrics, %d traces, %d spans\n",
			l, r.sink.Metrics.Load(), r.sink.Traces.Load(), spans)
		if r.v == variantOtel && !c.noSpans {
			fmt.Fprintf(out, "%s: spans ended %d, exported %d (the batch span processor dropped %d)\n", l, r.ended, spans, r.ended-spans)
		}
		if r.v == variantOtelpfs && !c.noSpans {
			fmt.Fprintf(out, "%s: events lost before they became spans %d (trees the capture's queue dropped), spans lost %d (the span queue was full)\n",
				l, r.eventsLost, r.spansLost)
		}
		if spans > 0 {
			spr := float64(spans) / served
			perSpan[r.v] = dMean / spr
			fmt.Fprintf(out, "%s: spans exported per request %.3f; added CPU per exported span %.0f ns (95%% CI %.0f to %.0f ns)\n",
				l, spr, dMean/spr, dLo/spr, dHi/spr)
		}
	}
	pfs, okPfs := perSpan[variantOtelpfs]
	sdk, okSDK := perSpan[variantOtel]
	if okPfs && okSDK {
		ratio := "n/a (the otel variant added no CPU)"
		if sdk != 0 {
			ratio = fmt.Sprintf("%.3f", pfs/sdk)
		}
		fmt.Fprintf(out, "added CPU per exported span, otelpfs / otel: %s (issue 27's budget: at most 0.25)\n", ratio)
	}
}

// permutations returns every order of 0..n-1, in lexicographic order: with
// two, [0 1] and [1 0].
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(n - 1) {
		for pos := len(p); pos >= 0; pos-- {
			q := make([]int, 0, n)
			q = append(q, p[:pos]...)
			q = append(q, n-1)
			q = append(q, p[pos:]...)
			all = append(all, q)
		}
	}
	slices.SortFunc(all, slices.Compare)
	return all
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
// fifty times slower than the timer. The otel variant's spans go through
// its batch processor to an exporter that drops them, and its metrics are
// recorded but never collected: the report gives its added instructions
// per span ended.
func instructions(c config, out io.Writer) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("-callgrind needs valgrind (apt-get install valgrind)")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	vs, err := c.variants()
	if err != nil {
		return err
	}
	// run returns the instructions of a run of n requests, and the spans
	// the child's SDK ended (the otel variant).
	run := func(variant string, n int) (float64, int64, error) {
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
			self, "-child", variant, "-workers", strconv.Itoa(c.workers), "-defaults="+strconv.FormatBool(c.defaults),
			"-nospans="+strconv.FormatBool(c.noSpans))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
		cmd.Stdin = strings.NewReader(fmt.Sprintf("round %d\nquit\n", n))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, 0, fmt.Errorf("valgrind %s: %w\n%s", variant, err, stderr.String())
		}
		var spans int64
		for _, line := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(line, "done ") {
				var err error
				if spans, _, _, err = parseDone(line); err != nil {
					return 0, 0, fmt.Errorf("valgrind %s: the child answered %q", variant, line)
				}
			}
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if _, v, ok := strings.Cut(line, "Collected : "); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return f, spans, err
			}
		}
		return 0, 0, fmt.Errorf("valgrind %s: no instruction count in its output", variant)
	}
	n := c.requests
	fmt.Fprintf(out, "instructions per request under callgrind: %d and %d requests per run, %d repetitions\n", n, 3*n, c.rounds)
	per := make([][]float64, len(vs))
	spans := make([][]float64, len(vs)) // ended per request
	for r := range c.rounds {
		line := fmt.Sprintf("repetition %d:", r+1)
		for i, v := range vs {
			lo, slo, err := run(v.child, n)
			if err != nil {
				return err
			}
			hi, shi, err := run(v.child, 3*n)
			if err != nil {
				return err
			}
			per[i] = append(per[i], (hi-lo)/float64(2*n))
			spans[i] = append(spans[i], float64(shi-slo)/float64(2*n))
			if i > 0 {
				line += ","
			}
			line += fmt.Sprintf(" %s %.0f", v.label, per[i][r])
			if i > 0 {
				line += fmt.Sprintf(" (%+.1f%%)", (per[i][r]/per[0][r]-1)*100)
			}
		}
		fmt.Fprintln(out, line)
	}
	raw := median(per[0])
	line := fmt.Sprintf("medians: %s %.0f", vs[0].label, raw)
	for i, v := range vs[1:] {
		m := median(per[i+1])
		line += fmt.Sprintf(", %s %.0f (%+.0f, %+.1f%%)", v.label, m, m-raw, (m/raw-1)*100)
	}
	fmt.Fprintln(out, line+" instructions per request")
	for i, v := range vs[1:] {
		if spr := median(spans[i+1]); spr > 0 {
			fmt.Fprintf(out, "%s: spans ended per request %.3f; added instructions per span %.0f\n",
				v.label, spr, (median(per[i+1])-raw)/spr)
		}
	}
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
	case strings.HasPrefix(pkg, "go.opentelemetry.io/contrib/instrumentation/"),
		strings.HasPrefix(pkg, "github.com/XSAM/otelsql"), strings.HasPrefix(pkg, "github.com/felixge/httpsnoop"):
		return ownerOtelInstrumentation
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

// ownerOtelInstrumentation is owner's name for the otel variant's
// instrumentation libraries, around the SDK.
const ownerOtelInstrumentation = "OpenTelemetry instrumentation (otelhttp, otelsql)"

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
	return profileSharesOf(out, "instrumented", path)
}

// profileSharesOf prints who owns the CPU samples of the profile at path,
// the child of the variant label's.
func profileSharesOf(out io.Writer, label, path string) error {
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
	fmt.Fprintf(out, "\n%s child's CPU profile (%.1f s of samples), by owner of the sample:\n", label, time.Duration(total).Seconds())
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
