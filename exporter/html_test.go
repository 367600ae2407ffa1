package exporter_test

import (
	"html"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// page is a table page read back: its headers, its rows' raw values
// (data-v, nil for NULL) and its form.
type page struct {
	status  int
	body    string
	heads   []head
	rows    [][]*string
	inputs  map[string]input // by id: where, order, limit
	errText string           // the inline error, "" without one
}

type head struct {
	name, href, sorted, arrow, title string
}

type input struct{ value, placeholder string }

var (
	headRE  = regexp.MustCompile(`<th title="[a-z]+" data-col="([^"]+)"(?: data-numeric)?(?: aria-sort="([a-z]+)")?><a class="sort" href="([^"]*)" title="([^"]*)">(?:<span class="arrow">(.)</span>)?</a>([^<]*)</th>`)
	rowRE   = regexp.MustCompile(`(?s)<tr>(<td.*?)</tr>`)
	cellRE  = regexp.MustCompile(`<td(?: class="[^"]*")?( data-v="[^"]*")?>`)
	inputRE = regexp.MustCompile(`<input type="text" id="([a-z]+)" name="[a-z]+" value="([^"]*)" placeholder="([^"]*)"`)
	errRE   = regexp.MustCompile(`(?s)<p id="error" class="error" role="alert">(.*?)</p>`)
)

// htmlPage gets path (under /debug/pfs) as a browser does and reads the
// page back.
func (f *fixture) htmlPage(path string) page {
	f.t.Helper()
	r := f.get(path, "Accept", "text/html")
	p := page{status: r.status, body: string(r.body), inputs: map[string]input{}}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		f.t.Fatalf("GET %s: Content-Type %q, want HTML (status %d): %s", path, r.header.Get("Content-Type"), r.status, r.body)
	}
	for _, m := range headRE.FindAllStringSubmatch(p.body, -1) {
		if m[1] != m[6] {
			f.t.Fatalf("GET %s: header data-col %q shows %q", path, m[1], m[6])
		}
		p.heads = append(p.heads, head{name: m[1], sorted: m[2], href: html.UnescapeString(m[3]), title: html.UnescapeString(m[4]), arrow: m[5]})
	}
	if _, body, ok := strings.Cut(p.body, "<tbody>"); ok {
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			var row []*string
			for _, c := range cellRE.FindAllStringSubmatch(m[1], -1) {
				if c[1] == "" {
					row = append(row, nil)
					continue
				}
				v := html.UnescapeString(strings.TrimSuffix(strings.TrimPrefix(c[1], ` data-v="`), `"`))
				row = append(row, &v)
			}
			p.rows = append(p.rows, row)
		}
	}
	for _, m := range inputRE.FindAllStringSubmatch(p.body, -1) {
		p.inputs[m[1]] = input{value: html.UnescapeString(m[2]), placeholder: html.UnescapeString(m[3])}
	}
	if m := errRE.FindStringSubmatch(p.body); m != nil {
		p.errText = html.UnescapeString(m[1])
	}
	return p
}

func (p page) head(t *testing.T, name string) head {
	t.Helper()
	for _, h := range p.heads {
		if h.name == name {
			return h
		}
	}
	t.Fatalf("no header %s among %v", name, p.heads)
	return head{}
}

func (p page) col(t *testing.T, name string) int {
	t.Helper()
	for i, h := range p.heads {
		if h.name == name {
			return i
		}
	}
	t.Fatalf("no column %s", name)
	return -1
}

// follow is the path of a header's link, relative to the table's page.
func follow(table, href string) string { return "/tables/" + table + href }

