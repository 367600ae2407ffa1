// Command pfs-sql is a small MySQL client for a service that serves its
// performance_schema with package mysqlpfs, for users without the mysql
// client:
//
//	pfs-sql [-addr 127.0.0.1:6033] [-user pfs] [-batch] [-e "SELECT ..."]
//
// The password is read from PFS_SQL_PASSWORD (empty if unset, which a
// server on loopback may accept). With -e it runs the statements given,
// else those read from standard input, each ended by a semicolon, with a
// prompt when standard input is a terminal; "quit" or "exit" ends it.
// Results print as an aligned table, or with -batch as tab-separated
// lines under a header, as mysql --batch prints them. It exits 1 if a
// statement failed, 2 if it could not connect.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-sql-driver/mysql"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv("PFS_SQL_PASSWORD")))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, password string) int {
	fs := flag.NewFlagSet("pfs-sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:6033", "the service's MySQL endpoint, host:port")
	user := fs.String("user", "pfs", "the account")
	db := fs.String("database", "performance_schema", "the current database")
	batch := fs.Bool("batch", false, "print tab-separated lines, as mysql --batch")
	exec := fs.String("e", "", "run these statements (separated by ;) and exit")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each statement")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pfs-sql: unexpected arguments %q (statements go in -e or on standard input)\n", fs.Args())
		return 2
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = *user, password, "tcp", *addr, *db
	cfg.Timeout = 5 * time.Second
	conn, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		fmt.Fprintf(stderr, "pfs-sql: %v\n", err)
		return 2
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1) // one session: USE and SET carry over
	ctx := context.Background()
	if err := conn.PingContext(ctx); err != nil {
		fmt.Fprintf(stderr, "pfs-sql: connecting to %s as %s: %v\n", *addr, *user, err)
		return 2
	}
	c := &client{db: conn, out: stdout, errw: stderr, batch: *batch, timeout: *timeout}
	if *exec != "" {
		for _, stmt := range splitStatements(*exec) {
			c.run(ctx, stmt)
		}
		return c.status
	}
	interactive := false
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			interactive = true
		}
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pending strings.Builder
	prompt := func() {
		if interactive {
			if pending.Len() == 0 {
				fmt.Fprint(stdout, "pfs> ")
			} else {
				fmt.Fprint(stdout, "  -> ")
			}
		}
	}
	prompt()
	for sc.Scan() {
		line := sc.Text()
		if pending.Len() == 0 {
			t := strings.TrimSpace(line)
			switch strings.ToLower(strings.TrimSuffix(t, ";")) {
			case "quit", "exit", `\q`:
				return c.status
			}
			if t == "" || strings.HasPrefix(t, "-- ") || t == "--" || strings.HasPrefix(t, "#") {
				prompt()
				continue
			}
		}
		pending.WriteString(line)
		pending.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			for _, stmt := range splitStatements(pending.String()) {
				c.run(ctx, stmt)
			}
			pending.Reset()
		}
		prompt()
	}
	if rest := strings.TrimSpace(pending.String()); rest != "" {
		c.run(ctx, rest)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "pfs-sql: reading standard input: %v\n", err)
		return 1
	}
	return c.status
}

type client struct {
	db      *sql.DB
	out     io.Writer
	errw    io.Writer
	batch   bool
	timeout time.Duration
	status  int
}

// run runs one statement and prints its result or its error.
func (c *client) run(ctx context.Context, stmt string) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.query(ctx, stmt); err != nil {
		c.status = 1
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			fmt.Fprintf(c.errw, "ERROR %d (%s): %s\n", me.Number, string(me.SQLState[:]), me.Message)
		} else {
			fmt.Fprintf(c.errw, "ERROR: %v\n", err)
		}
	}
}

func (c *client) query(ctx context.Context, stmt string) error {
	rows, err := c.db.QueryContext(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) == 0 { // a statement without a result set
		return rows.Close()
	}
	var out [][]string
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c.print(cols, out)
	return nil
}

// print writes a result: tab-separated lines (batch), or an aligned
// table and a row count.
func (c *client) print(cols []string, rows [][]string) {
	if c.batch {
		fmt.Fprintln(c.out, strings.Join(cols, "\t"))
		for _, r := range rows {
			for i := range r {
				r[i] = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`).Replace(r[i])
			}
			fmt.Fprintln(c.out, strings.Join(r, "\t"))
		}
		return
	}
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range rows {
		for i := range r {
			r[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	noun := "rows"
	if len(rows) == 1 {
		noun = "row"
	}
	fmt.Fprintf(c.out, "(%d %s)\n\n", len(rows), noun)
}

// splitStatements splits text at semicolons outside quotes and comments,
// dropping empty statements.
func splitStatements(text string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote != 0:
			cur.WriteByte(ch)
			if ch == '\\' && quote != '`' && i+1 < len(text) {
				i++
				cur.WriteByte(text[i])
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"' || ch == '`':
			quote = ch
			cur.WriteByte(ch)
		case ch == ';':
			flush()
		case ch == '-' && strings.HasPrefix(text[i:], "-- "), ch == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return out
}
