package bridge

import "testing"

// TestLooksLikeRoute: over a remote Tables, a digest's text tells an HTTP
// route from SQL; a normalized SQL statement never passes for a route,
// optimizer hints included, and a route without a method is one.
func TestLooksLikeRoute(t *testing.T) {
	for text, want := range map[string]bool{
		"GET /notes/{id}": true,
		"GET (unmatched)": true,
		"_OTHER /x":       true,
		"/static/":        true,
		"DELETE /":        true,
		"DELETE /*+ MAX_EXECUTION_TIME (?) */ FROM `t` WHERE `id` = ?": false,
		"DELETE FROM `t` WHERE `id` = ?":                               false,
		"SELECT ? / ?":                                                 false,
		"GET / `x`":                                                    false,
		"COMMIT":                                                       false,
	} {
		if got := looksLikeRoute(text); got != want {
			t.Errorf("looksLikeRoute(%q) = %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string][2]string{
		"GET /notes/{id}": {"GET", "/notes/{id}"},
		"GET (unmatched)": {"GET", ""},
		"/static/":        {"_OTHER", "/static/"},
		"BREW /pot":       {"_OTHER", "BREW /pot"},
	} {
		if m, r := splitRoute(text); m != want[0] || r != want[1] {
			t.Errorf("splitRoute(%q) = %q, %q; want %q, %q", text, m, r, want[0], want[1])
		}
	}
}