// orderOf returns the order parameter of a header's link.
func orderOf(t *testing.T, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// checkSorted checks that column col of rows is in order: numbers compared
// as integers, strings case-insensitively, NULL first ascending.
func checkSorted(t *testing.T, rows [][]*string, col int, numeric, desc bool) {
	t.Helper()
	if len(rows) < 2 {
		t.Fatalf("%d rows: too few to check an order", len(rows))
	}
	cmp := func(a, b *string) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		case b == nil:
			return 1
		case numeric:
			x, _ := new(big.Int).SetString(*a, 10)
			y, _ := new(big.Int).SetString(*b, 10)
			if x == nil || y == nil {
				t.Fatalf("not numbers: %q, %q", *a, *b)
			}
			return x.Cmp(y)
		}
		return strings.Compare(strings.ToLower(*a), strings.ToLower(*b))
	}
	distinct := false
	for i := 1; i < len(rows); i++ {
		d := cmp(rows[i-1][col], rows[i][col])
		if desc {
			d = -d
		}
		if d > 0 {
			t.Fatalf("rows %d and %d out of order (desc=%v): %v then %v", i-1, i, desc, deref(rows[i-1][col]), deref(rows[i][col]))
		}
		distinct = distinct || d != 0
	}
	if !distinct {
		t.Fatalf("every row has the same value: the order proves nothing")
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// A header click orders the page on the server: a numeric column biggest
// first, then smallest first; a string column A to Z first; the arrow and
// aria-sort show the order, and the form's order field says it.
func TestHTMLSortByHeader(t *testing.T) {
	f := newFixture(t)
	const table = "events_waits_summary_global_by_event_name"
	f.lock(7) // more than one distinct COUNT_STAR

	p := f.htmlPage("/tables/" + table)
	if p.status != http.StatusOK || len(p.heads) != 6 || len(p.rows) < 3 {
		t.Fatalf("status %d, %d headers, %d rows", p.status, len(p.heads), len(p.rows))
	}
	for _, h := range p.heads {
		if h.sorted != "" || h.arrow != "" {
			t.Errorf("unordered page: %s shows %q %q", h.name, h.sorted, h.arrow)
		}
	}
	count, name := p.head(t, "COUNT_STAR"), p.head(t, "EVENT_NAME")
	if got := orderOf(t, count.href).Get("order"); got != "COUNT_STAR desc" {
		t.Errorf("COUNT_STAR's first click orders by %q, want COUNT_STAR desc", got)
	}
	if !strings.Contains(count.title, "biggest first") {
		t.Errorf("COUNT_STAR's link says %q", count.title)
	}
	if got := orderOf(t, name.href).Get("order"); got != "EVENT_NAME asc" {
		t.Errorf("EVENT_NAME's first click orders by %q, want EVENT_NAME asc", got)
	}

	// First click: descending.
	p = f.htmlPage(follow(table, count.href))
	c := p.col(t, "COUNT_STAR")
	checkSorted(t, p.rows, c, true, true)
	if h := p.head(t, "COUNT_STAR"); h.sorted != "descending" || h.arrow != "▼" || orderOf(t, h.href).Get("order") != "COUNT_STAR asc" {
		t.Errorf("after the first click COUNT_STAR shows %+v", h)
	}
	if h := p.head(t, "SUM_TIMER_WAIT"); h.sorted != "" || h.arrow != "" {
		t.Errorf("SUM_TIMER_WAIT shows an order: %+v", h)
	}
	if p.inputs["order"].value != "COUNT_STAR desc" {
		t.Errorf("order field %q after the click", p.inputs["order"].value)
	}

	// Second click: ascending; a third would be descending again.
	p = f.htmlPage(follow(table, p.head(t, "COUNT_STAR").href))
	checkSorted(t, p.rows, c, true, false)
	if h := p.head(t, "COUNT_STAR"); h.sorted != "ascending" || h.arrow != "▲" || orderOf(t, h.href).Get("order") != "COUNT_STAR desc" {
		t.Errorf("after the second click COUNT_STAR shows %+v", h)
	}

	// A string column: A to Z, then Z to A.
	p = f.htmlPage(follow(table, name.href))
	checkSorted(t, p.rows, p.col(t, "EVENT_NAME"), false, false)
	if h := p.head(t, "EVENT_NAME"); h.sorted != "ascending" || h.arrow != "▲" || orderOf(t, h.href).Get("order") != "EVENT_NAME desc" {
		t.Errorf("after a click EVENT_NAME shows %+v", h)
	}
	p = f.htmlPage(follow(table, p.head(t, "EVENT_NAME").href))
	checkSorted(t, p.rows, p.col(t, "EVENT_NAME"), false, true)
}

// A header's link keeps the where and limit, so the order applies before
// the limit: the biggest rows of the table, not the first ones reordered.
func TestHTMLSortKeepsFilter(t *testing.T) {
	f := newFixture(t)
	const table = "events_waits_summary_global_by_event_name"
	f.lock(7)
	p := f.htmlPage("/tables/" + table + "?" + url.Values{"where": {"COUNT_STAR > 0"}, "limit": {"2"}, "order": {"sum_timer_wait DESC, EVENT_NAME"}}.Encode())
	if h := p.head(t, "SUM_TIMER_WAIT"); h.sorted != "descending" || h.arrow != "▼" {
		t.Errorf("a two-key order, first key in lower case: SUM_TIMER_WAIT shows %+v", h)
	}
	if h := p.head(t, "EVENT_NAME"); h.sorted != "" {
		t.Errorf("the second key shows an order: %+v", h)
	}
	if p.inputs["where"].value != "COUNT_STAR > 0" || p.inputs["limit"].value != "2" || p.inputs["order"].value != "sum_timer_wait DESC, EVENT_NAME" {
		t.Errorf("form values: %+v", p.inputs)
	}
	q := orderOf(t, p.head(t, "COUNT_STAR").href)
	if q.Get("where") != "COUNT_STAR > 0" || q.Get("limit") != "2" || q.Get("order") != "COUNT_STAR desc" {
		t.Errorf("COUNT_STAR's link: %v", q)
	}

	// The two rows the link shows are the table's two biggest counts.
	all := f.table(table, "order", "COUNT_STAR desc", "where", "COUNT_STAR > 0")
	if len(all.Rows) < 3 {
		t.Fatalf("%d rows with waits: too few for the check", len(all.Rows))
	}
	p = f.htmlPage(follow(table, p.head(t, "COUNT_STAR").href))
	c := p.col(t, "COUNT_STAR")
	if len(p.rows) != 2 {
		t.Fatalf("limit 2: %d rows", len(p.rows))
	}
	for i, r := range p.rows {
		// Only the mutex's count moves between the two reads, and only up.
		if want := all.Rows[i][1].(uint64); mustUint(t, deref(r[c])) < want {
			t.Errorf("row %d: COUNT_STAR %s, the table's %d-th biggest is %d", i, deref(r[c]), i+1, want)
		}
	}

	// Empty form fields (a submit with nothing typed) leave the links clean.
	p = f.htmlPage("/tables/" + table + "?where=&order=&limit=")
	if p.status != http.StatusOK {
		t.Fatalf("empty form: status %d", p.status)
	}
	if q := orderOf(t, p.head(t, "COUNT_STAR").href); len(q) != 1 {
		t.Errorf("link from an empty form: %v, want only order", q)
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || !n.IsUint64() {
		t.Fatalf("not a uint64: %q", s)
	}
	return n.Uint64()
}

// A bad where, order or limit from a browser is the table's page with the
// error in it and the form as sent (status 400); other clients still get
// the JSON error, and an unknown table stays a 404.
func TestHTMLBadQueryInline(t *testing.T) {
	f := newFixture(t)
	const table = "events_waits_summary_global_by_event_name"
	for _, tc := range []struct {
		where, order, limit string
		want                string // in the error
	}{
		{"NO_SUCH_COLUMN > 1", "COUNT_STAR desc", "5", "NO_SUCH_COLUMN"},
		{"COUNT_STAR > 'x' AND <script>alert(1)</script>", "", "", "parentheses"},
		{"COUNT_STAR > 0", "EVENT_NAME sideways", "", "order"},
		{"", "", "many", "limit"},
	} {
		v := url.Values{"where": {tc.where}, "order": {tc.order}, "limit": {tc.limit}}
		p := f.htmlPage("/tables/" + table + "?" + v.Encode())
		if p.status != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400", v, p.status)
		}
		if !strings.Contains(p.errText, tc.want) || !strings.Contains(p.errText, "bad query") {
			t.Errorf("%v: inline error %q, want one naming %s", v, p.errText, tc.want)
		}
		if got := p.inputs; got["where"].value != tc.where || got["order"].value != tc.order || got["limit"].value != tc.limit {
			t.Errorf("%v: form values %+v", v, got)
		}
		if len(p.heads) != 6 || len(p.rows) != 0 {
			t.Errorf("%v: %d headers, %d rows; want the 6 headers and no rows", v, len(p.heads), len(p.rows))
		}
		if strings.Contains(p.body, "<script>alert") {
			t.Errorf("%v: the where reached the page unescaped", v)
		}
		if got := p.inputs["where"].placeholder; got != "EVENT_NAME LIKE 'wait/%' AND COUNT_STAR > 0" {
			t.Errorf("%v: where placeholder %q", v, got)
		}

		// JSON and text: the JSON error with its code, as before.
		for _, format := range []string{"json", "text"} {
			v.Set("format", format)
			r := f.get("/tables/" + table + "?" + v.Encode())
			if r.status != http.StatusBadRequest || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
				!strings.Contains(string(r.body), `"code":"bad_query"`) {
				t.Errorf("%v: %d %s %s", v, r.status, r.header.Get("Content-Type"), r.body)
			}
		}
	}
	r := f.get("/tables/no_such_table?where=x", "Accept", "text/html")
	if r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"code":"unknown_table"`) {
		t.Errorf("unknown table from a browser: %d %s", r.status, r.body)
	}
}

// Every table's placeholders are built from its own columns, and run: the
// where and order each table page suggests are queries the table takes.
func TestHTMLPlaceholders(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ table, where, order string }{
		{"events_waits_summary_global_by_event_name", "EVENT_NAME LIKE 'wait/%' AND COUNT_STAR > 0", "SUM_TIMER_WAIT desc"},
		{"setup_instruments", "NAME LIKE 'thread/%'", "NAME"},
		{"setup_consumers", "NAME = 'events_stages_current'", "NAME"},
		{"events_waits_history_long", "EVENT_NAME LIKE 'wait/%' AND TIMER_WAIT > 1us", "TIMER_WAIT desc"},
		{"accounts", "USER = 'app' AND TOTAL_CONNECTIONS > 0", "TOTAL_CONNECTIONS desc"},
	} {
		p := f.htmlPage("/tables/" + tc.table)
		if got := p.inputs["where"].placeholder; got != tc.where {
			t.Errorf("%s: where placeholder %q, want %q", tc.table, got, tc.where)
		}
		if got := p.inputs["order"].placeholder; got != tc.order {
			t.Errorf("%s: order placeholder %q, want %q", tc.table, got, tc.order)
		}
		if got := p.inputs["limit"].placeholder; got != "20" {
			t.Errorf("%s: limit placeholder %q", tc.table, got)
		}
	}
	for _, name := range f.s.TableNames() {
		p := f.htmlPage("/tables/" + name)
		where, order := p.inputs["where"].placeholder, p.inputs["order"].placeholder
		if where == "" || order == "" {
			t.Errorf("%s: placeholders %q, %q", name, where, order)
			continue
		}
		if _, err := f.s.Query(name, pfscore.Query{Where: []string{where}, Order: order}); err != nil {
			t.Errorf("%s: the placeholders do not run: %v", name, err)
		}
	}
}
