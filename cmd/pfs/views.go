package main

import (
	"fmt"
	"io"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

func init() {
	register(command{
		name:    "views",
		summary: "print setup_instruments as OpenTelemetry views (meter_provider.views YAML)",
		run:     runViews,
	})
}

func runViews(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("views", stderr)
	addr := addrFlag(fs)
	local := fs.Bool("local", false, "read this process's default schema (pfscore.Default: its built-in classes,\nas OTELPFS_INSTRUMENT sets them) instead of a service")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs views [--addr host:port | --local]")
		fmt.Fprintln(stderr, "\nPrints the setup_instruments of the service at --addr as the equivalent")
		fmt.Fprintln(stderr, "meter_provider.views of an OpenTelemetry declarative configuration file, which")
		fmt.Fprintln(stderr, "viewconf.Parse (package bridge/viewconf) reads back: a disabled class is drop, an")
		fmt.Fprintln(stderr, "enabled class that is not timed is sum, an enabled and timed class is")
		fmt.Fprintln(stderr, "base2_exponential_bucket_histogram.")
		fmt.Fprintln(stderr, "\nThe output is compact: classes in the same state share views, under the")
		fmt.Fprintln(stderr, "shortest instrument_name wildcards that match exactly them (\"*\" when every")
		fmt.Fprintln(stderr, "class is in one state, else \"prefix/*\" for each '/'-separated prefix whose")
		fmt.Fprintln(stderr, "classes are all in that state, and the names left over). A prefix/* view also")
		fmt.Fprintln(stderr, "matches classes that register later under that prefix. Applied to a schema")
		fmt.Fprintln(stderr, "with the same classes, the views give the same setup_instruments, but for a")
		fmt.Fprintln(stderr, "class disabled and timed: drop also sets TIMED=NO.")
		fmt.Fprintln(stderr, "\nexamples:")
		fmt.Fprintln(stderr, "  pfs views --addr 127.0.0.1:6060 > views.yaml")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	var t pfscore.Tables
	if *local {
		if *addr != "" {
			return fmt.Errorf("%w: --local reads no service: drop --addr", errUsage)
		}
		t = pfscore.Default()
	} else {
		c, err := newClient(*addr)
		if err != nil {
			return err
		}
		t = c
	}
	out, err := bridge.FormatViewConfig(t)
	if err != nil {
		return handlerMessage(err)
	}
	_, err = stdout.Write(out)
	return err
}
