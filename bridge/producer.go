package bridge

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// ScopeName is the instrumentation scope of the metrics a Producer makes.
const ScopeName = "github.com/otelpfs/otelpfs/bridge"

// Overflow is the pfs.digest_text of the series that sums the digests
// outside the top N (see WithTopDigests); it also carries
// otel.metric.overflow=true, as the SDK's own overflow series does.
const Overflow = "other"

// A Producer turns each collection's snapshot of the summary tables into
// metric data: it is an sdk/metric Producer, registered with a reader
// (metric.NewManualReader(metric.WithProducer(p)), or a PeriodicReader).
// Its Produce is safe for concurrent use; collections run one at a time.
type Producer struct {
	tables pfscore.Tables
	cfg    config
	plans  []*tablePlan
	scope  instrumentation.Scope

	mu     sync.Mutex
	seed   maphash.Seed
	series map[uint64][]*series // by hash of the plan and the row's attribute values
	others []*series            // each plan's overflow series (digest tables), or nil
	gen    uint64               // the collection in progress
	count  int                  // series in the map
	seen   int                  // series in the map this collection exported
	last   time.Time            // the previous collection, zero before the first
	vals   []pfscore.Value      // scratch: a row's attribute values
	cum    []uint64             // scratch: a row's cumulative values, by tp.cumul
	// order is, by plan, the series of each row position at the previous
	// collection: a table lists its rows in the same order from one read
	// to the next (threads, then classes), so row finds most series by
	// position, without hashing; a miss falls back on the map.
	order [][]*series
}

var _ sdkmetric.Producer = (*Producer)(nil)

// overflowHash marks the overflow series, which live in Producer.others,
// not in the map.
const overflowHash = 0

// A series is the state the producer keeps about one row between
// collections: its attributes (made once), the StartTime of its sums, and
// its cumulative values, to notice a TRUNCATE.
type series struct {
	plan  int
	hash  uint64
	key   []pfscore.Value // the row's attribute values
	attrs attribute.Set
	start time.Time
	last  []uint64 // the plan's cumul columns, at the previous collection
	gen   uint64   // the last collection that exported it (or, for a digest in the overflow, kept it)
	// acc is the overflow series' sums by column: what its members added
	// collection by collection, so that they only grow whoever the
	// members are.
	acc []uint64
	// A digest's series while its digest is outside the top N (inRest),
	// and the values, by column, it had when it came back (offset): the
	// overflow series counted what it added meanwhile, so on its return
	// it restarts, with the previous collection as StartTime and those
	// values taken off.
	inRest bool
	offset []uint64
	// gone is set when the series leaves the map: Producer.order may still
	// hold it, and must not return it.
	gone bool
	hist *histState // a digest's histogram (histograms.go), nil before its first
	// A digest's conventions histogram (semconv.go): 0 database, 1 HTTP,
	// -1 none; and its attributes there.
	conv      int8
	convAttrs attribute.Set
}

// NewProducer returns a Producer over t's tables: those the catalog lists
// that WithTables keeps (by default the summaries, accounts, users, hosts
// and global_status) and that have a measure column. The plan for each
// table is made here, from the catalog's columns and roles.
func NewProducer(t pfscore.Tables, opts ...Option) (*Producer, error) {
	if t == nil {
		return nil, errors.New("bridge: NewProducer: nil Tables")
	}
	cfg := newConfig(opts)
	cat, err := t.Catalog()
	if err != nil {
		return nil, fmt.Errorf("bridge: reading the catalog: %w", err)
	}
	p := &Producer{tables: t, cfg: cfg, seed: maphash.MakeSeed(), series: map[uint64][]*series{},
		scope: instrumentation.Scope{Name: ScopeName}}
	names := map[string]string{}
	var classes []string // for views that opt tables in: read once, if needed
	if !cfg.tables && cfg.views != nil && len(cfg.views.views) > 0 {
		classes = classNames(t)
	}
	for _, ti := range cat {
		opt := !cfg.tables && !cfg.filter(ti.Name) && AllTables(ti.Name) // opted in by a view, or not at all
		if !cfg.filter(ti.Name) && !opt {
			continue
		}
		tp, err := planTable(ti)
		if err != nil {
			return nil, err
		}
		if tp == nil || opt && !cfg.views.optsIn(tp, classes) { // views.go
			continue
		}
		if opt {
			for j := range tp.measures {
				tp.measures[j].opt = true
			}
		}
		for _, m := range tp.measures {
			if prev, dup := names[m.name]; dup {
				return nil, fmt.Errorf("bridge: metric %s from both %s and %s", m.name, prev, ti.Name)
			}
			names[m.name] = ti.Name
		}
		if tp.hist, err = newDigestHist(t, tp, cfg.views); err != nil { // histograms.go
			return nil, err
		}
		if tp.hist != nil {
			tp.dropQuantiles()             // the histogram carries them
			tp.conv = newDigestConv(t, tp) // semconv.go
		}
		p.plans = append(p.plans, tp)
	}
	p.others = make([]*series, len(p.plans))
	p.order = make([][]*series, len(p.plans))
	if err := p.cfg.views.init(t, p.plans); err != nil { // views.go
		return nil, err
	}
	return p, nil
}

