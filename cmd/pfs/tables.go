package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
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
		if err := c.Truncate(name); err != nil {
			return tableError(err)
		}
		if *asJSON { // the handler's answer
			return json.NewEncoder(stdout).Encode(map[string]any{"table": name, "truncated": true})
		}
		_, err = fmt.Fprintf(stdout, "truncated %s\n", name)
		return err
	}
	limitSet := false
	fs.Visit(func(f *flag.Flag) { limitSet = limitSet || f.Name == "limit" })
	if limitSet && *limit < 0 {
		return fmt.Errorf("%w: --limit %d: want 0 or more", errUsage, *limit)
	}
	q := pfscore.Query{Where: where, Order: *order, Limit: *limit}
	if *limit == 0 { // no rows, the columns only (a Query's Limit 0 is no limit)
		q.Limit = 1
	}
	res, err := c.Query(name, q)
	if err != nil {
		return tableError(err)
	}
	if *limit == 0 {
		res.Rows = res.Rows[:0]
	}
	return printResult(stdout, res, *asJSON)
}

// printResult prints a table as text (times as format_pico_time writes
// them) or as the handler's JSON.
func printResult(w io.Writer, res *pfscore.Result, asJSON bool) error {
	if asJSON {
		return exporter.WriteJSON(w, res)
	}
	return exporter.WriteText(w, res)
}

// tableError is err as pfs tables prints it: the handler's message, with a
// hint for an unknown table.
func tableError(err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%w; 'pfs tables' with no name lists them", handlerMessage(err))
	}
	return handlerMessage(err)
}

// listTables prints the service's tables with their row counts.
func listTables(c *exporter.Client, asJSON bool, stdout io.Writer) error {
	cat, err := c.Catalog()
	if err != nil {
		return serviceError(err)
	}
	infos := make([]exporter.TableInfo, 0, len(cat))
	for _, ti := range cat {
		res, err := c.Query(ti.Name, pfscore.Query{Limit: 1}) // Matched: the rows
		if isNotFound(err) {
			continue // gone since the catalog
		}
		if err != nil {
			return serviceError(err)
		}
		infos = append(infos, exporter.TableInfo{Name: ti.Name, Rows: res.Matched, Truncatable: ti.Truncatable})
	}
	if asJSON { // as GET /debug/pfs/?format=json
		return json.NewEncoder(stdout).Encode(struct {
			Tables []exporter.TableInfo `json:"tables"`
		}{infos})
	}
	res := &pfscore.Result{Columns: []pfscore.Column{
		{Name: "TABLE_NAME", Type: pfscore.ColString}, {Name: "ROWS", Type: pfscore.ColUint}, {Name: "TRUNCATE", Type: pfscore.ColString}}}
	for _, ti := range infos {
		truncate := "NO"
		if ti.Truncatable {
			truncate = "YES"
		}
		res.Rows = append(res.Rows, pfscore.Row{ti.Name, uint64(ti.Rows), truncate})
	}
	return exporter.WriteText(stdout, res)
}
