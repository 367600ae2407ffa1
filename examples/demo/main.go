// Command demo is a small service instrumented with otelpfs, under a load
// of its own: the notes API of package notes (an HTTP API on http.ServeMux,
// SQLite through the wrapped database/sql driver, a note cache behind a
// mutex, settings behind a read-write lock, a pool of response buffers
// with memory accounting, a journal file), and a load generator whose
// requests come from three tenants (users), so the by-account tables mean
// something. Every instrument and consumer is on.
//
// It serves the tables on -addr (/debug/pfs, loopback only, setup changes
// allowed) and over the MySQL protocol on -sql-addr (performance_schema
// and sys, for the mysql client and any MySQL driver; package mysqlpfs),
// prints a report every few seconds (statement analysis by
// digest and by route with p95, top waits, memory by current bytes, lost
// counters) and a progress line, and exits 0 after -duration or at Ctrl-C.
//
//	go run ./examples/demo [-duration 30s] [-addr 127.0.0.1:6060] [-sql-addr 127.0.0.1:6033]
//
// While it runs:
//
//	go run ./cmd/pfs top
//	go run ./cmd/pfs tables events_statements_summary_by_digest --order 'SUM_TIMER_WAIT desc' --limit 5
//	curl 127.0.0.1:6060/debug/pfs/tables/memory_summary_global_by_event_name
//	mysql -h 127.0.0.1 -P 6033 -u pfs -e "SELECT * FROM sys.statement_analysis LIMIT 5"
//
// The demo is a module of its own (it needs package mysqlpfs, whose SQL
// engine the core module does not depend on); the repository's go.work
// lets go run find it from the repository's root.
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set (http://127.0.0.1:4317, say), it
// also sends its tables to that OpenTelemetry Collector as OTLP metrics,
// and its statements, stages and waits as spans (exporter.StartOTLP; the
// other OTEL_* variables apply, and the service name is otelpfs-demo
// unless OTEL_SERVICE_NAME says otherwise).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/examples/notes"
	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
	"github.com/otelpfs/otelpfs/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
		os.Exit(1)
	}
}

type options struct {
	duration time.Duration
	addr     string
	apiAddr  string
	clients  int
	rate     int
	every    time.Duration
	limit    int
	sqlAddr  string
	sqlUser  string
	sqlPass  string
}

func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	var o options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long to run (0: until interrupted)")
	fs.StringVar(&o.addr, "addr", exporter.DefaultAddr, "where to serve /debug/pfs (loopback; empty: nowhere)")
	fs.StringVar(&o.apiAddr, "api-addr", "127.0.0.1:0", "where to serve the notes API")
	fs.IntVar(&o.clients, "clients", 4, "concurrent clients of the load generator")
	fs.IntVar(&o.rate, "rate", 200, "requests per second, all clients together (0: as fast as they can)")
	fs.DurationVar(&o.every, "report", 5*time.Second, "time between reports")
	fs.IntVar(&o.limit, "limit", 6, "rows per report section")
	fs.StringVar(&o.sqlAddr, "sql-addr", "127.0.0.1:6033", "where to serve performance_schema and sys over the MySQL protocol (loopback; empty: nowhere)")
	fs.StringVar(&o.sqlUser, "sql-user", "pfs", "the MySQL endpoint's user")
	fs.StringVar(&o.sqlPass, "sql-password", "", "the MySQL endpoint's password (empty is accepted on loopback only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.duration < 0 || o.clients < 1 || o.rate < 0 || o.every <= 0 || o.limit < 1 {
		return errors.New("-duration must be >= 0, -clients >= 1, -rate >= 0, -report > 0 and -limit >= 1")
	}
	if o.rate > 0 && time.Duration(o.clients)*time.Second/time.Duration(o.rate) <= 0 {
		return errors.New("-rate: at most a billion requests per second per client (0: as fast as they can)")
	}

	// Everything on: the demo is here to show what otelpfs collects. The
	// environment's OTELPFS_INSTRUMENT and OTELPFS_CONSUMER still apply
	// (their more specific rules win).
	s, err := pfscore.New(pfscore.WithInstrument("%=ON"))
	if err != nil {
		return err
	}
	if _, err := s.UpdateConsumers("%", true); err != nil {
		return err
	}
	// Statements record the trace their request carries (the load's
	// requests carry a traceparent header), so their spans join it and the
	// digest histograms' exemplars link to it.
	instrument.SetTraceHook(bridge.TraceContext)

	dir, err := os.MkdirTemp("", "otelpfs-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	svc, err := notes.New(notes.Config{Dir: dir, Schema: s})
	if err != nil {
		return err
	}
	defer svc.Close()

	if o.addr != "" {
		srv, err := exporter.Listen(o.addr, exporter.Handler(s, exporter.WithSetupChanges(true)))
		if err != nil {
			return err
		}
		defer srv.Close()
		fmt.Fprintf(out, "otelpfs demo: tables at %s/debug/pfs/\n", srv.URL())
		fmt.Fprintf(out, "try: go run ./cmd/pfs top --addr %s\n", srv.Addr())
	}
	if o.sqlAddr != "" {
		// Setup changes and TRUNCATE are allowed, as on the HTTP endpoint:
		// both listen on loopback only.
		sql, err := mysqlpfs.Listen(o.sqlAddr, s, mysqlpfs.WithUser(o.sqlUser, o.sqlPass), mysqlpfs.WithSetupChanges(true))
		if err != nil {
			return fmt.Errorf("the MySQL endpoint: %w", err)
		}
		defer sql.Close()
		fmt.Fprintf(out, "performance_schema over MySQL at %s: mysql -h %s -P %s -u %s -e \"SELECT * FROM sys.statement_analysis LIMIT 5\"\n",
			sql.Addr(), hostOf(sql.Addr()), portOf(sql.Addr()), o.sqlUser)
	}
	api, err := serveAPI(s, svc, o.apiAddr)
	if err != nil {
		return err
	}
	defer api.Close()
	fmt.Fprintf(out, "notes API at %s: %d clients, %s\n", api.url, o.clients, rateText(o.rate))

	if ep := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		var opts []exporter.OTLPOption
		if os.Getenv("OTEL_SERVICE_NAME") == "" {
			opts = append(opts, exporter.WithServiceName("otelpfs-demo"))
		}
		exp, err := exporter.StartOTLP(ctx, s, opts...)
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := exp.Shutdown(sctx); err != nil {
				fmt.Fprintln(errOut, "OTLP:", err)
			}
		}()
		fmt.Fprintf(out, "sending OTLP to %s\n", ep)
	}

	interrupted := ctx // done at Ctrl-C or SIGTERM, not at -duration's end
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	var st stats
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.clients}}
	for i := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drive(ctx, client, api.url, notes.NewLoad(uint64(i)+1), o, &st)
		}()
	}

	start := time.Now()
	tty := isTerminal(out)
	// The report leaves out the threads (a request's ends with it), and
	// the memory of the Go runtime and of otelpfs's own tables.
	rep := report.Report{
		Limit: o.limit,
		Sections: []string{report.StatementAnalysis, report.StatementsByRoute, report.Users,
			report.TopWaits, report.HottestInstances, report.MemoryByCurrent, report.Lost},
		Where: map[string]string{
			report.MemoryByCurrent: "EVENT_NAME LIKE 'memory/demo/%'",
		},
	}
	var last time.Time
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	reports := time.NewTicker(o.every)
	defer reports.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-progress.C:
			if tty {
				fmt.Fprintf(out, "\r%s\x1b[K", st.line(time.Since(start)))
			}
		case <-reports.C:
			writeReport(out, tty, &rep, s, &st, time.Since(start))
			last = time.Now()
		}
	}
	wg.Wait()
	client.CloseIdleConnections()
	if time.Since(last) > time.Second { // else the last report is as good
		writeReport(out, tty, &rep, s, &st, time.Since(start))
	}
	if st.sent.Load() == 0 && interrupted.Err() == nil {
		return errors.New("the load generator sent no request")
	}
	return nil
}

