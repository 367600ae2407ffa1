package bridge

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/bridge/viewconf"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/contrib/otelconf"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestViewConfigExample(t *testing.T) {
	data, err := os.ReadFile("testdata/views.yaml")
	if err != nil {
		t.Fatal(err)
	}
	views, err := viewconf.Parse(data)
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
	viaOtelconf, err := viewconf.FromConfig(cfg.MeterProvider.Views)
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
	const want = `# setup_instruments as OpenTelemetry views (viewconf.Parse reads them).
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
		views, err := viewconf.Parse(out)
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
	empty, err := viewconf.Parse([]byte("meter_provider:\n  views: []\n"))
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
