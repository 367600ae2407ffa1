package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/otelpfs/otelpfs/hwclock"
)

func init() {
	register(command{
		name:    "timers",
		summary: "print performance_timers: this machine's timers, calibrated now",
		run:     runTimers,
	})
}

// timerRow is a performance_timers row as pfs prints it.
type timerRow struct {
	Name       string `json:"TIMER_NAME"`
	Frequency  uint64 `json:"TIMER_FREQUENCY"`
	Resolution uint64 `json:"TIMER_RESOLUTION"`
	Overhead   uint64 `json:"TIMER_OVERHEAD"`
}

func runTimers(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("timers", stderr)
	asJSON := fs.Bool("json", false, "print a JSON array of rows instead of a table")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs timers [--json]")
		fmt.Fprintln(stderr, "\nCalibrates the five timers (about 0.2 s) and prints performance_timers:")
		fmt.Fprintln(stderr, "frequency in units per second, resolution in units, overhead of one call in")
		fmt.Fprintln(stderr, "the timer's own units.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	var rows []timerRow
	for _, r := range hwclock.PerformanceTimers() {
		rows = append(rows, timerRow{r.Name.String(), r.Frequency, r.Resolution, r.Overhead})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TIMER_NAME\tTIMER_FREQUENCY\tTIMER_RESOLUTION\tTIMER_OVERHEAD\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", r.Name, r.Frequency, r.Resolution, r.Overhead)
	}
	return tw.Flush()
}
