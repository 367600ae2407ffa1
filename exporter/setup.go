package exporter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/otelpfs/otelpfs/pfscore"
)

// POST /debug/pfs/setup/TABLE: MySQL's UPDATE (and, for setup_actors and
// setup_objects, INSERT, DELETE and TRUNCATE) on the setup tables, as a JSON
// object. Field names are case-insensitive; a flag is true or false, or one
// of "YES", "NO", "ON", "OFF". Unknown fields are an error. See doc.go for
// the bodies.

// A setupUpdater applies one setup table's body.
type setupUpdater struct {
	table string
	apply func(t pfscore.Tables, body []byte) (setupResult, error)
}

// setupResult is the answer to a setup change.
type setupResult = ChangeResult

var setupUpdaters = map[string]*setupUpdater{
	"instruments": {"setup_instruments", setupInstruments},
	"consumers":   {"setup_consumers", setupConsumers},
	"threads":     {"setup_threads", setupThreads},
	"timers":      {"setup_timers", setupTimers},
	"actors":      {"setup_actors", setupActors},
	"objects":     {"setup_objects", setupObjects},
}

func (h *handler) serveSetup(w http.ResponseWriter, r *http.Request, u *setupUpdater) error {
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
	res, err := u.apply(h.s, body)
	if err != nil {
		return changeError(u.table, "", err)
	}
	res.Table = u.table
	return writeJSONStatus(w, http.StatusOK, res)
}

func badRequest(format string, args ...any) error {
	return errorf(http.StatusBadRequest, format, args...)
}

// decodeBody decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty body: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return causef(http.StatusBadRequest, err, "bad JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("bad JSON body: data after the object")
	}
	return nil
}

// A setupBool is a flag of a setup body: true or false, or "YES"/"NO",
// "ON"/"OFF", "TRUE"/"FALSE" (any case), as MySQL's ENUM('YES','NO') columns
// take them.
type setupBool bool

func (b *setupBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*b = setupBool(v)
		return nil
	case string:
		if on, err := pfscore.ParseFlag(v); err == nil {
			*b = setupBool(on)
			return nil
		}
	}
	return fmt.Errorf("flag %s: want true, false, \"YES\" or \"NO\"", data)
}

// flag renders b for a setup change: "YES" or "NO".
func (b setupBool) flag() pfscore.Value {
	if b {
		return "YES"
	}
	return "NO"
}

// set adds column col = b to a change, when b is given.
func (b *setupBool) set(change map[string]pfscore.Value, col string) {
	if b != nil {
		change[col] = b.flag()
	}
}

func requireName(name, example string) error {
	if name == "" {
		return badRequest("\"name\" is required: a LIKE pattern, as %q", example)
	}
	return nil
}

// likeName is the WHERE clause of a change by name pattern, after the
// pattern's own check (pfscore.CheckPattern).
func likeName(pattern string) ([]string, error) {
	if err := pfscore.CheckPattern(pattern); err != nil {
		return nil, err
	}
	return []string{"NAME LIKE " + pfscore.QuoteString(pattern)}, nil
}

// updateByName is UPDATE table SET change WHERE NAME LIKE pattern.
func updateByName(t pfscore.Tables, table, pattern string, change map[string]pfscore.Value) (setupResult, error) {
	where, err := likeName(pattern)
	if err != nil {
		return setupResult{}, err
	}
	n, err := t.Update(table, where, change)
	return setupResult{RowsMatched: n}, err
}

func setupInstruments(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Name    string     `json:"name"`
		Enabled *setupBool `json:"enabled"`
		Timed   *setupBool `json:"timed"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	if err := requireName(req.Name, "wait/synch/%"); err != nil {
		return setupResult{}, err
	}
	if req.Enabled == nil && req.Timed == nil {
		return setupResult{}, badRequest("nothing to change: give \"enabled\", \"timed\" or both")
	}
	change := map[string]pfscore.Value{}
	req.Enabled.set(change, "ENABLED")
	req.Timed.set(change, "TIMED")
	return updateByName(t, "setup_instruments", req.Name, change)
}

func setupConsumers(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Name    string     `json:"name"`
		Enabled *setupBool `json:"enabled"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	if err := requireName(req.Name, "events_waits_%"); err != nil {
		return setupResult{}, err
	}
	if req.Enabled == nil {
		return setupResult{}, badRequest("\"enabled\" is required")
	}
	return updateByName(t, "setup_consumers", req.Name, map[string]pfscore.Value{"ENABLED": req.Enabled.flag()})
}

