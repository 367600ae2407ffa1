package pfscore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

var qcols = []Column{
	{Name: "NAME", Type: ColString},
	{Name: "COUNT_STAR", Type: ColUint},
	{Name: "DELTA", Type: ColInt},
	{Name: "SUM_TIMER_WAIT", Type: ColPicos},
}

var qrows = []Row{
	{"wait/io/file/app/log", uint64(3), int64(-5), uint64(2_000_000_000)}, // 2 ms
	{"wait/synch/mutex/app/a", uint64(10), int64(7), uint64(1_500_000)},   // 1.5 us
	{"wait/synch/mutex/app/b_c", uint64(0), nil, uint64(0)},
	{"Idle", uint64(18446744073709551615), int64(0), nil},
	{nil, uint64(1), int64(-9223372036854775808), uint64(1)},
}

// names runs a query and returns the NAME column of the result, "NULL" for
// NULL.
func names(t *testing.T, where []string, order, limit string) string {
	t.Helper()
	n := 0
	if limit != "" {
		n, _ = strconv.Atoi(limit)
	}
	q, err := compileQuery(qcols, where, order, n)
	if err != nil {
		t.Fatalf("where %q order %q limit %q: %v", where, order, limit, err)
	}
	rows, _ := q.apply(append([]Row(nil), qrows...))
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return strings.ReplaceAll(strings.Join(out, " "), "<nil>", "NULL")
}

func TestQueryWhere(t *testing.T) {
	for _, tc := range []struct {
		where string
		want  string
	}{
		{"", "wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c Idle NULL"},
		{"NAME LIKE 'wait/synch/%'", "wait/synch/mutex/app/a wait/synch/mutex/app/b_c"},
		{"name like 'WAIT/SYNCH/%'", "wait/synch/mutex/app/a wait/synch/mutex/app/b_c"},
		{`NAME LIKE '%\_c'`, "wait/synch/mutex/app/b_c"},
		{"NAME NOT LIKE 'wait/%'", "Idle"}, // NULL is neither LIKE nor NOT LIKE
		{"NAME = 'idle'", "Idle"},          // case-insensitive, as MySQL's collation
		{`NAME = "Idle"`, "Idle"},
		{"NAME != 'idle'", "wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c"},
		{"NAME <> 'idle' AND COUNT_STAR > 0", "wait/io/file/app/log wait/synch/mutex/app/a"},
		{"NAME IS NULL", "NULL"},
		{"DELTA IS NOT NULL and DELTA < 0", "wait/io/file/app/log NULL"},
		{"DELTA >= -5", "wait/io/file/app/log wait/synch/mutex/app/a Idle"},
		{"DELTA <= -9223372036854775808", "NULL"},
		{"COUNT_STAR >= 18446744073709551615", "Idle"},
		{"COUNT_STAR > -1", "wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c Idle NULL"},
		{"COUNT_STAR = '10'", "wait/synch/mutex/app/a"},
		{"SUM_TIMER_WAIT > 1us", "wait/io/file/app/log wait/synch/mutex/app/a"},
		{"SUM_TIMER_WAIT >= 1.5us AND SUM_TIMER_WAIT < 0.002s", "wait/synch/mutex/app/a"},
		{"SUM_TIMER_WAIT = 2ms", "wait/io/file/app/log"},
		{"SUM_TIMER_WAIT < 1ns", "wait/synch/mutex/app/b_c NULL"},
		{"SUM_TIMER_WAIT > 1min", ""},
		{"COUNT_STAR LIKE '1%'", "wait/synch/mutex/app/a Idle NULL"},
		// Operands no integer equals: a fraction of a picosecond, a number
		// beyond every uint64 or int64. Cells compare with them exactly.
		{"SUM_TIMER_WAIT = 1.5ps", ""},
		{"SUM_TIMER_WAIT < 1.5ps", "wait/synch/mutex/app/b_c NULL"},
		{"SUM_TIMER_WAIT >= 1.5ps", "wait/io/file/app/log wait/synch/mutex/app/a"},
		{"SUM_TIMER_WAIT > 0.5ps", "wait/io/file/app/log wait/synch/mutex/app/a NULL"},
		{"SUM_TIMER_WAIT != 0.5ps", "wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c NULL"},
		{"COUNT_STAR < 99999999999999999999", "wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c Idle NULL"},
		{"COUNT_STAR = 99999999999999999999", ""},
		{"DELTA > -99999999999999999999", "wait/io/file/app/log wait/synch/mutex/app/a Idle NULL"},
	} {
		if got := names(t, []string{tc.where}, "", ""); got != tc.want {
			t.Errorf("where %s:\n got %s\nwant %s", tc.where, got, tc.want)
		}
	}
	// Two where parameters join with AND.
	if got := names(t, []string{"COUNT_STAR > 0", "NAME LIKE 'wait/%'"}, "", ""); got != "wait/io/file/app/log wait/synch/mutex/app/a" {
		t.Errorf("two wheres: %s", got)
	}
}

