package viewconf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/contrib/otelconf"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.yaml.in/yaml/v3"
)

// ErrBadConfig marks an error in a view configuration.
var ErrBadConfig = errors.New("viewconf: bad view configuration")

// Parse returns the views of a declarative configuration file (YAML; see
// the package doc): the entries of
// meter_provider.views, in order. The rest of the file is not read, so a
// file of the meter provider's views alone will do; environment variables
// (${VAR}) are not substituted. A view's stream name, description and
// aggregation_cardinality_limit are kept in its Stream but mean nothing to
// the bridge. Errors wrap ErrBadConfig and say the line and the field.
func Parse(data []byte) ([]sdkmetric.View, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%w: empty: want meter_provider.views", ErrBadConfig)
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, confErr(doc, "the document", "want a mapping with meter_provider.views")
	}
	mp := child(doc, "meter_provider")
	if mp == nil {
		return nil, confErr(doc, "the document", "no meter_provider")
	}
	if isNull(mp) {
		return nil, nil
	}
	if mp.Kind != yaml.MappingNode {
		return nil, confErr(mp, "meter_provider", "want a mapping")
	}
	vn := child(mp, "views")
	if vn == nil || isNull(vn) {
		return nil, nil
	}
	if vn.Kind != yaml.SequenceNode {
		return nil, confErr(vn, "meter_provider.views", "want a list of views")
	}
	views := make([]sdkmetric.View, 0, len(vn.Content))
	for i, n := range vn.Content {
		path := fmt.Sprintf("meter_provider.views[%d]", i)
		if err := checkKeys(n, path, viewKeys); err != nil {
			return nil, err
		}
		var v otelconf.View
		if err := n.Decode(&v); err != nil {
			return nil, confErr(n, path, yamlMessage(err))
		}
		sv, err := configView(v, n, path)
		if err != nil {
			return nil, err
		}
		views = append(views, sv)
	}
	return views, nil
}

