package bridge

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/otelpfs/otelpfs/pfscore"
)

// FormatViewConfig returns t's setup_instruments as the equivalent
// meter_provider.views of a declarative configuration file, which
// viewconf.Parse reads back: a disabled class as the drop aggregation, an
// enabled class that is not timed (or cannot be) as sum, an enabled and
// timed class as base2_exponential_bucket_histogram. Classes in the same
// state share views whose instrument_name wildcards are the shortest that
// match exactly them ("*" for all, else a wildcard per '/'-separated
// prefix whose classes are all in that state, and the names left over).
// Applied to a schema with the same classes, the views give it the same
// setup_instruments, but for a class disabled and timed: drop also sets
// TIMED=NO.
func FormatViewConfig(t pfscore.Tables) ([]byte, error) {
	rows, err := readInstruments(t)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	groups := [3]map[string]bool{{}, {}, {}}
	for i, r := range rows {
		names[i] = r.name
		switch {
		case !r.enabled:
			groups[0][r.name] = true
		case !r.timed || !r.timable:
			groups[1][r.name] = true
		default:
			groups[2][r.name] = true
		}
	}
	var b bytes.Buffer
	b.WriteString("# setup_instruments as OpenTelemetry views (viewconf.Parse reads them).\n")
	b.WriteString("# drop: ENABLED=NO; sum: ENABLED=YES, TIMED=NO (counted);\n")
	b.WriteString("# base2_exponential_bucket_histogram: ENABLED=YES, TIMED=YES.\n")
	b.WriteString("meter_provider:\n  views:")
	n := 0
	for g, agg := range []string{"drop: {}", "sum: {}", "base2_exponential_bucket_histogram: {}"} {
		for _, w := range coverNames(names, groups[g]) {
			fmt.Fprintf(&b, "\n    - selector:\n        instrument_name: %s\n      stream:\n        aggregation:\n          %s", strconv.Quote(w), agg)
			n++
		}
	}
	if n == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}
