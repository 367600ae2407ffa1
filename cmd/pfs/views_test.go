package main

import (
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/bridge/viewconf"
	"github.com/otelpfs/otelpfs/pfscore"
)

// instrumentsState returns setup_instruments as NAME -> "ENABLED/TIMED".
func instrumentsState(s *pfscore.Schema) map[string]string {
	yn := map[bool]string{true: "YES", false: "NO"}
	out := map[string]string{}
	for _, r := range s.SetupInstruments() {
		timed := "NULL"
		if r.Timed != nil {
			timed = yn[*r.Timed]
		}
		out[r.Name] = yn[r.Enabled] + "/" + timed
	}
	return out
}

func TestViewsRoundTrip(t *testing.T) {
	svc := startService(t)
	no, yes := false, true
	svc.s.UpdateInstruments("wait/synch/%", &no, &no)
	svc.s.UpdateInstruments(testFile, &yes, &no)
	code, out, errs := pfs(t, "views", "--addr", svc.addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"meter_provider:\n  views:\n",
		"        instrument_name: \"wait/synch/*\"\n      stream:\n        aggregation:\n          drop: {}\n",
		"        instrument_name: \"wait/io/*\"\n      stream:\n        aggregation:\n          sum: {}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// print -> parse -> apply to a fresh schema -> the same setup_instruments.
	views, err := viewconf.Parse([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fresh, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range svc.s.SetupInstruments() {
		fresh.MustRegister(r.Name)
	}
	if err := bridge.ApplyViews(fresh, views...); err != nil {
		t.Fatal(err)
	}
	got, want := instrumentsState(fresh), instrumentsState(svc.s)
	if len(got) != len(want) {
		t.Fatalf("%d classes, want %d", len(got), len(want))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s after the round trip, %s in the service", name, got[name], w)
		}
	}
}

func TestViewsUsage(t *testing.T) {
	if code, _, errs := pfs(t, "views", "--addr", "127.0.0.1:1", "--local"); code != 2 || !strings.Contains(errs, "--local") {
		t.Errorf("--local and --addr: exit %d: %s", code, errs)
	}
	if code, _, errs := pfs(t, "views", "extra"); code != 2 || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("an argument: exit %d: %s", code, errs)
	}
	if code, _, errs := pfs(t, "views", "--addr", "127.0.0.1:1"); code != 1 || !strings.Contains(errs, "PFS_ADDR") {
		t.Errorf("no service: exit %d: %s", code, errs)
	}
	code, out, errs := pfs(t, "views", "--local")
	if code != 0 || !strings.Contains(out, "instrument_name:") {
		t.Errorf("--local: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := pfs(t, "views", "-h"); code != 0 || !strings.Contains(errs, "shortest instrument_name wildcards") {
		t.Errorf("-h: exit %d: %s", code, errs)
	}
}
