package pfscore

// Reproducers from the fresh-eyes review of the statement hot path
// (commits 725c9e7..cdcdadf: owned.Pointer ref cells, COUNT_STAR from the
// histogram, results added field by field, stmtMeta, the entry's digest and
// binding, LAST_SEEN's grain). Each test says FAILS (a bug on the code it was
// written against, with its root cause; fixed since: LAST_SEEN moves before
// the sample and, for the NULL row, before FIRST_SEEN, and readers load it
// last) or PASSES (a claim attacked without finding a bug, kept for
// coverage).

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/hwclock"
)

// FAILS. Claim 6: "LAST_SEEN >= QUERY_SAMPLE_SEEN in every read".
//
// Root cause: the writer replaces the sample first and moves LAST_SEEN
// after it (digestStats.maybeSample, digests.go: d.sample.CompareAndSwap,
// then the d.last loop), but the reader loads them in the same order
// (EventsStatementsSummaryByDigest, table_digests.go: LastSeen is loaded
// in the row literal, the sample after h.quantiles()). A sample replaced
// between the reader's two loads shows QUERY_SAMPLE_SEEN after LAST_SEEN.
// LAST_SEEN's grain (aggregate moves it at most once a millisecond) makes
// the loaded LAST_SEEN up to 1 ms older, so almost every replacement in the
// window shows.
//
// Fix (verified on a scratch copy: the test then passes, with and
// without -race): both sides must change. The writer moves LAST_SEEN to end
// before it stores the sample (maybeSample: the d.last loop, then
// d.sample.CompareAndSwap), and the reader loads the sample (and
// FIRST_SEEN) before LAST_SEEN. Reordering only the reader still fails
// without -race: a reader may see the new sample before the writer's
// LAST_SEEN move.
func TestReview15LastSeenBeforeQuerySampleSeenConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t)
	var stop atomic.Bool
	var wait atomic.Uint64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			for !stop.Load() {
				st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT * FROM t WHERE id = 1", Schema: "app"})
				// Ever longer waits: each statement replaces the sample.
				st.EndAt(st.start+wait.Add(1000), StatementResult{})
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	var bad string
	reads := 0
	for time.Now().Before(deadline) && bad == "" {
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			reads++
			if r.QuerySampleSeen != 0 && r.LastSeen < r.QuerySampleSeen {
				bad = fmt.Sprintf("LAST_SEEN %d < QUERY_SAMPLE_SEEN %d (by %d ps) after %d row reads", r.LastSeen, r.QuerySampleSeen, r.QuerySampleSeen-r.LastSeen, reads)
			}
			if r.LastSeen < r.FirstSeen {
				bad = fmt.Sprintf("LAST_SEEN %d < FIRST_SEEN %d", r.LastSeen, r.FirstSeen)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad != "" {
		t.Error(bad)
	}
}

// FAILS (a race: typically within a few hundred rounds, under -race and
// without). Claim 6: "LAST_SEEN >= FIRST_SEEN in every read", for the NULL
// row of a full digest table.
//
// Root cause: a regular record starts with FIRST_SEEN = LAST_SEEN (find
// sets both before it publishes the record), but the NULL row's FIRST_SEEN
// is set by a compare-and-swap in digestRecord (digests.go, the i < 0
// branch: tbl.null.stats.first.CompareAndSwap(0, now)) and its LAST_SEEN
// only later, by aggregate, which since cdcdadf moves it only when a
// statement ends more than lastSeenGrain after it (end > l+lastSeenGrain).
// Two statements A (ends at T) and B (ends at T-0.5 ms) that reach a full
// table together: A wins FIRST_SEEN = T, B aggregates first (LAST_SEEN =
// T-0.5 ms, from 0), A's aggregate then skips T (not a millisecond later).
// The row keeps LAST_SEEN < FIRST_SEEN for good (until a statement a
// millisecond later). Before cdcdadf, A's aggregate moved LAST_SEEN to T.
// Transiently, too: a reader between the CAS and the first aggregate sees
// FIRST_SEEN set and LAST_SEEN 0 (records() now shows the NULL row as soon
// as FIRST_SEEN is set, where it used to wait for a count).
//
// Fix (verified on a scratch copy): in digestRecord's i < 0 branch, move
// the NULL row's LAST_SEEN to now with the unconditional max-loop
// (end > l) before the FIRST_SEEN CompareAndSwap; readers load FIRST_SEEN
// before LAST_SEEN (they do). Then LAST_SEEN >= FIRST_SEEN in every read
// and for good, as for a regular record, whose find sets both before it
// publishes it.
func TestReview15NullRowLastSeenBeforeFirstSeenConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t, WithDigestsSize(1)) // the NULL row only
	const late = 500_000_000                   // 0.5 ms, within lastSeenGrain
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	for round := range rounds {
		if err := f.s.Truncate("events_statements_summary_by_digest"); err != nil {
			t.Fatal(err)
		}
		a := f.s.StartStatement(nil, f.sel, StatementInfo{Text: "SELECT a FROM t", Schema: "app"})
		b := f.s.StartStatement(nil, f.sel, StatementInfo{Text: "SELECT b FROM t", Schema: "app"})
		base := max(a.start, b.start) + 1_000_000
		// Both on their own core: B spins until A, once B is spinning,
		// lets both go.
		var wg sync.WaitGroup
		var bReady, goNow atomic.Bool
		wg.Add(2)
		go func() {
			defer wg.Done()
			for !bReady.Load() {
			}
			goNow.Store(true)
			a.EndAt(base+late, StatementResult{})
		}()
		go func() {
			defer wg.Done()
			bReady.Store(true)
			for !goNow.Load() {
			}
			b.EndAt(base, StatementResult{})
		}()
		wg.Wait()
		rows := f.s.EventsStatementsSummaryByDigest()
		if len(rows) != 1 || rows[0].Digest != "" || rows[0].CountStar != 2 {
			t.Fatalf("round %d: want the NULL row with COUNT_STAR 2, got %+v", round, rows)
		}
		if r := rows[0]; r.LastSeen < r.FirstSeen {
			t.Fatalf("round %d: NULL row after both statements ended: FIRST_SEEN %d > LAST_SEEN %d (by %d ps); A ended at %d, B at %d",
				round, r.FirstSeen, r.LastSeen, r.FirstSeen-r.LastSeen, base+late, base)
		}
	}
}