func setupThreads(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Name    string     `json:"name"`
		Enabled *setupBool `json:"enabled"`
		History *setupBool `json:"history"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	if err := requireName(req.Name, "thread/%"); err != nil {
		return setupResult{}, err
	}
	if req.Enabled == nil && req.History == nil {
		return setupResult{}, badRequest("nothing to change: give \"enabled\", \"history\" or both")
	}
	change := map[string]pfscore.Value{}
	req.Enabled.set(change, "ENABLED")
	req.History.set(change, "HISTORY")
	return updateByName(t, "setup_threads", req.Name, change)
}

func setupTimers(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Name      string `json:"name"`
		TimerName string `json:"timer_name"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	if req.Name == "" || req.TimerName == "" {
		return setupResult{}, badRequest("\"name\" (an event class, as \"wait\") and \"timer_name\" (as \"NANOSECOND\") are required")
	}
	where := []string{"NAME = " + pfscore.QuoteString(req.Name)}
	n, err := t.Update("setup_timers", where, map[string]pfscore.Value{"TIMER_NAME": req.TimerName})
	if err != nil {
		return setupResult{}, err
	}
	if n == 0 {
		return setupResult{}, badRequest("unknown event class %q: setup_timers lists them", req.Name)
	}
	// The timer set, which may be a substitute for the one asked for.
	res, err := t.Query("setup_timers", pfscore.Query{Where: where})
	if err != nil || len(res.Rows) != 1 || len(res.Rows[0]) < 2 {
		return setupResult{}, fmt.Errorf("setup_timers: reading back %s: %v", req.Name, err)
	}
	timer, _ := res.Rows[0][1].(string)
	return setupResult{RowsMatched: 1, TimerName: timer}, nil
}

// checkOp validates a setup_actors or setup_objects op and which flags it
// may carry.
func checkOp(op string, flagsGiven, keysGiven bool) (string, error) {
	switch op = strings.ToLower(op); op {
	case "insert", "update":
		if op == "update" && !flagsGiven {
			return op, badRequest("update: nothing to change: give the flags to set")
		}
	case "delete":
		if flagsGiven {
			return op, badRequest("delete takes only the key columns, no flags")
		}
	case "truncate":
		if flagsGiven || keysGiven {
			return op, badRequest("truncate takes no other fields")
		}
	case "":
		return op, badRequest("\"op\" is required: insert, update, delete or truncate")
	default:
		return op, badRequest("unknown op %q: want insert, update, delete or truncate", op)
	}
	return op, nil
}

// A keyed is a setup_actors or setup_objects change: its key columns (an
// empty value matches any row, as a missing WHERE condition) and flags.
type keyed struct {
	op    string
	keys  [][2]string // column, value
	flags map[string]pfscore.Value
}

// apply runs the change on table.
func (k keyed) apply(t pfscore.Tables, table string) (setupResult, error) {
	res := setupResult{Op: k.op}
	var where []string
	for _, kv := range k.keys {
		if kv[1] != "" {
			where = append(where, kv[0]+" = "+pfscore.QuoteString(kv[1]))
		}
	}
	var err error
	switch k.op {
	case "insert":
		values := map[string]pfscore.Value{}
		for _, kv := range k.keys {
			values[kv[0]] = kv[1]
		}
		for c, v := range k.flags {
			values[c] = v
		}
		if err = t.Insert(table, values); err == nil {
			res.RowsMatched = 1
		}
	case "update":
		res.RowsMatched, err = t.Update(table, where, k.flags)
	case "delete":
		res.RowsMatched, err = t.Delete(table, where)
	case "truncate":
		var all *pfscore.Result
		if all, err = t.Query(table, pfscore.Query{}); err == nil {
			res.RowsMatched = len(all.Rows)
			err = t.Truncate(table)
		}
	}
	return res, err
}

func setupActors(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Op      string     `json:"op"`
		Host    string     `json:"host"`
		User    string     `json:"user"`
		Role    string     `json:"role"`
		Enabled *setupBool `json:"enabled"`
		History *setupBool `json:"history"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	op, err := checkOp(req.Op, req.Enabled != nil || req.History != nil, req.Host != "" || req.User != "" || req.Role != "")
	if err != nil {
		return setupResult{}, err
	}
	k := keyed{op: op, keys: [][2]string{{"HOST", req.Host}, {"USER", req.User}, {"ROLE", req.Role}}, flags: map[string]pfscore.Value{}}
	req.Enabled.set(k.flags, "ENABLED")
	req.History.set(k.flags, "HISTORY")
	return k.apply(t, "setup_actors")
}

func setupObjects(t pfscore.Tables, body []byte) (setupResult, error) {
	var req struct {
		Op           string     `json:"op"`
		ObjectType   string     `json:"object_type"`
		ObjectSchema string     `json:"object_schema"`
		ObjectName   string     `json:"object_name"`
		Enabled      *setupBool `json:"enabled"`
		Timed        *setupBool `json:"timed"`
	}
	if err := decodeBody(body, &req); err != nil {
		return setupResult{}, err
	}
	op, err := checkOp(req.Op, req.Enabled != nil || req.Timed != nil, req.ObjectType != "" || req.ObjectSchema != "" || req.ObjectName != "")
	if err != nil {
		return setupResult{}, err
	}
	typ := req.ObjectType
	if typ != "" {
		ot, err := pfscore.ParseObjectType(typ)
		if err != nil {
			return setupResult{}, err
		}
		typ = ot.String()
	} else if op == "insert" {
		return setupResult{}, badRequest("insert: \"object_type\" is required")
	}
	k := keyed{op: op, keys: [][2]string{{"OBJECT_TYPE", typ}, {"OBJECT_SCHEMA", req.ObjectSchema}, {"OBJECT_NAME", req.ObjectName}}, flags: map[string]pfscore.Value{}}
	req.Enabled.set(k.flags, "ENABLED")
	req.Timed.set(k.flags, "TIMED")
	return k.apply(t, "setup_objects")
}