// FromConfig returns the SDK views of meter_provider.views already parsed
// with otelconf (otelconf.ParseYAML), translated as Parse does; its errors
// name the view by its index, not by a line.
func FromConfig(views []otelconf.View) ([]sdkmetric.View, error) {
	out := make([]sdkmetric.View, 0, len(views))
	for i, v := range views {
		sv, err := configView(v, nil, fmt.Sprintf("meter_provider.views[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, sv)
	}
	return out, nil
}

// confErr is an error at node n (nil: no line known), in field path.
func confErr(n *yaml.Node, path, msg string) error {
	if n == nil {
		return fmt.Errorf("%w: %s: %s", ErrBadConfig, path, msg)
	}
	return fmt.Errorf("%w: line %d: %s: %s", ErrBadConfig, n.Line, path, msg)
}

// yamlMessage is a decoding error without yaml's prefix.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return strings.ReplaceAll(strings.TrimPrefix(msg, "unmarshal errors:\n  "), "\n  ", "; ")
}

// child returns the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// keySchema lists the keys a mapping may have; a key whose schema is nil
// takes any value.
type keySchema map[string]keySchema

// viewKeys are the keys of a view of the configuration schema's
// meter_provider.views.
var viewKeys = keySchema{
	"selector": {"instrument_name": nil, "instrument_type": nil, "unit": nil,
		"meter_name": nil, "meter_version": nil, "meter_schema_url": nil},
	"stream": {"name": nil, "description": nil, "aggregation_cardinality_limit": nil,
		"attribute_keys": {"included": nil, "excluded": nil},
		"aggregation": {"default": {}, "drop": {}, "sum": {}, "last_value": {},
			"explicit_bucket_histogram":          {"boundaries": nil, "record_min_max": nil},
			"base2_exponential_bucket_histogram": {"max_scale": nil, "max_size": nil, "record_min_max": nil},
		},
	},
}

// checkKeys reports a key of n that schema does not list (a misspelled
// key would otherwise select every instrument, or none).
func checkKeys(n *yaml.Node, path string, schema keySchema) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return confErr(n, path, "want a mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub, ok := schema[k.Value]
		if !ok {
			keys := make([]string, 0, len(schema))
			for key := range schema {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			if len(keys) == 0 {
				return confErr(k, path+"."+k.Value, "unknown field: "+path+" takes no fields")
			}
			return confErr(k, path+"."+k.Value, "unknown field (want one of "+strings.Join(keys, ", ")+")")
		}
		if sub != nil {
			if err := checkKeys(v, path+"."+k.Value, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// configView translates one view; n is its node (nil: no line numbers).
func configView(v otelconf.View, n *yaml.Node, path string) (sdkmetric.View, error) {
	if n != nil && child(n, "selector") == nil {
		return nil, confErr(n, path, "no selector (instrument_name: \"*\" selects every instrument)")
	}
	if n != nil && child(n, "stream") == nil {
		return nil, confErr(n, path, "no stream (stream: {} is the default stream)")
	}
	sel, err := configSelector(v.Selector, child(n, "selector"), path+".selector")
	if err != nil {
		return nil, err
	}
	sn := child(n, "stream")
	st := sdkmetric.Stream{}
	if v.Stream.Name != nil {
		st.Name = *v.Stream.Name
	}
	if v.Stream.Description != nil {
		st.Description = *v.Stream.Description
	}
	if st.Aggregation, err = configAggregation(v.Stream.Aggregation, child(sn, "aggregation"), path+".stream.aggregation"); err != nil {
		return nil, err
	}
	if st.AttributeFilter, err = configKeys(v.Stream.AttributeKeys, child(sn, "attribute_keys"), path+".stream.attribute_keys"); err != nil {
		return nil, err
	}
	return func(i sdkmetric.Instrument) (sdkmetric.Stream, bool) {
		if !sel(i) {
			return sdkmetric.Stream{}, false
		}
		return st, true
	}, nil
}

// configSelector returns the matcher of a selector.
func configSelector(s otelconf.ViewSelector, n *yaml.Node, path string) (func(sdkmetric.Instrument) bool, error) {
	var checks []func(sdkmetric.Instrument) bool
	str := func(p *string, get func(sdkmetric.Instrument) string) {
		if p != nil {
			want := *p
			checks = append(checks, func(i sdkmetric.Instrument) bool { return get(i) == want })
		}
	}
	if s.InstrumentName != nil {
		name := *s.InstrumentName
		if name == "" {
			return nil, confErr(child(n, "instrument_name"), path+".instrument_name", "empty (\"*\" selects every instrument)")
		}
		match := wildcardMatcher(name)
		checks = append(checks, func(i sdkmetric.Instrument) bool { return match(i.Name) })
	}
	if s.InstrumentType != nil {
		kind, ok := instrumentKinds[*s.InstrumentType]
		if !ok {
			return nil, confErr(child(n, "instrument_type"), path+".instrument_type", fmt.Sprintf("unknown instrument type %q", *s.InstrumentType))
		}
		checks = append(checks, func(i sdkmetric.Instrument) bool { return i.Kind == kind })
	}
	str(s.Unit, func(i sdkmetric.Instrument) string { return i.Unit })
	str(s.MeterName, func(i sdkmetric.Instrument) string { return i.Scope.Name })
	str(s.MeterVersion, func(i sdkmetric.Instrument) string { return i.Scope.Version })
	str(s.MeterSchemaUrl, func(i sdkmetric.Instrument) string { return i.Scope.SchemaURL })
	if len(checks) == 0 {
		return nil, confErr(n, path, "selects nothing: give instrument_name (\"*\" selects every instrument), instrument_type, unit or meter_*")
	}
	return func(i sdkmetric.Instrument) bool {
		for _, c := range checks {
			if !c(i) {
				return false
			}
		}
		return true
	}, nil
}

var instrumentKinds = map[otelconf.InstrumentType]sdkmetric.InstrumentKind{
	otelconf.InstrumentTypeCounter:                 sdkmetric.InstrumentKindCounter,
	otelconf.InstrumentTypeUpDownCounter:           sdkmetric.InstrumentKindUpDownCounter,
	otelconf.InstrumentTypeHistogram:               sdkmetric.InstrumentKindHistogram,
	otelconf.InstrumentTypeGauge:                   sdkmetric.InstrumentKindGauge,
	otelconf.InstrumentTypeObservableCounter:       sdkmetric.InstrumentKindObservableCounter,
	otelconf.InstrumentTypeObservableUpDownCounter: sdkmetric.InstrumentKindObservableUpDownCounter,
	otelconf.InstrumentTypeObservableGauge:         sdkmetric.InstrumentKindObservableGauge,
}

// wildcardMatcher matches a name against a pattern as the SDK's NewView
// does: '*' any run of characters, '?' one character, case-sensitive.
func wildcardMatcher(pattern string) func(string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return func(s string) bool { return s == pattern }
	}
	if pattern == "*" {
		return func(string) bool { return true }
	}
	return func(s string) bool { return globMatch(pattern, s) }
}

// globMatch reports whether s matches pattern: '*' any run of characters,
// '?' one character (a rune), anything else itself. No regular expression
// is compiled, so no pattern, however long, can fail or panic; the match
// backtracks to the last '*' only, in O(len(pattern)*len(s)) at worst.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0 // the last '*' seen, and where its run ends now
	for sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(s[sx:])
				px, sx = px+1, sx+w
				continue
			default:
				if c == s[sx] {
					px, sx = px+1, sx+1
					continue
				}
			}
		}
		if starPx < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starSx:]) // the '*' takes one more character
		starSx += w
		px, sx = starPx+1, starSx
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// defaultBoundaries are the explicit bucket histogram's boundaries when
// the configuration gives none (the SDK's and the configuration schema's).
var defaultBoundaries = []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

