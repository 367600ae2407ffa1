package pfscore

// Regression tests from the fresh-eyes review of issue 10 (the table layer
// and the service API): each was a reproducer of a defect the review found,
// fixed since, or of a property it tried to break and could not. Comments
// below describe what each reproduced when it was written.

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// --- TRUNCATE of the connection tables -------------------------------------

// MySQL: "each wait summary table that is aggregated by account, host, user,
// or thread is implicitly truncated by truncation of the connection table on
// which it depends" (the same sentence for memory summaries is in
// ../shared/reference/memory-summary-tables.txt; table_accounts::
// delete_all_rows calls reset_events_waits_by_thread and
// reset_events_waits_by_account before purge_all_account). Here TRUNCATE
// accounts only removes idle rows: a connected account's by_account row (and
// its threads' by_thread rows) keep their counts.
func TestReview10TruncateAccountsDoesNotTruncateByAccountSummary(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	for range 3 {
		waitOnce(f.m, th)
	}
	byAcct := map[string]Value{"USER": "u", "HOST": "h", "EVENT_NAME": f.mutex.Name()}
	if n := count(t, f.s, "events_waits_summary_by_account_by_event_name", byAcct); n != 3 {
		t.Fatalf("before: by_account COUNT_STAR %d, want 3", n)
	}
	if err := f.s.Truncate("accounts"); err != nil {
		t.Fatal(err)
	}
	acct := count(t, f.s, "events_waits_summary_by_account_by_event_name", byAcct)
	thr := count(t, f.s, "events_waits_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.mutex.Name()})
	if acct != 0 || thr != 0 {
		t.Errorf("after TRUNCATE accounts: by_account COUNT_STAR %d, by_thread %d; MySQL truncates both (want 0, 0)", acct, thr)
	}
}

// Same for TRUNCATE users / hosts and their by_user / by_host summaries.
func TestReview10TruncateUsersHostsDoNotTruncateTheirSummaries(t *testing.T) {
	for _, c := range []struct{ table, summary, col, val string }{
		{"users", "events_waits_summary_by_user_by_event_name", "USER", "u"},
		{"hosts", "events_waits_summary_by_host_by_event_name", "HOST", "h"},
	} {
		f := newFixture(t)
		th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
		for range 3 {
			waitOnce(f.m, th)
		}
		if err := f.s.Truncate(c.table); err != nil {
			t.Fatal(err)
		}
		if n := count(t, f.s, c.summary, map[string]Value{c.col: c.val, "EVENT_NAME": f.mutex.Name()}); n != 0 {
			t.Errorf("after TRUNCATE %s: %s COUNT_STAR %d for a connected %s, want 0", c.table, c.summary, n, c.col)
		}
		th.End()
	}
}

// --- setup_actors / setup_objects changes -----------------------------------

// setup_actors.USER and ROLE are utf8mb4_bin in MySQL (see
// ../shared/reference/mysql-implementation-notes.md, setup_actors), and the
// old DeleteSetupActors/UpdateSetupActors compared keys with ==. Delete's
// WHERE compares case-insensitively, so DELETE ... WHERE USER='Bob' also
// deletes the row of user 'bob' (and Update changes it).
func TestReview10SetupActorsWhereIsCaseInsensitive(t *testing.T) {
	s := newTestSchema(t)
	for _, u := range []string{"bob", "Bob"} {
		if err := s.Insert("setup_actors", map[string]Value{"HOST": "h", "USER": u, "ENABLED": "NO"}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Update("setup_actors", []string{"USER = 'Bob'"}, map[string]Value{"ENABLED": "YES"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("UPDATE setup_actors ... WHERE USER='Bob' matched %d rows, want 1 (USER is utf8mb4_bin)", n)
	}
	for _, r := range s.SetupActors() {
		if r.User == "bob" && r.Enabled {
			t.Errorf("UPDATE WHERE USER='Bob' enabled the row of user 'bob': %+v", r)
		}
	}
	n, err = s.Delete("setup_actors", []string{"USER = 'Bob'"})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range s.SetupActors() {
		left = append(left, r.User)
	}
	if n != 1 || !slices.Contains(left, "bob") {
		t.Errorf("DELETE FROM setup_actors WHERE USER='Bob' deleted %d rows; rows left: %q (want 1 deleted, 'bob' kept)", n, left)
	}
}

// MySQL: OBJECT_TYPE ... NOT NULL DEFAULT 'TABLE'. Insert's doc: "A column
// not in values takes MySQL's default". Without OBJECT_TYPE it fails.
func TestReview10InsertSetupObjectsDefaultsObjectTypeToTable(t *testing.T) {
	s := newTestSchema(t)
	err := s.Insert("setup_objects", map[string]Value{"OBJECT_SCHEMA": "db", "OBJECT_NAME": "t1"})
	if err != nil {
		t.Fatalf("INSERT INTO setup_objects (OBJECT_SCHEMA, OBJECT_NAME) VALUES ('db','t1'): %v (MySQL: OBJECT_TYPE defaults to TABLE)", err)
	}
	res, err := s.Query("setup_objects", Query{Where: []string{"OBJECT_SCHEMA = 'db'"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != "TABLE" {
		t.Errorf("inserted row: %v, want OBJECT_TYPE TABLE", res.Rows)
	}
}

// Insert keys are case-insensitive (checkColumns upper-cases them), but a
// map with "HOST" and "host" is not refused as the HTTP handler refuses it:
// which value wins depends on map iteration order.
func TestReview10InsertSameColumnTwiceIsNondeterministic(t *testing.T) {
	seen := map[string]bool{}
	for range 64 {
		s := newTestSchema(t)
		err := s.Insert("setup_actors", map[string]Value{"HOST": "a", "host": "b", "USER": "u"})
		if err != nil {
			seen["error: "+err.Error()] = true
			continue
		}
		for _, r := range s.SetupActors() {
			if r.User == "u" {
				seen[r.Host] = true
			}
		}
	}
	if len(seen) > 1 || seen["a"] || seen["b"] {
		t.Errorf("INSERT with columns HOST and host: outcomes %v (want an error, as exporter's changeValues gives)", seen)
	}
}

// --- Query -------------------------------------------------------------------

// parseNumber truncates a fractional picosecond operand toward zero, so
// comparisons with it are wrong: 0 < 0.5ps is true, 1 = 1.5ps is false,
// 1 >= 1.5ps is false, 0 > -0.5ps is true. MySQL compares the decimal.
func TestReview10FractionalPicosecondOperands(t *testing.T) {
	cols := []Column{{Name: "T", Type: ColPicos}}
	rows := []Row{{uint64(0)}, {uint64(1)}, {uint64(2)}}
	for _, c := range []struct {
		where string
		want  []uint64
	}{
		{"T < 0.5ps", []uint64{0}},
		{"T = 1.5ps", nil},
		{"T >= 1.5ps", []uint64{2}},
		{"T < 1.5ps", []uint64{0, 1}},
		{"T > -0.5ps", []uint64{0, 1, 2}},
		{"T <= 0.0000000001ns", []uint64{0}},
		{"T > 0.0000000001ns", []uint64{1, 2}},
	} {
		q, err := compileQuery(cols, []string{c.where}, "", 0)
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		out, _ := q.apply(rows)
		var got []uint64
		for _, r := range out {
			got = append(got, r[0].(uint64))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("WHERE %s on 0, 1, 2: got %v, want %v", c.where, got, c.want)
		}
	}
}

// A numeric operand beyond uint64 is an error, where MySQL compares it
// (COUNT_STAR < 18446744073709551616 is true for every row).
func TestReview10NumberBeyondUint64(t *testing.T) {
	cols := []Column{{Name: "N", Type: ColUint}}
	for _, w := range []string{"N < 18446744073709551616", "N > -9223372036854775809"} {
		q, err := compileQuery(cols, []string{w}, "", 0)
		if err != nil {
			t.Errorf("WHERE %s: %v (MySQL: true for every row)", w, err)
			continue
		}
		if out, _ := q.apply([]Row{{uint64(1<<64 - 1)}}); len(out) != 1 {
			t.Errorf("WHERE %s: %d rows", w, len(out))
		}
	}
}

// Holds: Query edge cases that behave.
func TestReview10QueryEdgesThatHold(t *testing.T) {
	cols := []Column{{Name: "S", Type: ColString}, {Name: "N", Type: ColUint}, {Name: "I", Type: ColInt}, {Name: "T", Type: ColPicos}}
	rows := []Row{
		{"it's", uint64(5), int64(-3), uint64(1500)},
		{"a%b", uint64(0), int64(0), nil},
		{nil, nil, nil, uint64(2e9)},
		{`a\b`, uint64(1<<64 - 1), int64(-1 << 63), uint64(0)},
	}
	for _, c := range []struct {
		where, order string
		limit        int
		want         []int // row indexes
	}{
		{"S = 'it''s'", "", 0, []int{0}},
		{`S = "it's"`, "", 0, []int{0}},
		{`S LIKE 'a\%b'`, "", 0, []int{1}},
		{`S LIKE 'a\\b'`, "", 0, []int{3}},
		{`S LIKE 'a_b'`, "", 0, []int{1, 3}},
		{"T >= 1.5ns AND T < 2ms", "", 0, []int{0}},
		{"T = 2ms", "", 0, []int{2}},
		{"I < -2", "", 0, []int{0, 3}},
		{"I = -9223372036854775808", "", 0, []int{3}},
		{"N = 18446744073709551615", "", 0, []int{3}},
		{"S IS NULL", "", 0, []int{2}},
		{"N != 5", "", 0, []int{1, 3}}, // NULL satisfies no comparison
		{"", "N", 0, []int{2, 1, 0, 3}},
		{"", "N desc", 0, []int{3, 0, 1, 2}},
		{"", "T", -5, []int{1, 3, 0, 2}},
		{"", "N", 1 << 40, []int{2, 1, 0, 3}},
	} {
		q, err := compileQuery(cols, []string{c.where}, c.order, c.limit)
		if err != nil {
			t.Errorf("%q %q: %v", c.where, c.order, err)
			continue
		}
		out, _ := q.apply(rows)
		var got []int
		for _, r := range out {
			for i := range rows {
				if &rows[i][0] == &r[0] {
					got = append(got, i)
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("where %q order %q limit %d: rows %v, want %v", c.where, c.order, c.limit, got, c.want)
		}
	}
	for _, w := range []string{"S = 'x' OR N = 1", "(N = 1)", "N = 1 AND", "S = NULL", "N = 1e3", "N = 1ms", "S LIKE x", "N = 0x10", "S = 'unterminated"} {
		if _, err := compileQuery(cols, []string{w}, "", 0); !errors.Is(err, ErrBadQuery) {
			t.Errorf("WHERE %s: err %v, want ErrBadQuery", w, err)
		}
	}
}

// --- Rows and Scan -----------------------------------------------------------

// Holds: rows of one read share one cell allocation, but each row's
// capacity is its length, so appending to one row does not write the next;
// a second read does not reuse the first's cells.
func TestReview10RowsDoNotAlias(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	th2 := f.s.NewThread(f.thread, ThreadOptions{User: "v", Host: "h"})
	defer th2.End()
	f.s.MustRegister("wait/synch/mutex/test/other")
	waitOnce(f.m, th)
	for _, table := range []string{"events_waits_summary_global_by_event_name", "setup_instruments", "threads", "events_waits_summary_by_thread_by_event_name"} {
		a, err := f.s.Select(table)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Rows) < 2 {
			t.Fatalf("%s: %d rows", table, len(a.Rows))
		}
		second := slices.Clone(a.Rows[1])
		_ = append(a.Rows[0], "X", "Y", "Z")
		if !reflect.DeepEqual(a.Rows[1], second) {
			t.Errorf("%s: appending to row 0 changed row 1: %v -> %v", table, second, a.Rows[1])
		}
		a.Rows[0][0] = "CHANGED"
		b, _ := f.s.Select(table)
		if b.Rows[0][0] == "CHANGED" {
			t.Errorf("%s: a second read shares the first's cells", table)
		}
	}
}

// Holds (mostly): the engine's exported row types scan back into the
// rows they render.
func TestReview10ScanRoundTrip(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
	defer th.End()
	for range 3 {
		waitOnce(f.m, th)
	}
	check := func(table string, roundTrip func(*Result) ([]Row, error)) {
		res, err := f.s.Select(table)
		if err != nil {
			t.Fatal(err)
		}
		back, err := roundTrip(res)
		if err != nil {
			t.Errorf("%s: %v", table, err)
			return
		}
		if !reflect.DeepEqual(back, res.Rows) {
			t.Errorf("%s: Scan then render differs:\n got %v\nwant %v", table, back, res.Rows)
		}
	}
	check("setup_instruments", rt[SetupInstrumentsRow])
	check("setup_actors", rt[SetupActorsRow])
	check("setup_objects", rt[SetupObjectsRow])
	check("setup_threads", rt[SetupThreadsRow])
	// events_waits_history: see TestReview10ScanWaitEventLosesValidFlags.
	check("global_status", rt[StatusVariable])
	check("events_waits_summary_by_account_by_event_name", rt[struct {
		ByAccount
		WaitStats
	}])
}

func rt[R any](res *Result) ([]Row, error) {
	rows, err := Scan[R](res)
	if err != nil {
		return nil, err
	}
	return rowsOf(planOf(reflect.TypeFor[R]()), rows), nil
}

// An embedded *struct (the pointer form of the composition Scan's doc
// shows) is skipped without an error: its fields stay zero.
func TestReview10ScanEmbeddedPointerSilentlyIgnored(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	waitOnce(f.m, th)
	res, err := f.s.Query("events_waits_summary_global_by_event_name", Query{Where: []string{"EVENT_NAME = " + QuoteString(f.mutex.Name())}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ByEventName
		*WaitStats
	}
	rows, err := Scan[row](res)
	if err == nil && (len(rows) != 1 || rows[0].WaitStats == nil) {
		t.Errorf("Scan into a struct embedding *WaitStats: no error, WaitStats %v (want it filled, or an error)", rows[0].WaitStats)
	}
}

// --- Baselines ---------------------------------------------------------------

// TRUNCATE copies every earlier baseline into the next and never drops the
// rows of destroyed instances or ended threads: the baselines grow with
// every instance that ever existed at a TRUNCATE.
func TestReview10BaselinesNeverForgetDestroyedInstances(t *testing.T) {
	f := newFixture(t)
	const rounds, per = 20, 200
	for range rounds {
		var ms []*SyncInstance
		for range per {
			ms = append(ms, f.s.NewSyncInstance(f.mutex, ""))
		}
		if err := f.s.Truncate("events_waits_summary_by_instance"); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			m.Destroy()
		}
	}
	f.s.readMu.RLock()
	b := f.s.baselines["events_waits_summary_by_instance"].(*summaryBase[statRow])
	n := len(b.rows)
	f.s.readMu.RUnlock()
	live := len(findRows(t, f.s, "events_waits_summary_by_instance", nil))
	t.Logf("by_instance baselines: %d rows for %d live instances", n, live)
	if n > 2*live+per {
		t.Errorf("by_instance keeps %d baselines for %d live instances (%d destroyed instances' baselines never dropped)", n, live, n-live)
	}
}

// --- Concurrency -------------------------------------------------------------

// Every table read, queried and scanned while threads start and end, classes
// register, instances come and go, TRUNCATEs and setup changes run. Checks
// shape (a value per column, of the column's type) and summary consistency.
func TestReview10ConcurrentReadersAndWriters(t *testing.T) {
	f := newFixture(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var classes atomic.Int64
	run := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				fn(i)
			}
		}()
	}
	for w := range 4 {
		run(func(i int) {
			th := f.s.NewThread(f.thread, ThreadOptions{User: fmt.Sprintf("u%d", w), Host: fmt.Sprintf("h%d", i%3)})
			m := f.s.NewSyncInstance(f.mutex, "")
			for range 5 {
				waitOnce(m, th)
				waitOnce(f.m, th)
				var ws WaitState
				if f.s.BeginIdle(&ws, th) {
					ws.EndWait(-1)
				}
			}
			m.Destroy()
			th.End()
		})
	}
	run(func(i int) {
		if classes.Load() < 100 {
			f.s.Register(fmt.Sprintf("wait/synch/mutex/test/c%d", classes.Add(1)))
		}
		time.Sleep(time.Millisecond)
	})
	trunc := []string{"events_waits_summary_global_by_event_name", "events_waits_summary_by_account_by_event_name",
		"events_waits_summary_by_user_by_event_name", "events_waits_summary_by_host_by_event_name",
		"events_waits_summary_by_thread_by_event_name", "events_waits_summary_by_instance", "accounts", "users", "hosts",
		"events_waits_current", "events_waits_history", "events_waits_history_long", "file_summary_by_instance"}
	run(func(i int) {
		if err := f.s.Truncate(trunc[i%len(trunc)]); err != nil {
			t.Error(err)
		}
		time.Sleep(200 * time.Microsecond)
	})
	run(func(i int) {
		f.s.Update("setup_instruments", []string{"NAME LIKE 'wait/synch/mutex/test/c%'"}, map[string]Value{"ENABLED": i%2 == 0})
		f.s.Update("threads", []string{"THREAD_ID > 0"}, map[string]Value{"HISTORY": i%2 == 0})
		f.s.Insert("setup_actors", map[string]Value{"USER": fmt.Sprintf("x%d", i%5)})
		f.s.Delete("setup_actors", []string{fmt.Sprintf("USER = 'x%d'", (i+2)%5)})
	})
	deadline := time.Now().Add(2 * time.Second)
	var errs []string
	for time.Now().Before(deadline) && len(errs) < 10 {
		for _, name := range f.s.TableNames() {
			if name == "performance_timers" {
				continue
			}
			res, err := f.s.Query(name, Query{Order: res0Order(name)})
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			for _, r := range res.Rows {
				if len(r) != len(res.Columns) {
					errs = append(errs, fmt.Sprintf("%s: row of %d cells for %d columns", name, len(r), len(res.Columns)))
					break
				}
				for i, c := range res.Columns {
					if !typeOK(c.Type, r[i]) {
						errs = append(errs, fmt.Sprintf("%s.%s: %T %v", name, c.Name, r[i], r[i]))
					}
				}
			}
			if name == "events_waits_summary_global_by_event_name" || name == "events_waits_summary_by_account_by_event_name" {
				rows, err := Scan[struct{ WaitStats }](res)
				if err != nil {
					errs = append(errs, err.Error())
				}
				for _, r := range rows {
					w := r.WaitStats
					if w.CountStar == 0 && (w.SumTimerWait != 0 || w.MaxTimerWait != 0) || w.CountStar != 0 && w.SumTimerWait != 0 && !(w.MinTimerWait <= w.AvgTimerWait && w.AvgTimerWait <= w.MaxTimerWait && w.MaxTimerWait <= w.SumTimerWait) {
						errs = append(errs, fmt.Sprintf("%s: inconsistent %+v", name, w))
					}
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
}

func res0Order(name string) string { return "" }

func typeOK(t ColumnType, v Value) bool {
	if v == nil {
		return true
	}
	switch t {
	case ColString:
		_, ok := v.(string)
		return ok
	case ColUint, ColPicos:
		_, ok := v.(uint64)
		return ok
	case ColInt:
		_, ok := v.(int64)
		return ok
	}
	return false
}

// Scan's doc: "the engine's own row types scan back: SetupInstrumentsRow,
// WaitEvent, StatusVariable". WaitEvent's TIMER_*, END_EVENT_ID and
// NUMBER_OF_BYTES are valid=Timed / valid=!InProgress / valid=HasBytes, but
// Scan never sets those bools: a scanned timed event says Timed false (with
// TimerWait set), an event in progress says InProgress false (it ended), and
// an I/O wait with bytes says HasBytes false.
func TestReview10ScanWaitEventLosesValidFlags(t *testing.T) {
	f := newFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	waitOnce(f.m, th)
	var w WaitState
	if !f.m.BeginWait(&w, th, OpLock) { // in progress while we read
		t.Fatal("wait off")
	}
	defer w.EndWait(-1)
	for _, table := range []string{"events_waits_history", "events_waits_current"} {
		res, err := f.s.Select(table)
		if err != nil {
			t.Fatal(err)
		}
		direct := map[string][]WaitEvent{"events_waits_history": f.s.EventsWaitsHistory(), "events_waits_current": f.s.EventsWaitsCurrent()}[table]
		got, err := Scan[WaitEvent](res)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || len(got) != len(direct) {
			t.Fatalf("%s: %d scanned, %d direct", table, len(got), len(direct))
		}
		for i := range got {
			g, d := got[i], direct[i]
			if g.Timed != d.Timed || g.InProgress != d.InProgress || g.HasBytes != d.HasBytes {
				t.Errorf("%s row %d: scanned Timed=%v InProgress=%v HasBytes=%v (TimerWait %d, END_EVENT_ID %v); the table's row says Timed=%v InProgress=%v HasBytes=%v",
					table, i, g.Timed, g.InProgress, g.HasBytes, g.TimerWait, res.Rows[i][2], d.Timed, d.InProgress, d.HasBytes)
			}
		}
	}
}

// Holds: setup changes with MySQL's rules for untimed classes, ended
// threads, a DELETE that matches nothing, and a substitute timer.
func TestReview10SetupChangeEdgesHold(t *testing.T) {
	f := newFixture(t)
	n, err := f.s.Update("setup_instruments", []string{"NAME = " + QuoteString(f.thread.Name())}, map[string]Value{"TIMED": "NO", "ENABLED": "YES"})
	if err != nil || n != 1 {
		t.Errorf("UPDATE TIMED of a thread class: %d, %v", n, err)
	}
	res, _ := f.s.Query("setup_instruments", Query{Where: []string{"NAME = " + QuoteString(f.thread.Name())}})
	if res.Rows[0][2] != nil {
		t.Errorf("thread class TIMED after UPDATE: %v, want NULL", res.Rows[0][2])
	}
	th := f.s.NewThread(f.thread, ThreadOptions{})
	id := th.ID()
	th.End()
	if n, err := f.s.Update("threads", []string{fmt.Sprintf("THREAD_ID = %d", id)}, map[string]Value{"INSTRUMENTED": "NO"}); err != nil || n != 0 {
		t.Errorf("UPDATE threads of an ended thread: %d, %v", n, err)
	}
	if n, err := f.s.Delete("setup_actors", []string{"USER = 'nobody'"}); err != nil || n != 0 {
		t.Errorf("DELETE matching nothing: %d, %v", n, err)
	}
	if len(f.s.SetupActors()) != 1 {
		t.Errorf("DELETE matching nothing changed setup_actors: %v", f.s.SetupActors())
	}
	if n, err := f.s.Update("setup_timers", []string{"NAME = 'WAIT'"}, map[string]Value{"TIMER_NAME": "cycle"}); err != nil || n != 1 {
		t.Errorf("UPDATE setup_timers: %d, %v", n, err)
	}
	if n, err := f.s.Update("setup_timers", []string{"NAME = 'nope'"}, map[string]Value{"TIMER_NAME": "SUNDIAL"}); err != nil || n != 0 {
		t.Logf("UPDATE setup_timers matching no row with a bad timer: %d, %v (MySQL: the bad value is an error even when no row matches)", n, err)
	}
}

// Holds: COUNT_STAR of by_user, by_host (and of by_account for the TRUNCATEs
// that do not reach it) never goes down while threads end and by_thread,
// by_account and accounts are truncated.
func TestReview10FamilyMonotoneAcrossUnrelatedTruncates(t *testing.T) {
	f := newFixture(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: fmt.Sprintf("h%d", (w+i)%2)})
				for range 3 {
					waitOnce(f.m, th)
				}
				th.End()
			}
		}()
	}
	var truncating atomic.Value
	truncating.Store("")
	wg.Add(1)
	go func() {
		defer wg.Done()
		tables := []string{"events_waits_summary_by_thread_by_event_name", "events_waits_summary_by_account_by_event_name", "accounts"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.s.Truncate(tables[i%len(tables)])
			time.Sleep(300 * time.Microsecond)
		}
	}()
	last := map[string]uint64{}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		for _, tab := range []string{"events_waits_summary_by_user_by_event_name", "events_waits_summary_by_host_by_event_name"} {
			res, err := f.s.Query(tab, Query{Where: []string{"EVENT_NAME = " + QuoteString(f.mutex.Name())}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Rows {
				k := tab + "/" + r[0].(string)
				c := r[2].(uint64)
				if c < last[k] {
					t.Errorf("%s %s: COUNT_STAR went from %d to %d", tab, r[0], last[k], c)
				}
				last[k] = c
			}
		}
	}
	close(stop)
	wg.Wait()
}

// Holds: Like agrees with a regexp translation of the pattern (ASCII case
// folding, '\' escapes, a trailing '\' literal) on every pattern and subject
// over a small alphabet.
func TestReview10LikeDifferential(t *testing.T) {
	alpha := []string{"a", "B", "%", "_", `\`, "é"}
	var gen func(n int) []string
	gen = func(n int) []string {
		if n == 0 {
			return []string{""}
		}
		var out []string
		for _, p := range gen(n - 1) {
			for _, c := range alpha {
				out = append(out, p+c)
			}
		}
		return out
	}
	var pats, subs []string
	for n := 0; n <= 4; n++ {
		pats = append(pats, gen(n)...)
	}
	for n := 0; n <= 3; n++ {
		for _, s := range gen(n) {
			if !strings.ContainsAny(s, "%_") {
				subs = append(subs, s)
			}
		}
	}
	bad := 0
	for _, p := range pats {
		var re strings.Builder
		re.WriteString("(?s)^")
		for i := 0; i < len(p); {
			r, size := utf8.DecodeRuneInString(p[i:])
			switch {
			case r == '%':
				re.WriteString(".*")
			case r == '_':
				re.WriteString(".")
			case r == '\\' && i+size < len(p):
				r2, s2 := utf8.DecodeRuneInString(p[i+size:])
				re.WriteString(foldRe(r2))
				size += s2
			default:
				re.WriteString(foldRe(r))
			}
			i += size
		}
		re.WriteString("$")
		rx := regexp.MustCompile(re.String())
		for _, s := range subs {
			if got, want := Like(p, s), rx.MatchString(s); got != want {
				if bad++; bad < 10 {
					t.Errorf("Like(%q, %q) = %v, want %v", p, s, got, want)
				}
			}
		}
	}
}

func foldRe(r rune) string {
	if r < 0x80 && unicode.IsLetter(r) {
		return "[" + string(unicode.ToLower(r)) + string(unicode.ToUpper(r)) + "]"
	}
	return regexp.QuoteMeta(string(r))
}

// The same for by_thread with a thread per request: every TRUNCATE adds a
// baseline per live thread and class, and keeps those of every thread that
// ended; each TRUNCATE also copies the whole map.
func TestReview10ByThreadBaselinesGrowWithEndedThreads(t *testing.T) {
	f := newFixture(t)
	for range 50 {
		f.s.MustRegister(fmt.Sprintf("wait/synch/mutex/test/k%d", len(f.s.Classes())))
	}
	const rounds, live = 50, 40
	for range rounds {
		var ths []*Thread
		for range live {
			ths = append(ths, f.s.NewThread(f.thread, ThreadOptions{}))
		}
		if err := f.s.Truncate("events_waits_summary_by_thread_by_event_name"); err != nil {
			t.Fatal(err)
		}
		for _, th := range ths {
			th.End()
		}
	}
	f.s.readMu.RLock()
	n := len(f.s.baselines["events_waits_summary_by_thread_by_event_name"].(*summaryBase[statRow]).rows)
	f.s.readMu.RUnlock()
	rows := len(findRows(t, f.s, "events_waits_summary_by_thread_by_event_name", nil))
	t.Logf("by_thread: %d baselines, %d rows", n, rows)
	if n > 2*rows+live*len(f.s.Classes()) {
		t.Errorf("by_thread keeps %d baselines with %d rows shown: ended threads' baselines are never dropped", n, rows)
	}
}
