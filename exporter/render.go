package exporter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/pfscore"
)

// Rendering of tables: JSON for tools (raw values, picoseconds as integers),
// text for terminals (aligned columns, times as FormatPicoTime writes them)
// and HTML for browsers.

// FormatPicoTime formats picoseconds as MySQL 8.0's FORMAT_PICO_TIME does:
// below a nanosecond an integer and "ps" ("%3d ps", so 7 is "  7 ps");
// above, two decimals and the largest unit the value reaches: ns, us, ms, s,
// min, h or d ("1.23 us", "45.67 ms"), in exponent form from 100000 days.
func FormatPicoTime(ps uint64) string {
	const (
		nano  = 1e3
		micro = 1e6
		milli = 1e9
		sec   = 1e12
		min   = 60 * sec
		hour  = 60 * min
		day   = 24 * hour
	)
	v := float64(ps)
	var div float64
	var unit string
	switch {
	case v >= day:
		div, unit = day, "d"
	case v >= hour:
		div, unit = hour, "h"
	case v >= min:
		div, unit = min, "min"
	case v >= sec:
		div, unit = sec, "s"
	case v >= milli:
		div, unit = milli, "ms"
	case v >= micro:
		div, unit = micro, "us"
	case v >= nano:
		div, unit = nano, "ns"
	default:
		return fmt.Sprintf("%3d ps", ps)
	}
	x := v / div
	if math.Abs(x) >= 100000 {
		return fmt.Sprintf("%4.2e %s", x, unit)
	}
	return fmt.Sprintf("%4.2f %s", x, unit)
}

// ColumnTypeName is a column type as the JSON format names it: "string",
// "uint", "int" or "picos".
func ColumnTypeName(t pfscore.ColumnType) string {
	switch t {
	case pfscore.ColString:
		return "string"
	case pfscore.ColUint:
		return "uint"
	case pfscore.ColInt:
		return "int"
	case pfscore.ColPicos:
		return "picos"
	}
	return "unknown"
}

func parseColumnType(name string) (pfscore.ColumnType, error) {
	for t := pfscore.ColString; t <= pfscore.ColPicos; t++ {
		if ColumnTypeName(t) == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown column type %q", name)
}

// FormatValue renders one cell for people: NULL, a number, a time as
// FormatPicoTime writes it, or a string with control characters escaped.
func FormatValue(t pfscore.ColumnType, v pfscore.Value) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case uint64:
		if t == pfscore.ColPicos {
			return strings.TrimLeft(FormatPicoTime(v), " ")
		}
		return strconv.FormatUint(v, 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return escapeControl(v)
	default:
		return fmt.Sprint(v)
	}
}

// escapeControl replaces control characters, which would break a table's
// alignment or a terminal, by Go escapes.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r == utf8.RuneError || (r >= 0x80 && r < 0xa0)
}

// The JSON format.

// jsonTable is a table as the JSON format has it.
type jsonTable struct {
	Table   string        `json:"table"`
	Columns []jsonColumn  `json:"columns"`
	Rows    []pfscore.Row `json:"rows"`
	Matched int           `json:"matched,omitempty"` // only when more than the rows: a limit left some out
}

type jsonColumn struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Role   string `json:"role,omitempty"`
	Binary bool   `json:"binary,omitempty"` // pfscore.Column.Binary
}

func jsonColumns(cols []pfscore.Column) []jsonColumn {
	out := make([]jsonColumn, len(cols))
	for i, c := range cols {
		out[i] = jsonColumn{Name: c.Name, Type: ColumnTypeName(c.Type), Binary: c.Binary}
		if c.Role != 0 {
			out[i].Role = c.Role.String()
		}
	}
	return out
}

// parseColumns reads columns jsonColumns wrote back.
func parseColumns(cols []jsonColumn) ([]pfscore.Column, error) {
	out := make([]pfscore.Column, len(cols))
	for i, c := range cols {
		t, err := parseColumnType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		out[i] = pfscore.Column{Name: c.Name, Type: t, Binary: c.Binary}
		if c.Role != "" { // older servers send none
			if out[i].Role, err = pfscore.ParseRole(c.Role); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		}
	}
	return out, nil
}

// WriteJSON writes res as {"table": NAME, "columns": [{"name", "type",
// "role"}], "rows": [[...]]}: NULL as null, numbers (picoseconds too) as
// integers; a role as pfscore.Role.String names it. When res.Matched is
// more than its rows (a limit left some out), "matched" follows the rows.
func WriteJSON(w io.Writer, res *pfscore.Result) error {
	t := jsonTable{Table: res.Table, Columns: jsonColumns(res.Columns), Rows: res.Rows}
	if t.Rows == nil {
		t.Rows = []pfscore.Row{}
	}
	if res.Matched > len(res.Rows) {
		t.Matched = res.Matched
	}
	return json.NewEncoder(w).Encode(t)
}

