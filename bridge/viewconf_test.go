package bridge

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/contrib/otelconf"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestParseViewConfigExample(t *testing.T) {
	data, err := os.ReadFile("testdata/views.yaml")
	if err != nil {
		t.Fatal(err)
	}
	views, err := ParseViewConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 5 {
		t.Fatalf("%d views, want 5", len(views))
	}
	// The same file through otelconf's own parser, and ViewsOfConfig.
	cfg, err := otelconf.ParseYAML(data)
	if err != nil {
		t.Fatalf("otelconf.ParseYAML: %v", err)
	}
	viaOtelconf, err := ViewsOfConfig(cfg.MeterProvider.Views)
	if err != nil {
		t.Fatal(err)
	}
	s, s2 := newSchema(t), newSchema(t)
	if err := ApplyViews(s, views...); err != nil {
		t.Fatal(err)
	}
	if err := ApplyViews(s2, viaOtelconf...); err != nil {
		t.Fatal(err)
	}
	got := setupState(t, s)
	for name, want := range map[string]string{
		"wait/synch/mutex/app/a":    "NO/NO",
		"wait/synch/mutex/lib/c":    "NO/NO",
		"wait/io/file/app/wal_log":  "YES/NO",
		"statement/sql/select":      "YES/YES",
		"wait/synch/rwlock/app/map": "YES/YES",
	} {
		if got[name] != want {
			t.Errorf("%s: %s, want %s", name, got[name], want)
		}
	}
	if got2 := setupState(t, s2); !mapsEqual(got, got2) {
		t.Errorf("through otelconf.ParseYAML:\n got %v\nwant %v", got2, got)
	}
	r := resolve(views, ClassInstrument("statement/sql/select"))
	if h, ok := r.hist.(sdkmetric.AggregationExplicitBucketHistogram); !ok || !slices.Equal(h.Boundaries, []float64{0.0001, 0.001, 0.01, 0.1, 1}) || h.NoMinMax {
		t.Errorf("statement/sql/select: hist %#v", r.hist)
	}
	keeps := func(r resolution, keys ...attribute.Key) (out []attribute.Key) {
		for _, k := range keys {
			if r.keep == nil || r.keep(k.String("x")) {
				out = append(out, k)
			}
		}
		return out
	}
	file := resolve(views, ClassInstrument("wait/io/file/app/wal_log"))
	if k := keeps(file, "pfs.user", "pfs.host", "thread.id", "pfs.object_instance"); !slices.Equal(k, []attribute.Key{"pfs.user", "pfs.host"}) {
		t.Errorf("file waits keep %v", k)
	}
	digest := resolve(views, sdkmetric.Instrument{Name: "pfs.events_statements.by_digest.time", Kind: sdkmetric.InstrumentKindCounter})
	if k := keeps(digest, "pfs.digest", "db.namespace", "db.query.summary"); !slices.Equal(k, []attribute.Key{"pfs.digest", "db.query.summary"}) {
		t.Errorf("digests keep %v", k)
	}
}

// TestViewConfigGaps checks what otelconf's own translation gets wrong.
func TestViewConfigGaps(t *testing.T) {
	views, err := ParseViewConfig([]byte(`
meter_provider:
  views:
    - selector: {instrument_name: "wait/*"}
      stream:
        aggregation: {base2_exponential_bucket_histogram: {}}
        attribute_keys: {included: ["pfs.*"], excluded: ["pfs.ho?t"]}
    - selector: {instrument_name: "statement/*"}
      stream:
        aggregation: {explicit_bucket_histogram: {record_min_max: false}}
    - selector: {instrument_type: gauge}
      stream: {aggregation: {drop: }}
    - selector: {instrument_name: "memory/*"}
      stream: {attribute_keys: {included: []}}
`))
	if err != nil {
		t.Fatal(err)
	}
	w := resolve(views, ClassInstrument("wait/io/file/app/log"))
	if h := w.hist; h != (sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}) {
		t.Errorf("base2 defaults: %#v (want max_size 160, max_scale 20, min and max recorded)", h)
	}
	for k, want := range map[attribute.Key]bool{"pfs.user": true, "pfs.host": false, "pfs.hoxt": false, "thread.id": false} {
		if got := w.keep(k.String("v")); got != want {
			t.Errorf("attribute key wildcards: %s kept %v, want %v", k, got, want)
		}
	}
	st := resolve(views, ClassInstrument("statement/sql/select"))
	if h, ok := st.hist.(sdkmetric.AggregationExplicitBucketHistogram); !ok || !h.NoMinMax || !slices.Equal(h.Boundaries, defaultBoundaries) {
		t.Errorf("explicit defaults: %#v", st.hist)
	}
	g := resolve(views, sdkmetric.Instrument{Name: "pfs.memory.used.bytes", Kind: sdkmetric.InstrumentKindGauge})
	if !g.drop {
		t.Error("instrument_type gauge with a bare drop: not dropped")
	}
	if resolve(views, ClassInstrument("wait/io/file/app/log")).drop {
		t.Error("the gauge selector matched a class")
	}
	m := resolve(views, ClassInstrument("memory/app/buf"))
	if m.keep == nil || m.keep(attribute.String("pfs.user", "u")) {
		t.Error("included: [] keeps a key")
	}
}

