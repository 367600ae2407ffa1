// Command pfs is otelpfs's command line.
//
//	pfs timers [--json]                          performance_timers of this machine
//	pfs digest [--json] [--max-digest-length N]  statement digests of stdin
//	pfs tables [--addr A] [--json] [--where W] [--order O] [--limit N] [NAME]
//	                                             a table of a running service
//	pfs setup  [--addr A] TABLE key=value…       change a setup table at run time
//	pfs top    [--addr A] [--interval 5s]        a refreshing report of waits and losses
//	pfs views  [--addr A | --local]              setup_instruments as OpenTelemetry views (YAML)
//
// The commands that talk to a service reach its /debug/pfs handler (package
// exporter) at --addr, $PFS_ADDR, or 127.0.0.1:6060.
//
// Each subcommand lives in a file of its own and registers itself in init, so
// adding one touches no other file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one pfs subcommand.
type command struct {
	name    string
	summary string // one line for the usage text
	// run executes the command. It returns errUsage (possibly wrapped) for
	// bad arguments, any other error for a failure.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// register adds c to the command table; it is called from init functions.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("pfs: BUG: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error caused by bad arguments (exit status 2).
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args and returns the process exit status: 0 on success,
// 1 when the command failed, 2 for bad usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pfs: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(args[1:], stdin, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "pfs %s: %v\n", c.name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "pfs %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pfs <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'pfs <command> -h' for a command's flags.")
}

// newFlagSet returns a flag set for a subcommand that reports errors instead
// of exiting, and prints its usage to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pfs "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args into fs and rejects positional arguments unless
// allowPositional; a parse failure is a usage error.
func parseFlags(fs *flag.FlagSet, args []string, allowPositional bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if !allowPositional && fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
