package viewconf

import (
	"regexp"
	"strings"
	"testing"
)

// TestGlobMatchAgreesWithRegexp: globMatch agrees with the regular
// expression the SDK's NewView compiles for the same wildcard, on patterns
// and names built from a small alphabet (multi-byte characters included).
func TestGlobMatchAgreesWithRegexp(t *testing.T) {
	alpha := []string{"a", "b", "/", "é", "*", "?"}
	var pats []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		pats = append(pats, prefix)
		if n == 0 {
			return
		}
		for _, c := range alpha {
			gen(prefix+c, n-1)
		}
	}
	gen("", 4)
	var names []string
	for _, p := range pats {
		if !strings.ContainsAny(p, "*?") {
			names = append(names, p)
		}
	}
	for _, p := range pats {
		re := regexp.MustCompile("^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(p)) + "$")
		for _, n := range names {
			if got, want := globMatch(p, n), re.MatchString(n); got != want {
				t.Fatalf("globMatch(%q, %q) = %v, the SDK's regexp says %v", p, n, got, want)
			}
		}
	}
}