func TestParseViewConfigErrors(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want string // in the error
	}{
		{"", "empty"},
		{"meter_provider: [", "line 1"},
		{"- a\n- b\n", "line 1: the document: want a mapping"},
		{"file_format: x\n", "no meter_provider"},
		{"meter_provider:\n  views: 3\n", "line 2: meter_provider.views: want a list"},
		{"meter_provider:\n  views:\n    - selector: {instrument_nmae: \"wait/*\"}\n      stream: {}\n",
			"line 3: meter_provider.views[0].selector.instrument_nmae: unknown field (want one of instrument_name, instrument_type, meter_name"},
		{"meter_provider:\n  views:\n    - stream: {}\n", "line 3: meter_provider.views[0]: no selector"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n", "meter_provider.views[0]: no stream"},
		{"meter_provider:\n  views:\n    - selector: {}\n      stream: {}\n", "line 3: meter_provider.views[0].selector: selects nothing"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: \"\"}\n      stream: {}\n", "instrument_name: empty"},
		{"meter_provider:\n  views:\n    - selector: {instrument_type: timer}\n      stream: {}\n", "line 3: meter_provider.views[0]:"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: {drop: {}, sum: {}}\n",
			"line 5: meter_provider.views[0].stream.aggregation: names drop and sum: want one aggregation"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: {}\n", "names no aggregation"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: {drop: {x: 1}}\n", "aggregation.drop.x: unknown field"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: drop\n", "line 5: meter_provider.views[0].stream.aggregation: want a mapping"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation:\n          explicit_bucket_histogram:\n            boundaries: [1, 5, 2]\n",
			"line 7: meter_provider.views[0].stream.aggregation.explicit_bucket_histogram.boundaries: not increasing: 2 after 5"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation:\n          explicit_bucket_histogram:\n            boundaries: [1, x]\n",
			"line 3: meter_provider.views[0]: line 7: cannot unmarshal"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: {base2_exponential_bucket_histogram: {max_scale: 21}}\n",
			"line 5: meter_provider.views[0].stream.aggregation.base2_exponential_bucket_histogram.max_scale: 21: want -10 to 20"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        aggregation: {base2_exponential_bucket_histogram: {max_size: 0}}\n", "max_size: 0: want 2 or more"},
		{"meter_provider:\n  views:\n    - selector: {instrument_name: a}\n      stream:\n        attribute_keys: {included: [a], excluded: [a]}\n",
			"line 5: meter_provider.views[0].stream.attribute_keys: \"a\" is both included and excluded"},
	} {
		_, err := ParseViewConfig([]byte(c.yaml))
		if err == nil {
			t.Errorf("%q: no error, want %q", c.yaml, c.want)
			continue
		}
		if !errors.Is(err, ErrViewConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.yaml, err, c.want)
		}
	}
	for _, ok := range []string{"meter_provider:\n", "meter_provider: {readers: []}\n", "meter_provider:\n  views: []\n"} {
		if vs, err := ParseViewConfig([]byte(ok)); err != nil || len(vs) != 0 {
			t.Errorf("%q: %d views, %v", ok, len(vs), err)
		}
	}
}

