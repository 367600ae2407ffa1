// Command otlpload runs the end-to-end tests' instrumented workload (HTTP
// requests through pfshttp, a mutex, counted memory, a stage with SQL
// statements on SQLite through pfssql; package workload) as one or more
// service instances, and exports each instance's performance-schema tables
// over OTLP gRPC with exporter.StartOTLP, for -duration: the default
// tables as metrics (with db.client.operation.duration and
// http.server.request.duration), and each request as a trace (its SERVER
// span, its stage under it, its SQL statements' CLIENT spans under the
// stage, its mutex wait as an event). It is what otelcol-config/README.md runs to put otelpfs
// metrics and spans in a Collector, and from there in Prometheus and
// Jaeger.
//
//	cd e2e && go run ./cmd/otlpload -duration 2m -instances 2
//
// The standard environment applies (OTEL_EXPORTER_OTLP_ENDPOINT, by default
// http://localhost:4317; OTEL_SERVICE_NAME, by default otelpfs-load;
// OTEL_RESOURCE_ATTRIBUTES; ...); -endpoint overrides the endpoint. Each
// instance has its own Schema and service.instance.id, <host>-<pid>-<n>.
// At the end it flushes, and prints each instance's request count, which is
// its wait/synch/mutex/e2e/cache count.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/otelpfs/otelpfs/e2e/workload"
	"github.com/otelpfs/otelpfs/exporter"
	"go.opentelemetry.io/otel/attribute"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "otlpload:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("otlpload", flag.ContinueOnError)
	duration := fs.Duration("duration", time.Minute, "how long to run")
	instances := fs.Int("instances", 1, "service instances (each with its own tables and service.instance.id)")
	rate := fs.Int("rate", 50, "requests per second per instance")
	interval := fs.Duration("interval", 5*time.Second, "how often each instance exports its tables")
	endpoint := fs.String("endpoint", "", "OTLP gRPC endpoint, host:port or http://host:port (default: OTEL_EXPORTER_OTLP_ENDPOINT, or http://localhost:4317)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *instances < 1 || *instances > 100 || *rate < 1 || *rate > 10_000 || *duration <= 0 || *interval <= 0 {
		return fmt.Errorf("want 1-100 instances, a rate of 1-10000 and a positive duration and interval")
	}
	host, _ := os.Hostname()
	dir, err := os.MkdirTemp("", "otlpload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	type inst struct {
		id  string
		svc *workload.Service
		otl *exporter.OTLP
	}
	var all []inst
	defer func() {
		for _, in := range all {
			in.svc.Close()
		}
	}()
	for n := range *instances {
		s, err := workload.NewSchema()
		if err != nil {
			return err
		}
		svc, err := workload.New(s, dir)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("%s-%d-%d", host, os.Getpid(), n)
		opts := []exporter.OTLPOption{exporter.WithExportInterval(*interval),
			exporter.WithResourceAttributes(attribute.String("service.instance.id", id))}
		if *endpoint != "" {
			opts = append(opts, exporter.WithEndpoint(*endpoint))
		}
		if os.Getenv("OTEL_SERVICE_NAME") == "" {
			opts = append(opts, exporter.WithServiceName("otelpfs-load"))
		}
		otl, err := exporter.StartOTLP(context.Background(), s, opts...)
		if err != nil {
			svc.Close()
			return err
		}
		all = append(all, inst{id, svc, otl})
	}
	fmt.Fprintf(out, "otlpload: %d instance(s), %d requests/s each, exporting every %v for %v\n", *instances, *rate, *interval, *duration)

	var wg sync.WaitGroup
	errs := make(chan error, len(all))
	for _, in := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second / time.Duration(*rate))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if err := in.svc.Request(ctx); err != nil && ctx.Err() == nil {
						errs <- fmt.Errorf("instance %s: %w", in.id, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var first error
	for err := range errs {
		first = err
		break
	}
	sctx, scancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer scancel()
	for _, in := range all {
		if err := in.otl.Shutdown(sctx); err != nil && first == nil {
			first = fmt.Errorf("instance %s: the last export: %w", in.id, err)
		}
		fmt.Fprintf(out, "instance %s: %d requests\n", in.id, in.svc.Requests())
	}
	return first
}
