package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

func init() {
	register(command{
		name:    "setup",
		summary: "change a setup table of a running service (instruments, consumers, ...)",
		run:     runSetup,
	})
}

// setupTables are the tables pfs setup changes, as the handler names them.
var setupTables = []string{"instruments", "consumers", "threads", "timers", "actors", "objects"}

// setupFlagKeys are the fields that are flags (YES/NO).
var setupFlagKeys = map[string]bool{"enabled": true, "timed": true, "history": true}

func runSetup(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("setup", stderr)
	addr := addrFlag(fs)
	asJSON := fs.Bool("json", false, "print the service's JSON answer")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs setup [--addr host:port] [--json] TABLE key=value...")
		fmt.Fprintln(stderr, "       pfs setup [--addr host:port] [--json] TABLE '{json}' | -")
		fmt.Fprintln(stderr, "\nChanges setup_TABLE of the service at --addr, which must allow changes")
		fmt.Fprintln(stderr, "(exporter.WithSetupChanges). TABLE is one of "+strings.Join(setupTables, ", ")+".")
		fmt.Fprintln(stderr, "Names are LIKE patterns; enabled, timed and history take yes/no. The fields")
		fmt.Fprintln(stderr, "become the JSON body of POST /debug/pfs/setup/TABLE; '-' reads it from stdin.")
		fmt.Fprintln(stderr, "\nexamples:")
		fmt.Fprintln(stderr, "  pfs setup instruments name='wait/synch/%' enabled=yes timed=yes")
		fmt.Fprintln(stderr, "  pfs setup consumers name='events_waits_history%' enabled=yes")
		fmt.Fprintln(stderr, "  pfs setup threads name='thread/app/%' history=no")
		fmt.Fprintln(stderr, "  pfs setup timers name=wait timer_name=NANOSECOND")
		fmt.Fprintln(stderr, "  pfs setup actors op=insert user=batch host=% enabled=yes history=no")
		fmt.Fprintln(stderr, "  pfs setup objects op=update object_type=FILE object_schema=/var/log enabled=no")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: which table? one of %s", errUsage, strings.Join(setupTables, ", "))
	}
	table := strings.TrimPrefix(strings.ToLower(pos[0]), "setup_")
	known := false
	for _, t := range setupTables {
		known = known || t == table
	}
	if !known {
		return fmt.Errorf("%w: unknown setup table %q: want one of %s", errUsage, pos[0], strings.Join(setupTables, ", "))
	}
	body, err := setupBody(pos[1:], stdin)
	if err != nil {
		return err
	}
	c, err := newClient(*addr)
	if err != nil {
		return err
	}
	res, err := c.Setup(table, body)
	if err != nil {
		return handlerMessage(err)
	}
	if *asJSON { // the handler's answer
		return json.NewEncoder(stdout).Encode(res)
	}
	line := res.Table + ":"
	if res.Op != "" {
		line += " " + res.Op
	}
	line += fmt.Sprintf(" %d row", res.RowsMatched)
	if res.RowsMatched != 1 {
		line += "s"
	}
	line += " matched"
	if res.TimerName != "" {
		line += ", timer " + res.TimerName
	}
	_, err = fmt.Fprintln(stdout, line)
	return err
}

// setupBody builds the JSON body from key=value arguments, a JSON object
// argument, or stdin ("-").
func setupBody(args []string, stdin io.Reader) ([]byte, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: nothing to change: give key=value fields, as name='wait/%%' enabled=no", errUsage)
	}
	if len(args) == 1 && (args[0] == "-" || strings.HasPrefix(strings.TrimSpace(args[0]), "{")) {
		var b []byte
		if args[0] == "-" {
			if stdin == nil {
				return nil, fmt.Errorf("%w: '-' but no standard input", errUsage)
			}
			var err error
			if b, err = io.ReadAll(io.LimitReader(stdin, 1<<20)); err != nil {
				return nil, fmt.Errorf("reading standard input: %v", err)
			}
		} else {
			b = []byte(args[0])
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%w: the body is not valid JSON", errUsage)
		}
		return b, nil
	}
	fields := map[string]any{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: %q: want key=value", errUsage, a)
		}
		if _, dup := fields[k]; dup {
			return nil, fmt.Errorf("%w: %s given twice", errUsage, k)
		}
		if setupFlagKeys[k] {
			b, err := parseYesNo(v)
			if err != nil {
				return nil, fmt.Errorf("%w: %s=%s: %v", errUsage, k, v, err)
			}
			fields[k] = b
		} else {
			fields[k] = v
		}
	}
	return json.Marshal(fields)
}

func parseYesNo(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "on", "true", "1", "y":
		return true, nil
	case "no", "off", "false", "0", "n":
		return false, nil
	}
	return false, fmt.Errorf("want yes or no")
}