// PASSES. Claim 2: COUNT_STAR, SUM_TIMER_WAIT and the cumulative columns of
// the by-digest row never decrease between reads; MIN <= AVG <= MAX <= SUM;
// COUNT_STAR covers every statement whose sums were read (COUNT_STAR >=
// SUM_ERRORS, each statement reporting one error); TRUNCATE of
// events_statements_histogram_by_digest does not change COUNT_STAR. A
// goroutine flips the instrument's TIMED (UpdateInstruments) meanwhile, and
// the final row must count every statement exactly.
func TestReview15DigestCountStarMonotoneConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var ended atomic.Uint64
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var th *Thread
			if g == 0 {
				th = f.s.NewThread(f.thread, ThreadOptions{})
				defer th.End()
			}
			for i := 0; !stop.Load(); i++ {
				st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT x FROM t", Schema: "app"})
				var end uint64
				if st.Timed() {
					end = st.start + uint64(i%1000)*10_000_000 // 0 to 10 ms: many buckets
				}
				st.EndAt(end, StatementResult{Errors: 1, RowsSent: 2, Retries: 1, Cancelled: true, PoolTime: 3})
				ended.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // flip TIMED
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			timed := i%2 == 0
			on := true
			if _, err := f.s.UpdateInstruments(f.sel.Name(), &on, &timed); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	var prev DigestSummary
	for n := 0; time.Now().Before(deadline); n++ {
		if n%50 == 25 {
			before := f.s.EventsStatementsSummaryByDigest()
			if err := f.s.Truncate("events_statements_histogram_by_digest"); err != nil {
				t.Fatal(err)
			}
			after := f.s.EventsStatementsSummaryByDigest()
			if len(before) == 1 && len(after) == 1 && after[0].CountStar < before[0].CountStar {
				t.Fatalf("TRUNCATE of the histogram lowered COUNT_STAR %d to %d", before[0].CountStar, after[0].CountStar)
			}
		}
		rows := f.s.EventsStatementsSummaryByDigest()
		if len(rows) != 1 {
			continue
		}
		r := rows[0]
		if r.CountStar < prev.CountStar || r.SumTimerWait < prev.SumTimerWait || r.SumErrors < prev.SumErrors ||
			r.SumRowsSent < prev.SumRowsSent || r.CountRetries < prev.CountRetries || r.CountCancelled < prev.CountCancelled ||
			r.SumPoolTime < prev.SumPoolTime {
			t.Fatalf("a cumulative column went down:\nbefore %+v\nafter  %+v", prev, r)
		}
		if r.CountStar < r.SumErrors || r.CountStar < r.CountCancelled {
			t.Fatalf("COUNT_STAR %d < SUM_ERRORS %d / COUNT_CANCELLED %d: the count misses statements whose counters were read", r.CountStar, r.SumErrors, r.CountCancelled)
		}
		if r.CountStar > 0 && r.SumTimerWait > 0 && !(r.MinTimerWait <= r.AvgTimerWait && r.AvgTimerWait <= r.MaxTimerWait && r.MaxTimerWait <= r.SumTimerWait) {
			t.Fatalf("not MIN <= AVG <= MAX <= SUM: %+v", r.WaitStats)
		}
		if r.LastSeen < r.FirstSeen {
			t.Fatalf("LAST_SEEN %d < FIRST_SEEN %d", r.LastSeen, r.FirstSeen)
		}
		prev = r
	}
	stop.Store(true)
	wg.Wait()
	rows := f.s.EventsStatementsSummaryByDigest()
	if len(rows) != 1 || rows[0].CountStar != ended.Load() || rows[0].SumErrors != ended.Load() || rows[0].CountCancelled != ended.Load() ||
		rows[0].CountRetries != ended.Load() || rows[0].SumPoolTime != 3*ended.Load() || rows[0].SumRowsSent != 2*ended.Load() {
		t.Errorf("after %d statements: %+v", ended.Load(), rows)
	}
}

