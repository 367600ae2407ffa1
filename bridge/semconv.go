package bridge

import (
	"slices"
	"strings"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The semantic conventions' metrics, from the statement digests.
//
// A digest row is a statement text's summary: a SQL statement's, or an HTTP
// request's route (instrument/pfshttp), told apart by the class of their
// statements (pfscore.DigestBuckets.EventName; over a remote Tables, by the
// shape of the text). Besides the pfs.events_statements.by_digest.*
// metrics, which carry pfs.digest and pfs.digest_text for both, each
// digest's series carries the attributes its conventions give it, and its
// histogram adds to the conventions' histogram:
//
//	digest of     attributes                                           histogram
//	SQL           db.system.name, db.namespace, db.query.summary,     db.client.operation.duration
//	              db.operation.name, db.collection.name
//	an HTTP route http.request.method, http.route                      http.server.request.duration
//
// The conventions' histograms add up the digests that share those
// attributes (statements that differ but in their columns share a
// summary), so they are fewer series than the digests; they have the
// digests' buckets (DefaultStatementBuckets), and cover the top N digests
// (WithTopDigests), as the digest histograms do. http.server.request.duration
// has no http.response.status_code: the digest table keeps one row per
// route, not per status (a request's span has its status).

const (
	dbDurationMetric   = "db.client.operation.duration"
	httpDurationMetric = "http.server.request.duration"
)

// A digestKind is what a digest's statements are.
type digestKind uint8

const (
	digestOther digestKind = iota
	digestSQL
	digestHTTP
)

// kindOf returns what the statements of a digest are, from their class
// when known, else from the digest's text.
func kindOf(eventName, text string) digestKind {
	switch {
	case isSQL(eventName):
		return digestSQL
	case isHTTP(eventName):
		return digestHTTP
	case eventName != "":
		return digestOther
	case looksLikeRoute(text):
		return digestHTTP
	}
	return digestSQL
}

// httpMethods are the methods pfshttp names (and _OTHER for the rest).
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "_OTHER"}

// looksLikeRoute reports whether a DIGEST_TEXT is an HTTP route as pfshttp
// writes it ("GET /notes/{id}", "GET (unmatched)") rather than a
// normalized SQL statement, which puts a space between any two tokens and
// starts with a keyword: "GET /" followed by anything but a space or the
// '*' of an optimizer hint (DELETE /*+ ... */ FROM ...), or "(unmatched)",
// or a text that starts with '/', is no normalized SQL. It decides only
// where the statements' class is not known (a producer over a remote
// Tables).
func looksLikeRoute(text string) bool {
	if strings.HasPrefix(text, "/") {
		return true
	}
	method, rest, ok := strings.Cut(text, " ")
	if !ok || !slices.Contains(httpMethods, method) {
		return false
	}
	return rest == "(unmatched)" || rest == "/" || len(rest) > 1 && rest[0] == '/' && rest[1] != ' ' && rest[1] != '*'
}

// digestConv is a digest plan's part in the conventions: the columns it
// reads, the summaries it made, and the histograms of a collection.
type digestConv struct {
	schema, digest, text int // SCHEMA_NAME, DIGEST, DIGEST_TEXT; -1 if the table lacks one
	src                  histogramSource
	systems              dbSystems
	sums                 summaries
	// The conventions' histograms of a collection, by metric, then by
	// attribute set, and what keeps them monotonic between collections.
	points [2]map[attribute.Distinct]*metricdata.HistogramDataPoint[float64]
	last   map[sumKey]*sumState
	gen    uint64
}

func newDigestConv(t pfscore.Tables, tp *tablePlan) *digestConv {
	if !tp.digest {
		return nil
	}
	c := &digestConv{schema: tp.column("SCHEMA_NAME"), digest: tp.column("DIGEST"), text: tp.column("DIGEST_TEXT")}
	if c.text < 0 {
		return nil
	}
	c.src, _ = t.(histogramSource)
	c.systems, _ = t.(dbSystems)
	return c
}

