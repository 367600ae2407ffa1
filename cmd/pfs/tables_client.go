package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// What pfs tables, pfs setup and pfs top share: the service's address, and
// how its errors print. exporter.Client talks to the service.

// defaultAddr is the service pfs talks to without --addr or PFS_ADDR.
const defaultAddr = exporter.DefaultAddr

// addrFlag adds --addr to fs.
func addrFlag(fs *flag.FlagSet) *string {
	return fs.String("addr", "", "the service: host:port, or a base URL such as http://host:port/debug/pfs\n(default $PFS_ADDR, else "+defaultAddr+")")
}

// newClient resolves addr (the --addr flag; "" means $PFS_ADDR, then
// defaultAddr) to a client of the service's handler.
func newClient(addr string) (*exporter.Client, error) {
	if addr == "" {
		addr = os.Getenv("PFS_ADDR")
	}
	if addr == "" {
		addr = defaultAddr
	}
	c, err := exporter.NewClient(addr)
	if err != nil {
		if strings.Contains(addr, "://") {
			return nil, fmt.Errorf("%w: --addr %q: want host:port or an http:// URL", errUsage, addr)
		}
		return nil, fmt.Errorf("%w: --addr %q: want host:port, as %s", errUsage, addr, defaultAddr)
	}
	return c, nil
}

// serviceError is an error of the client as pfs prints it: where it
// looked, when the service did not answer.
func serviceError(err error) error {
	if errors.Is(err, exporter.ErrUnreachable) {
		return fmt.Errorf("%w (is it serving exporter.Handler there? set --addr or PFS_ADDR)", err)
	}
	return err
}

// handlerMessage is serviceError for a command that names the table and
// the service itself: a refusal of the handler is its message alone.
func handlerMessage(err error) error {
	var re *exporter.ResponseError
	if errors.As(err, &re) && re.Handler {
		return re
	}
	return serviceError(err)
}

// isNotFound reports whether err is the handler's "unknown table". A 404
// from anything else is not: that address has no handler at all.
func isNotFound(err error) bool {
	return errors.Is(err, pfscore.ErrUnknownTable)
}

// multiFlag is a flag that may be repeated.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " AND ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseInterspersed parses flags that may come before, between or after
// positional arguments (pfs tables threads --json), and returns the
// positional ones. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, true); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