// Tables returns the names of the tables the producer exports, in catalog
// order.
func (p *Producer) Tables() []string {
	out := make([]string, len(p.plans))
	for i, tp := range p.plans {
		out[i] = tp.table
	}
	return out
}

// Produce returns the metric data of one snapshot of every exported table,
// in one ScopeMetrics. A table that fails to read is left out and its
// error joined to the one returned, with the data of the others.
func (p *Producer) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	p.seen = 0
	var (
		out  []metricdata.Metrics
		errs []error
	)
	now := p.cfg.now()
	read := make([]bool, len(p.plans)) // the tables this collection read
	for i, tp := range p.plans {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		rows, err := p.read(tp.table)
		if err != nil {
			errs = append(errs, fmt.Errorf("bridge: %s: %w", tp.table, err))
			continue
		}
		if n := len(rows.Columns()); n != len(tp.columns) {
			errs = append(errs, fmt.Errorf("bridge: %s: %d columns, the catalog said %d", tp.table, n, len(tp.columns)))
			continue
		}
		out = p.table(out, i, tp, rows, now)
		read[i] = true
	}
	// Forget rows of the tables read that were not exported: gone, or
	// skipped for being zero. If they come back, every count they carry was
	// made after this collection, which their StartTime then says. The rows
	// of a table this collection could not read are kept as they were: they
	// did not reset.
	for h, ss := range p.series {
		if p.seen == p.count {
			break // every series was exported: nothing to forget
		}
		kept := ss[:0]
		for _, s := range ss {
			if s.gen == p.gen || !read[s.plan] {
				kept = append(kept, s)
			} else {
				s.gone = true
			}
		}
		p.count -= len(ss) - len(kept)
		clear(ss[len(kept):])
		if len(kept) == 0 {
			delete(p.series, h)
		} else {
			p.series[h] = kept
		}
	}
	out = p.cfg.views.export(out, p.freshStart()) // views.go
	p.last = now
	if len(out) == 0 {
		return nil, errors.Join(errs...)
	}
	return []metricdata.ScopeMetrics{{Scope: p.scope, Metrics: out}}, errors.Join(errs...)
}

// read returns a snapshot of table: a *pfscore.Schema's read in place
// (Schema.ReadRows: no Value made per cell, which for a collection of
// 10,000 rows was a third of its time), any other Tables' through Query.
func (p *Producer) read(table string) (*pfscore.Rows, error) {
	if s, ok := p.tables.(*pfscore.Schema); ok && s != nil {
		return s.ReadRows(table)
	}
	res, err := p.tables.Query(table, pfscore.Query{})
	if err != nil {
		return nil, err
	}
	return pfscore.RowsOf(res), nil
}

// freshStart is the StartTime of a series seen for the first time, or
// after a reset: every count it carries was made after the previous
// collection (which did not export it, or saw larger values), or, at the
// first collection, since the configured start.
func (p *Producer) freshStart() time.Time {
	if p.last.IsZero() {
		return p.cfg.start
	}
	return p.last
}

