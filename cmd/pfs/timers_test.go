package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTimersJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"timers", "--json"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []timerRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("output is not a JSON array of rows: %v\n%s", err, out.String())
	}
	names := []string{"CYCLE", "NANOSECOND", "MICROSECOND", "MILLISECOND", "TICK"}
	if len(rows) != len(names) {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	for i, r := range rows {
		if r.Name != names[i] || r.Frequency == 0 || r.Resolution == 0 {
			t.Errorf("row %d = %+v", i, r)
		}
	}
	if rows[1].Frequency != 1_000_000_000 {
		t.Errorf("NANOSECOND frequency %d", rows[1].Frequency)
	}
	// The raw output carries MySQL's column names.
	for _, col := range []string{"TIMER_NAME", "TIMER_FREQUENCY", "TIMER_RESOLUTION", "TIMER_OVERHEAD"} {
		if !strings.Contains(out.String(), `"`+col+`"`) {
			t.Errorf("JSON lacks %s", col)
		}
	}
}

func TestTimersText(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"timers"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "TIMER_OVERHEAD") || !strings.Contains(lines[1], "CYCLE") {
		t.Errorf("unexpected table:\n%s", out.String())
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage: pfs"},
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"timers", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"timers", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"help"}, 0, "commands:"},
		{[]string{"timers", "-h"}, 0, "usage: pfs timers"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, nil, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("pfs %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}
