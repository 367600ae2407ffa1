package exporter_test

// Regression tests from the fresh-eyes review of issue 10 (the table layer
// and the service API): each was a reproducer of a defect the review found,
// fixed since, or of a property it tried to break and could not. Comments
// below describe what each reproduced when it was written.

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// POST setup/objects {"op":"delete", ...} used DeleteSetupObjects, which
// compared keys with ==. It is now DELETE ... WHERE OBJECT_SCHEMA = '...',
// which compares case-insensitively: deleting the FILE row of directory
// /srv/Logs also deletes the row of /srv/logs (a different directory on
// Linux, and a different row for lookupObject, which compares exactly).
func TestReview10SetupObjectsDeleteIsCaseInsensitive(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	for _, dir := range []string{"/srv/logs", "/srv/Logs"} {
		f.setupOK("/setup/objects", `{"op":"insert","object_type":"FILE","object_schema":"`+dir+`","enabled":false}`)
	}
	if n := f.setupOK("/setup/objects", `{"op":"delete","object_type":"FILE","object_schema":"/srv/Logs"}`); n != 1 {
		t.Errorf("delete object_schema /srv/Logs: %d rows, want 1", n)
	}
	res := f.table("setup_objects", "where", "OBJECT_TYPE = 'FILE' AND OBJECT_SCHEMA LIKE '/srv/%'")
	if len(res.Rows) != 1 || res.Rows[0][1] != "/srv/logs" {
		t.Errorf("FILE rows under /srv left: %v, want the /srv/logs row", res.Rows)
	}
}

// Same through setup/actors: {"op":"update","user":"Bob"} also changes the
// row of user 'bob' (MySQL: USER is utf8mb4_bin; the old UpdateSetupActors
// compared with ==).
func TestReview10SetupActorsUpdateIsCaseInsensitive(t *testing.T) {
	f := newFixture(t, exporter.WithSetupChanges(true))
	f.setupOK("/setup/actors", `{"op":"insert","user":"bob","enabled":true}`)
	f.setupOK("/setup/actors", `{"op":"insert","user":"Bob","enabled":true}`)
	if n := f.setupOK("/setup/actors", `{"op":"update","user":"Bob","enabled":false}`); n != 1 {
		t.Errorf("update user Bob: %d rows matched, want 1", n)
	}
}

// A Schema and a Client disagree on an INSERT whose values name a column
// twice in different cases: the handler refuses it (ErrBadValue, "given
// twice"), the Schema inserts one of the two values, chosen by map order.
func TestReview10InsertColumnTwiceSchemaVsClient(t *testing.T) {
	tw := newTwins(t)
	v := map[string]pfscore.Value{"USER": "u", "HOST": "a", "host": "b"}
	lerr := tw.local.Insert("setup_actors", v)
	rerr := tw.remote.Insert("setup_actors", v)
	if (lerr == nil) != (rerr == nil) || errors.Is(lerr, pfscore.ErrBadValue) != errors.Is(rerr, pfscore.ErrBadValue) {
		t.Errorf("INSERT with HOST and host: schema says %v, client says %v", lerr, rerr)
	}
}

// Table names "." and "..": a Schema says ErrUnknownTable; a Client sends
// /tables/.. which a ServeMux redirects to the index, and reports an answer
// that "is not an otelpfs table" instead of ErrUnknownTable.
func TestReview10ClientDotDotTableName(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/pfs/", exporter.Handler(s, exporter.WithSetupChanges(true)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newClient(t, srv.URL)
	for _, name := range []string{"..", "."} {
		_, lerr := s.Query(name, pfscore.Query{})
		_, rerr := c.Query(name, pfscore.Query{})
		if errors.Is(lerr, pfscore.ErrUnknownTable) != errors.Is(rerr, pfscore.ErrUnknownTable) {
			t.Errorf("Query(%q): schema %v; client %v", name, lerr, rerr)
		}
		lerr = s.Truncate(name)
		rerr = c.Truncate(name)
		if errors.Is(lerr, pfscore.ErrUnknownTable) != errors.Is(rerr, pfscore.ErrUnknownTable) {
			t.Errorf("Truncate(%q): schema %v; client %v", name, lerr, rerr)
		}
	}
}

// Holds: refusals of the change endpoints, including the old setup ones,
// for a cross-origin request identified by Origin alone, and a body just
// over the limit on setup/.
func TestReview10ChangeRefusalsHold(t *testing.T) {
	ro := newFixture(t)
	r := ro.post("/setup/instruments", `{"name":"%","enabled":false}`)
	if r.status != http.StatusForbidden {
		t.Errorf("setup on a read-only handler: %d %s", r.status, r.body)
	}
	r = ro.post("/tables/events_waits_history/truncate", ``)
	if r.status != http.StatusForbidden {
		t.Errorf("truncate on a read-only handler: %d %s", r.status, r.body)
	}
	f := newFixture(t, exporter.WithSetupChanges(true))
	r = f.post("/tables/setup_instruments/update", `{"set":{"ENABLED":"NO"}}`, "Origin", "https://evil.example")
	if r.status != http.StatusForbidden {
		t.Errorf("cross-origin (Origin only) update: %d %s", r.status, r.body)
	}
	r = f.post("/setup/instruments", `{"name":"`+strings.Repeat("x", exporter.MaxBodyBytes)+`","enabled":false}`)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("huge setup body: %d", r.status)
	}
}