// table appends the metrics of one table snapshot to out.
func (p *Producer) table(out []metricdata.Metrics, pi int, tp *tablePlan, rows *pfscore.Rows, now time.Time) []metricdata.Metrics {
	n, at := rows.Len(), rows.Row
	var rest []pfscore.RowView
	if tp.digest {
		var top []pfscore.RowView
		top, rest = p.topN(tp, rows)
		n, at = len(top), func(i int) pfscore.RowView { return top[i] }
	}
	bs := make([]builder, len(tp.measures))
	for j, m := range tp.measures {
		bs[j].m = &tp.measures[j]
		if m.kind == sumInt || m.kind == gaugeInt {
			bs[j].ints = make([]metricdata.DataPoint[int64], 0, n+1)
		} else {
			bs[j].floats = make([]metricdata.DataPoint[float64], 0, n+1)
		}
	}
	if tp.hist != nil {
		tp.hist.begin(n)
	}
	if tp.conv != nil {
		tp.conv.begin()
	}
	order := p.order[pi]
	if len(order) != n {
		clear(order[:cap(order)]) // what lies past the new length must not stay reachable
		order = slices.Grow(order[:0], n)[:n]
		p.order[pi] = order
	}
	for i := range n {
		row := at(i)
		cum := p.cumulative(tp, row)
		if tp.zero(cum) {
			continue
		}
		s := order[i]
		if s == nil || s.gone || !s.keyOf(tp, row) {
			s = p.row(pi, tp, row)
			order[i] = s
		}
		back := s.inRest
		if back { // back in the top N (see series)
			s.inRest = false
			s.start = p.freshStart()
			s.offset = make([]uint64, len(tp.columns))
			for k, c := range tp.cumul {
				s.offset[c] = s.last[k]
			}
		}
		p.advance(s, cum)
		for j := range bs {
			col := bs[j].m.col
			u, v, ok := number(row, col)
			if !ok {
				continue // NULL: no point
			}
			if s.offset != nil && bs[j].m.kind.sum() {
				u -= s.offset[col]
				v = clampInt(u)
			}
			bs[j].add(u, v, s, now)
		}
		if tp.hist != nil {
			before := len(tp.hist.points)
			tp.hist.add(s, row, back, p.freshStart(), now)
			if tp.conv != nil && len(tp.hist.points) > before {
				tp.conv.add(s, &tp.hist.points[before])
			}
		}
	}
	if tp.digest {
		p.overflow(bs, pi, tp, rest, now)
	}
	for j := range bs {
		if m, ok := bs[j].metric(); ok {
			out = append(out, m)
		}
	}
	if tp.hist != nil {
		if m, ok := tp.hist.metric(); ok {
			out = append(out, m)
		}
	}
	if tp.conv != nil {
		out = tp.conv.metrics(out, p.freshStart())
	}
	return out
}

// A builder collects one measure's data points of a table snapshot.
type builder struct {
	m      *measure
	ints   []metricdata.DataPoint[int64]
	floats []metricdata.DataPoint[float64]
}

// add appends a value for series s: u as a count or as picoseconds,
// i as a signed count (see number).
func (b *builder) add(u uint64, i int64, s *series, now time.Time) {
	// Each point is filled in place, field by field, in the zeroed
	// capacity table made: a DataPoint is a dozen words, half of them
	// pointers, and building one to append it copied it whole, write
	// barriers and all.
	switch b.m.kind {
	case sumInt, gaugeInt:
		b.ints = grow(b.ints)
		d := &b.ints[len(b.ints)-1]
		d.Attributes, d.Time, d.Value = s.attrs, now, i
		if b.m.kind == sumInt {
			d.StartTime = s.start
		}
	case sumSeconds, gaugeSeconds:
		b.floats = grow(b.floats)
		d := &b.floats[len(b.floats)-1]
		d.Attributes, d.Time, d.Value = s.attrs, now, Seconds(u)
		if b.m.kind == sumSeconds {
			d.StartTime = s.start
		}
	}
}

// grow returns s one zero element longer.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1] // zero: made by make, never written past len
	}
	var zero T
	return append(s, zero)
}

// metric returns the metric the builder holds, false if it has no point.
func (b *builder) metric() (metricdata.Metrics, bool) {
	if len(b.ints) == 0 && len(b.floats) == 0 {
		return metricdata.Metrics{}, false
	}
	m := metricdata.Metrics{Name: b.m.name, Description: b.m.desc, Unit: b.m.unit}
	switch b.m.kind {
	case sumInt:
		m.Data = metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: b.ints}
	case sumSeconds:
		m.Data = metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: b.floats}
	case gaugeInt:
		m.Data = metricdata.Gauge[int64]{DataPoints: b.ints}
	case gaugeSeconds:
		m.Data = metricdata.Gauge[float64]{DataPoints: b.floats}
	}
	return m, true
}

// cumulative returns row's cumulative values, by tp.cumul, in a scratch
// slice that the next call reuses.
func (p *Producer) cumulative(tp *tablePlan, row pfscore.RowView) []uint64 {
	cum := p.cum[:0]
	for _, c := range tp.cumul {
		cum = append(cum, uintOf(row, c))
	}
	p.cum = cum
	return cum
}