// PASSES. Claim 3: every counter of StatementResult counts, in every
// summary: by thread, account, user, host, global (live and ended
// threads), by digest, and threadless.
func TestReview15EveryStatementCounterCounts(t *testing.T) {
	f := newStmtFixture(t)
	r := StatementResult{RowsAffected: 1, RowsSent: 2, RowsExamined: 3, Errors: 4, Warnings: 5, Message: "m",
		PoolTime: 6, DriverTime: 7, FetchTime: 8, Retries: 9, Cancelled: true}
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	f.run(th, f.sel, "SELECT 1", r)
	f.run(nil, f.sel, "SELECT 1", r) // threadless
	want := func(table string, where map[string]Value, n uint64) {
		t.Helper()
		rows := findRows(t, f.s, table, where)
		if len(rows) != 1 {
			t.Errorf("%s where %v: %d rows", table, where, len(rows))
			return
		}
		row := rows[0]
		for col, per := range map[string]uint64{"COUNT_STAR": 1, "SUM_ROWS_AFFECTED": 1, "SUM_ROWS_SENT": 2, "SUM_ROWS_EXAMINED": 3,
			"SUM_ERRORS": 4, "SUM_WARNINGS": 5, "SUM_POOL_TIME": 6, "SUM_DRIVER_TIME": 7, "SUM_FETCH_TIME": 8,
			"COUNT_RETRIES": 9, "COUNT_CANCELLED": 1} {
			if got, _ := row[col].(uint64); got != per*n {
				t.Errorf("%s where %v: %s = %v, want %d", table, where, col, row[col], per*n)
			}
		}
	}
	sel := map[string]Value{"EVENT_NAME": f.sel.Name()}
	want("events_statements_summary_global_by_event_name", sel, 2)
	want("events_statements_summary_by_thread_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "THREAD_ID": th.ID()}, 1)
	want("events_statements_summary_by_account_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "USER": "alice", "HOST": "web1"}, 1)
	want("events_statements_summary_by_user_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "USER": "alice"}, 1)
	want("events_statements_summary_by_host_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "HOST": "web1"}, 1)
	want("events_statements_summary_by_digest", map[string]Value{"SCHEMA_NAME": "app"}, 2)
	th.End() // rolled up into the account and the global rows
	want("events_statements_summary_global_by_event_name", sel, 2)
	want("events_statements_summary_by_account_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "USER": "alice", "HOST": "web1"}, 1)
	want("events_statements_summary_by_user_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "USER": "alice"}, 1)
	want("events_statements_summary_by_host_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name(), "HOST": "web1"}, 1)
}

// PASSES. Claim 4: many goroutines start the same new text at once (the
// entry's digest is published once, copies computed meanwhile): every
// row's DIGEST and DIGEST_TEXT are the text's, and by_digest has one row
// counting every statement. Each round uses a text never seen before.
func TestReview15ConcurrentFirstDigestConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t, WithStatementsHistorySize(4))
	const g = 8
	threads := make([]*Thread, g)
	for i := range threads {
		threads[i] = f.s.NewThread(f.thread, ThreadOptions{})
	}
	defer func() {
		for _, th := range threads {
			th.End()
		}
	}()
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		text := fmt.Sprintf("SELECT c%d, 'x' FROM t%d WHERE id IN (1, 2, 3)", round, round)
		wantDigest := digest.StatementDigest(text).Hex()
		var wg sync.WaitGroup
		gate := make(chan struct{})
		var mu sync.Mutex
		var seen []string
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				st := f.s.StartSQL(threads[i], StatementInfo{Text: text, Schema: fmt.Sprintf("s%d", i%2)})
				mu.Lock()
				seen = append(seen, st.digest().digest.Hex())
				mu.Unlock()
				st.End(StatementResult{})
			}()
		}
		close(gate)
		wg.Wait()
		for _, d := range seen {
			if d != wantDigest {
				t.Fatalf("round %d: a statement's digest %s, want %s", round, d, wantDigest)
			}
		}
		n := 0
		for _, e := range f.s.EventsStatementsHistory() {
			if e.SQLText != text {
				continue
			}
			n++
			if e.Digest != wantDigest || !strings.HasPrefix(e.DigestText, "SELECT `c") {
				t.Fatalf("round %d: history row DIGEST %s DIGEST_TEXT %q, want %s", round, e.Digest, e.DigestText, wantDigest)
			}
		}
		if n != g {
			t.Fatalf("round %d: %d history rows of the text, want %d", round, n, g)
		}
		var count uint64
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			if r.Digest == wantDigest {
				count += r.CountStar
			}
		}
		if count != g {
			t.Fatalf("round %d: by_digest counts %d statements of the text, want %d", round, count, g)
		}
	}
}

// PASSES. Claim 4: SetText replaces the digest (in the current row, the
// history row and by_digest), also to a text without tokens (NULL) and to
// no text; nested statements keep levels 0-9 and the 11th is lost; a
// statement keeps its own timer when setup_timers changes mid-statement.
func TestReview15StatementMetaLevelsTimerSetText(t *testing.T) {
	f := newStmtFixture(t, WithStatementsHistorySize(16))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()

	// SetText.
	st := f.s.StartStatement(th, f.req, StatementInfo{Text: "SELECT 1", Schema: "app"})
	st.SetText("GET /users/{id}", true)
	cur := f.s.EventsStatementsCurrent()
	want := digest.Digest(sha256.Sum256([]byte("GET /users/{id}"))).Hex()
	if len(cur) != 1 || cur[0].SQLText != "GET /users/{id}" || cur[0].DigestText != "GET /users/{id}" || cur[0].Digest != want {
		t.Fatalf("after SetText: %+v", cur)
	}
	st.End(StatementResult{})
	if rows := findRows(t, f.s, "events_statements_summary_by_digest", map[string]Value{"DIGEST": want}); len(rows) != 1 {
		t.Errorf("by_digest has no row for the replaced text")
	}
	if rows := findRows(t, f.s, "events_statements_summary_by_digest", map[string]Value{"DIGEST": digest.StatementDigest("SELECT 1").Hex()}); len(rows) != 0 {
		t.Errorf("by_digest counts the replaced text's digest")
	}
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2", Schema: "app"})
	st.SetText("/* ping */", false)
	st.End(StatementResult{})
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3", Schema: "app"})
	st.SetText("", false)
	st.End(StatementResult{})
	h := f.s.EventsStatementsHistory()
	if n := len(h); n < 2 || h[n-2].Digest != "" || h[n-2].DigestText != "" || h[n-2].SQLText != "/* ping */" ||
		h[n-1].Digest != "" || h[n-1].SQLText != "" {
		t.Errorf("SetText to a text without tokens, and to none: %+v", h[max(0, len(h)-2):])
	}

	// Levels.
	var stack []Statement
	for i := range statementStackDepth + 1 {
		stack = append(stack, f.s.StartStatement(th, f.sel, StatementInfo{Text: fmt.Sprintf("SELECT %d", i)}))
	}
	cur = f.s.EventsStatementsCurrent()
	if len(cur) != statementStackDepth {
		t.Fatalf("%d current rows for %d nested statements, want %d", len(cur), statementStackDepth+1, statementStackDepth)
	}
	for i, e := range cur {
		if e.NestingEventLevel != uint64(i) || e.SQLText != fmt.Sprintf("SELECT %d", i) {
			t.Errorf("level %d: NESTING_EVENT_LEVEL %d SQL_TEXT %q", i, e.NestingEventLevel, e.SQLText)
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if i < statementStackDepth && stack[i].meta.level() != i {
			t.Errorf("statement %d has level %d", i, stack[i].meta.level())
		}
		stack[i].SetText(fmt.Sprintf("SELECT %d, 0", i), false)
		stack[i].End(StatementResult{RowsSent: uint64(i)})
	}
	h = f.s.EventsStatementsHistory()
	h = h[len(h)-statementStackDepth:]
	for j, e := range h {
		i := statementStackDepth - 1 - j
		if e.NestingEventLevel != uint64(i) || e.RowsSent != uint64(i) || e.SQLText != fmt.Sprintf("SELECT %d, 0", i) {
			t.Errorf("history, level %d: %+v", i, e)
		}
	}

	// Timer changed mid-statement.
	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Nanosecond)
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 4"})
	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Tick)
	if st.meta.timer() != hwclock.Nanosecond || st.meta.level() != 0 || st.meta&(sfTimed|sfThread|sfEvent|sfDigest) != sfTimed|sfThread|sfEvent|sfDigest {
		t.Errorf("meta %#x: timer %v level %d", uint32(st.meta), st.meta.timer(), st.meta.level())
	}
	time.Sleep(2 * time.Millisecond)
	before := hwclock.Nanosecond.Now()
	if n := st.Now(); n < before-1_000_000_000 {
		t.Errorf("Now %d reads another timer than NANOSECOND (%d)", n, before)
	}
	st.End(StatementResult{})
	h = f.s.EventsStatementsHistory()
	if e := h[len(h)-1]; e.TimerWait < 2_000_000_000 || e.TimerWait > 10_000_000_000_000 {
		t.Errorf("TIMER_WAIT %d ps for a 2 ms statement timed by NANOSECOND, the timer changed to TICK midway", e.TimerWait)
	}
	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Nanosecond)
}

