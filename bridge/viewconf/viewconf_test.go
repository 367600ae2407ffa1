package viewconf

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/bridge"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestViewConfigGaps checks what otelconf's own translation gets wrong.
func TestGaps(t *testing.T) {
	views, err := Parse([]byte(`
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
	w := first(t, views, bridge.ClassInstrument("wait/io/file/app/log"))
	if h := w.Aggregation; h != (sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}) {
		t.Errorf("base2 defaults: %#v (want max_size 160, max_scale 20, min and max recorded)", h)
	}
	for k, want := range map[attribute.Key]bool{"pfs.user": true, "pfs.host": false, "pfs.hoxt": false, "thread.id": false} {
		if got := w.AttributeFilter(k.String("v")); got != want {
			t.Errorf("attribute key wildcards: %s kept %v, want %v", k, got, want)
		}
	}
	st := first(t, views, bridge.ClassInstrument("statement/sql/select"))
	if h, ok := st.Aggregation.(sdkmetric.AggregationExplicitBucketHistogram); !ok || !h.NoMinMax || !slices.Equal(h.Boundaries, defaultBoundaries) {
		t.Errorf("explicit defaults: %#v", st.Aggregation)
	}
	if st.AttributeFilter != nil {
		t.Error("no attribute_keys: a filter")
	}
	g := first(t, views, sdkmetric.Instrument{Name: "pfs.memory.used.bytes", Kind: sdkmetric.InstrumentKindGauge})
	if g.Aggregation != (sdkmetric.AggregationDrop{}) {
		t.Errorf("instrument_type gauge with a bare drop: %#v", g.Aggregation)
	}
	m := first(t, views, bridge.ClassInstrument("memory/app/buf"))
	if m.AttributeFilter == nil || m.AttributeFilter(attribute.String("pfs.user", "u")) {
		t.Error("included: [] keeps a key")
	}
	if _, ok := views[2](bridge.ClassInstrument("memory/app/buf")); ok {
		t.Error("the gauge selector matched a class")
	}
	// The other selectors.
	sel, err := Parse([]byte(`
meter_provider:
  views:
    - selector: {unit: By, meter_name: m, meter_version: "1", meter_schema_url: u}
      stream: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	inst := sdkmetric.Instrument{Name: "x", Unit: "By", Scope: instrumentation.Scope{Name: "m", Version: "1", SchemaURL: "u"}}
	if _, ok := sel[0](inst); !ok {
		t.Error("unit and meter_*: no match")
	}
	inst.Scope.Version = "2"
	if _, ok := sel[0](inst); ok {
		t.Error("meter_version 1 matched 2")
	}
}

// first returns the stream of the first view that matches inst.
func first(t *testing.T, views []sdkmetric.View, inst sdkmetric.Instrument) sdkmetric.Stream {
	t.Helper()
	for _, v := range views {
		if st, ok := v(inst); ok {
			return st
		}
	}
	t.Fatalf("no view matches %s", inst.Name)
	return sdkmetric.Stream{}
}

func TestParseErrors(t *testing.T) {
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
		_, err := Parse([]byte(c.yaml))
		if err == nil {
			t.Errorf("%q: no error, want %q", c.yaml, c.want)
			continue
		}
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.yaml, err, c.want)
		}
	}
	for _, ok := range []string{"meter_provider:\n", "meter_provider: {readers: []}\n", "meter_provider:\n  views: []\n"} {
		if vs, err := Parse([]byte(ok)); err != nil || len(vs) != 0 {
			t.Errorf("%q: %d views, %v", ok, len(vs), err)
		}
	}
}
