package exporter_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

func TestFormatPicoTime(t *testing.T) {
	for _, tc := range []struct {
		ps   uint64
		want string
	}{
		{0, "  0 ps"},
		{43, " 43 ps"},
		{999, "999 ps"},
		{1000, "1.00 ns"},
		{3501, "3.50 ns"},
		{4321, "4.32 ns"},
		{1_230_000, "1.23 us"},
		{43211234, "43.21 us"},
		{432112344321, "432.11 ms"},
		{45_670_000_000, "45.67 ms"},
		{43211234432123, "43.21 s"},
		{188732396662000, "3.15 min"},
		{4321123443212345, "1.20 h"},
		{432112344321234545, "5.00 d"},
		{math.MaxUint64, "213.50 d"}, // the exponent form (from 100000 d) is beyond uint64
	} {
		if got := exporter.FormatPicoTime(tc.ps); got != tc.want {
			t.Errorf("FormatPicoTime(%d) = %q, want %q", tc.ps, got, tc.want)
		}
	}
}

var sample = &pfscore.Result{
	Table: "sample",
	Columns: []pfscore.Column{
		{Name: "EVENT_NAME", Type: pfscore.ColString},
		{Name: "COUNT_STAR", Type: pfscore.ColUint},
		{Name: "DELTA", Type: pfscore.ColInt},
		{Name: "SUM_TIMER_WAIT", Type: pfscore.ColPicos},
	},
	Rows: []pfscore.Row{
		{"wait/synch/mutex/app/a", uint64(12), int64(-3), uint64(45_670_000_000)},
		{"idle", uint64(0), nil, uint64(0)},
		{nil, uint64(math.MaxUint64), int64(math.MinInt64), nil},
		{"two\nlines\t", uint64(1), int64(1), uint64(1)},
	},
	Matched: 4, // as Schema.Query says: every row
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := exporter.WriteJSON(&b, sample); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `{"name":"SUM_TIMER_WAIT","type":"picos"}`) || !strings.Contains(b.String(), "18446744073709551615") ||
		strings.Contains(b.String(), `"matched"`) { // no limit left rows out
		t.Errorf("JSON: %s", b.String())
	}
	got, err := exporter.DecodeJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sample) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, sample)
	}
	// A limit that left rows out: "matched" says how many there were.
	limited := *sample
	limited.Rows = sample.Rows[:1]
	b.Reset()
	exporter.WriteJSON(&b, &limited)
	if got, err := exporter.DecodeJSON(&b); err != nil || !reflect.DeepEqual(got, &limited) {
		t.Errorf("limited round trip: %v\n got %#v\nwant %#v", err, got, &limited)
	}
	// Empty tables have [] rows.
	b.Reset()
	exporter.WriteJSON(&b, &pfscore.Result{Table: "empty", Columns: sample.Columns})
	if !strings.Contains(b.String(), `"rows":[]`) {
		t.Errorf("empty table: %s", b.String())
	}
	for _, bad := range []string{
		`{"table":"x","columns":[{"name":"A","type":"float"}],"rows":[]}`,
		`{"table":"x","columns":[{"name":"A","type":"uint"}],"rows":[[1,2]]}`,
		`{"table":"x","columns":[{"name":"A","type":"uint"}],"rows":[[-1]]}`,
		`{"table":"x","columns":[{"name":"A","type":"string"}],"rows":[[1]]}`,
		`not json`,
	} {
		if _, err := exporter.DecodeJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("DecodeJSON(%s): no error", bad)
		}
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := exporter.WriteText(&b, sample); err != nil {
		t.Fatal(err)
	}
	want := `EVENT_NAME                        COUNT_STAR                 DELTA  SUM_TIMER_WAIT
wait/synch/mutex/app/a                    12                    -3        45.67 ms
idle                                       0                  NULL            0 ps
NULL                    18446744073709551615  -9223372036854775808            NULL
two\nlines\t                               1                     1            1 ps
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}