// PASSES. Claim 5: the entry's binding finds the right record after a
// TRUNCATE of the digest table, for the same text under different schemas
// (alternating, and a caller's schema buffer reused), and with concurrent
// first statements.
func TestReview15DigestBindingConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t)
	text := "SELECT * FROM t WHERE id = 7"
	d := digest.StatementDigest(text).Hex()
	countOf := func(schema string) uint64 {
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			if r.Digest == d && r.SchemaName == schema {
				return r.CountStar
			}
		}
		return 0
	}
	buf := []byte("app1")
	for i := range 10 {
		buf[3] = byte('1' + i%2)
		schema := string(buf) // a fresh string each time
		st := f.s.StartStatement(nil, f.sel, StatementInfo{Text: text, Schema: schema})
		st.End(StatementResult{})
	}
	if countOf("app1") != 5 || countOf("app2") != 5 {
		t.Fatalf("alternating schemas: app1 %d app2 %d, want 5 and 5", countOf("app1"), countOf("app2"))
	}
	for round := range 20 {
		if err := f.s.Truncate("events_statements_summary_by_digest"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				for i := range 50 {
					st := f.s.StartStatement(nil, f.sel, StatementInfo{Text: text, Schema: fmt.Sprintf("app%d", (g+i)%3)})
					st.End(StatementResult{})
				}
			}()
		}
		close(gate)
		wg.Wait()
		var total uint64
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			if r.Digest != d {
				t.Fatalf("round %d: a row of another digest: %+v", round, r)
			}
			total += r.CountStar
		}
		if total != 200 || countOf("app0") == 0 || countOf("app1") == 0 || countOf("app2") == 0 {
			t.Fatalf("round %d: %d statements counted (app0 %d app1 %d app2 %d), want 200", round, total, countOf("app0"), countOf("app1"), countOf("app2"))
		}
		for s := range 3 {
			// 4 goroutines, 50 statements each: schema (g+i)%3.
			var want uint64
			for g := range 4 {
				for i := range 50 {
					if (g+i)%3 == s {
						want++
					}
				}
			}
			if got := countOf(fmt.Sprintf("app%d", s)); got != want {
				t.Fatalf("round %d: app%d counts %d, want %d", round, s, got, want)
			}
		}
	}
}

