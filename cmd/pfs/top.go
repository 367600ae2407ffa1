package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/report"
)

func init() {
	register(command{
		name:    "top",
		summary: "a sys-schema-like report of a running service, refreshed every few seconds",
		run:     runTop,
	})
}

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

func runTop(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("top", stderr)
	addr := addrFlag(fs)
	interval := fs.Duration("interval", 5*time.Second, "time between refreshes")
	count := fs.Int("count", 0, "stop after `N` reports (0: until interrupted)")
	once := fs.Bool("once", false, "print one report and exit (--count 1)")
	limit := fs.Int("limit", 10, "rows per section")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs top [--addr host:port] [--interval 5s] [--count N | --once] [--limit N]")
		fmt.Fprintln(stderr, "\nA report in the manner of MySQL's sys schema, refreshed until interrupted:")
		fmt.Fprintln(stderr, "statement analysis by digest, top waits by total latency, hottest instances,")
		fmt.Fprintln(stderr, "busiest threads, lost counters.")
		fmt.Fprintln(stderr, "Totals are cumulative since start-up or the tables' last TRUNCATE; from the")
		fmt.Fprintln(stderr, "second report on, top waits also show the last interval and are ranked by it.")
		fmt.Fprintln(stderr, "The screen is cleared between reports only when standard output is a terminal.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if *once {
		if *count > 1 {
			return fmt.Errorf("%w: --once and --count %d", errUsage, *count)
		}
		*count = 1
	}
	if *count < 0 || *limit < 1 || *interval <= 0 {
		return fmt.Errorf("%w: --count must be >= 0, --limit >= 1 and --interval > 0", errUsage)
	}
	c, err := newClient(*addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c = c.WithContext(ctx) // an interrupt also ends a request in flight
	tty := isTerminal(stdout)
	rep := report.Report{Limit: *limit}
	for i := 0; *count == 0 || i < *count; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(*interval):
			}
		}
		var frame bytes.Buffer
		fmt.Fprintf(&frame, "pfs top  %s  %s", c.URL(), time.Now().Format("2006-01-02 15:04:05"))
		if *count != 1 {
			fmt.Fprintf(&frame, "  every %s", *interval)
		}
		frame.WriteString("\n")
		if err := rep.Write(&frame, c); err != nil {
			if errors.Is(err, report.ErrNoTables) {
				var re *exporter.ResponseError
				errors.As(err, &re)
				err = fmt.Errorf("the service at %s has none of the tables pfs top reads (is this an otelpfs /debug/pfs handler?): it answers 404 %q", c.URL(), re.Message)
			}
			if ctx.Err() != nil {
				return nil // interrupted
			}
			// The first report, and every report a script asked for, must
			// succeed; a live screen shows the error and tries again.
			if i == 0 || *count > 0 {
				return serviceError(err)
			}
			fmt.Fprintf(&frame, "\nerror: %v\n", err)
		}
		if tty {
			io.WriteString(stdout, clearScreen)
		} else if i > 0 {
			io.WriteString(stdout, "\n")
		}
		if _, err := stdout.Write(frame.Bytes()); err != nil {
			return err
		}
	}
	return nil
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
