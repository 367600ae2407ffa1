package bridge

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
)

func view(name string, s sdkmetric.Stream) sdkmetric.View {
	return sdkmetric.NewView(sdkmetric.Instrument{Name: name}, s)
}

func dropView(name string) sdkmetric.View {
	return view(name, sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}})
}

func TestLikePattern(t *testing.T) {
	for in, want := range map[string]string{
		"wait/synch/mutex/*":         "wait/synch/mutex/%",
		"statement/sql/?":            "statement/sql/_",
		"*":                          "%",
		"wait/io/file/app/wal_log":   `wait/io/file/app/wal\_log`,
		`odd/100%/back\slash`:        `odd/100\%/back\\slash`,
		"memory/app/a_b*":            `memory/app/a\_b%`,
		"stage/app/step-1.parse?_x*": `stage/app/step-1.parse_\_x%`,
	} {
		if got := LikePattern(in); got != want {
			t.Errorf("LikePattern(%q) = %q, want %q", in, got, want)
		}
	}
	// The translation means the same as the SDK's wildcard, on pfs names.
	names := []string{"wait/io/file/app/wal_log", "wait/io/file/app/walxlog", "wait/io/file/app/wal"}
	for _, w := range []string{"wait/io/file/app/wal_log", "wait/io/file/app/wal?log", "wait/io/file/*_log", "wait/io/*"} {
		for _, n := range names {
			if got, want := pfscore.Like(LikePattern(w), n), wildcard(w, n); got != want {
				t.Errorf("%q on %q: LIKE %v, wildcard %v", w, n, got, want)
			}
		}
	}
}

var wildcards sync.Map // pattern -> *regexp.Regexp

// wildcard matches as the SDK's NewView does.
func wildcard(pattern, name string) bool {
	re, ok := wildcards.Load(pattern)
	if !ok {
		re = regexp.MustCompile("^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$")
		wildcards.Store(pattern, re)
	}
	return re.(*regexp.Regexp).MatchString(name)
}

var testClasses = []string{
	"idle", "transaction",
	"wait/synch/mutex/app/a", "wait/synch/mutex/app/b", "wait/synch/mutex/lib/c",
	"wait/synch/rwlock/app/map", "wait/io/file/app/wal_log", "wait/io/file/app/wal.idx",
	"statement/sql/select", "statement/sql/select/sub", "statement/sql/select.x", "statement/sql/insert",
	"statement/com/Query", "stage/app/parse", "memory/app/buf", "memory/app/cache",
}

