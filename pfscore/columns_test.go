package pfscore

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEveryColumnHasARole checks the catalog's roles: every column has one,
// summary tables lead with their dimensions, and what a generic reader
// would sum or convert has a type it can.
func TestEveryColumnHasARole(t *testing.T) {
	s := newTestSchema(t)
	for _, name := range s.TableNames() {
		cols, err := s.Columns(name)
		if err != nil {
			t.Fatal(err)
		}
		dims := 0
		for i, c := range cols {
			if c.Role == 0 || c.Role >= numRoles {
				t.Errorf("%s.%s: no role", name, c.Name)
			}
			switch c.Role {
			case RoleDimension:
				if i != dims && strings.Contains(name, "summary") {
					t.Errorf("%s.%s: a dimension after a statistic", name, c.Name)
				}
				dims++
			case RoleCounter:
				if c.Type != ColUint {
					t.Errorf("%s.%s: counter of type %d", name, c.Name, c.Type)
				}
			case RoleTimer, RoleTimestamp, RoleDuration:
				if c.Type != ColPicos {
					t.Errorf("%s.%s: %v of type %d, want picoseconds", name, c.Name, c.Role, c.Type)
				}
			}
			if strings.HasPrefix(c.Name, "SUM_TIMER_") && c.Role != RoleTimer ||
				strings.HasPrefix(c.Name, "COUNT_") && c.Role != RoleCounter ||
				strings.HasPrefix(c.Name, "CURRENT_") && c.Name != "CURRENT_SCHEMA" && c.Role != RoleGauge ||
				strings.HasPrefix(c.Name, "HIGH_") && c.Role != RoleHighWater ||
				strings.HasPrefix(c.Name, "LOW_") && c.Role != RoleLowWater ||
				strings.HasPrefix(c.Name, "MIN_TIMER_") && c.Role != RoleMin ||
				strings.HasPrefix(c.Name, "MAX_TIMER_") && c.Role != RoleMax {
				t.Errorf("%s.%s: role %v disagrees with the name", name, c.Name, c.Role)
			}
		}
		if strings.Contains(name, "summary") && dims == 0 {
			t.Errorf("%s: a summary without dimensions", name)
		}
	}
}

func TestRoleNames(t *testing.T) {
	for r := Role(1); r < numRoles; r++ {
		got, err := ParseRole(r.String())
		if err != nil || got != r {
			t.Errorf("ParseRole(%q) = %v, %v", r.String(), got, err)
		}
	}
	if _, err := ParseRole("sum"); err == nil {
		t.Error("ParseRole(sum) succeeded")
	}
	if !RoleCounter.Cumulative() || !RoleTimer.Cumulative() || RoleGauge.Cumulative() || RoleMax.Cumulative() {
		t.Error("Cumulative is wrong")
	}
}

type planSample struct {
	Name   string    `pfs:"NAME,dim"`
	Op     Operation `pfs:"OP,attr"`
	On     bool      `pfs:"ON,attr"`
	Maybe  *bool     `pfs:"MAYBE,attr"`
	Doc    string    `pfs:"DOC,text,null"`
	Wait   uint64    `pfs:"WAIT,duration,valid=Timed"`
	Bytes  int64     `pfs:"BYTES,attr,valid=!NoBytes"`
	_      struct{}  `pfs:"NEVER,attr,uint"`
	Ignore int
	planInner

	Timed, NoBytes bool
}

type planInner struct {
	Count uint64 `pfs:"COUNT,counter"`
}

func TestPlanRendersFields(t *testing.T) {
	p, err := makePlan(reflect.TypeFor[planSample]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var types []ColumnType
	for _, c := range p.cols {
		names = append(names, c.Name)
		types = append(types, c.Type)
	}
	if want := []string{"NAME", "OP", "ON", "MAYBE", "DOC", "WAIT", "BYTES", "NEVER", "COUNT"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	if want := []ColumnType{ColString, ColString, ColString, ColString, ColString, ColPicos, ColInt, ColUint, ColUint}; !reflect.DeepEqual(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	yes := true
	rows := rowsOf(p, []planSample{
		{Name: "a", Op: OpFileRead, On: true, Maybe: &yes, Doc: "d", Wait: 5, Bytes: 0, Timed: true, planInner: planInner{7}},
		{Name: "b", Op: OpLock, NoBytes: true},
	})
	want := []Row{
		{"a", "read", "YES", "YES", "d", uint64(5), int64(0), nil, uint64(7)},
		{"b", "lock", "NO", nil, nil, nil, nil, nil, uint64(0)},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%#v\nwant\n%#v", rows, want)
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			A uint64 `pfs:"A"`
		}](), "want NAME,role"},
		{reflect.TypeFor[struct {
			A uint64 `pfs:"A,sum"`
		}](), "unknown column role"},
		{reflect.TypeFor[struct {
			A uint64 `pfs:"A,counter,often"`
		}](), "unknown tag option"},
		{reflect.TypeFor[struct {
			A uint64 `pfs:"A,counter"`
			B uint64 `pfs:"A,counter"`
		}](), "column A twice"},
		{reflect.TypeFor[struct {
			A int64 `pfs:"A,timer"`
		}](), "must be unsigned"},
		{reflect.TypeFor[struct {
			A uint64 `pfs:"A,counter,valid=B"`
			B int
		}](), "not a bool field"},
		{reflect.TypeFor[struct {
			_ struct{} `pfs:"A,attr"`
		}](), "needs its type"},
		{reflect.TypeFor[struct {
			A []byte `pfs:"A,text"`
		}](), "has no column type"},
		{reflect.TypeFor[int](), "not a struct"},
	} {
		_, err := makePlan(tc.typ)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("makePlan(%v) = %v, want an error with %q", tc.typ, err, tc.want)
		}
	}
}

