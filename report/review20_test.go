package report

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/pfscore"
)

// TestReview20_IsRouteOptimizerHint shows that a DELETE with an optimizer
// hint, whose digest text keeps the hint ("DELETE /*+ ... */ FROM ..."),
// is taken for an HTTP route: "/*+" holds a slash. The statement leaves
// the statement analysis and shows among the routes.
func TestReview20_IsRouteOptimizerHint(t *testing.T) {
	text := digest.StatementDigestText("DELETE /*+ BKA(t) */ FROM t WHERE id = 1")
	if !strings.HasPrefix(text, "DELETE /*+") {
		t.Fatalf("digest text %q: the hint is not kept", text)
	}
	if IsRoute(text) {
		t.Errorf("IsRoute(%q) = true: a SQL statement taken for a route", text)
	}
}

// TestReview20_IsRouteServeMuxPatterns shows that two kinds of pattern
// http.ServeMux routes by, and pfshttp writes as the digest text
// unchanged (Request.Pattern), are not recognized as routes: a host
// pattern without a method ("example.com/notes", which IsRoute's doc
// names) and a method net/http does not define ("PROPFIND /dav/"; the
// _OTHER mapping applies only to unrouted requests).
func TestReview20_IsRouteServeMuxPatterns(t *testing.T) {
	mux := http.NewServeMux()
	var got []string
	h := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = append(got, r.Pattern) })
	mux.Handle("example.com/notes", h)
	mux.Handle("PROPFIND /dav/", h)
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "http://example.com/notes", nil))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PROPFIND", "http://x/dav/a", nil))
	if len(got) != 2 {
		t.Fatalf("patterns %q", got)
	}
	for _, p := range got {
		if !IsRoute(p) {
			t.Errorf("IsRoute(%q) = false for a ServeMux pattern", p)
		}
	}
}

// lostTables answers global_status with more *_lost counters than a
// report's limit.
type lostTables struct{ pfscore.Tables }

func (lostTables) Query(table string, _ pfscore.Query) (*pfscore.Result, error) {
	res := &pfscore.Result{Table: table, Columns: []pfscore.Column{
		{Name: "VARIABLE_NAME", Type: pfscore.ColString}, {Name: "VARIABLE_VALUE", Type: pfscore.ColUint}}}
	for _, n := range []string{"a_lost", "b_lost", "c_lost", "d_lost", "e_lost"} {
		res.Rows = append(res.Rows, pfscore.Row{n, uint64(1)})
	}
	return res, nil
}

// TestReview20_LostHonoursLimit shows that the Lost section ignores
// Report.Limit ("the most rows a section shows").
func TestReview20_LostHonoursLimit(t *testing.T) {
	r := Report{Limit: 2, Sections: []string{Lost}}
	var b bytes.Buffer
	if err := r.Write(&b, lostTables{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "_lost"); n > 2 {
		t.Errorf("Lost shows %d rows with Limit 2:\n%s", n, b.String())
	}
}