func TestCoverNames(t *testing.T) {
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	for _, c := range []struct {
		in   map[string]bool
		want []string
	}{
		{set(), nil},
		{set(testClasses...), []string{"*"}},
		{set("wait/synch/mutex/app/a", "wait/synch/mutex/app/b", "wait/synch/mutex/lib/c"), []string{"wait/synch/mutex/*"}},
		{set("wait/synch/mutex/app/a", "wait/synch/mutex/app/b"), []string{"wait/synch/mutex/app/*"}},
		{set("wait/synch/mutex/app/a", "wait/synch/mutex/app/b", "wait/synch/mutex/lib/c", "wait/synch/rwlock/app/map"),
			[]string{"wait/synch/*"}},
		{set("statement/sql/select"), []string{"statement/sql/select"}},
		{set("statement/sql/select", "statement/sql/select/sub"), []string{"statement/sql/select", "statement/sql/select/*"}},
		{set("memory/app/buf", "memory/app/cache", "idle"), []string{"idle", "memory/*"}},
	} {
		if got := coverNames(testClasses, c.in); !slices.Equal(got, c.want) {
			t.Errorf("coverNames(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	// Property: the wildcards match exactly the set, on random sets.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		in := map[string]bool{}
		for _, n := range testClasses {
			if rng.IntN(3) == 0 {
				in[n] = true
			}
		}
		ws := coverNames(testClasses, in)
		for _, n := range testClasses {
			matched := slices.ContainsFunc(ws, func(w string) bool { return wildcard(w, n) })
			if matched != in[n] {
				t.Fatalf("set %v: wildcards %q match %s: %v", in, ws, n, matched)
			}
			like := slices.ContainsFunc(ws, func(w string) bool { return pfscore.Like(LikePattern(w), n) })
			if like != in[n] {
				t.Fatalf("set %v: LIKE of %q match %s: %v", in, ws, n, like)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	hist := sdkmetric.AggregationExplicitBucketHistogram{Boundaries: []float64{0.001, 0.01, 0.1}}
	allowUser := attribute.NewAllowKeysFilter("pfs.user")
	allowHost := attribute.NewAllowKeysFilter("pfs.host")
	for _, c := range []struct {
		name   string
		views  []sdkmetric.View
		drop   bool
		action setupAction
		keep   []attribute.Key // nil: every key
		hist   bool
	}{
		{"no view", nil, false, setupLeave, nil, false},
		{"other view", []sdkmetric.View{dropView("wait/io/*")}, false, setupLeave, nil, false},
		{"drop", []sdkmetric.View{dropView("wait/synch/*")}, true, setupOff, nil, false},
		{"drop and a filter", []sdkmetric.View{dropView("wait/synch/*"), view("*", sdkmetric.Stream{AttributeFilter: allowUser})},
			true, setupOff, nil, false},
		{"drop and default", []sdkmetric.View{dropView("wait/synch/*"), view("*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationDefault{}})},
			true, setupOff, nil, false},
		{"default and a filter", []sdkmetric.View{view("*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationDefault{}, AttributeFilter: allowUser})},
			false, setupLeave, []attribute.Key{"pfs.user"}, false},
		{"drop and histogram", []sdkmetric.View{dropView("wait/synch/*"), view("wait/*", sdkmetric.Stream{Aggregation: hist})},
			false, setupTimed, nil, true},
		{"sum", []sdkmetric.View{view("wait/synch/mutex/app/?", sdkmetric.Stream{Aggregation: sdkmetric.AggregationSum{}})},
			false, setupCounted, nil, false},
		{"last value and exponential", []sdkmetric.View{
			view("wait/*", sdkmetric.Stream{Aggregation: &sdkmetric.AggregationLastValue{}}),
			view("*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}}),
		}, false, setupTimed, nil, true},
		{"filters add up", []sdkmetric.View{
			view("wait/*", sdkmetric.Stream{AttributeFilter: allowUser}),
			view("*", sdkmetric.Stream{AttributeFilter: allowHost, Aggregation: sdkmetric.AggregationDrop{}}), // drops: its filter does not count
			view("wait/synch/*", sdkmetric.Stream{AttributeFilter: allowHost, Aggregation: sdkmetric.AggregationSum{}}),
		}, false, setupCounted, []attribute.Key{"pfs.host", "pfs.user"}, false},
		{"a filter and none", []sdkmetric.View{
			view("wait/*", sdkmetric.Stream{AttributeFilter: allowUser}),
			view("wait/synch/*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationSum{}}),
		}, false, setupCounted, []attribute.Key{"pfs.user"}, false},
	} {
		r := resolve(c.views, ClassInstrument("wait/synch/mutex/app/a"))
		if r.drop != c.drop || r.action != c.action || (r.hist != nil) != c.hist {
			t.Errorf("%s: drop %v action %v hist %v; want %v %v %v", c.name, r.drop, r.action, r.hist, c.drop, c.action, c.hist)
		}
		if (r.keep == nil) != (c.keep == nil) {
			t.Errorf("%s: keep %v, want keys %v", c.name, r.keep != nil, c.keep)
			continue
		}
		if r.keep != nil {
			var kept []attribute.Key
			for _, k := range []attribute.Key{"pfs.host", "pfs.user", "thread.id"} {
				if r.keep(k.String("x")) {
					kept = append(kept, k)
				}
			}
			if !slices.Equal(kept, c.keep) {
				t.Errorf("%s: keeps %v, want %v", c.name, kept, c.keep)
			}
		}
	}
	// Histograms keep their buckets, copied.
	r := resolve([]sdkmetric.View{func(sdkmetric.Instrument) (sdkmetric.Stream, bool) {
		return sdkmetric.Stream{Aggregation: hist}, true
	}}, ClassInstrument("statement/sql/select"))
	hist.Boundaries[0] = 42
	if got, ok := r.hist.(sdkmetric.AggregationExplicitBucketHistogram); !ok || !slices.Equal(got.Boundaries, []float64{0.001, 0.01, 0.1}) {
		t.Errorf("hist = %#v", r.hist)
	}
}

func newSchema(t *testing.T, opts ...pfscore.Option) *pfscore.Schema {
	t.Helper()
	s, err := pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range testClasses {
		if _, err := s.Register(n); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// setupState returns setup_instruments as NAME -> "ENABLED/TIMED".
func setupState(t *testing.T, s *pfscore.Schema) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range s.SetupInstruments() {
		timed := "NULL"
		if r.Timed != nil {
			timed = map[bool]string{true: "YES", false: "NO"}[*r.Timed]
		}
		out[r.Name] = map[bool]string{true: "YES", false: "NO"}[r.Enabled] + "/" + timed
	}
	return out
}

var testViews = []sdkmetric.View{
	dropView("wait/synch/mutex/*"),
	view("statement/sql/*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: []float64{0.001, 0.1}}}),
	view("wait/io/file/*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationSum{}}),
	view("memory/app/c*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationLastValue{}}),
	view("stage/*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationDefault{}}),
	dropView("idle"),
}

func TestApplyViews(t *testing.T) {
	s := newSchema(t, pfscore.WithInstrument("stage/app/parse=COUNTED"))
	if err := ApplyViews(s, testViews...); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"idle": "NO/NO", "transaction": "YES/YES",
		"wait/synch/mutex/app/a": "NO/NO", "wait/synch/mutex/app/b": "NO/NO", "wait/synch/mutex/lib/c": "NO/NO",
		"wait/synch/rwlock/app/map": "YES/YES",
		"wait/io/file/app/wal_log":  "YES/NO", "wait/io/file/app/wal.idx": "YES/NO",
		"statement/sql/select": "YES/YES", "statement/sql/select/sub": "YES/YES", "statement/sql/select.x": "YES/YES",
		"statement/sql/insert": "YES/YES", "statement/com/Query": "YES/YES",
		"stage/app/parse": "YES/NO", // the default aggregation leaves it as it was
		"memory/app/buf":  "NO/NULL", "memory/app/cache": "YES/NULL",
	}
	if got := setupState(t, s); !mapsEqual(got, want) {
		t.Errorf("after ApplyViews:\n got %v\nwant %v", got, want)
	}
	// Classes that register later follow the views.
	s.MustRegister("wait/synch/mutex/later/x")
	s.MustRegister("statement/sql/update", pfscore.WithDefault(true, false))
	s.MustRegister("wait/io/file/later/y", pfscore.WithDefault(false, false))
	want["wait/synch/mutex/later/x"], want["statement/sql/update"], want["wait/io/file/later/y"] = "NO/NO", "YES/YES", "YES/NO"
	if got := setupState(t, s); !mapsEqual(got, want) {
		t.Errorf("after Register:\n got %v\nwant %v", got, want)
	}
	// A later explicit change wins until the views are applied again.
	yes := true
	if _, err := s.UpdateInstruments("wait/synch/mutex/app/%", &yes, &yes); err != nil {
		t.Fatal(err)
	}
	if got := setupState(t, s)["wait/synch/mutex/app/a"]; got != "YES/YES" {
		t.Errorf("after UpdateInstruments: %s", got)
	}
	if err := ApplyViews(s, testViews...); err != nil {
		t.Fatal(err)
	}
	if got := setupState(t, s); !mapsEqual(got, want) {
		t.Errorf("applied again:\n got %v\nwant %v", got, want)
	}
	// New views replace the old ones for later classes.
	if err := ApplyViews(s); err != nil {
		t.Fatal(err)
	}
	s.MustRegister("wait/synch/mutex/later/z")
	if got := setupState(t, s)["wait/synch/mutex/later/z"]; got != "YES/YES" {
		t.Errorf("after ApplyViews(): %s", got)
	}
	if err := ApplyViews(s, nil); err == nil {
		t.Error("ApplyViews(nil view): no error")
	}
	if err := ApplyViews(nil, testViews...); err == nil {
		t.Error("ApplyViews(nil Tables): no error")
	}
}

// remote hides *Schema's SetInstrumentPolicy: a Tables as exporter.Client
// is, updated through UPDATE setup_instruments only.
type remote struct {
	pfscore.Tables
	updates []string
}

func (r *remote) Update(table string, where []string, set map[string]pfscore.Value) (int, error) {
	r.updates = append(r.updates, strings.Join(where, " AND "))
	return r.Tables.Update(table, where, set)
}

func TestApplyViewsRemote(t *testing.T) {
	local, far := newSchema(t), newSchema(t)
	if err := ApplyViews(local, testViews...); err != nil {
		t.Fatal(err)
	}
	r := &remote{Tables: far}
	if err := ApplyViews(r, testViews...); err != nil {
		t.Fatal(err)
	}
	if got, want := setupState(t, far), setupState(t, local); !mapsEqual(got, want) {
		t.Errorf("remote:\n got %v\nwant %v", got, want)
	}
	want := []string{ // one UPDATE per LIKE pattern, grouped
		`NAME LIKE 'idle'`, `NAME LIKE 'wait/synch/mutex/%'`, // drop
		`NAME LIKE 'memory/app/cache'`, `NAME LIKE 'wait/io/%'`, // sum, last value (wait/io/ holds files only)
		`NAME LIKE 'statement/sql/%'`, // histogram
	}
	if !slices.Equal(r.updates, want) {
		t.Errorf("updates:\n got %q\nwant %q", r.updates, want)
	}
}

func TestInstrumentPolicyAtStartup(t *testing.T) {
	s := newSchema(t, pfscore.WithInstrumentPolicy(InstrumentPolicy(testViews...)))
	want := newSchema(t)
	if err := ApplyViews(want, testViews...); err != nil {
		t.Fatal(err)
	}
	if got, w := setupState(t, s), setupState(t, want); !mapsEqual(got, w) {
		t.Errorf("start-up form:\n got %v\nwant %v", got, w)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// collect runs one collection of p through a ManualReader's path (Produce)
// and returns the metrics by name.
func collect(t *testing.T, p *Producer) map[string]metricdata.Metrics {
	t.Helper()
	sms, err := p.Produce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range sms {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func lockWait(m *pfscore.SyncInstance, th *pfscore.Thread, n int) {
	for range n {
		var w pfscore.WaitState
		if m.BeginWait(&w, th, pfscore.OpLock) {
			w.EndWait(-1)
		}
	}
}

func TestProducerViews(t *testing.T) {
	s := newSchema(t)
	const (
		mutex  = "wait/synch/mutex/app/a"
		rwlock = "wait/synch/rwlock/app/map"
	)
	views := []sdkmetric.View{
		dropView("wait/synch/mutex/*"),
		view("wait/synch/rwlock/*", sdkmetric.Stream{AttributeFilter: attribute.NewAllowKeysFilter("pfs.user")}),
		view("statement/sql/*", sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 80, MaxScale: 10}}),
		dropView("pfs.global_status.*"),
		view("pfs.events_waits.by_user.count", sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("pfs.user")}),
	}
	p, err := NewProducer(s, WithTables(AllTables), WithViews(views[:2]...), WithViews(views[2:]...))
	if err != nil {
		t.Fatal(err)
	}
	if got := setupState(t, s)[mutex]; got != "NO/NO" {
		t.Errorf("NewProducer did not apply the views: %s is %s", mutex, got)
	}
	m := s.NewSyncInstance(s.Class(mutex), "a.go:1")
	l := s.NewSyncInstance(s.Class(rwlock), "map.go:1")
	thr := s.MustRegister("thread/app/worker")
	var threads []*pfscore.Thread
	for i, who := range []struct {
		user, host string
		n          int
	}{{"alice", "h1", 2}, {"alice", "h2", 3}, {"bob", "h1", 1}} {
		th := s.NewThread(thr, pfscore.ThreadOptions{User: who.user, Host: who.host})
		defer th.End()
		threads = append(threads, th)
		lockWait(l, th, who.n)
		lockWait(m, th, i+1)
	}
	// The mutex was disabled: it never counted. Enable it behind the views'
	// back: it counts, but the producer still leaves it out.
	yes := true
	s.UpdateInstruments(mutex, &yes, &yes)
	lockWait(m, threads[0], 4)
	if rows, _ := s.Query("events_waits_summary_global_by_event_name", pfscore.Query{Where: []string{"EVENT_NAME = '" + mutex + "'"}}); rows.Rows[0][1] != uint64(4) {
		t.Fatalf("mutex row %v, want COUNT_STAR 4", rows.Rows[0])
	}
	ms := collect(t, p)

	for name, m := range ms {
		for _, set := range attrSets(m) {
			if v, _ := set.Value(eventNameKey); v.AsString() == mutex {
				t.Errorf("%s: a series of the dropped %s: %v", name, mutex, set.ToSlice())
			}
		}
		if strings.HasPrefix(name, "pfs.global_status.") {
			t.Errorf("%s: dropped by its metric name, still there", name)
		}
	}
	// The rwlock keeps pfs.user: by_thread, by_host and by_instance are its
	// shares of the global summary, left out; by_account merges by user.
	for _, gone := range []string{"pfs.events_waits.by_thread.count", "pfs.events_waits.by_host.count", "pfs.events_waits.by_instance.count"} {
		if m, ok := ms[gone]; ok {
			t.Errorf("%s: %d series, want none", gone, len(attrSets(m)))
		}
	}
	ev := attribute.String("pfs.event_name", rwlock)
	count := func(user string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(ev, attribute.String("pfs.user", user)), Value: v}
	}
	wantAcct := metricdata.Metrics{
		Name: "pfs.events_waits.by_account.count", Unit: "{event}",
		Description: "COUNT_STAR of performance_schema.events_waits_summary_by_account_by_event_name",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{count("alice", 5), count("bob", 1)}},
	}
	metricdatatest.AssertEqual(t, wantAcct, ms["pfs.events_waits.by_account.count"], metricdatatest.IgnoreTimestamp())
	wantGlobal := metricdata.Metrics{
		Name: "pfs.events_waits.count", Unit: "{event}",
		Description: "COUNT_STAR of performance_schema.events_waits_summary_global_by_event_name",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{Attributes: attribute.NewSet(ev), Value: 6}}},
	}
	metricdatatest.AssertEqual(t, wantGlobal, ms["pfs.events_waits.count"], metricdatatest.IgnoreTimestamp())
	// by_user.count's own view drops pfs.user: its users add up.
	wantUser := wantGlobal
	wantUser.Name, wantUser.Description = "pfs.events_waits.by_user.count", "COUNT_STAR of performance_schema.events_waits_summary_by_user_by_event_name"
	metricdatatest.AssertEqual(t, wantUser, ms["pfs.events_waits.by_user.count"], metricdatatest.IgnoreTimestamp())

	// Merged times, MIN and MAX are those of by_user (whose time metrics
	// keep pfs.user), which the engine sums itself.
	for _, measure := range []string{"time", "time.min", "time.max"} {
		byUser, byAcct := ms["pfs.events_waits.by_user."+measure], ms["pfs.events_waits.by_account."+measure]
		for _, user := range []string{"alice", "bob"} {
			u, a := floatPoint(t, byUser, user), floatPoint(t, byAcct, user)
			// (the engine's AVG is in whole picoseconds: 1e-12 apart at most)
			if d := u - a; d > 1e-12+1e-12*u || d < -1e-12-1e-12*u || u == 0 {
				t.Errorf("%s of %s: by_account merged %g, by_user %g", measure, user, a, u)
			}
		}
	}
	// Histogram buckets are kept for the statements' export.
	if h, ok := p.cfg.views.histogram("statement/sql/select"); !ok || h != (sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 80, MaxScale: 10}) {
		t.Errorf("histogram(statement/sql/select) = %v, %v", h, ok)
	}
	if h, ok := p.cfg.views.histogram(rwlock); ok {
		t.Errorf("histogram(%s) = %v", rwlock, h)
	}
}

func attrSets(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	default:
		panic(fmt.Sprintf("%s: %T", m.Name, m.Data))
	}
	return out
}

// floatPoint returns the value of the point of m whose pfs.user is user.
func floatPoint(t *testing.T, m metricdata.Metrics, user string) float64 {
	t.Helper()
	var pts []metricdata.DataPoint[float64]
	switch d := m.Data.(type) {
	case metricdata.Sum[float64]:
		pts = d.DataPoints
	case metricdata.Gauge[float64]:
		pts = d.DataPoints
	default:
		t.Fatalf("%s: %T", m.Name, m.Data)
	}
	for _, p := range pts {
		if v, _ := p.Attributes.Value("pfs.user"); v.AsString() == user {
			return p.Value
		}
	}
	t.Fatalf("%s: no series of %s", m.Name, user)
	return 0
}

// TestProducerViewsConcurrentSafe collects through a producer with views
// while classes register, waits run and the views are applied again.
// Invariants: no collection exports a series of a class the views drop
// (the export-time part holds whatever the setup says), and once every
// goroutine is done, every mutex class, registered before or during, is
// ENABLED=NO, TIMED=NO.
func TestProducerViewsConcurrentSafe(t *testing.T) {
	n := 60 // classes registered (each collection reads them all: keep it small under -race)
	if testing.Short() {
		n = 20
	}
	s := newSchema(t)
	views := []sdkmetric.View{dropView("wait/synch/mutex/*"),
		view("wait/synch/rwlock/*", sdkmetric.Stream{AttributeFilter: attribute.NewAllowKeysFilter("pfs.user")})}
	p, err := NewProducer(s, WithViews(views...))
	if err != nil {
		t.Fatal(err)
	}
	thr := s.MustRegister("thread/app/worker")
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	wg.Add(4)
	go func() { // registers and waits
		defer wg.Done()
		<-start
		th := s.NewThread(thr, pfscore.ThreadOptions{User: "u", Host: "h"})
		defer th.End()
		for i := range n {
			m := s.NewSyncInstance(s.MustRegister(fmt.Sprintf("wait/synch/mutex/c/m%d", i)), "m.go:1")
			l := s.NewSyncInstance(s.MustRegister(fmt.Sprintf("wait/synch/rwlock/c/l%d", i)), "l.go:1")
			lockWait(m, th, 1)
			lockWait(l, th, 1)
		}
	}()
	go func() { // applies the views again and again
		defer wg.Done()
		<-start
		for range n {
			if err := ApplyViews(s, views...); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 2 { // collect
		go func() {
			defer wg.Done()
			<-start
			for range n / 4 {
				sms, err := p.Produce(context.Background())
				if err != nil {
					errs <- err
					return
				}
				for _, sm := range sms {
					for _, m := range sm.Metrics {
						for _, set := range attrSets(m) {
							if v, _ := set.Value(eventNameKey); strings.HasPrefix(v.AsString(), "wait/synch/mutex/") {
								errs <- fmt.Errorf("%s: a dropped series %v", m.Name, set.ToSlice())
								return
							}
						}
					}
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for name, st := range setupState(t, s) {
		if strings.HasPrefix(name, "wait/synch/mutex/") && st != "NO/NO" {
			t.Errorf("%s: %s, want NO/NO", name, st)
		}
	}
}

// TestBridgeLinksNoExporter keeps otelconf, and the exporters and gRPC it
// brings, out of bridge's dependencies: only bridge/viewconf has them.
func TestBridgeLinksNoExporter(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command("go", "list", "-deps", "-test=false", "github.com/otelpfs/otelpfs/bridge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "go.opentelemetry.io/contrib/otelconf") || strings.HasPrefix(p, "google.golang.org/grpc") ||
			strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters/") || strings.HasPrefix(p, "go.yaml.in/") {
			t.Errorf("bridge depends on %s", p)
		}
	}
}

// TestViewsMergeDigests drops db.namespace from the digests by their
// metric names: one digest in two schemas becomes one series, whose sums
// add, and which has no quantile.
func TestViewsMergeDigests(t *testing.T) {
	s := newSchema(t)
	p, err := NewProducer(s, WithViews(view("pfs.events_statements.by_digest.*",
		sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("db.namespace")})))
	if err != nil {
		t.Fatal(err)
	}
	th := s.NewThread(s.MustRegister("thread/app/worker"), pfscore.ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	for i, schema := range []string{"shop", "shop", "blog"} {
		st := s.StartSQL(th, pfscore.StatementInfo{Text: fmt.Sprintf("SELECT * FROM t WHERE id = %d", i), Schema: schema})
		st.EndAt(st.Start()+uint64(i+1)*1e9, pfscore.StatementResult{RowsSent: 1})
	}
	ms := collect(t, p)
	count := ms["pfs.events_statements.by_digest.count"].Data.(metricdata.Sum[int64])
	if len(count.DataPoints) != 1 || count.DataPoints[0].Value != 3 {
		t.Fatalf("by_digest.count: %+v, want one series of 3", count.DataPoints)
	}
	if _, ok := count.DataPoints[0].Attributes.Value("db.namespace"); ok {
		t.Error("db.namespace kept")
	}
	// The table's rows, in picoseconds: the merged series' values.
	res, err := s.Query("events_statements_summary_by_digest", pfscore.Query{Where: []string{"COUNT_STAR > 0"}})
	if err != nil || len(res.Rows) != 2 {
		t.Fatalf("digest rows: %v, %v", res, err)
	}
	col := func(name string) int {
		return slices.IndexFunc(res.Columns, func(c pfscore.Column) bool { return c.Name == name })
	}
	var sum, n, lo, hi uint64
	for _, r := range res.Rows {
		sum += r[col("SUM_TIMER_WAIT")].(uint64)
		n += r[col("COUNT_STAR")].(uint64)
		if v := r[col("MIN_TIMER_WAIT")].(uint64); lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, r[col("MAX_TIMER_WAIT")].(uint64))
	}
	want := metricdata.Metrics{
		Name: "pfs.events_statements.by_digest.time", Unit: "s",
		Description: "SUM_TIMER_WAIT of performance_schema.events_statements_summary_by_digest",
		Data: metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[float64]{{Attributes: count.DataPoints[0].Attributes, Value: Seconds(sum)}}},
	}
	metricdatatest.AssertEqual(t, want, ms[want.Name], metricdatatest.IgnoreTimestamp(),
		metricdatatest.IgnoreValue()) // float addition order: compared below, within a picosecond
	got := ms[want.Name].Data.(metricdata.Sum[float64]).DataPoints[0].Value
	if math.Abs(got-Seconds(sum)) > 1e-12 || sum < 6e9 {
		t.Errorf("by_digest.time %g, the table's rows add up to %g", got, Seconds(sum))
	}
	if m, ok := ms["pfs.events_statements.by_digest.time.p95"]; ok {
		t.Errorf("a quantile of merged digests: %+v", m.Data)
	}
	for name, v := range map[string]float64{"time.min": Seconds(lo), "time.max": Seconds(hi)} {
		g := ms["pfs.events_statements.by_digest."+name].Data.(metricdata.Gauge[float64])
		if len(g.DataPoints) != 1 || math.Abs(g.DataPoints[0].Value-v) > 1e-12 {
			t.Errorf("%s: %+v, want %g", name, g.DataPoints, v)
		}
	}
}

// TestMergedHistogramRestartsWhenSumGoesDown: a merged histogram series
// whose Sum (or Count) went down restarts at the previous collection, even
// when no bucket count went down: a cumulative histogram's Sum never
// decreases under one StartTime.
func TestMergedHistogramRestartsWhenSumGoesDown(t *testing.T) {
	t0 := time.Unix(1000, 0)
	fresh := t0.Add(time.Minute)
	attrs := attribute.NewSet(attribute.String("db.namespace", "app"))
	point := func(sum float64, count uint64, buckets ...uint64) []metricdata.HistogramDataPoint[float64] {
		return []metricdata.HistogramDataPoint[float64]{{Attributes: attrs, StartTime: t0,
			Count: count, Sum: sum, Bounds: []float64{0.001}, BucketCounts: buckets}}
	}
	for _, tc := range []struct {
		name      string
		next      []metricdata.HistogramDataPoint[float64]
		wantFresh bool
	}{
		{"sum down, buckets held", point(0.5, 10, 4, 6), true},
		{"count down", point(2, 9, 4, 6), true},
		{"everything grew", point(2, 11, 5, 6), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := &viewState{}
			keepMonotonicHist(vs, "m", point(1, 10, 4, 6), t0)
			keepMonotonicHist(vs, "m", tc.next, fresh)
			if got := tc.next[0].StartTime; got.Equal(fresh) != tc.wantFresh {
				t.Fatalf("StartTime %v, want restarted at %v: %v", got, fresh, tc.wantFresh)
			}
		})
	}
}
