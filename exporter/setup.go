package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
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
	apply func(s *pfscore.Schema, body []byte) (setupResult, error)
}

// setupResult is the response to a setup change.
type setupResult struct {
	Table       string `json:"table"`
	Op          string `json:"op,omitempty"`
	RowsMatched int    `json:"rows_matched"`
	TimerName   string `json:"timer_name,omitempty"` // setup_timers: the timer set, maybe a substitute
}

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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "body larger than %d bytes", tooBig.Limit)
		}
		return errorf(http.StatusBadRequest, "reading body: %v", err)
	}
	res, err := u.apply(h.s, body)
	if err != nil {
		return setupError(u.table, err)
	}
	res.Table = u.table
	return writeJSONStatus(w, http.StatusOK, res)
}

// setupError maps the engine's errors to statuses: a duplicate row or a
// full table conflicts with the table's state (409); any other error of a
// setup update (ErrBadPattern, ErrBadValue, hwclock.ErrUnknownTimer,
// hwclock.ErrUnknownEventClass, ...) is about the request (400).
func setupError(table string, err error) error {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return fmt.Errorf("%s: %w", table, err)
	case errors.Is(err, pfscore.ErrDuplicateRow), errors.Is(err, pfscore.ErrTableFull):
		return errorf(http.StatusConflict, "%s: %v", table, err)
	default:
		return errorf(http.StatusBadRequest, "%s: %v", table, err)
	}
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
		return badRequest("bad JSON body: %v", err)
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
		switch strings.ToUpper(v) {
		case "YES", "ON", "TRUE", "1":
			*b = true
			return nil
		case "NO", "OFF", "FALSE", "0":
			*b = false
			return nil
		}
	}
	return fmt.Errorf("flag %s: want true, false, \"YES\" or \"NO\"", data)
}

func (b *setupBool) ptr() *bool {
	if b == nil {
		return nil
	}
	v := bool(*b)
	return &v
}

// or returns b's value, or def when b is absent.
func (b *setupBool) or(def bool) bool {
	if b == nil {
		return def
	}
	return bool(*b)
}

func requireName(name, example string) error {
	if name == "" {
		return badRequest("\"name\" is required: a LIKE pattern, as %q", example)
	}
	return nil
}

func setupInstruments(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	n, err := s.UpdateInstruments(req.Name, req.Enabled.ptr(), req.Timed.ptr())
	return setupResult{RowsMatched: n}, err
}

func setupConsumers(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	n, err := s.UpdateConsumers(req.Name, bool(*req.Enabled))
	return setupResult{RowsMatched: n}, err
}

func setupThreads(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	n, err := s.UpdateThreads(req.Name, req.Enabled.ptr(), req.History.ptr())
	return setupResult{RowsMatched: n}, err
}

func setupTimers(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	t, err := s.SetupTimers().Set(req.Name, req.TimerName)
	if err != nil {
		return setupResult{}, err
	}
	return setupResult{RowsMatched: 1, TimerName: t.String()}, nil
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

func setupActors(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	res := setupResult{Op: op}
	switch op {
	case "insert": // MySQL's defaults: ENABLED='YES', HISTORY='YES'
		err = s.InsertSetupActor(pfscore.SetupActorsRow{Host: req.Host, User: req.User, Role: req.Role,
			Enabled: req.Enabled.or(true), History: req.History.or(true)})
		if err == nil {
			res.RowsMatched = 1
		}
	case "update":
		res.RowsMatched = s.UpdateSetupActors(req.Host, req.User, req.Role, req.Enabled.ptr(), req.History.ptr())
	case "delete":
		res.RowsMatched = s.DeleteSetupActors(req.Host, req.User, req.Role)
	case "truncate":
		res.RowsMatched = len(s.SetupActors())
		s.TruncateSetupActors()
	}
	return res, err
}

func setupObjects(s *pfscore.Schema, body []byte) (setupResult, error) {
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
	var typ pfscore.ObjectType
	if req.ObjectType != "" {
		if typ, err = pfscore.ParseObjectType(req.ObjectType); err != nil {
			return setupResult{}, err
		}
	} else if op == "insert" {
		return setupResult{}, badRequest("insert: \"object_type\" is required")
	}
	res := setupResult{Op: op}
	switch op {
	case "insert": // MySQL's defaults: ENABLED='YES', TIMED='YES'
		err = s.InsertSetupObject(pfscore.SetupObjectsRow{ObjectType: typ, ObjectSchema: req.ObjectSchema, ObjectName: req.ObjectName,
			Enabled: req.Enabled.or(true), Timed: req.Timed.or(true)})
		if err == nil {
			res.RowsMatched = 1
		}
	case "update":
		res.RowsMatched = s.UpdateSetupObjects(typ, req.ObjectSchema, req.ObjectName, req.Enabled.ptr(), req.Timed.ptr())
	case "delete":
		res.RowsMatched = s.DeleteSetupObjects(typ, req.ObjectSchema, req.ObjectName)
	case "truncate":
		res.RowsMatched = len(s.SetupObjects())
		s.TruncateSetupObjects()
	}
	return res, err
}
