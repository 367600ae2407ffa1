package bridge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/attribute"
)

// The naming scheme, from the catalog alone (see doc.go for the table of
// results): a table is a family and a variant, a measure column is a
// metric of that family, a dimension column an attribute.

// AllTables reports whether table name is one the bridge can export: the
// summaries (every table whose name contains "_summary_", memory's
// included), the actor tables accounts, users and hosts, and
// global_status. WithTables(AllTables) exports every one of them.
func AllTables(name string) bool {
	switch name {
	case "global_status", "accounts", "users", "hosts":
		return true
	}
	return strings.Contains(name, "_summary_")
}

// DefaultTables reports whether the bridge exports table name by default:
// the summaries by event name at the global level, the statement digests
// (top N) and global_status. The same events by thread, account, user,
// host and instance, and the actor tables, are opt-in (WithTables, or a
// view on their metrics: see doc.go, # Cardinality): their series grow
// with a service's threads, users, clients and objects, and a fleet's
// backend pays for every one.
func DefaultTables(name string) bool {
	switch name {
	case "events_waits_summary_global_by_event_name",
		"events_stages_summary_global_by_event_name",
		"events_statements_summary_global_by_event_name",
		"events_transactions_summary_global_by_event_name",
		"events_statements_summary_by_digest",
		"file_summary_by_event_name",
		"socket_summary_by_event_name",
		"memory_summary_global_by_event_name",
		"global_status":
		return true
	}
	return false
}

// familyOf splits a table name into its family and variant:
//
//	events_waits_summary_global_by_event_name   events_waits, ""
//	events_waits_summary_by_thread_by_event_name events_waits, by_thread
//	events_waits_summary_by_instance            events_waits, by_instance
//	file_summary_by_event_name                  file, ""
//	events_statements_summary_by_digest         events_statements, by_digest
//	global_status                               global_status, ""
func familyOf(table string) (family, variant string) {
	i := strings.Index(table, "_summary")
	if i < 0 {
		return table, ""
	}
	rest := table[i+len("_summary"):]
	rest = strings.TrimSuffix(rest, "_by_event_name")
	rest = strings.TrimPrefix(rest, "_global")
	return table[:i], strings.TrimPrefix(rest, "_")
}

// metricPrefix is the prefix of every metric name the bridge makes.
const metricPrefix = "pfs."

// metricName returns the metric name of measure column col of table.
func metricName(table string, col pfscore.Column) string {
	family, variant := familyOf(table)
	name := metricPrefix + family + "."
	if variant != "" {
		name += variant + "."
	}
	return name + measureName(col.Name)
}

