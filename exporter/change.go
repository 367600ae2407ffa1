package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/otelpfs/otelpfs/pfscore"
)

// POST /debug/pfs/tables/NAME/update, /insert and /delete: pfscore.Tables'
// Update, Insert and Delete with JSON bodies, for any table that takes them
// (the catalog says which):
//
//	update  {"where": ["COND", ...], "set": {"COLUMN": value, ...}}
//	insert  {"values": {"COLUMN": value, ...}}
//	delete  {"where": ["COND", ...]}
//
// A where is a pfscore.Query's; an absent one matches every row, as an
// UPDATE or DELETE without WHERE does. Values are JSON strings, true or
// false, integers (uint64, or int64 when negative) or null.

// tableOps are the POSTs on a table: /tables/NAME/OP.
var tableOps = map[string]bool{"truncate": true, "update": true, "insert": true, "delete": true}

// ChangeResult is the handler's answer to a change: POST setup/TABLE, or
// tables/NAME/update, insert or delete. Client.Setup returns it.
type ChangeResult struct {
	Table       string `json:"table"`
	Op          string `json:"op,omitempty"`         // update, insert or delete; for setup/actors and setup/objects, also truncate
	RowsMatched int    `json:"rows_matched"`         // rows the WHERE clause matched; 1 for an INSERT
	TimerName   string `json:"timer_name,omitempty"` // setup/timers: the timer set, maybe a substitute for the one asked for
}

func (h *handler) serveChange(w http.ResponseWriter, r *http.Request, table, op string) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	if err := h.checkChange(r); err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	res := ChangeResult{Table: table, Op: op}
	switch op {
	case "update":
		var req struct {
			Where []string     `json:"where"`
			Set   changeValues `json:"set"`
		}
		if err = decodeBody(body, &req); err == nil {
			res.RowsMatched, err = h.s.Update(table, req.Where, req.Set)
		}
	case "insert":
		var req struct {
			Values changeValues `json:"values"`
		}
		if err = decodeBody(body, &req); err == nil {
			if err = h.s.Insert(table, req.Values); err == nil {
				res.RowsMatched = 1
			}
		}
	case "delete":
		var req struct {
			Where []string `json:"where"`
		}
		if err = decodeBody(body, &req); err == nil {
			res.RowsMatched, err = h.s.Delete(table, req.Where)
		}
	}
	if err != nil {
		return changeError(table, op, err)
	}
	return writeJSONStatus(w, http.StatusOK, res)
}

// readBody reads a POST's body, of at most MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "body larger than %d bytes", tooBig.Limit)
		}
		return nil, errorf(http.StatusBadRequest, "reading body: %v", err)
	}
	return body, nil
}

// changeError maps the engine's errors to statuses: an unknown table is
// 404; a change MySQL does not allow on the table or column is 403; a
// duplicate row or a full table conflicts with the table's state (409); any
// other error (ErrBadQuery, ErrBadValue, ErrBadPattern,
// hwclock.ErrUnknownTimer, ...) is about the request (400). op is the
// statement ("update", "insert", "delete"), or "" for a setup body.
func changeError(table, op string, err error) error {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return fmt.Errorf("%s: %w", table, err)
	case errors.Is(err, pfscore.ErrUnknownTable):
		return causef(http.StatusNotFound, err, "unknown table %q", table)
	case errors.Is(err, pfscore.ErrNotUpdatable), errors.Is(err, pfscore.ErrNotInsertable):
		stmt := map[string]string{"update": "UPDATE ", "insert": "INSERT INTO ", "delete": "DELETE FROM "}[op]
		return causef(http.StatusForbidden, err, "%s%s is not allowed: %v", stmt, table, err)
	case errors.Is(err, pfscore.ErrDuplicateRow), errors.Is(err, pfscore.ErrTableFull):
		return causef(http.StatusConflict, err, "%s: %v", table, err)
	default:
		return causef(http.StatusBadRequest, err, "%s: %v", table, err)
	}
}

// changeValues are the columns of an update's set or an insert's values:
// a JSON object of strings, booleans, integers and nulls. Two names that
// differ only in case are refused, since column names are
// case-insensitive.
type changeValues map[string]pfscore.Value

func (m *changeValues) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if raw == nil {
		*m = nil
		return nil
	}
	out := make(changeValues, len(raw))
	seen := make(map[string]string, len(raw))
	for k, v := range raw {
		u := strings.ToUpper(strings.TrimSpace(k))
		if prev, dup := seen[u]; dup {
			return fmt.Errorf("%w: column %s given twice (%q and %q)", pfscore.ErrBadValue, u, prev, k)
		}
		seen[u] = k
		cv, err := jsonValue(v)
		if err != nil {
			return fmt.Errorf("column %s: %w", k, err)
		}
		out[k] = cv
	}
	*m = out
	return nil
}

// jsonValue converts a JSON value decoded with UseNumber to a
// pfscore.Value: a string, a bool, a uint64 (an int64 if negative) or nil.
func jsonValue(v any) (pfscore.Value, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case json.Number:
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u, nil
		}
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		return nil, fmt.Errorf("%w: %s is not an integer a column takes", pfscore.ErrBadValue, v)
	default:
		return nil, fmt.Errorf("%w: %s: want a string, an integer, true, false or null", pfscore.ErrBadValue, jsonKind(v))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}
