package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/mysqlpfs"
	"github.com/otelpfs/otelpfs/pfscore"
)

func serve(t *testing.T) string {
	t.Helper()
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	s.MustRegister("wait/synch/mutex/app/cache")
	srv, err := mysqlpfs.Listen("127.0.0.1:0", s, mysqlpfs.WithUser("pfs", "pw"), mysqlpfs.WithSetupChanges(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

func TestRunExec(t *testing.T) {
	addr := serve(t)
	var out, errw bytes.Buffer
	code := run([]string{"-addr", addr, "-batch", "-e",
		"UPDATE setup_instruments SET ENABLED = 'NO' WHERE NAME = 'wait/synch/mutex/app/cache'; SELECT NAME, ENABLED FROM setup_instruments WHERE NAME LIKE 'wait/synch/mutex/app/%'; SELECT * FROM nope"},
		strings.NewReader(""), &out, &errw, "pw")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a statement failed)", code)
	}
	if want := "NAME\tENABLED\nwait/synch/mutex/app/cache\tNO\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if !strings.HasPrefix(errw.String(), "ERROR 1146 (42S02): ") {
		t.Errorf("stderr %q, want ERROR 1146", errw.String())
	}
}

func TestRunStdin(t *testing.T) {
	addr := serve(t)
	var out, errw bytes.Buffer
	in := "SELECT sys.format_pico_time(1500000),\n  'a;b' AS s;\n-- a comment\nquit\nSELECT 2;\n"
	if code := run([]string{"-addr", addr}, strings.NewReader(in), &out, &errw, "pw"); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	want := "sys.format_pico_time(1500000)  s\n1.50 us                        a;b\n(1 row)\n\n"
	if out.String() != want {
		t.Errorf("printed\n%q\nwant\n%q", out.String(), want)
	}
}

func TestRunCannotConnect(t *testing.T) {
	addr := serve(t)
	var out, errw bytes.Buffer
	if code := run([]string{"-addr", addr, "-e", "SELECT 1"}, strings.NewReader(""), &out, &errw, "wrong"); code != 2 {
		t.Errorf("exit %d with a wrong password, want 2", code)
	}
	if !strings.Contains(errw.String(), "1045") {
		t.Errorf("stderr %q, want the 1045", errw.String())
	}
	if code := run([]string{"extra"}, strings.NewReader(""), &out, &errw, ""); code != 2 {
		t.Errorf("exit %d with an argument, want 2", code)
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("SELECT 'a;b'; SELECT \"c\\\";\" ;; # x;y\nSELECT `d;e`")
	want := []string{"SELECT 'a;b'", "SELECT \"c\\\";\"", "SELECT `d;e`"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