// measureName returns the measure part of a metric name for column name:
//
//	COUNT_STAR                  count
//	SUM_TIMER_WAIT              time          MIN_/MAX_TIMER_WAIT       time.min, time.max
//	COUNT_READ                  read.count    SUM_TIMER_READ            read.time
//	SUM_NUMBER_OF_BYTES_READ    read.bytes    SUM_ERRORS                errors
//	SUM_POOL_TIME               pool.time     CURRENT_NUMBER_OF_BYTES_USED used.bytes (LOW_, HIGH_: .low, .high)
//	CURRENT_COUNT_USED          used.count    CURRENT_CONNECTIONS       connections.current
//	TOTAL_CONNECTIONS           connections   QUANTILE_95               time.p95
//	VARIABLE_VALUE              value         anything else             the column name in lower case
func measureName(col string) string {
	n, stat := col, ""
	for _, p := range [...]struct{ prefix, repl, stat string }{
		{"MIN_", "SUM_", ".min"}, {"MAX_", "SUM_", ".max"},
		{"LOW_", "CURRENT_", ".low"}, {"HIGH_", "CURRENT_", ".high"},
	} {
		if strings.HasPrefix(n, p.prefix) {
			n, stat = p.repl+n[len(p.prefix):], p.stat
			break
		}
	}
	lower := strings.ToLower
	var base string
	switch {
	case n == "COUNT_STAR":
		base = "count"
	case n == "SUM_TIMER_WAIT":
		base = "time"
	case n == "VARIABLE_VALUE":
		base = "value"
	case strings.HasPrefix(n, "SUM_TIMER_"):
		base = lower(n[len("SUM_TIMER_"):]) + ".time"
	case strings.HasPrefix(n, "SUM_NUMBER_OF_BYTES_"):
		base = lower(n[len("SUM_NUMBER_OF_BYTES_"):]) + ".bytes"
	case strings.HasPrefix(n, "SUM_") && strings.HasSuffix(n, "_TIME"):
		base = lower(n[len("SUM_"):len(n)-len("_TIME")]) + ".time"
	case strings.HasPrefix(n, "SUM_"):
		base = lower(n[len("SUM_"):])
	case strings.HasPrefix(n, "COUNT_"):
		base = lower(n[len("COUNT_"):]) + ".count"
	case strings.HasPrefix(n, "CURRENT_NUMBER_OF_BYTES_"):
		base = lower(n[len("CURRENT_NUMBER_OF_BYTES_"):]) + ".bytes"
	case strings.HasPrefix(n, "CURRENT_COUNT_"):
		base = lower(n[len("CURRENT_COUNT_"):]) + ".count"
	case strings.HasPrefix(n, "CURRENT_"):
		base = lower(n[len("CURRENT_"):]) + ".current"
	case strings.HasPrefix(n, "TOTAL_"):
		base = lower(n[len("TOTAL_"):])
	case strings.HasPrefix(n, "QUANTILE_"):
		base = "time.p" + n[len("QUANTILE_"):]
	default:
		base = lower(n)
	}
	return base + stat
}

// unitOf returns the UCUM unit of a measure column.
func unitOf(table string, col pfscore.Column) string {
	switch {
	case col.Type == pfscore.ColPicos:
		return "s"
	case strings.Contains(col.Name, "BYTES"):
		return "By"
	case strings.Contains(col.Name, "CONNECTIONS"):
		return "{connection}"
	case strings.Contains(col.Name, "ROWS"):
		return "{row}"
	case strings.HasPrefix(table, "memory_"):
		return "{allocation}"
	case strings.HasSuffix(col.Name, "ERRORS"):
		return "{error}"
	case strings.HasSuffix(col.Name, "WARNINGS"):
		return "{warning}"
	}
	return "{event}"
}

// attrKeys maps dimension columns to attribute keys: OpenTelemetry
// semantic-convention names where one means the same thing, pfs.<column>
// otherwise.
var attrKeys = map[string]attribute.Key{
	"EVENT_NAME":            "pfs.event_name",
	"THREAD_ID":             "thread.id",
	"USER":                  "pfs.user",
	"HOST":                  "pfs.host",
	"OBJECT_INSTANCE_BEGIN": "pfs.object_instance",
	"FILE_NAME":             "file.path",
	"SCHEMA_NAME":           "db.namespace",
	"DIGEST":                "pfs.digest",
	"DIGEST_TEXT":           "pfs.digest_text",
	"VARIABLE_NAME":         "pfs.variable_name",
}

// extraAttrs lists the columns that are not dimensions but still become
// attributes: DIGEST_TEXT names a digest for people.
var extraAttrs = map[string]bool{"DIGEST_TEXT": true}

// attrKey returns the attribute key of a dimension column.
func attrKey(col string) attribute.Key {
	if k, ok := attrKeys[col]; ok {
		return k
	}
	return attribute.Key("pfs." + strings.ToLower(col))
}

// A kind is the metric data a measure column becomes.
type kind uint8

const (
	sumInt       kind = iota // counter: cumulative monotonic Sum[int64]
	sumSeconds               // timer: cumulative monotonic Sum[float64], seconds
	gaugeInt                 // gauge, low, high, min, avg, max of counts or bytes: Gauge[int64]
	gaugeSeconds             // the same of picoseconds: Gauge[float64], seconds
)

