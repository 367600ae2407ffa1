package viewconf

// Review 17: adversarial reproducer for Parse. It FAILS on the code it was
// written against (commit 40cfb08).

import (
	"errors"
	"strings"
	"testing"
)

// TestReview17HugeWildcardPanics: wildcardMatcher builds the regexp of an
// instrument_name (or attribute_keys) wildcard with regexp.MustCompile. A
// long pattern with many '*' (1.2 million "a*", 2.4 MB; 1,118,480 is the
// least that fails) is more than Go's regexp
// accepts ("expression too large"), so Parse panics on a configuration
// file instead of returning an ErrBadConfig: DESIGN and the job's rules
// say no panics on any input.
// Fails: panic "regexp: Compile(...): error parsing regexp: expression too large".
func TestReview17HugeWildcardPanics(t *testing.T) {
	for _, where := range []string{"instrument_name"} { // attribute_keys: the same (configKeys)
		pattern := strings.Repeat("a*", 1_200_000)
		var yml string
		if where == "instrument_name" {
			yml = "meter_provider:\n  views:\n    - selector:\n        instrument_name: \"" + pattern + "\"\n      stream: {}\n"
		} else {
			yml = "meter_provider:\n  views:\n    - selector:\n        instrument_name: \"*\"\n      stream:\n        attribute_keys:\n          included: [\"" + pattern + "\"]\n"
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					msg := ""
					if s, ok := r.(string); ok {
						msg = s
					}
					if len(msg) > 120 {
						msg = msg[:120] + "..."
					}
					t.Errorf("%s: Parse panicked: %s", where, msg)
				}
			}()
			_, err := Parse([]byte(yml))
			if err != nil && !errors.Is(err, ErrBadConfig) {
				t.Errorf("%s: %v, want an ErrBadConfig", where, err)
			}
		}()
	}
}
