package exporter

import (
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The HTML format: one plain page per table with the list of tables beside
// it, self-contained (inline style and script, no external assets).
//
// A table page sorts on the server: each column header is a link to the
// same query with order=COLUMN desc or asc, so the order holds across a
// limit (the biggest 20, not the first 20 sorted) and shows in the form.
// The index sorts its one table in the browser, with a few lines of
// script.

type htmlCell struct {
	Text  string
	Sort  string // the raw value, in data-v: what the index's script sorts by, and what tools read
	Null  bool   // no Sort
	Class string // "n" for numbers, "null" for NULL, "t" for free text
}

type htmlPage struct {
	Prefix  string
	Title   string
	Tables  []TableInfo // the navigation list; Rows < 0: not counted
	Current string      // the table shown, "" on the index
	Index   bool
	Columns []htmlColumn
	Rows    [][]htmlCell
	Error   string // the query's error: shown above the table, which then has no rows
	Where   string
	Order   string
	Limit   string
	WherePH string // the form's placeholders, from the table's columns
	OrderPH string
	LimitPH string
	Total   int    // rows before limit
	TextURL string // this page as text, with its query
	JSONURL string // this page as JSON, with its query
	Changes bool
}

type htmlColumn struct {
	Name    string
	Type    string
	Numeric bool
	Href    string // the page ordered by this column: desc first if numeric, else asc; the other way if it is so now
	Hint    string // what the link does, for its title
	Sorted  string // "descending" or "ascending" when the page is ordered by this column first (aria-sort), else ""
	Arrow   string // ▼ or ▲ with Sorted, else ""
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;display:flex}
nav{padding:1em;min-width:18em;border-right:1px solid #ccc;font-size:90%}
nav a{display:block;text-decoration:none;padding:1px 0}
nav a.cur{font-weight:bold}
main{padding:1em;overflow-x:auto}
table{border-collapse:collapse;font-size:90%}
th,td{border:1px solid #ddd;padding:2px 6px;white-space:nowrap}
th{background:#f4f4f4;cursor:pointer;position:sticky;top:0;padding-right:1.4em;text-align:left}
th[aria-sort]{background:#e4ecf7}
a.sort{position:absolute;inset:0;text-decoration:none;color:inherit}
.arrow{position:absolute;right:4px;top:50%;transform:translateY(-50%);font-size:80%;color:#246}
td.n{text-align:right;font-variant-numeric:tabular-nums}
td.null{color:#999}
td.t{white-space:pre-wrap;word-break:break-word;min-width:16em;max-width:48em;font-family:ui-monospace,monospace;font-size:95%}
form input[type=text]{font-family:ui-monospace,monospace;font-size:90%;line-height:1.6;padding:1px 4px}
#where{width:28em}
#order{width:12em}
#limit{width:4em}
.error{color:#900;background:#fdecec;border:1px solid #e3a0a0;padding:4px 8px;white-space:pre-wrap;max-width:60em}
.count{color:#666}
</style></head><body>
<nav><a href="{{.Prefix}}/"><b>performance_schema</b></a>
{{range .Tables}}<a href="{{$.Prefix}}/tables/{{.Name}}"{{if eq .Name $.Current}} class="cur"{{end}}>{{.Name}}{{if ge .Rows 0}} <span class="count">({{.Rows}})</span>{{end}}</a>
{{end}}</nav>
<main>
{{if .Index}}<h1>performance_schema</h1>
<p>{{len .Tables}} tables. Every table is also at <code>{{.Prefix}}/tables/NAME?format=json</code> and <code>?format=text</code>.
Setup changes and TRUNCATE over POST are {{if .Changes}}enabled{{else}}disabled{{end}}.</p>
<table id="tables" class="sortable"><thead><tr><th data-col="TABLE_NAME">TABLE_NAME</th><th data-col="ROWS" data-numeric>ROWS</th><th data-col="TRUNCATE">TRUNCATE</th></tr></thead><tbody>
{{range .Tables}}<tr><td><a href="{{$.Prefix}}/tables/{{.Name}}">{{.Name}}</a></td><td class="n" data-v="{{.Rows}}">{{.Rows}}</td><td>{{if .Truncatable}}YES{{else}}NO{{end}}</td></tr>
{{end}}</tbody></table>
{{else}}<h1>{{.Current}}</h1>
<form id="filter" method="get" action="{{.Prefix}}/tables/{{.Current}}">
<p><label>where <input type="text" id="where" name="where" value="{{.Where}}" placeholder="{{.WherePH}}" title="conditions joined by AND: COL op value, COL [NOT] LIKE 'pattern', COL IS [NOT] NULL"></label>
<label>order <input type="text" id="order" name="order" value="{{.Order}}" placeholder="{{.OrderPH}}" title="columns, each optionally asc or desc"></label>
<label>limit <input type="text" id="limit" name="limit" value="{{.Limit}}" placeholder="{{.LimitPH}}" title="at most this many rows; empty: all"></label>
<input type="submit" value="select"></p></form>
{{if .Error}}<p id="error" class="error" role="alert">{{.Error}}</p>
<p class="count">no rows: the query failed · click a header to sort</p>
{{else}}<p class="count">{{len .Rows}} of {{.Total}} rows ·
<a href="{{.TextURL}}">text</a> · <a href="{{.JSONURL}}">json</a> · click a header to sort</p>
{{end}}<table id="t"><thead><tr>{{range .Columns}}<th title="{{.Type}}" data-col="{{.Name}}"{{if .Numeric}} data-numeric{{end}}{{if .Sorted}} aria-sort="{{.Sorted}}"{{end}}><a class="sort" href="{{.Href}}" title="{{.Hint}}">{{if .Arrow}}<span class="arrow">{{.Arrow}}</span>{{end}}</a>{{.Name}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if not .Null}} data-v="{{.Sort}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}
</main>
<script>
// The index's table sorts here; a table page's headers are links the server sorts by.
document.querySelectorAll("table.sortable").forEach(function(t){
  var heads = t.querySelectorAll("th");
  heads.forEach(function(th, i){
    th.addEventListener("click", function(){
      var cur = th.getAttribute("aria-sort");
      var desc = cur ? cur === "ascending" : th.hasAttribute("data-numeric");
      heads.forEach(function(o){
        o.removeAttribute("aria-sort");
        var a = o.querySelector(".arrow");
        if (a) a.remove();
      });
      th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      var arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.textContent = desc ? "\u25BC" : "\u25B2";
      th.appendChild(arrow);
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(r){ var c = r.cells[i]; return c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent; }
      function num(s){ return /^-?[0-9]+$/.test(s); }
      rows.sort(function(a, b){
        var x = key(a), y = key(b), d;
        if (num(x) && num(y)) { var p = BigInt(x), q = BigInt(y); d = p < q ? -1 : p > q ? 1 : 0; }
        else d = x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : 0;
        return desc ? -d : d;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
</script>
</body></html>
`))

func writeHTML(w io.Writer, p *htmlPage) error {
	return pageTemplate.Execute(w, p)
}

// htmlRows converts rows for the page.
func htmlRows(cols []pfscore.Column, rows []pfscore.Row) [][]htmlCell {
	out := make([][]htmlCell, len(rows))
	for i, row := range rows {
		cells := make([]htmlCell, len(cols))
		for j, c := range cols {
			var v pfscore.Value
			if j < len(row) {
				v = row[j]
			}
			cell := htmlCell{Text: FormatValue(c.Type, v), Null: v == nil}
			if v != nil {
				cell.Sort = fmt.Sprint(v) // a string, or a decimal integer
			}
			switch {
			case c.Type != pfscore.ColString && v == nil:
				cell.Class = "n null"
			case c.Type != pfscore.ColString:
				cell.Class = "n"
			case v == nil:
				cell.Class = "null"
			case c.Role == pfscore.RoleText:
				cell.Class = "t" // SQL_TEXT, DIGEST_TEXT, QUERY_SAMPLE_TEXT: wrapped, not one endless line
			}
			cells[j] = cell
		}
		out[i] = cells
	}
	return out
}

// htmlColumns returns the page's column headers for a table request with
// parameters v, whose order (valid for cols) it shows with an arrow on its
// first column. Each header links to the same request ordered by its
// column alone: a number biggest first, a string A to Z, and the other way
// round when the page is so ordered already.
func htmlColumns(cols []pfscore.Column, v url.Values) []htmlColumn {
	cur, desc, sorted := firstOrderKey(cols, v.Get("order"))
	out := make([]htmlColumn, len(cols))
	for i, c := range cols {
		hc := htmlColumn{Name: c.Name, Type: ColumnTypeName(c.Type), Numeric: c.Type != pfscore.ColString}
		next := hc.Numeric // descending first for numbers
		if sorted && i == cur {
			hc.Sorted, hc.Arrow = "ascending", "▲"
			if desc {
				hc.Sorted, hc.Arrow = "descending", "▼"
			}
			next = !desc
		}
		dir, hint := "asc", "smallest first"
		if next {
			dir, hint = "desc", "biggest first"
		}
		if !hc.Numeric {
			hint = "A to Z"
			if next {
				hint = "Z to A"
			}
		}
		hc.Href = withParam(v, "order", c.Name+" "+dir)
		hc.Hint = "sort by " + c.Name + ", " + hint
		out[i] = hc
	}
	return out
}

// firstOrderKey returns the column an order parameter sorts by first and
// whether descending; ok is false when the order is empty or does not
// start with one of cols (case-insensitive, as pfscore.Query reads it).
func firstOrderKey(cols []pfscore.Column, order string) (col int, desc, ok bool) {
	first, _, _ := strings.Cut(order, ",")
	f := strings.Fields(first)
	if len(f) == 0 || len(f) > 2 {
		return 0, false, false
	}
	if len(f) == 2 {
		switch {
		case strings.EqualFold(f[1], "desc"):
			desc = true
		case strings.EqualFold(f[1], "asc"):
		default:
			return 0, false, false
		}
	}
	for i, c := range cols {
		if strings.EqualFold(c.Name, f[0]) {
			return i, desc, true
		}
	}
	return 0, false, false
}

// withParam is the query v with k=value (and without empty parameters), as
// a relative URL.
func withParam(v url.Values, k, value string) string {
	c := url.Values{}
	for key, vs := range v {
		for _, s := range vs {
			if strings.TrimSpace(s) != "" {
				c.Add(key, s)
			}
		}
	}
	c.Set(k, value)
	return "?" + c.Encode()
}

// The filter form's placeholders: examples built from the table's own
// columns, so that each one runs on the table it is shown for.

// placeholderRank orders the numeric columns a where or order example
// picks: the lowest rank wins, the first column among equals; -1 never.
func placeholderRank(c pfscore.Column, forOrder bool) int {
	if c.Type == pfscore.ColString {
		return -1
	}
	if c.Name == "COUNT_STAR" && !forOrder {
		return 0
	}
	switch c.Role {
	case pfscore.RoleTimer:
		return 1
	case pfscore.RoleDuration:
		return 2
	case pfscore.RoleCounter:
		return 3
	case pfscore.RoleGauge:
		return 4
	case pfscore.RoleHighWater, pfscore.RoleMax:
		return 5
	case pfscore.RoleLowWater, pfscore.RoleMin, pfscore.RoleAvg:
		return 6
	}
	return -1 // ids, timestamps, attributes: no example a reader would want
}

// stringRank orders the string columns a where example picks: a row's
// dimension (EVENT_NAME, NAME, USER) before an attribute, free text last.
func stringRank(c pfscore.Column) int {
	if c.Type != pfscore.ColString {
		return -1
	}
	switch c.Role {
	case pfscore.RoleDimension:
		return 0
	case pfscore.RoleAttribute:
		return 1
	case pfscore.RoleText:
		return 3
	}
	return 2
}

// best returns the column of cols that rank ranks lowest (not -1), or -1.
func best(cols []pfscore.Column, rank func(pfscore.Column) int) int {
	bi, br := -1, 0
	for i, c := range cols {
		if r := rank(c); r >= 0 && (bi < 0 || r < br) {
			bi, br = i, r
		}
	}
	return bi
}

// whereStringColumn is the string column a where example uses, or -1.
func whereStringColumn(cols []pfscore.Column) int { return best(cols, stringRank) }

// placeholders returns the filter form's examples for a table with
// columns cols: a where that joins a condition on a string column (built
// from sample, one of its values, "" if none is known: a LIKE on the part
// before the first '/', 'wait/%' for wait/synch/mutex/...) and one on a
// measure (COUNT_STAR > 0, SUM_TIMER_WAIT > 1ms), and an order by the
// main measure, biggest first (the first dimension without one).
func placeholders(cols []pfscore.Column, sample string) (where, order string) {
	var conds []string
	if i := whereStringColumn(cols); i >= 0 {
		conds = append(conds, stringCondition(cols[i].Name, sample))
	}
	if i := best(cols, func(c pfscore.Column) int { return placeholderRank(c, false) }); i >= 0 {
		c := cols[i]
		switch {
		case c.Type != pfscore.ColPicos:
			conds = append(conds, c.Name+" > 0")
		case c.Role == pfscore.RoleTimer:
			conds = append(conds, c.Name+" > 1ms")
		default:
			conds = append(conds, c.Name+" > 1us")
		}
	}
	if len(conds) == 0 && len(cols) > 0 {
		conds = append(conds, cols[0].Name+" IS NOT NULL")
	}
	where = strings.Join(conds, " AND ")

	switch i := best(cols, func(c pfscore.Column) int { return placeholderRank(c, true) }); {
	case i >= 0:
		order = cols[i].Name + " desc"
	case len(cols) > 0:
		order = cols[0].Name
		for _, c := range cols {
			if c.Role == pfscore.RoleDimension {
				order = c.Name
				break
			}
		}
	}
	return where, order
}

// stringCondition is an example condition on string column col, one of
// whose values is sample ("" if none is known).
func stringCondition(col, sample string) string {
	switch prefix, _, slash := strings.Cut(sample, "/"); {
	case sample == "":
		return col + " LIKE '%'"
	case slash:
		return col + " LIKE " + pfscore.QuoteString(likeEscape(prefix)+"/%")
	case utf8.RuneCountInString(sample) <= 24:
		return col + " = " + pfscore.QuoteString(sample)
	default:
		r := []rune(sample)
		return col + " LIKE " + pfscore.QuoteString(likeEscape(string(r[:8]))+"%")
	}
}

// likeEscape escapes LIKE's wildcards and escape character in s.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// sampleString returns a value of string column col in rows for the where
// example: the first with a '/' (an instrument name, which the example
// cuts to its kind: 'wait/%'), else the first non-empty one, else "".
func sampleString(rows []pfscore.Row, col int) string {
	first := ""
	for _, r := range rows {
		if col >= len(r) {
			continue
		}
		s, ok := r[col].(string)
		if !ok || s == "" || strings.ContainsFunc(s, isControl) {
			continue
		}
		if strings.Contains(s, "/") {
			return s
		}
		if first == "" {
			first = s
		}
	}
	return first
}