// sum reports whether k is a cumulative Sum.
func (k kind) sum() bool { return k == sumInt || k == sumSeconds }

// A measure is a metric column of a table.
type measure struct {
	col  int // index in the table's columns
	name string
	unit string
	desc string
	kind kind
	role pfscore.Role
	opt  bool // of a table a view opted in (viewState.optsIn)
}

// A tablePlan is how one table becomes metrics, made once from the
// catalog.
type tablePlan struct {
	table    string
	columns  []pfscore.Column
	attrs    []int           // columns that become attributes, in order
	keys     []attribute.Key // their keys
	measures []measure
	cumul    []int       // counter and timer columns
	digest   bool        // a by-digest table: top-N and an overflow series
	sumTimer int         // SUM_TIMER_WAIT, the digests' rank; -1 if none
	hist     *digestHist // a digest table's histograms, nil if none (histograms.go)
	conv     *digestConv // a digest table's conventions metrics, nil if none (semconv.go)
}

// planTable returns the plan of a table, or nil if no column of it is a
// measure.
func planTable(ti pfscore.TableInfo) (*tablePlan, error) {
	tp := &tablePlan{table: ti.Name, columns: ti.Columns, sumTimer: -1}
	for i, c := range ti.Columns {
		switch c.Role {
		case pfscore.RoleDimension:
			tp.attrs = append(tp.attrs, i)
			tp.keys = append(tp.keys, attrKey(c.Name))
			if c.Name == "DIGEST" {
				tp.digest = true
			}
			continue
		case pfscore.RoleCounter, pfscore.RoleTimer:
			tp.cumul = append(tp.cumul, i)
		case pfscore.RoleAvg:
			// Not exported: an AVG_ column is its SUM_ over its COUNT_ since
			// the row began, which a backend computes better from the two
			// sums (rate(sum)/rate(count): the average of the last interval,
			// not of the process's life); and it would be a fifth of every
			// wait summary's data points.
			continue
		case pfscore.RoleGauge, pfscore.RoleLowWater, pfscore.RoleHighWater,
			pfscore.RoleMin, pfscore.RoleMax:
		default:
			if extraAttrs[c.Name] {
				tp.attrs = append(tp.attrs, i)
				tp.keys = append(tp.keys, attrKey(c.Name))
			}
			continue
		}
		m := measure{col: i, name: metricName(ti.Name, c), unit: unitOf(ti.Name, c), role: c.Role,
			desc: c.Name + " of performance_schema." + ti.Name}
		switch {
		case c.Role == pfscore.RoleCounter:
			m.kind = sumInt
		case c.Role == pfscore.RoleTimer:
			m.kind = sumSeconds
		case c.Type == pfscore.ColPicos:
			m.kind = gaugeSeconds
		default:
			m.kind = gaugeInt
		}
		if c.Role == pfscore.RoleTimer && c.Type != pfscore.ColPicos {
			return nil, fmt.Errorf("bridge: %s.%s: a timer column that is not in picoseconds", ti.Name, c.Name)
		}
		if c.Name == "SUM_TIMER_WAIT" {
			tp.sumTimer = i
		}
		tp.measures = append(tp.measures, m)
	}
	if len(tp.measures) == 0 {
		return nil, nil
	}
	if tp.digest && tp.sumTimer < 0 {
		tp.digest = false // nothing to rank by: exported whole
	}
	return tp, nil
}

// dropQuantiles leaves out a table's quantile gauges (QUANTILE_95, ...):
// a table that exports its histogram carries them, with more resolution
// and in a form a backend can aggregate (histogram_quantile over any
// set of series), where a quantile gauge can be neither summed nor
// averaged.
func (tp *tablePlan) dropQuantiles() {
	tp.measures = slices.DeleteFunc(tp.measures, func(m measure) bool {
		return strings.HasPrefix(tp.columns[m.col].Name, "QUANTILE_")
	})
}