// zero reports whether every cumulative value of a row (cum, by tp.cumul)
// is zero (or NULL): such a row says nothing yet, and is left out.
func (tp *tablePlan) zero(cum []uint64) bool {
	if len(tp.cumul) == 0 {
		return false
	}
	for _, v := range cum {
		if v != 0 {
			return false
		}
	}
	return true
}

// advance records a row's cumulative values (cum, by tp.cumul) in s, and
// restarts s's sums if any went down: a TRUNCATE the producer noticed.
func (p *Producer) advance(s *series, cum []uint64) {
	reset := false
	for k, v := range cum {
		if v < s.last[k] {
			reset = true
		}
		s.last[k] = v
	}
	if reset {
		s.start, s.offset = p.freshStart(), nil
	}
	if s.gen != p.gen && s.hash != overflowHash {
		p.seen++
	}
	s.gen = p.gen
}

// keyOf reports whether row's attribute values are s's.
func (s *series) keyOf(tp *tablePlan, row pfscore.RowView) bool {
	for k, c := range tp.attrs {
		if !row.Is(c, s.key[k]) {
			return false
		}
	}
	return true
}

// row returns the series of a row of plan pi, made on first sight.
func (p *Producer) row(pi int, tp *tablePlan, row pfscore.RowView) *series {
	vals := p.vals[:0]
	for _, c := range tp.attrs {
		vals = append(vals, row.Value(c))
	}
	p.vals = vals
	h := p.hash(pi, vals)
	for _, s := range p.series[h] {
		if s.plan == pi && slices.Equal(s.key, vals) {
			return s
		}
	}
	kvs := make([]attribute.KeyValue, 0, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			kvs = append(kvs, tp.keys[i].String(validString(x))) // utf8.go
		case uint64:
			kvs = append(kvs, tp.keys[i].Int64(clampInt(x)))
		case int64:
			kvs = append(kvs, tp.keys[i].Int64(x))
		}
	}
	conv := int8(-1)
	var convAttrs attribute.Set
	if tp.conv != nil {
		extra, which := tp.conv.attrs(row) // semconv.go
		for _, kv := range extra {
			if !slices.ContainsFunc(kvs, func(have attribute.KeyValue) bool { return have.Key == kv.Key }) {
				kvs = append(kvs, kv)
			}
		}
		conv, convAttrs = int8(which), attribute.NewSet(extra...)
	}
	s := &series{plan: pi, hash: h, key: ownValues(vals), attrs: attribute.NewSet(kvs...),
		start: p.freshStart(), last: make([]uint64, len(tp.cumul)), conv: conv, convAttrs: convAttrs}
	p.series[h] = append(p.series[h], s)
	p.count++
	return s
}

// ownValues copies vals into values of their own: a Query's Values point
// into chunks of cells it boxed together (pfscore/box.go), and a string
// may share its bytes with the read's rows, which a series kept between
// collections would keep alive, a whole read's worth each.
func ownValues(vals []pfscore.Value) []pfscore.Value {
	out := make([]pfscore.Value, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			out[i] = strings.Clone(x)
		case uint64:
			out[i] = x
		case int64:
			out[i] = x
		default:
			out[i] = v
		}
	}
	return out
}

func (p *Producer) hash(pi int, vals []pfscore.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(p.seed)
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(pi))
	h.Write(b[:8])
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			b[0] = 's'
			h.Write(b[:1])
			h.WriteString(x)
			b[0] = 0
			h.Write(b[:1])
		case uint64:
			b[0] = 'u'
			binary.LittleEndian.PutUint64(b[1:], x)
			h.Write(b[:])
		case int64:
			b[0] = 'i'
			binary.LittleEndian.PutUint64(b[1:], uint64(x))
			h.Write(b[:])
		default:
			b[0] = 'n'
			h.Write(b[:1])
		}
	}
	return h.Sum64()
}

// topN splits a digest table's rows into the top N by SUM_TIMER_WAIT (ties
// in table order) and the rest.
func (p *Producer) topN(tp *tablePlan, rows *pfscore.Rows) (top, rest []pfscore.RowView) {
	all := make([]pfscore.RowView, rows.Len())
	for i := range all {
		all[i] = rows.Row(i)
	}
	if len(all) <= p.cfg.topDigests {
		return all, nil
	}
	slices.SortStableFunc(all, func(a, b pfscore.RowView) int {
		return cmp.Compare(uintOf(b, tp.sumTimer), uintOf(a, tp.sumTimer))
	})
	return all[:p.cfg.topDigests], all[p.cfg.topDigests:]
}

