package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

func init() {
	register(command{
		name:    "tables",
		summary: "print a table of a running service (or list its tables)",
		run:     runTables,
	})
}

func runTables(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("tables", stderr)
	addr := addrFlag(fs)
	asJSON := fs.Bool("json", false, "print the service's JSON (raw picoseconds) instead of text")
	var where multiFlag
	fs.Var(&where, "where", "keep rows matching `COND`, as \"EVENT_NAME LIKE 'wait/io/%' AND COUNT_STAR > 0\"\n(repeatable; conditions join with AND)")
	order := fs.String("order", "", "sort by `COLS`, as \"SUM_TIMER_WAIT desc, EVENT_NAME\"")
	limit := fs.Int("limit", -1, "print at most `N` rows")
	truncate := fs.Bool("truncate", false, "TRUNCATE the table instead (the service must allow changes)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pfs tables [--addr host:port] [--json] [--where COND] [--order COLS] [--limit N] [NAME]")
		fmt.Fprintln(stderr, "       pfs tables [--addr host:port] --truncate NAME")
		fmt.Fprintln(stderr, "\nPrints table NAME of the service serving exporter.Handler at --addr, or without")
		fmt.Fprintln(stderr, "NAME the list of its tables. Times print as MySQL's format_pico_time does.")
		fmt.Fprintln(stderr, "\nexamples:")
		fmt.Fprintln(stderr, "  pfs tables events_waits_summary_global_by_event_name --order 'SUM_TIMER_WAIT desc' --limit 10")
		fmt.Fprintln(stderr, "  pfs tables setup_instruments --where \"NAME LIKE 'wait/io/%'\" --json")
		fmt.Fprintln(stderr, "  pfs tables --truncate events_waits_history_long")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("%w: one table at a time (got %q and %q)", errUsage, pos[0], pos[1])
	}
	c, err := newClient(*addr)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		if len(where) > 0 || *order != "" || *limit >= 0 || *truncate {
			return fmt.Errorf("%w: --where, --order, --limit and --truncate need a table NAME", errUsage)
		}
		return listTables(c, *asJSON, stdout)
	}
	name := pos[0]
	if *truncate {
		if len(where) > 0 || *order != "" || *limit >= 0 {
			return fmt.Errorf("%w: --truncate takes no --where, --order or --limit: TRUNCATE empties the whole table", errUsage)
		}
		b, err := c.post("/tables/"+url.PathEscape(name)+"/truncate", nil)
		if err != nil {
			return tableError(err)
		}
		if *asJSON {
			_, err = stdout.Write(b)
			return err
		}
		_, err = fmt.Fprintf(stdout, "truncated %s\n", name)
		return err
	}
	q := url.Values{"format": {"text"}}
	if *asJSON {
		q.Set("format", "json")
	}
	for _, w := range where {
		q.Add("where", w)
	}
	if *order != "" {
		q.Set("order", *order)
	}
	limitSet := false
	fs.Visit(func(f *flag.Flag) { limitSet = limitSet || f.Name == "limit" })
	if limitSet && *limit < 0 {
		return fmt.Errorf("%w: --limit %d: want 0 or more", errUsage, *limit)
	}
	if *limit >= 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	b, err := c.get("/tables/"+url.PathEscape(name), q)
	if err != nil {
		return tableError(err)
	}
	_, err = stdout.Write(b)
	return err
}

// tableError adds a hint to the service's "unknown table".
func tableError(err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%w; 'pfs tables' with no name lists them", err)
	}
	return err
}

// listTables prints the service's tables with their row counts.
func listTables(c *client, asJSON bool, stdout io.Writer) error {
	q := url.Values{"format": {"text"}}
	if asJSON {
		q.Set("format", "json")
	}
	b, err := c.get("/", q)
	if err != nil {
		return err
	}
	if asJSON && !json.Valid(b) {
		return fmt.Errorf("the service at %s answered with something other than JSON", c.base)
	}
	_, err = stdout.Write(b)
	return err
}