func hostOf(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return host
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

func rateText(rate int) string {
	if rate == 0 {
		return "as fast as they can"
	}
	return fmt.Sprintf("%d requests/s", rate)
}

// api is the notes API on an instrumented listener: each connection is a
// socket instance, and the wait for a kept-alive connection's next
// request is idle time (pfshttp.ConnState), not socket time.
type api struct {
	srv *http.Server
	url string
}

func serveAPI(s *pfscore.Schema, svc *notes.Service, addr string) (*api, error) {
	in := instrument.WithSchema(s)
	ln, err := instrument.NewSocketClass("wait/io/socket/demo/api_listener", in).
		Listen("tcp", addr, instrument.NewSocketClass("wait/io/socket/demo/api_connection", in))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: svc.Handler(), ConnState: pfshttp.ConnState(pfshttp.WithSchema(s)),
		ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &api{srv: srv, url: "http://" + ln.Addr().String()}, nil
}

func (a *api) Close() error { return a.srv.Close() }

// stats counts the load generator's requests by outcome.
type stats struct {
	sent, ok, notFound, clientErr, serverErr, failed atomic.Int64
}

func (st *stats) line(elapsed time.Duration) string {
	n := st.sent.Load()
	return fmt.Sprintf("%5.0fs  %d requests (%.0f/s): %d ok, %d not found, %d other 4xx, %d 5xx, %d failed",
		elapsed.Seconds(), n, float64(n)/max(elapsed.Seconds(), 1e-3),
		st.ok.Load(), st.notFound.Load(), st.clientErr.Load(), st.serverErr.Load(), st.failed.Load())
}

// drive sends load's requests until ctx is done, at its share of the rate.
func drive(ctx context.Context, client *http.Client, base string, load *notes.Load, o options, st *stats) {
	var tick *time.Ticker
	if o.rate > 0 {
		tick = time.NewTicker(time.Duration(o.clients) * time.Second / time.Duration(o.rate))
		defer tick.Stop()
	}
	for ctx.Err() == nil {
		if tick != nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		req, err := load.Next().NewHTTP(ctx, base)
		if err != nil {
			st.failed.Add(1)
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				st.failed.Add(1)
				st.sent.Add(1)
			}
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		st.sent.Add(1)
		switch c := resp.StatusCode; {
		case c < 300:
			st.ok.Add(1)
		case c == http.StatusNotFound:
			st.notFound.Add(1)
		case c < 500:
			st.clientErr.Add(1)
		default:
			st.serverErr.Add(1)
		}
	}
}

func writeReport(out io.Writer, tty bool, rep *report.Report, s *pfscore.Schema, st *stats, elapsed time.Duration) {
	if tty {
		io.WriteString(out, "\r\x1b[K")
	}
	fmt.Fprintf(out, "\n== %s  %s\n", time.Now().Format("15:04:05"), st.line(elapsed))
	if err := rep.Write(out, s); err != nil {
		fmt.Fprintln(out, "report:", err)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