// DecodeJSON reads a table WriteJSON wrote back into a Result, with each
// value of the type its column says (uint64, int64, string or nil), and
// Matched from "matched", or the number of rows without one.
func DecodeJSON(r io.Reader) (*pfscore.Result, error) {
	var raw struct {
		Table   string       `json:"table"`
		Columns []jsonColumn `json:"columns"`
		Rows    [][]any      `json:"rows"`
		Matched int          `json:"matched"`
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decoding table: %w", err)
	}
	cols, err := parseColumns(raw.Columns)
	if err != nil {
		return nil, fmt.Errorf("decoding table %s, %w", raw.Table, err)
	}
	res := &pfscore.Result{Table: raw.Table, Columns: cols, Rows: make([]pfscore.Row, len(raw.Rows)), Matched: max(raw.Matched, len(raw.Rows))}
	for i, row := range raw.Rows {
		if len(row) != len(res.Columns) {
			return nil, fmt.Errorf("decoding table %s: row %d has %d values for %d columns", raw.Table, i, len(row), len(res.Columns))
		}
		out := make(pfscore.Row, len(row))
		for j, v := range row {
			cv, err := decodeValue(res.Columns[j].Type, v)
			if err != nil {
				return nil, fmt.Errorf("decoding table %s, row %d, column %s: %w", raw.Table, i, res.Columns[j].Name, err)
			}
			out[j] = cv
		}
		res.Rows[i] = out
	}
	return res, nil
}

func decodeValue(t pfscore.ColumnType, v any) (pfscore.Value, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case pfscore.ColString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case pfscore.ColUint, pfscore.ColPicos:
		if n, ok := v.(json.Number); ok {
			return strconv.ParseUint(string(n), 10, 64)
		}
	case pfscore.ColInt:
		if n, ok := v.(json.Number); ok {
			return strconv.ParseInt(string(n), 10, 64)
		}
	}
	return nil, fmt.Errorf("value %v does not fit a %s column", v, ColumnTypeName(t))
}

// The text format.

// WriteText writes res as aligned columns under a header of column names:
// numbers and times right-aligned, strings left-aligned, NULL as NULL,
// times as FormatPicoTime writes them.
func WriteText(w io.Writer, res *pfscore.Result) error {
	cells := make([][]string, 0, len(res.Rows)+1)
	head := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		head[i] = c.Name
	}
	cells = append(cells, head)
	for _, row := range res.Rows {
		line := make([]string, len(res.Columns))
		for i, c := range res.Columns {
			if i < len(row) {
				line[i] = FormatValue(c.Type, row[i])
			}
		}
		cells = append(cells, line)
	}
	right := make([]bool, len(res.Columns))
	for i, c := range res.Columns {
		right[i] = c.Type != pfscore.ColString
	}
	return writeAligned(w, cells, right)
}

// writeAligned writes rows of cells in columns two spaces apart, each
// right-aligned where right says, with no trailing spaces.
func writeAligned(w io.Writer, cells [][]string, right []bool) error {
	widths := make([]int, len(right))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriter(w)
	var line bytes.Buffer
	for _, l := range cells {
		line.Reset()
		for i, c := range l {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := widths[i] - utf8.RuneCountInString(c)
			if right[i] {
				line.WriteString(strings.Repeat(" ", pad))
				line.WriteString(c)
			} else {
				line.WriteString(c)
				if i < len(l)-1 {
					line.WriteString(strings.Repeat(" ", pad))
				}
			}
		}
		bw.Write(bytes.TrimRight(line.Bytes(), " "))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// The table list of GET /debug/pfs/.

// A TableInfo is one entry of the table list.
type TableInfo struct {
	Name        string `json:"name"`
	Rows        int    `json:"rows"`
	Truncatable bool   `json:"truncatable"`
}

// The catalog of GET /debug/pfs/catalog: pfscore.Tables.Catalog.

// jsonTableInfo is a pfscore.TableInfo as the catalog has it.
type jsonTableInfo struct {
	Name        string       `json:"name"`
	Columns     []jsonColumn `json:"columns"`
	Truncatable bool         `json:"truncatable"`
	Updatable   []string     `json:"updatable"`
	Insertable  bool         `json:"insertable"`
}

type jsonCatalog struct {
	Tables []jsonTableInfo `json:"tables"`
}

func writeCatalogJSON(w io.Writer, cat []pfscore.TableInfo) error {
	out := jsonCatalog{Tables: make([]jsonTableInfo, len(cat))}
	for i, t := range cat {
		out.Tables[i] = jsonTableInfo{Name: t.Name, Columns: jsonColumns(t.Columns), Truncatable: t.Truncatable,
			Updatable: t.Updatable, Insertable: t.Insertable}
		if out.Tables[i].Updatable == nil {
			out.Tables[i].Updatable = []string{}
		}
	}
	return json.NewEncoder(w).Encode(out)
}

func writeIndexJSON(w io.Writer, tables []TableInfo) error {
	if tables == nil {
		tables = []TableInfo{}
	}
	return json.NewEncoder(w).Encode(struct {
		Tables []TableInfo `json:"tables"`
	}{tables})
}

func writeIndexText(w io.Writer, tables []TableInfo) error {
	cells := [][]string{{"TABLE_NAME", "ROWS", "TRUNCATE"}}
	for _, t := range tables {
		cells = append(cells, []string{t.Name, strconv.Itoa(t.Rows), FormatValue(pfscore.ColString, yesNo(t.Truncatable))})
	}
	return writeAligned(w, cells, []bool{false, true, false})
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
