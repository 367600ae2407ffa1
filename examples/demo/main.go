// Command demo is a small service instrumented with otelpfs, with a load of
// its own: workers that share a cache behind a mutex and a config behind a
// read-write lock, append to a log file, and talk to an echo server over
// loopback TCP, idling between requests. It serves /debug/pfs on -addr
// (setup changes allowed there: it listens on loopback only), prints a report
// of the top waits every few seconds, and exits 0 after -duration.
//
//	go run ./examples/demo [-duration 30s] [-addr 127.0.0.1:6060]
//
// While it runs:
//
//	go run ./cmd/pfs top
//	go run ./cmd/pfs tables events_waits_summary_global_by_event_name --order 'SUM_TIMER_WAIT desc' --limit 5
//	curl 127.0.0.1:6060/debug/pfs/tables/events_waits_current
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set (http://127.0.0.1:4317, say), it
// also sends its tables to that OpenTelemetry Collector as OTLP metrics
// (exporter.StartOTLP; the other OTEL_* variables apply, and the service
// name is otelpfs-demo unless OTEL_SERVICE_NAME says otherwise).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"time"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	duration := fs.Duration("duration", 30*time.Second, "how long to run")
	addr := fs.String("addr", exporter.DefaultAddr, "where to serve /debug/pfs (loopback)")
	workers := fs.Int("workers", 4, "worker threads")
	every := fs.Duration("report", 5*time.Second, "how often to print the report")
	if err := fs.Parse(args); err != nil {
		return err
	}

	s := pfscore.Default()
	// The demo wants to show events, so it turns on what MySQL ships off.
	if _, err := s.UpdateConsumers("events_waits%", true); err != nil {
		return err
	}
	srv, err := exporter.Listen(*addr, exporter.Handler(s, exporter.WithSetupChanges(true)))
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(out, "otelpfs demo: %d workers for %s; tables at %s/debug/pfs/\n", *workers, *duration, srv.URL())
	fmt.Fprintf(out, "try: go run ./cmd/pfs top --addr %s\n", srv.Addr())
	if ep := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		var opts []exporter.OTLPOption
		if os.Getenv("OTEL_SERVICE_NAME") == "" {
			opts = append(opts, exporter.WithServiceName("otelpfs-demo"))
		}
		o, err := exporter.StartOTLP(context.Background(), s, opts...)
		if err != nil {
			return err
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := o.Shutdown(ctx); err != nil {
				fmt.Fprintln(out, "OTLP:", err)
			}
		}()
		fmt.Fprintf(out, "sending OTLP to %s\n", ep)
	}
	fmt.Fprintln(out)

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	dir, err := os.MkdirTemp("", "otelpfs-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	svc, err := newService(dir)
	if err != nil {
		return err
	}
	defer svc.close()

	var wg sync.WaitGroup
	for i := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc.worker(ctx, i)
		}()
	}
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			report(out, s)
		}
	}
	wg.Wait()
	report(out, s)
	return nil
}

// service is the demo's shared state and its instruments.
type service struct {
	cache   *instrument.Mutex
	entries map[int]int
	config  *instrument.RWMutex
	limit   int
	logs    *instrument.FileClass
	logPath string
	logMu   *instrument.Mutex
	log     *instrument.File
	client  *instrument.SocketClass
	echo    *instrument.Listener
}

func newService(dir string) (*service, error) {
	svc := &service{
		cache:   instrument.NewMutex("wait/synch/mutex/demo/cache", instrument.WithDocumentation("The shared cache.")),
		entries: map[int]int{},
		config:  instrument.NewRWMutex("wait/synch/rwlock/demo/config"),
		limit:   100,
		logs:    instrument.NewFileClass("wait/io/file/demo/log"),
		logPath: filepath.Join(dir, "requests.log"),
		logMu:   instrument.NewMutex("wait/synch/mutex/demo/log"),
		client:  instrument.NewSocketClass("wait/io/socket/demo/client"),
	}
	f, err := svc.logs.OpenFile(svc.logPath, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	svc.log = f
	server := instrument.NewSocketClass("wait/io/socket/demo/server")
	svc.echo, err = server.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		f.Close()
		return nil, err
	}
	go svc.serveEcho()
	return svc, nil
}

func (svc *service) close() {
	svc.echo.Close()
	svc.log.Close()
}

// serveEcho answers each line with itself, one goroutine per connection.
func (svc *service) serveEcho() {
	for {
		c, err := svc.echo.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				if _, err := c.Write(line); err != nil {
					return
				}
			}
		}()
	}
}

var users = []struct{ user, host string }{{"alice", "10.0.0.7"}, {"bob", "10.0.0.8"}, {"carol", "10.0.0.7"}}

// worker serves requests until ctx ends. Each worker is one thread, as a
// connection handler would be.
func (svc *service) worker(ctx context.Context, id int) {
	u := users[id%len(users)]
	ctx, t := instrument.StartThread(ctx, "thread/demo/worker", instrument.WithUser(u.user), instrument.WithHost(u.host))
	defer t.End()

	conn, err := svc.client.DialContext(ctx, "tcp", svc.echo.Addr().String())
	if err != nil {
		return
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	rnd := rand.New(rand.NewPCG(uint64(id), 7))
	for n := 0; ctx.Err() == nil; n++ {
		// Idle: waiting for the next request.
		iw := instrument.StartIdleCtx(ctx)
		time.Sleep(time.Duration(1+rnd.IntN(3)) * time.Millisecond)
		iw.End()

		svc.config.RLockCtx(ctx)
		limit := svc.limit
		svc.config.RUnlock()

		key := rnd.IntN(limit)
		svc.cache.LockCtx(ctx)
		svc.entries[key]++
		if n%50 == 0 { // a slow critical section now and then
			time.Sleep(200 * time.Microsecond)
		}
		svc.cache.Unlock()

		fmt.Fprintf(conn, "request %d %d\n", id, n)
		if _, err := r.ReadString('\n'); err != nil {
			return
		}

		svc.logMu.LockCtx(ctx)
		fmt.Fprintf(svc.log.For(t), "worker %d request %d key %d\n", id, n, key)
		svc.logMu.Unlock()

		if n%200 == 199 { // reconfigure now and then
			svc.config.LockCtx(ctx)
			svc.limit = 50 + rnd.IntN(100)
			svc.config.Unlock()
		}
	}
}

// report prints the top waits by total latency.
func report(out io.Writer, s *pfscore.Schema) {
	res, err := s.Select("events_waits_summary_global_by_event_name")
	if err != nil {
		fmt.Fprintln(out, err)
		return
	}
	sum := func(r pfscore.Row) uint64 { return r[2].(uint64) } // SUM_TIMER_WAIT
	rows := res.Rows[:0]
	for _, r := range res.Rows {
		if r[1].(uint64) > 0 { // COUNT_STAR
			rows = append(rows, r)
		}
	}
	for i := 1; i < len(rows); i++ { // a few rows: insertion sort by SUM_TIMER_WAIT desc
		for j := i; j > 0 && sum(rows[j]) > sum(rows[j-1]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
	fmt.Fprintf(out, "%s  top waits by total latency\n", time.Now().Format("15:04:05"))
	fmt.Fprintf(out, "  %-32s %10s %12s %12s\n", "EVENT_NAME", "COUNT_STAR", "SUM", "AVG")
	for _, r := range rows {
		fmt.Fprintf(out, "  %-32s %10d %12s %12s\n", r[0], r[1], exporter.FormatPicoTime(sum(r)), exporter.FormatPicoTime(r[4].(uint64)))
	}
	fmt.Fprintln(out)
}
