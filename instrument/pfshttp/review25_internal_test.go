package pfshttp

import (
	"net/http"
	"testing"
)

// TestReview25TraceparentEveryByte puts every byte value at every position
// of valid traceparents (version 00, a later version with and without a
// trailing field, ids with each hex digit) and compares with OpenTelemetry's
// Extract: no byte at any position may be accepted or decoded otherwise.
func TestReview25TraceparentEveryByte(t *testing.T) {
	bases := []string{
		tpValid,
		"00-0123456789abcdef0123456789abcdef-0123456789abcdef-00",
		"00-fedcba9876543210fedcba9876543210-fedcba9876543210-03",
		"00-00000000000000000000000000000001-0000000000000001-01",
		"00-10000000000000000000000000000000-1000000000000000-02",
		"cc-" + tpTrace + "-" + tpSpan + "-ff",
		"cc-" + tpTrace + "-" + tpSpan + "-09-x",
		"00-" + tpTrace + "-" + tpSpan + "-01-",
	}
	for _, base := range bases {
		for pos := range len(base) {
			for c := range 256 {
				b := []byte(base)
				b[pos] = byte(c)
				checkAgainstOTel(t, http.Header{"Traceparent": {string(b)}})
				if t.Failed() {
					t.Fatalf("base %q, byte %#x at %d", base, c, pos)
				}
			}
		}
	}
}