// attrs returns a digest row's conventions attributes, and which
// histogram its own adds to (0: database, 1: HTTP, -1: none).
func (c *digestConv) attrs(row pfscore.RowView) ([]attribute.KeyValue, int) {
	text, _ := row.String(c.text)
	if text == "" {
		return nil, -1 // the NULL row: statements of digests the table had no room for
	}
	var schema, dg, eventName string
	if c.schema >= 0 {
		schema, _ = row.String(c.schema)
	}
	if c.digest >= 0 {
		dg, _ = row.String(c.digest)
	}
	if c.src != nil && dg != "" {
		if b, ok := c.src.DigestBuckets(schema, dg); ok {
			eventName = b.EventName
		}
	}
	switch kindOf(eventName, text) {
	case digestHTTP:
		method, route := splitRoute(text)
		kv := []attribute.KeyValue{keyHTTPMethod.String(validString(method))}
		if route != "" {
			kv = append(kv, keyHTTPRoute.String(validString(route)))
		}
		return kv, 1
	case digestSQL:
		sum := c.sums.of(text)
		sys := DefaultDBSystem
		if c.systems != nil {
			if s := c.systems.DBSystem(schema); s != "" {
				sys = s
			}
		}
		kv := []attribute.KeyValue{keyDBSystem.String(sys)}
		if schema != "" {
			kv = append(kv, keyDBNamespace.String(validString(schema)))
		}
		if sum.Summary != "" {
			kv = append(kv, keyDBSummary.String(validString(sum.Summary)))
		}
		if sum.Operation != "" {
			kv = append(kv, keyDBOperation.String(sum.Operation))
		}
		if sum.Collection != "" {
			kv = append(kv, keyDBCollection.String(validString(sum.Collection)))
		}
		return kv, 0
	}
	return nil, -1
}

// begin starts a collection's conventions histograms.
func (c *digestConv) begin() {
	c.gen++
	for i := range c.points {
		c.points[i] = nil
	}
}

// add adds a digest's histogram point to its conventions histogram.
func (c *digestConv) add(s *series, p *metricdata.HistogramDataPoint[float64]) {
	if s.conv < 0 {
		return
	}
	m := c.points[s.conv]
	if m == nil {
		m = map[attribute.Distinct]*metricdata.HistogramDataPoint[float64]{}
		c.points[s.conv] = m
	}
	key := s.convAttrs.Equivalent()
	q, ok := m[key]
	if !ok {
		q = &metricdata.HistogramDataPoint[float64]{Attributes: s.convAttrs, StartTime: p.StartTime, Time: p.Time,
			Bounds: p.Bounds, BucketCounts: make([]uint64, len(p.BucketCounts))}
		m[key] = q
	}
	if !slices.Equal(q.Bounds, p.Bounds) {
		return // (one plan's points share their bounds)
	}
	if p.StartTime.Before(q.StartTime) {
		q.StartTime = p.StartTime
	}
	q.Count += p.Count
	q.Sum += p.Sum
	for i, n := range p.BucketCounts {
		q.BucketCounts[i] += n
	}
	q.Exemplars = append(q.Exemplars, p.Exemplars...)
}

// metrics appends the collection's conventions histograms to out: each
// series restarts (StartTime the previous collection) when it went down,
// as a merged series does when a member left (see keepMonotonicHist).
func (c *digestConv) metrics(out []metricdata.Metrics, fresh time.Time) []metricdata.Metrics {
	if c.last == nil {
		c.last = map[sumKey]*sumState{}
	}
	vs := &viewState{sums: c.last, gen: c.gen}
	for i, name := range [...]string{dbDurationMetric, httpDurationMetric} {
		m := c.points[i]
		if len(m) == 0 {
			continue
		}
		pts := make([]metricdata.HistogramDataPoint[float64], 0, len(m))
		for _, q := range m {
			pts = append(pts, *q)
		}
		slices.SortFunc(pts, func(a, b metricdata.HistogramDataPoint[float64]) int {
			return strings.Compare(a.Attributes.Encoded(attribute.DefaultEncoder()), b.Attributes.Encoded(attribute.DefaultEncoder()))
		})
		keepMonotonicHist(vs, name, pts, fresh)
		desc := "Duration of database client operations: the statement digests' histograms, by query summary"
		if i == 1 {
			desc = "Duration of HTTP server requests: the routes' digest histograms"
		}
		out = append(out, metricdata.Metrics{Name: name, Description: desc, Unit: "s",
			Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: pts}})
	}
	for k, st := range c.last { // forget the series this collection did not see
		if st.gen != c.gen {
			delete(c.last, k)
		}
	}
	return out
}