// PASSES. Claim 1: a validated statement row's strings are exactly those
// written with it, and alive: statements whose texts are fresh allocations
// (longer than the cache keeps, cut to max_sql_text_length: a new string a
// statement, referenced by the rows alone) and fresh schema and message
// strings, while the collector runs; readers check each row's strings
// against its numbers.
func TestReview15StatementRowStringsConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t, WithStatementsHistorySize(8), WithStatementsHistoryLongSize(64), WithMaxSQLTextLength(64))
	var stop atomic.Bool
	var wg sync.WaitGroup
	pad := strings.Repeat(" ", maxCachedText)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			for i := uint64(1); !stop.Load(); i++ {
				n := uint64(g)<<32 | i
				text := fmt.Sprintf("SELECT %020d", n) + pad // uncached: a clone, then a cut copy
				st := f.s.StartStatement(th, f.sel, StatementInfo{Text: text, Schema: fmt.Sprintf("s%020d", n)})
				st.End(StatementResult{RowsSent: n, Message: fmt.Sprintf("m%020d", n)})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			runtime.GC()
		}
	}()
	check := func(e StatementEvent) string {
		if e.SQLText == "" {
			return ""
		}
		n := e.RowsSent
		if e.InProgress {
			var x uint64
			if _, err := fmt.Sscanf(e.SQLText, "SELECT %d", &x); err != nil {
				return fmt.Sprintf("SQL_TEXT %q", e.SQLText)
			}
			n = x
		} else if e.MessageText != fmt.Sprintf("m%020d", n) {
			return fmt.Sprintf("ROWS_SENT %d but MESSAGE_TEXT %q", n, e.MessageText)
		}
		if want := fmt.Sprintf("SELECT %020d", n); !strings.HasPrefix(e.SQLText, want) || e.CurrentSchema != fmt.Sprintf("s%020d", n) {
			return fmt.Sprintf("row %d: SQL_TEXT %q CURRENT_SCHEMA %q", n, e.SQLText, e.CurrentSchema)
		}
		return ""
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, rows := range [][]StatementEvent{f.s.EventsStatementsCurrent(), f.s.EventsStatementsHistory(), f.s.EventsStatementsHistoryLong()} {
			for _, e := range rows {
				if bad := check(e); bad != "" {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("a validated row's strings are not its own: %s", bad)
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
}