func TestFormatViewConfigRoundTrip(t *testing.T) {
	src := newSchema(t)
	set := func(pattern string, enabled, timed bool) {
		t.Helper()
		if _, err := src.UpdateInstruments(pattern, &enabled, &timed); err != nil {
			t.Fatal(err)
		}
	}
	set("wait/synch/mutex/%", false, false)
	set("wait/synch/mutex/lib/%", true, false)
	set("statement/sql/select%", false, false)
	set("memory/app/buf", true, false)
	set("idle", true, false)
	out, err := FormatViewConfig(src)
	if err != nil {
		t.Fatal(err)
	}
	const want = `# setup_instruments as OpenTelemetry views (bridge.ParseViewConfig reads them).
# drop: ENABLED=NO; sum: ENABLED=YES, TIMED=NO (counted);
# base2_exponential_bucket_histogram: ENABLED=YES, TIMED=YES.
meter_provider:
  views:
    - selector:
        instrument_name: "memory/app/cache"
      stream:
        aggregation:
          drop: {}
    - selector:
        instrument_name: "statement/sql/select"
      stream:
        aggregation:
          drop: {}
    - selector:
        instrument_name: "statement/sql/select.x"
      stream:
        aggregation:
          drop: {}
    - selector:
        instrument_name: "statement/sql/select/*"
      stream:
        aggregation:
          drop: {}
    - selector:
        instrument_name: "wait/synch/mutex/app/*"
      stream:
        aggregation:
          drop: {}
    - selector:
        instrument_name: "idle"
      stream:
        aggregation:
          sum: {}
    - selector:
        instrument_name: "memory/app/buf"
      stream:
        aggregation:
          sum: {}
    - selector:
        instrument_name: "wait/synch/mutex/lib/*"
      stream:
        aggregation:
          sum: {}
    - selector:
        instrument_name: "stage/*"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
    - selector:
        instrument_name: "statement/com/*"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
    - selector:
        instrument_name: "statement/sql/insert"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
    - selector:
        instrument_name: "transaction"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
    - selector:
        instrument_name: "wait/io/*"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
    - selector:
        instrument_name: "wait/synch/rwlock/*"
      stream:
        aggregation:
          base2_exponential_bucket_histogram: {}
`
	if string(out) != want {
		t.Errorf("FormatViewConfig:\n%s\nwant\n%s", out, want)
	}
	roundTrip := func(src *pfscore.Schema) {
		t.Helper()
		out, err := FormatViewConfig(src)
		if err != nil {
			t.Fatal(err)
		}
		views, err := ParseViewConfig(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		fresh := newSchema(t)
		if err := ApplyViews(fresh, views...); err != nil {
			t.Fatal(err)
		}
		if got, want := setupState(t, fresh), setupState(t, src); !mapsEqual(got, want) {
			t.Errorf("round trip:\n got %v\nwant %v\n%s", got, want, out)
		}
	}
	roundTrip(src)
	// Uniform: one view.
	all := newSchema(t)
	no := false
	all.UpdateInstruments("%", &no, &no)
	if out, _ := FormatViewConfig(all); strings.Count(string(out), "instrument_name") != 1 || !strings.Contains(string(out), `instrument_name: "*"`) {
		t.Errorf("all disabled:\n%s", out)
	}
	roundTrip(all)
	// Random states.
	for seed := range 20 {
		s := newSchema(t)
		for i, r := range s.SetupInstruments() {
			if (i*7+seed)%3 == 0 {
				e, tm := (i+seed)%2 == 0, (i+seed)%4 < 2
				if !e {
					tm = false // drop also sets TIMED=NO (see FormatViewConfig)
				}
				s.UpdateInstruments(LikePattern(r.Name), &e, &tm)
			}
		}
		roundTrip(s)
	}
	empty, err := ParseViewConfig([]byte("meter_provider:\n  views: []\n"))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty views: %v %v", empty, err)
	}
}

// TestDocShowsViewsExample keeps the package doc's YAML the example file's.
func TestDocShowsViewsExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("testdata/views.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(ex), "\n"), "\n") {
		if line == "" {
			b.WriteString("//\n")
		} else {
			b.WriteString("//\t" + line + "\n")
		}
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("doc.go does not show testdata/views.yaml as it is; want, in its # Views section:\n%s", b.String())
	}
}
