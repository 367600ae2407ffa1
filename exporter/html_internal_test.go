package exporter

import (
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The where example's string condition matches the value it was built
// from, whatever the value holds: a LIKE on an instrument name's kind, =
// on a short value, a prefix LIKE with its wildcards escaped otherwise.
func TestStringCondition(t *testing.T) {
	for _, tc := range []struct{ sample, want string }{
		{"wait/synch/mutex/app/a", "EVENT_NAME LIKE 'wait/%'"},
		{"idle", "EVENT_NAME = 'idle'"},
		{"it's", "EVENT_NAME = 'it''s'"},
		{"50%_off/x", `EVENT_NAME LIKE '50\%\_off/%'`},
		{`a\b/c`, `EVENT_NAME LIKE 'a\\b/%'`},
		{"a very long value with no slash in it at all", "EVENT_NAME LIKE 'a very l%'"},
		{"ünïcödé values longer than twenty-four", "EVENT_NAME LIKE 'ünïcödé %'"},
		{"", "EVENT_NAME LIKE '%'"},
	} {
		got := stringCondition("EVENT_NAME", tc.sample)
		if got != tc.want {
			t.Errorf("stringCondition(%q) = %q, want %q", tc.sample, got, tc.want)
			continue
		}
		// A LIKE matches the value it was built from.
		pattern, isLike := strings.CutPrefix(got, "EVENT_NAME LIKE ")
		if !isLike {
			continue
		}
		pattern = strings.ReplaceAll(strings.Trim(pattern, "'"), "''", "'")
		if !pfscore.Like(pattern, tc.sample) {
			t.Errorf("%s does not match %q", got, tc.sample)
		}
	}
}

// Placeholders for tables no catalog has yet: only strings, only ids,
// nothing at all; they never come out empty for a table with columns.
func TestPlaceholdersShapes(t *testing.T) {
	str := pfscore.Column{Name: "S", Type: pfscore.ColString, Role: pfscore.RoleAttribute}
	id := pfscore.Column{Name: "ID", Type: pfscore.ColUint, Role: pfscore.RoleID}
	dur := pfscore.Column{Name: "D", Type: pfscore.ColPicos, Role: pfscore.RoleDuration}
	for _, tc := range []struct {
		cols         []pfscore.Column
		sample       string
		where, order string
	}{
		{[]pfscore.Column{str}, "YES", "S = 'YES'", "S"},
		{[]pfscore.Column{id}, "", "ID IS NOT NULL", "ID"},
		{[]pfscore.Column{id, dur}, "", "D > 1us", "D desc"},
		{[]pfscore.Column{id, str, dur}, "x/y", "S LIKE 'x/%' AND D > 1us", "D desc"},
		{nil, "", "", ""},
	} {
		where, order := placeholders(tc.cols, tc.sample)
		if where != tc.where || order != tc.order {
			t.Errorf("placeholders(%v, %q) = %q, %q; want %q, %q", tc.cols, tc.sample, where, order, tc.where, tc.order)
		}
	}
}

// firstOrderKey reads the order's first key as pfscore.Query does, and
// declines what it cannot read rather than guess.
func TestFirstOrderKey(t *testing.T) {
	cols := []pfscore.Column{{Name: "EVENT_NAME"}, {Name: "COUNT_STAR", Type: pfscore.ColUint}}
	for _, tc := range []struct {
		order    string
		col      int
		desc, ok bool
	}{
		{"COUNT_STAR desc", 1, true, true},
		{"  count_star   DESC , EVENT_NAME", 1, true, true},
		{"event_name", 0, false, true},
		{"EVENT_NAME asc, COUNT_STAR desc", 0, false, true},
		{"", 0, false, false},
		{"NOPE desc", 0, false, false},
		{"COUNT_STAR sideways", 0, false, false},
		{"COUNT_STAR desc extra", 0, false, false},
	} {
		col, desc, ok := firstOrderKey(cols, tc.order)
		if col != tc.col || desc != tc.desc || ok != tc.ok {
			t.Errorf("firstOrderKey(%q) = %d, %v, %v; want %d, %v, %v", tc.order, col, desc, ok, tc.col, tc.desc, tc.ok)
		}
	}
}