func TestScanSummaryRows(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()
	for range 3 {
		waitOnce(f.m, th)
	}
	res, err := f.s.Select("events_waits_summary_by_account_by_event_name")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ByAccount
		WaitStats
	}
	rows, err := Scan[row](res)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, r := range rows {
		raw := res.Rows[i]
		if r.User != raw[0] || r.Host != raw[1] || r.EventName != raw[2] || r.CountStar != raw[3] || r.SumTimerWait != raw[4] || r.MaxTimerWait != raw[7] {
			t.Errorf("row %d: scanned %+v from %v", i, r, raw)
		}
		if r.User == "alice" && r.EventName == f.mutex.Name() {
			found = true
			if r.CountStar != 3 || r.MinTimerWait > r.AvgTimerWait || r.AvgTimerWait > r.MaxTimerWait {
				t.Errorf("alice's mutex row = %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("no row for alice's mutex waits in %+v", rows)
	}

	// Setup rows scan into the engine's own row types, YES/NO into bools
	// and NULL into nil pointers.
	res, err = f.s.Select("setup_instruments")
	if err != nil {
		t.Fatal(err)
	}
	type instrument struct {
		Name    string `pfs:"NAME"`
		Enabled bool   `pfs:"ENABLED"`
		Timed   *bool  `pfs:"TIMED"`
	}
	ins, err := Scan[instrument](res)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]instrument{}
	for _, r := range ins {
		byName[r.Name] = r
	}
	if m := byName[f.mutex.Name()]; !m.Enabled || m.Timed == nil || !*m.Timed {
		t.Errorf("mutex class scanned as %+v", m)
	}
	if th := byName[f.thread.Name()]; th.Timed != nil {
		t.Errorf("thread class scanned as %+v, want TIMED NULL", th)
	}
}

// TestScanEngineRows reads tables back into the engine's own row types,
// enumerations included, and gets what the typed accessors return.
func TestScanEngineRows(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	waitOnce(f.m, th)
	waitOnce(f.m, th)
	res, err := f.s.Select("events_waits_history")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Scan[WaitEvent](res)
	if err != nil {
		t.Fatal(err)
	}
	want := f.s.EventsWaitsHistory()
	if len(got) != len(want) || len(got) != 2 {
		t.Fatalf("%d rows scanned, %d from EventsWaitsHistory", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i] // Timed, InProgress and HasBytes too: what NULL says
		if g != w {
			t.Errorf("row %d: scanned %+v, want %+v", i, g, w)
		}
	}
	res, err = f.s.Select("setup_consumers")
	if err != nil {
		t.Fatal(err)
	}
	cons, err := Scan[SetupConsumersRow](res)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cons, f.s.SetupConsumers()) {
		t.Errorf("setup_consumers scanned %+v, want %+v", cons, f.s.SetupConsumers())
	}
}

func TestScanErrors(t *testing.T) {
	s := newTestSchema(t)
	res, err := s.Select("setup_consumers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Scan[struct {
		Missing string `pfs:"NO_SUCH_COLUMN"`
	}](res); err == nil || !strings.Contains(err.Error(), "no column NO_SUCH_COLUMN") {
		t.Errorf("missing column: %v", err)
	}
	if _, err := Scan[struct {
		Name uint64 `pfs:"NAME"`
	}](res); err == nil || !strings.Contains(err.Error(), "cannot store") {
		t.Errorf("string into uint64: %v", err)
	}
	if _, err := Scan[int](res); err == nil {
		t.Error("Scan into int succeeded")
	}
	res, err = s.Select("global_status")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Scan[struct {
		Value int8 `pfs:"VARIABLE_VALUE"`
	}](&Result{Columns: res.Columns, Rows: []Row{{"x", uint64(300)}}}); err == nil {
		t.Error("300 into int8 succeeded")
	}
}