// overflow appends the overflow series of a digest table: the sums of what
// the rows outside the top N added since the previous collection, added to
// its own (so that its sums only grow, whichever digests it holds), and
// their least MIN and greatest MAX now. Gauges of single digests (the
// quantiles) have no sum, and the overflow series leaves them out. Each row outside the top N keeps its series' state, unexported,
// so that a digest returning to the top N keeps its StartTime.
func (p *Producer) overflow(bs []builder, pi int, tp *tablePlan, rest []pfscore.RowView, now time.Time) {
	s := p.others[pi]
	if s == nil {
		s = &series{plan: pi, hash: overflowHash, start: p.freshStart(), last: make([]uint64, len(tp.cumul)),
			acc:   make([]uint64, len(tp.columns)),
			attrs: attribute.NewSet(attrKey("DIGEST_TEXT").String(Overflow), attribute.Bool("otel.metric.overflow", true))}
		p.others[pi] = s
	}
	mins := make([]uint64, len(tp.columns))
	maxs := make([]uint64, len(tp.columns))
	kept := 0
	for _, row := range rest {
		cum := p.cumulative(tp, row)
		if tp.zero(cum) {
			continue
		}
		kept++
		rs := p.row(pi, tp, row)
		for k, c := range tp.cumul {
			v := cum[k]
			if prev := rs.last[k]; v >= prev && rs.gen != 0 {
				s.acc[c] = satAdd(s.acc[c], v-prev)
			} else {
				s.acc[c] = satAdd(s.acc[c], v) // new to the producer, or reset by a TRUNCATE
			}
		}
		p.advance(rs, cum)
		rs.inRest = true
		if tp.hist != nil {
			tp.hist.track(rs, row)
		}
		for _, m := range tp.measures {
			v := uintOf(row, m.col)
			switch m.role {
			case pfscore.RoleMin:
				if v != 0 && (mins[m.col] == 0 || v < mins[m.col]) {
					mins[m.col] = v
				}
			case pfscore.RoleMax:
				maxs[m.col] = max(maxs[m.col], v)
			}
		}
	}
	if kept == 0 {
		return // nothing outside the top N now: the series waits, its sums kept
	}
	cum := p.cum[:0]
	for _, c := range tp.cumul { // every cumulative column is a measure's
		cum = append(cum, s.acc[c])
	}
	p.cum = cum
	p.advance(s, cum) // its sums only grow: this never restarts them
	for j := range bs {
		var v uint64
		switch m := bs[j].m; m.role {
		case pfscore.RoleCounter, pfscore.RoleTimer:
			v = s.acc[m.col]
		case pfscore.RoleMin:
			v = mins[m.col]
		case pfscore.RoleMax:
			v = maxs[m.col]
		default:
			continue // a gauge of single digests: none for the overflow
		}
		bs[j].add(v, clampInt(v), s, now)
	}
}

// Seconds converts picoseconds, a TIMER_* value, to seconds, the unit of
// every time the producer exports.
func Seconds(ps uint64) float64 { return float64(ps) / 1e12 }

// uintOf returns a row's counter in column col, as asUint does its Value.
func uintOf(row pfscore.RowView, col int) uint64 {
	if u, ok := row.Uint(col); ok {
		return u
	}
	if i, ok := row.Int(col); ok && i > 0 {
		return uint64(i)
	}
	return 0
}

// number returns the value in column col of a row, as a counter or
// picoseconds (as asUint) and as a signed number (as asInt); false if it
// is NULL.
func number(row pfscore.RowView, col int) (u uint64, i int64, ok bool) {
	if u, ok := row.Uint(col); ok {
		return u, clampInt(u), true
	}
	if i, ok := row.Int(col); ok {
		return uint64(max(i, 0)), i, true
	}
	return 0, 0, !row.Null(col)
}

// asUint returns a counter's value; NULL and negative values are 0.
func asUint(v pfscore.Value) uint64 {
	switch x := v.(type) {
	case uint64:
		return x
	case int64:
		if x > 0 {
			return uint64(x)
		}
	}
	return 0
}

func asInt(v pfscore.Value) int64 {
	switch x := v.(type) {
	case uint64:
		return clampInt(x)
	case int64:
		return x
	}
	return 0
}

func clampInt(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}
