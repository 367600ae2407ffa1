package bridge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Views (see doc.go, # Views): OpenTelemetry views address pfs instrument
// classes by their names, and their streams drive setup_instruments (at
// record time) and the producer's output (at export time).

// ClassInstrument returns the instrument a view is evaluated against for
// the pfs instrument class named name: a histogram (a class's events have
// durations), in seconds, of the bridge's scope.
func ClassInstrument(name string) sdkmetric.Instrument {
	return sdkmetric.Instrument{Name: name, Kind: sdkmetric.InstrumentKindHistogram, Unit: "s",
		Scope: instrumentation.Scope{Name: ScopeName}}
}

// A setupAction is what views make of a class's setup_instruments row.
type setupAction uint8

const (
	setupLeave   setupAction = iota // no view, or the default aggregation: as it is
	setupOff                        // every matching view drops: ENABLED=NO, TIMED=NO
	setupCounted                    // a sum or last value: ENABLED=YES, TIMED=NO
	setupTimed                      // a histogram: ENABLED=YES, TIMED=YES
)

// flags returns the ENABLED and TIMED of an action other than setupLeave.
func (a setupAction) flags() (enabled, timed bool) {
	return a >= setupCounted, a == setupTimed
}

// A resolution is what a list of views says about one instrument. A pfs
// class has one setup_instruments row and one series per table, where the
// SDK would make a stream per matching view, so the views' streams combine
// aspect by aspect, whatever their order:
//
//   - aggregation: of the matching views that set one (the default
//     aggregation, or none, sets none), the class is dropped if all of them
//     drop, else timed if one asks for a histogram, else counted. As in the
//     SDK, a drop drops only what no other view keeps.
//   - attribute filter: of the matching views that keep the instrument and
//     set a filter, a key is kept if any of them keeps it; with none, every
//     key is kept.
type resolution struct {
	matched bool        // some view matched
	drop    bool        // the views that set an aggregation all drop
	action  setupAction // what they make of setup_instruments
	// keep is the union of the filters, or nil: every key.
	keep attribute.Filter
	// hist is the first histogram aggregation of the matching streams
	// (explicit buckets or base-2 exponential), or nil: the buckets the
	// statement histograms are to be exported with.
	hist sdkmetric.Aggregation
}

// resolve evaluates views against inst.
func resolve(views []sdkmetric.View, inst sdkmetric.Instrument) resolution {
	var (
		r       resolution
		filters []attribute.Filter
		drops   int // matching views that drop
		keeps   int // matching views that set an aggregation and keep
	)
	for _, v := range views {
		if v == nil {
			continue
		}
		st, ok := v(inst)
		if !ok {
			continue
		}
		r.matched = true
		a, hist, drop := classify(st.Aggregation)
		if drop {
			drops++
			continue
		}
		if a != setupLeave {
			keeps++
		}
		r.action = max(r.action, a)
		if hist != nil && r.hist == nil {
			r.hist = hist
		}
		if st.AttributeFilter != nil {
			filters = append(filters, st.AttributeFilter)
		}
	}
	if drops > 0 && keeps == 0 {
		return resolution{matched: true, drop: true, action: setupOff}
	}
	switch len(filters) {
	case 0:
	case 1:
		r.keep = filters[0]
	default:
		r.keep = func(kv attribute.KeyValue) bool {
			return slices.ContainsFunc(filters, func(f attribute.Filter) bool { return f(kv) })
		}
	}
	return r
}

// classify returns the setup action of an aggregation, the histogram
// aggregation if it is one, and whether it drops.
func classify(a sdkmetric.Aggregation) (setupAction, sdkmetric.Aggregation, bool) {
	switch x := a.(type) {
	case sdkmetric.AggregationDrop, *sdkmetric.AggregationDrop:
		return setupOff, nil, true
	case sdkmetric.AggregationSum, *sdkmetric.AggregationSum,
		sdkmetric.AggregationLastValue, *sdkmetric.AggregationLastValue:
		return setupCounted, nil, false
	case sdkmetric.AggregationExplicitBucketHistogram:
		x.Boundaries = slices.Clone(x.Boundaries)
		return setupTimed, x, false
	case *sdkmetric.AggregationExplicitBucketHistogram:
		if x == nil {
			break
		}
		y := *x
		y.Boundaries = slices.Clone(y.Boundaries)
		return setupTimed, y, false
	case sdkmetric.AggregationBase2ExponentialHistogram:
		return setupTimed, x, false
	case *sdkmetric.AggregationBase2ExponentialHistogram:
		if x == nil {
			break
		}
		return setupTimed, *x, false
	}
	return setupLeave, nil, false // nil, AggregationDefault: as it is
}

// errNilView is the error of a nil view.
var errNilView = errors.New("bridge: a nil view")

func checkViews(views []sdkmetric.View) error {
	for i, v := range views {
		if v == nil {
			return fmt.Errorf("%w (view %d)", errNilView, i)
		}
	}
	return nil
}

// InstrumentPolicy returns the pfscore.InstrumentPolicy of views: a class
// that a view matches starts as the views' streams say (see doc.go,
// # Views). Pass it to pfscore.New with pfscore.WithInstrumentPolicy, the
// start-up form of the views, or see ApplyViews for a running schema. The
// policy evaluates the views whenever a class registers, while the schema
// holds its setup lock: a view must not call into the schema.
func InstrumentPolicy(views ...sdkmetric.View) pfscore.InstrumentPolicy {
	views = slices.DeleteFunc(slices.Clone(views), func(v sdkmetric.View) bool { return v == nil })
	return func(name string, _ pfscore.Kind) (enabled, timed, ok bool) {
		a := resolve(views, ClassInstrument(name)).action
		if a == setupLeave {
			return false, false, false
		}
		enabled, timed = a.flags()
		return enabled, timed, true
	}
}

// A policySetter is a schema that takes an instrument policy: *pfscore.Schema.
type policySetter interface {
	SetInstrumentPolicy(pfscore.InstrumentPolicy) int
}

// ApplyViews makes t's setup_instruments follow views, at record time:
// every class a view matches takes the ENABLED and TIMED its streams ask
// for (drop: NO, NO; sum or last value: YES, NO; a histogram: YES, YES;
// the default aggregation leaves a class as it is). On a *pfscore.Schema
// this is one step with the classes that register later: they follow the
// views too (pfscore.Schema.SetInstrumentPolicy), and the views replace
// those applied before. Over another Tables (a remote one, such as
// exporter.Client) it updates the classes registered now, with one UPDATE
// per group of classes that the same LIKE pattern covers; classes that
// register later are not governed.
func ApplyViews(t pfscore.Tables, views ...sdkmetric.View) error {
	if t == nil {
		return errors.New("bridge: ApplyViews: nil Tables")
	}
	if err := checkViews(views); err != nil {
		return err
	}
	if s, ok := t.(policySetter); ok {
		s.SetInstrumentPolicy(InstrumentPolicy(views...))
		return nil
	}
	rows, err := readInstruments(t)
	if err != nil {
		return err
	}
	names := make([]string, len(rows))
	groups := map[setupAction]map[string]bool{}
	for i, r := range rows {
		names[i] = r.name
		a := resolve(views, ClassInstrument(r.name)).action
		if a == setupLeave {
			continue
		}
		if groups[a] == nil {
			groups[a] = map[string]bool{}
		}
		groups[a][r.name] = true
	}
	var errs []error
	for _, a := range []setupAction{setupOff, setupCounted, setupTimed} {
		if groups[a] == nil {
			continue
		}
		enabled, timed := a.flags()
		for _, w := range coverNames(names, groups[a]) {
			where := []string{"NAME LIKE " + pfscore.QuoteString(LikePattern(w))}
			if _, err := t.Update("setup_instruments", where, map[string]pfscore.Value{"ENABLED": enabled, "TIMED": timed}); err != nil {
				errs = append(errs, fmt.Errorf("bridge: applying views to %s: %w", w, err))
			}
		}
	}
	return errors.Join(errs...)
}

// An instrumentRow is a row of setup_instruments as views see it.
type instrumentRow struct {
	name           string
	enabled, timed bool
	timable        bool // TIMED is not NULL
}

// readInstruments reads setup_instruments through t.
func readInstruments(t pfscore.Tables) ([]instrumentRow, error) {
	res, err := t.Query("setup_instruments", pfscore.Query{})
	if err != nil {
		return nil, fmt.Errorf("bridge: reading setup_instruments: %w", err)
	}
	col := func(name string) int {
		return slices.IndexFunc(res.Columns, func(c pfscore.Column) bool { return c.Name == name })
	}
	ni, ei, ti := col("NAME"), col("ENABLED"), col("TIMED")
	if ni < 0 || ei < 0 || ti < 0 {
		return nil, errors.New("bridge: setup_instruments has no NAME, ENABLED or TIMED column")
	}
	out := make([]instrumentRow, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) != len(res.Columns) {
			return nil, fmt.Errorf("bridge: setup_instruments: a row of %d cells for %d columns", len(row), len(res.Columns))
		}
		name, ok := row[ni].(string)
		if !ok {
			return nil, fmt.Errorf("bridge: setup_instruments: NAME %v is not a string", row[ni])
		}
		r := instrumentRow{name: name}
		if r.enabled, err = flagValue(row[ei]); err != nil {
			return nil, fmt.Errorf("bridge: setup_instruments: %s: ENABLED: %w", name, err)
		}
		if row[ti] != nil {
			r.timable = true
			if r.timed, err = flagValue(row[ti]); err != nil {
				return nil, fmt.Errorf("bridge: setup_instruments: %s: TIMED: %w", name, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// flagValue reads a YES/NO cell.
func flagValue(v pfscore.Value) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		return pfscore.ParseFlag(x)
	}
	return false, fmt.Errorf("%v is not YES or NO", v)
}

// LikePattern translates an OpenTelemetry view's instrument-name wildcard
// to a LIKE pattern for setup_instruments.NAME: '*' becomes '%', '?'
// becomes '_', and the characters LIKE gives a meaning to ('%', '_', '\')
// are escaped. LIKE compares ASCII letters case-insensitively, the SDK's
// wildcards case-sensitively: pfs names that differ only in case are one
// name to setup_instruments.
func LikePattern(wildcard string) string {
	var b strings.Builder
	for i := 0; i < len(wildcard); i++ {
		switch c := wildcard[i]; c {
		case '*':
			b.WriteByte('%')
		case '?':
			b.WriteByte('_')
		case '%', '_', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// coverNames returns instrument-name wildcards ('*' for any run of
// characters) that match, among names, exactly those in set, and as few
// and as short as the names' '/'-separated segments allow: "*" when set
// is every name, else, for each segment prefix whose classes are all in
// set, prefix + "/*", and the names of set left over. A name prefix/* also
// matches classes that register later under that prefix.
func coverNames(names []string, set map[string]bool) []string {
	in := 0
	for _, n := range names {
		if set[n] {
			in++
		}
	}
	switch {
	case in == 0:
		return nil
	case in == len(names):
		return []string{"*"}
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	return coverUnder(nil, "", sorted, set)
}

// coverUnder appends to out the wildcards for names, all of which begin
// with prefix (empty, or ending in '/'), sorted.
func coverUnder(out []string, prefix string, names []string, set map[string]bool) []string {
	for len(names) > 0 {
		// The names whose next segment is that of names[0].
		seg, _, _ := strings.Cut(names[0][len(prefix):], "/")
		p := prefix + seg
		// names[:j] are p and the names under p/ (sorted, so together,
		// p first); a name such as p.x, sorted between them, ends the run
		// and has its own turn.
		j := 0
		exact := false
		var sub []string
		for j < len(names) && strings.HasPrefix(names[j], p) && (len(names[j]) == len(p) || names[j][len(p)] == '/') {
			if len(names[j]) == len(p) {
				exact = true
			} else {
				sub = append(sub, names[j])
			}
			j++
		}
		if exact && set[p] {
			out = append(out, p)
		}
		if len(sub) > 0 {
			all, any := true, false
			for _, n := range sub {
				all = all && set[n]
				any = any || set[n]
			}
			switch {
			case all:
				out = append(out, p+"/*")
			case any:
				out = coverUnder(out, p+"/", sub, set)
			}
		}
		names = names[j:]
	}
	return out
}

// WithViews sets the views the producer applies, at record time and at
// export time (see doc.go, # Views): NewProducer applies them to the
// setup tables (ApplyViews), and every collection leaves out the series of
// classes the views drop and keeps only the attributes their streams keep,
// adding up the series that become one. A view is evaluated against each
// class as ClassInstrument(name), and against each metric the producer
// makes under its own name (pfs.events_waits.count, ...). Several WithViews
// add up. By default, there are no views: every series is exported, and
// setup_instruments is left as it is.
func WithViews(views ...sdkmetric.View) Option {
	views = slices.Clone(views)
	return optionFunc(func(c config) config {
		var all []sdkmetric.View
		if c.views != nil {
			all = c.views.views
		}
		c.views = &viewState{views: append(slices.Clip(all), views...)}
		return c
	})
}

// A viewState is a producer's views and what it learned of them. Its
// methods run under the Producer's mu, but for init, which NewProducer
// calls before the producer is shared. A nil *viewState applies no view.
type viewState struct {
	views    []sdkmetric.View
	classes  map[string]resolution    // by class name
	metrics  map[string]resolution    // by metric name
	measures map[string]*measure      // the plans' measures, by metric name
	cache    map[attrsKey]*attrsEntry // see attrs
	sums     map[sumKey]*sumState     // see keepMonotonic
	gen      uint64                   // the collection in progress
	used     int                      // cache entries this collection used
}

// init applies the views to t's setup tables and learns the plans'
// measures.
func (vs *viewState) init(t pfscore.Tables, plans []*tablePlan) error {
	if vs == nil {
		return nil
	}
	if err := ApplyViews(t, vs.views...); err != nil {
		return err
	}
	vs.classes = map[string]resolution{}
	vs.metrics = map[string]resolution{}
	vs.measures = map[string]*measure{}
	for _, tp := range plans {
		for j := range tp.measures {
			m := &tp.measures[j]
			vs.measures[m.name] = m
		}
	}
	return nil
}

// class returns what the views say about class name.
func (vs *viewState) class(name string) resolution {
	r, ok := vs.classes[name]
	if !ok {
		r = resolve(vs.views, ClassInstrument(name))
		vs.classes[name] = r
	}
	return r
}

// histogram returns the histogram aggregation the views ask for class
// name (an sdkmetric.AggregationExplicitBucketHistogram or
// AggregationBase2ExponentialHistogram), false if none does: the buckets
// a class's histograms are to be exported with.
func (vs *viewState) histogram(name string) (sdkmetric.Aggregation, bool) {
	if vs == nil {
		return nil, false
	}
	r := vs.class(name)
	return r.hist, r.hist != nil
}

// metricInstrument is the instrument a view is evaluated against for a
// metric of the producer.
func metricInstrument(m metricdata.Metrics) sdkmetric.Instrument {
	kind := sdkmetric.InstrumentKindGauge
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		kind = sumKind(d.IsMonotonic)
	case metricdata.Sum[float64]:
		kind = sumKind(d.IsMonotonic)
	case metricdata.Histogram[int64], metricdata.Histogram[float64],
		metricdata.ExponentialHistogram[int64], metricdata.ExponentialHistogram[float64]:
		kind = sdkmetric.InstrumentKindHistogram
	}
	return sdkmetric.Instrument{Name: m.Name, Description: m.Description, Unit: m.Unit, Kind: kind,
		Scope: instrumentation.Scope{Name: ScopeName}}
}

func sumKind(monotonic bool) sdkmetric.InstrumentKind {
	if monotonic {
		return sdkmetric.InstrumentKindCounter
	}
	return sdkmetric.InstrumentKindUpDownCounter
}

// A mergeRule is how the values of series that a filter makes one add up.
type mergeRule uint8

const (
	mergeAdd  mergeRule = iota // counters, timers, amounts in use, and water marks (whose sum bounds the merged one)
	mergeMin                   // the least of the values that are not 0
	mergeMax                   // the greatest
	mergeNone                  // quantiles: a merged series has none
)

func ruleOf(m *measure) mergeRule {
	if m == nil {
		return mergeAdd
	}
	switch m.role {
	case pfscore.RoleMin:
		return mergeMin
	case pfscore.RoleMax:
		return mergeMax
	}
	if strings.HasPrefix(m.desc, "QUANTILE_") {
		return mergeNone
	}
	return mergeAdd
}

var (
	eventNameKey = attrKey("EVENT_NAME")
	overflowKey  = attribute.Key("otel.metric.overflow")
)

// An attrsKey is a series' attributes under one metric's attribute
// filter: metric is "" for every metric without one.
type attrsKey struct {
	metric      string
	opt, viewed bool // attrsOf's opt and metric
	set         attribute.Distinct
}

// attrsEntry is what attrsOf said of an attrsKey, and the collection that
// last asked.
type attrsEntry struct {
	set attribute.Set
	ok  bool
	gen uint64
}

// attrs is attrsOf, remembered across collections: a series keeps its
// attribute set from one collection to the next, and filtering it again
// would make a new set each time. mkey is the metric's name if keep is
// not nil, else "".
func (vs *viewState) attrs(set attribute.Set, keep attribute.Filter, mkey string, opt, viewed bool) (attribute.Set, bool) {
	k := attrsKey{mkey, opt, viewed, set.Equivalent()}
	if e, hit := vs.cache[k]; hit {
		if e.gen != vs.gen {
			e.gen = vs.gen
			vs.used++
		}
		return e.set, e.ok
	}
	out, ok := vs.attrsOf(set, keep, opt, viewed)
	vs.cache[k] = &attrsEntry{set: out, ok: ok, gen: vs.gen}
	vs.used++
	return out, ok
}

// attrsOf returns the attributes a series keeps under the views (keep of
// its metric, and its class's), and false if the views drop it.
//
// A series of a table a view opted in (opt: see optsIn) is kept only if a
// view on its metric matched (metric), or its class's views keep some of
// its attributes: the classes no view names stay in the global summary.
func (vs *viewState) attrsOf(set attribute.Set, keep attribute.Filter, opt, metric bool) (attribute.Set, bool) {
	v, has := set.Value(eventNameKey)
	var ckeep attribute.Filter
	if has {
		r := vs.class(v.AsString())
		if r.drop {
			return set, false
		}
		ckeep = r.keep
	}
	if opt && !metric && ckeep == nil {
		return set, false
	}
	if ckeep == nil && keep == nil {
		return set, true
	}
	if ckeep != nil && set.Len() > 1 {
		// A series whose class's views keep none of its table's
		// dimensions is its table's share of the global summary: left
		// out (see doc.go, # Views).
		left, _ := set.Filter(func(kv attribute.KeyValue) bool {
			return kv.Key == eventNameKey || kv.Key == overflowKey || ckeep(kv)
		})
		if left.Len() == 1 {
			return set, false
		}
	}
	out, removed := set.Filter(func(kv attribute.KeyValue) bool {
		if kv.Key == overflowKey {
			return true
		}
		if ckeep != nil && kv.Key != eventNameKey && !ckeep(kv) {
			return false
		}
		return keep == nil || keep(kv)
	})
	if len(removed) == 0 {
		return set, true
	}
	return out, true
}

// export applies the views to one collection's metrics, in place. fresh
// is the StartTime of what was counted since the previous collection.
func (vs *viewState) export(out []metricdata.Metrics, fresh time.Time) []metricdata.Metrics {
	if vs == nil {
		return out
	}
	if vs.cache == nil {
		vs.cache = map[attrsKey]*attrsEntry{}
	}
	vs.gen++
	vs.used = 0
	present := make(map[string]bool, len(out)) // the metrics this collection made
	for _, m := range out {
		present[m.Name] = true
	}
	defer func() { // forget the series this collection did not see
		if vs.used < len(vs.cache) {
			for k, e := range vs.cache {
				if e.gen != vs.gen {
					delete(vs.cache, k)
				}
			}
		}
		// A series this collection did not see goes, but only if its
		// metric was exported: a table that failed to read keeps its
		// series (see Produce), and so its merged series' state.
		for k, st := range vs.sums {
			if st.gen != vs.gen && present[k.metric] {
				delete(vs.sums, k)
			}
		}
	}()
	kept := out[:0]
	for _, m := range out {
		mr, ok := vs.metrics[m.Name]
		if !ok {
			mr = resolve(vs.views, metricInstrument(m))
			vs.metrics[m.Name] = mr
		}
		if mr.drop {
			continue
		}
		meas := vs.measures[m.Name]
		rule := ruleOf(meas)
		opt := meas != nil && meas.opt
		mkey := ""
		if mr.keep != nil {
			mkey = m.Name
		}
		var n int
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			d.DataPoints = viewPoints(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched, rule)
			if d.IsMonotonic && mr.keep != nil {
				keepMonotonic(vs, m.Name, d.DataPoints, fresh)
			}
			n, m.Data = len(d.DataPoints), d
		case metricdata.Sum[float64]:
			d.DataPoints = viewPoints(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched, rule)
			if d.IsMonotonic && mr.keep != nil {
				keepMonotonic(vs, m.Name, d.DataPoints, fresh)
			}
			n, m.Data = len(d.DataPoints), d
		case metricdata.Gauge[int64]:
			d.DataPoints = viewPoints(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched, rule)
			n, m.Data = len(d.DataPoints), d
		case metricdata.Gauge[float64]:
			d.DataPoints = viewPoints(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched, rule)
			n, m.Data = len(d.DataPoints), d
		case metricdata.Histogram[int64]:
			d.DataPoints = viewHistogram(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched)
			if mr.keep != nil {
				keepMonotonicHist(vs, m.Name, d.DataPoints, fresh)
			}
			n, m.Data = len(d.DataPoints), d
		case metricdata.Histogram[float64]:
			d.DataPoints = viewHistogram(vs, d.DataPoints, mr.keep, mkey, opt, mr.matched)
			if mr.keep != nil {
				keepMonotonicHist(vs, m.Name, d.DataPoints, fresh)
			}
			n, m.Data = len(d.DataPoints), d
		default:
			n = 1 // other data: the metric's own views only
		}
		if n == 0 {
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// viewPoints applies the views to one metric's points, in place: drops,
// filters and merges.
func viewPoints[N int64 | float64](vs *viewState, pts []metricdata.DataPoint[N], keep attribute.Filter, mkey string, opt, viewed bool, rule mergeRule) []metricdata.DataPoint[N] {
	out := pts[:0]
	var merged map[int]bool              // the points that merged several series
	var index map[attribute.Distinct]int // made at the first filtered series
	for _, dp := range pts {
		attrs, ok := vs.attrs(dp.Attributes, keep, mkey, opt, viewed)
		if !ok {
			continue
		}
		changed := attrs.Equivalent() != dp.Attributes.Equivalent()
		if changed && index == nil {
			index = make(map[attribute.Distinct]int, len(pts))
			for i := range out {
				index[out[i].Attributes.Equivalent()] = i
			}
		}
		if index != nil {
			if i, dup := index[attrs.Equivalent()]; dup {
				mergePoint(&out[i], dp, rule)
				if merged == nil {
					merged = map[int]bool{}
				}
				merged[i] = true
				continue
			}
			index[attrs.Equivalent()] = len(out)
		}
		dp.Attributes = attrs
		out = append(out, dp)
	}
	if rule == mergeNone && len(merged) > 0 { // no quantile of merged series
		kept := out[:0]
		for i, dp := range out {
			if !merged[i] {
				kept = append(kept, dp)
			}
		}
		clear(out[len(kept):])
		return kept
	}
	clear(pts[len(out):])
	return out
}

// A sumKey is a series of a metric whose attributes a view filtered.
type sumKey struct {
	metric string
	attrs  attribute.Distinct
}

// sumState is what keepMonotonic remembers of such a series: its last
// value (exactly, as the metric's own type: an int64 sum past 2^53 would
// lose drops in a float64), or a histogram's last bucket counts.
type sumState struct {
	lastI   int64   // a sum's last value; a histogram's Count
	lastF   float64 // a sum's last value; a histogram's Sum
	buckets []uint64
	start   time.Time
	gen     uint64 // the last collection that saw it
}

// keepMonotonic keeps the cumulative sums of series a view filtered (and
// maybe merged) monotonic under their StartTime: a merged series loses a
// member when a thread ends, a digest moves to the overflow, or a row
// drops out for being zero, and its sum then goes down. Such a series
// restarts, as a TRUNCATE restarts a row: with fresh (the previous
// collection) as StartTime, which a backend reads as a reset. Its
// StartTime otherwise never moves back (a member's earlier StartTime
// joining later does not take it back).
func keepMonotonic[N int64 | float64](vs *viewState, metric string, pts []metricdata.DataPoint[N], fresh time.Time) {
	for i := range pts {
		p := &pts[i]
		st, seen := vs.sumState(metric, p.Attributes, p.StartTime)
		var down bool
		switch v := any(p.Value).(type) {
		case int64:
			down, st.lastI = seen && v < st.lastI, v
		case float64:
			down, st.lastF = seen && v < st.lastF, v
		}
		p.StartTime = st.advance(seen, down, p.StartTime, fresh)
	}
}

// keepMonotonicHist is keepMonotonic for histograms: a series restarts
// when its Count, its Sum or any of its bucket counts went down. The Sum
// may go down with every bucket holding: a member that leaves and one
// that joins in the same collection can leave the buckets at least as
// full and the sum of the waits smaller.
func keepMonotonicHist[N int64 | float64](vs *viewState, metric string, pts []metricdata.HistogramDataPoint[N], fresh time.Time) {
	for i := range pts {
		p := &pts[i]
		st, seen := vs.sumState(metric, p.Attributes, p.StartTime)
		sum := float64(p.Sum)
		down := seen && (len(st.buckets) != len(p.BucketCounts) || sum < st.lastF || int64(p.Count) < st.lastI)
		st.lastF, st.lastI = sum, int64(p.Count)
		for k := range st.buckets {
			if !down && p.BucketCounts[k] < st.buckets[k] {
				down = true
			}
		}
		st.buckets = append(st.buckets[:0], p.BucketCounts...)
		p.StartTime = st.advance(seen, down, p.StartTime, fresh)
	}
}

// sumState returns the state of a filtered series, made (starting at
// start) if new; seen says whether it was not.
func (vs *viewState) sumState(metric string, attrs attribute.Set, start time.Time) (*sumState, bool) {
	if vs.sums == nil {
		vs.sums = map[sumKey]*sumState{}
	}
	k := sumKey{metric, attrs.Equivalent()}
	st, ok := vs.sums[k]
	if !ok {
		st = &sumState{start: start}
		vs.sums[k] = st
	}
	st.gen = vs.gen
	return st, ok
}

// advance returns the series' StartTime now: fresh after a drop; the
// point's own if every member restarted since; else as it was.
func (st *sumState) advance(seen, down bool, start, fresh time.Time) time.Time {
	switch {
	case down:
		st.start = fresh
	case seen && start.After(st.start):
		st.start = start
	}
	return st.start
}

// mergePoint adds dp to p, a series it merges into.
func mergePoint[N int64 | float64](p *metricdata.DataPoint[N], dp metricdata.DataPoint[N], rule mergeRule) {
	if !dp.StartTime.IsZero() && (p.StartTime.IsZero() || dp.StartTime.Before(p.StartTime)) {
		p.StartTime = dp.StartTime
	}
	switch rule {
	case mergeAdd:
		p.Value += dp.Value
	case mergeMin:
		if dp.Value != 0 && (p.Value == 0 || dp.Value < p.Value) {
			p.Value = dp.Value
		}
	case mergeMax:
		p.Value = max(p.Value, dp.Value)
	}
	p.Exemplars = append(p.Exemplars, dp.Exemplars...)
}

// viewHistogram is viewPoints for histograms: series with the same
// buckets add up (a series whose buckets differ from those it would merge
// into is left out).
func viewHistogram[N int64 | float64](vs *viewState, pts []metricdata.HistogramDataPoint[N], keep attribute.Filter, mkey string, opt, viewed bool) []metricdata.HistogramDataPoint[N] {
	out := pts[:0]
	index := map[attribute.Distinct]int{}
	for _, dp := range pts {
		attrs, ok := vs.attrs(dp.Attributes, keep, mkey, opt, viewed)
		if !ok {
			continue
		}
		i, dup := index[attrs.Equivalent()]
		if !dup {
			index[attrs.Equivalent()] = len(out)
			dp.Attributes = attrs
			dp.BucketCounts = slices.Clone(dp.BucketCounts)
			out = append(out, dp)
			continue
		}
		p := &out[i]
		if !slices.Equal(p.Bounds, dp.Bounds) || len(p.BucketCounts) != len(dp.BucketCounts) {
			continue
		}
		if !dp.StartTime.IsZero() && (p.StartTime.IsZero() || dp.StartTime.Before(p.StartTime)) {
			p.StartTime = dp.StartTime
		}
		p.Count += dp.Count
		p.Sum += dp.Sum
		for k := range p.BucketCounts {
			p.BucketCounts[k] += dp.BucketCounts[k]
		}
		if lo, ok := dp.Min.Value(); ok {
			if plo, pok := p.Min.Value(); !pok || lo < plo {
				p.Min = metricdata.NewExtrema(lo)
			}
		}
		if hi, ok := dp.Max.Value(); ok {
			if phi, pok := p.Max.Value(); !pok || hi > phi {
				p.Max = metricdata.NewExtrema(hi)
			}
		}
		p.Exemplars = append(p.Exemplars, dp.Exemplars...)
	}
	clear(pts[len(out):])
	return out
}

// optsIn reports whether a view opts table tp, which DefaultTables leaves
// out, into the export: a view that matches one of its metrics by name
// (pfs.events_waits.by_thread.count, or pfs.events_waits.by_thread.*) and
// does not drop it, or a view on a class registered now (classes) whose
// attribute keys keep one of the table's dimensions other than
// pfs.event_name (pfs.user for *_by_user_*, thread.id for *_by_thread_*).
// In such a table, only the series of the classes and metrics a view
// matched are exported (see attrsOf).
func (vs *viewState) optsIn(tp *tablePlan, classes []string) bool {
	if vs == nil || len(vs.views) == 0 {
		return false
	}
	for _, m := range tp.measures {
		inst := sdkmetric.Instrument{Name: m.name, Unit: m.unit, Scope: instrumentation.Scope{Name: ScopeName}}
		if r := resolve(vs.views, inst); r.matched && !r.drop {
			return true
		}
	}
	var dims []attribute.KeyValue
	for _, k := range tp.keys {
		if k != eventNameKey {
			dims = append(dims, k.String(""))
		}
	}
	for _, name := range classes {
		r := resolve(vs.views, ClassInstrument(name))
		if r.drop || r.keep == nil {
			continue
		}
		if slices.ContainsFunc(dims, r.keep) {
			return true
		}
	}
	return false
}

// classNames returns the names of the classes t has registered, for
// optsIn; none if setup_instruments cannot be read.
func classNames(t pfscore.Tables) []string {
	rows, err := readInstruments(t)
	if err != nil {
		return nil
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.name
	}
	return out
}