func TestQueryOrderLimit(t *testing.T) {
	for _, tc := range []struct {
		order, limit, want string
	}{
		{"COUNT_STAR desc", "", "Idle wait/synch/mutex/app/a wait/io/file/app/log NULL wait/synch/mutex/app/b_c"},
		{"COUNT_STAR DESC", "2", "Idle wait/synch/mutex/app/a"},
		{"SUM_TIMER_WAIT", "", "Idle wait/synch/mutex/app/b_c NULL wait/synch/mutex/app/a wait/io/file/app/log"}, // NULL first
		{"SUM_TIMER_WAIT desc", "", "wait/io/file/app/log wait/synch/mutex/app/a NULL wait/synch/mutex/app/b_c Idle"},
		{"DELTA asc", "", "wait/synch/mutex/app/b_c NULL wait/io/file/app/log Idle wait/synch/mutex/app/a"},
		{"NAME", "", "NULL Idle wait/io/file/app/log wait/synch/mutex/app/a wait/synch/mutex/app/b_c"},
		{"sum_timer_wait desc, NAME asc", "0", "wait/io/file/app/log wait/synch/mutex/app/a NULL wait/synch/mutex/app/b_c Idle"}, // 0: no limit
	} {
		if got := names(t, nil, tc.order, tc.limit); got != tc.want {
			t.Errorf("order %s limit %s:\n got %s\nwant %s", tc.order, tc.limit, got, tc.want)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	for _, tc := range []struct {
		where, order string
		msg          string
	}{
		{"NAME", "", "want =, !=, <>"},
		{"NAME =", "", "want a value"},
		{"= 1", "", "want a column name"},
		{"NAME = 'a' AND", "", "want a column name"},
		{"NAME = 'a' 'b'", "", "want AND"},
		{"NAME IS 'x'", "", "want NULL"},
		{"NAME NOT 'x'", "", "want LIKE"},
		{"NAME LIKE 5", "", "quoted pattern"},
		{"NAME = x", "", "must be quoted"},
		{"COUNT_STAR = 1.5", "", "not an integer"},
		{"COUNT_STAR = 5ms", "", "not an integer"},
		{"SUM_TIMER_WAIT > 5 ms", "", "want AND"},
		{"SUM_TIMER_WAIT > 5weeks", "", "unknown unit"},
		{"SUM_TIMER_WAIT > 1.2.3", "", "not a number"},
		{"NAME = 'a' || NAME = 'b'", "", "unexpected character"},
		{"NAME = 'a';", "", "unexpected character"},
		{"", "NAME,", "want a column name"},
		{"", "NAME DESC DESC", "want ASC, DESC"},
	} {
		_, err := compileQuery(qcols, []string{tc.where}, tc.order, 0)
		if err == nil || !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("where %q order %q: err %v, want one mentioning %q", tc.where, tc.order, err, tc.msg)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"NAME LIKE 'wait/%' AND COUNT_STAR > 0", "SUM_TIMER_WAIT >= 1.5us", "DELTA IS NOT NULL", `NAME = "a""b"`} {
		f.Add(s, "COUNT_STAR desc, NAME")
	}
	f.Fuzz(func(t *testing.T, where, order string) {
		q, err := compileQuery(qcols, []string{where}, order, 3)
		if err != nil {
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("error %v is not a query error", err)
			}
			return
		}
		rows, matched := q.apply(append([]Row(nil), qrows...))
		if len(rows) > 3 || matched > len(qrows) {
			t.Fatalf("%d rows, %d matched", len(rows), matched)
		}
	})
}

// TestSchemaQuery runs a Query through the schema: the filter, order and
// limit apply to the table's snapshot, and Matched counts before the limit.
func TestSchemaQuery(t *testing.T) {
	s := newTestSchema(t)
	res, err := s.Query("setup_consumers", Query{
		Where: []string{"NAME LIKE " + QuoteString("events_waits%"), "ENABLED IS NOT NULL"},
		Order: "NAME desc",
		Limit: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 3 || len(res.Rows) != 2 || res.Rows[0][0] != "events_waits_history_long" || res.Rows[1][0] != "events_waits_history" {
		t.Errorf("matched %d, rows %v", res.Matched, res.Rows)
	}
	if _, err := s.Query("setup_consumers", Query{Where: []string{"NO_SUCH = 1"}}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("bad column: %v", err)
	}
	if _, err := s.Query("no_such_table", Query{}); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("bad table: %v", err)
	}
	if q := QuoteString("it's"); q != "'it''s'" {
		t.Errorf("QuoteString = %s", q)
	}
}

// TestQueryBinaryColumns: setup_actors' and setup_objects' keys compare
// byte for byte, as MySQL's _bin collations do and as the engine matches
// them, so WHERE USER = 'Bob' leaves user 'bob' alone; other strings
// compare case-insensitively.
func TestQueryBinaryColumns(t *testing.T) {
	s := newTestSchema(t)
	for _, u := range []string{"bob", "Bob"} {
		if err := s.Insert("setup_actors", map[string]Value{"HOST": "h", "USER": u}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		where []string
		want  int
	}{
		{[]string{"USER = 'Bob'"}, 1},
		{[]string{"USER LIKE 'b%'"}, 1},
		{[]string{"USER NOT LIKE 'B%'"}, 2}, // bob and %
		{[]string{"USER > 'Bob'"}, 1},       // 'b' > 'B' byte for byte
		{[]string{"HOST = 'H'"}, 0},
	} {
		res, err := s.Query("setup_actors", Query{Where: tc.where})
		if err != nil || len(res.Rows) != tc.want {
			t.Errorf("%v: %d rows (%v), want %d", tc.where, len(res.Rows), err, tc.want)
		}
	}
	if n, err := s.Delete("setup_actors", []string{"USER = 'Bob'"}); err != nil || n != 1 {
		t.Fatalf("DELETE WHERE USER = 'Bob': %d, %v", n, err)
	}
	if rows := s.SetupActors(); len(rows) != 2 || rows[1].User != "bob" {
		t.Errorf("after DELETE: %+v", rows)
	}
	// Case-insensitive elsewhere: setup_instruments' NAME.
	res, err := s.Query("setup_consumers", Query{Where: []string{"NAME = 'EVENTS_WAITS_CURRENT'"}})
	if err != nil || len(res.Rows) != 1 {
		t.Errorf("NAME = 'EVENTS_WAITS_CURRENT': %d rows, %v", len(res.Rows), err)
	}
	cols, _ := s.Columns("setup_actors")
	if !cols[1].Binary || cols[3].Binary {
		t.Errorf("setup_actors columns: %+v", cols)
	}
}