// configAggregation translates an aggregation; n is its node.
func configAggregation(a *otelconf.Aggregation, n *yaml.Node, path string) (sdkmetric.Aggregation, error) {
	if a == nil && (n == nil || isNull(n)) {
		return nil, nil // omitted: the default
	}
	// Which aggregations are named: from the node, where a bare "drop:"
	// (null) names one as "drop: {}" does; else from the decoded value.
	var named []string
	if n != nil {
		for i := 0; i+1 < len(n.Content); i += 2 {
			named = append(named, n.Content[i].Value)
		}
	} else if a != nil {
		for name, set := range map[string]bool{
			"default": a.Default != nil, "drop": a.Drop != nil, "sum": a.Sum != nil, "last_value": a.LastValue != nil,
			"explicit_bucket_histogram":          a.ExplicitBucketHistogram != nil,
			"base2_exponential_bucket_histogram": a.Base2ExponentialBucketHistogram != nil,
		} {
			if set {
				named = append(named, name)
			}
		}
		slices.Sort(named)
	}
	switch len(named) {
	case 0:
		return nil, confErr(n, path, "names no aggregation (default, drop, sum, last_value, explicit_bucket_histogram or base2_exponential_bucket_histogram)")
	case 1:
	default:
		return nil, confErr(n, path, "names "+strings.Join(named, " and ")+": want one aggregation")
	}
	if a == nil {
		a = &otelconf.Aggregation{}
	}
	minMax := func(p *bool) bool { return p != nil && !*p } // NoMinMax: record_min_max defaults to true
	switch named[0] {
	case "default":
		return sdkmetric.AggregationDefault{}, nil
	case "drop":
		return sdkmetric.AggregationDrop{}, nil
	case "sum":
		return sdkmetric.AggregationSum{}, nil
	case "last_value":
		return sdkmetric.AggregationLastValue{}, nil
	case "explicit_bucket_histogram":
		h := sdkmetric.AggregationExplicitBucketHistogram{Boundaries: slices.Clone(defaultBoundaries)}
		if e := a.ExplicitBucketHistogram; e != nil {
			if e.Boundaries != nil {
				h.Boundaries = slices.Clone(e.Boundaries)
			}
			h.NoMinMax = minMax(e.RecordMinMax)
		}
		bn := child(child(n, "explicit_bucket_histogram"), "boundaries")
		for i, b := range h.Boundaries {
			if math.IsNaN(b) || math.IsInf(b, 0) {
				return nil, confErr(bn, path+".explicit_bucket_histogram.boundaries", fmt.Sprintf("boundary %d is %v", i, b))
			}
			if i > 0 && b <= h.Boundaries[i-1] {
				return nil, confErr(bn, path+".explicit_bucket_histogram.boundaries",
					fmt.Sprintf("not increasing: %v after %v", b, h.Boundaries[i-1]))
			}
		}
		return h, nil
	case "base2_exponential_bucket_histogram":
		h := sdkmetric.AggregationBase2ExponentialHistogram{MaxScale: 20, MaxSize: 160}
		bn := child(n, "base2_exponential_bucket_histogram")
		if e := a.Base2ExponentialBucketHistogram; e != nil {
			if e.MaxScale != nil {
				if *e.MaxScale < -10 || *e.MaxScale > 20 {
					return nil, confErr(child(bn, "max_scale"), path+".base2_exponential_bucket_histogram.max_scale",
						fmt.Sprintf("%d: want -10 to 20", *e.MaxScale))
				}
				h.MaxScale = int32(*e.MaxScale)
			}
			if e.MaxSize != nil {
				if *e.MaxSize < 2 || *e.MaxSize > math.MaxInt32 {
					return nil, confErr(child(bn, "max_size"), path+".base2_exponential_bucket_histogram.max_size",
						fmt.Sprintf("%d: want 2 or more", *e.MaxSize))
				}
				h.MaxSize = int32(*e.MaxSize)
			}
			h.NoMinMax = minMax(e.RecordMinMax)
		}
		return h, nil
	}
	return nil, confErr(n, path+"."+named[0], "unknown aggregation")
}

// configKeys translates attribute_keys: a key is kept if it matches an
// included pattern (or none is given) and no excluded one; patterns take
// '*' and '?' as instrument names do.
func configKeys(ie *otelconf.IncludeExclude, n *yaml.Node, path string) (attribute.Filter, error) {
	if ie == nil {
		return nil, nil
	}
	for _, k := range ie.Excluded {
		if slices.Contains(ie.Included, k) {
			return nil, confErr(n, path, fmt.Sprintf("%q is both included and excluded", k))
		}
	}
	matchers := func(ps []string) []func(string) bool {
		out := make([]func(string) bool, len(ps))
		for i, p := range ps {
			out[i] = wildcardMatcher(p)
		}
		return out
	}
	inc, exc := matchers(ie.Included), matchers(ie.Excluded)
	anyOf := func(ms []func(string) bool, k string) bool {
		return slices.ContainsFunc(ms, func(m func(string) bool) bool { return m(k) })
	}
	all := ie.Included == nil // an omitted list includes every key; an empty one, none
	return func(kv attribute.KeyValue) bool {
		k := string(kv.Key)
		return (all || anyOf(inc, k)) && !anyOf(exc, k)
	}, nil
}
