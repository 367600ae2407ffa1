package pfscore

// Reproducers from the fresh-eyes review of statements and transactions
// (commit 08c1df8) and of the rings' ref cells (dfbe2a0). Each test FAILS
// on the code it was written against; its comment says what the defect is
// and what the expected behaviour is.

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/otelpfs/otelpfs/hwclock"
)

// r12Row returns the one row of table matching where (fails otherwise).
func r12Row(t *testing.T, s *Schema, table string, where map[string]Value) map[string]Value {
	t.Helper()
	rows := findRows(t, s, table, where)
	if len(rows) != 1 {
		t.Fatalf("%s where %v: %d rows, want 1", table, where, len(rows))
	}
	return rows[0]
}

// r12Gc runs the collector until cond holds, or gives up.
func r12Gc(cond func() bool) bool {
	for range 20 {
		runtime.GC()
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// Defect: Statement is a value ("a value the caller keeps"), and End makes
// only the variable it is called on inert (st.s = nil). A copy ended again
// (a helper that takes the Statement by value, a deferred End plus an
// explicit one) finds the statement gone from its thread's stack, and
// End's fallback for "thread part dropped" counts it a second time: in the
// global summary by event name, the by-digest row and both histograms.
// MySQL's locker is a pointer and cannot be ended twice.
//
// Expected: a statement counts once however many copies of its Statement
// are ended (e.g. a per-thread end sequence or a one-shot token shared by
// the copies, so that a stale End is recognised and ignored instead of
// being taken for an abandoned statement).
func TestReview12StatementCopyEndedTwiceCountsTwice(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1", Schema: "app"})
	cp := st
	st.End(StatementResult{})
	cp.End(StatementResult{}) // a stale copy

	if n := count(t, f.s, "events_statements_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name()}); n != 1 {
		t.Errorf("global COUNT_STAR %d after one statement ended through two copies, want 1", n)
	}
	if rows := f.s.EventsStatementsSummaryByDigest(); len(rows) != 1 || rows[0].CountStar != 1 {
		t.Errorf("by digest: %+v, want COUNT_STAR 1", rows)
	}
	var hist uint64
	for _, b := range f.s.EventsStatementsHistogramGlobal() {
		hist += b.CountBucket
	}
	if hist != 1 {
		t.Errorf("events_statements_histogram_global counts %d statements, want 1", hist)
	}
}

// Defect: with events_statements_current OFF (thread_instrumentation on),
// statements push the thread's stack with EVENT_ID 0, and endStatement's
// "is it still mine" check is t.stmts[level].id == st.id: 0 == 0. A stale
// copy of an ended statement therefore pops whatever statement is now at
// its level, here a later statement of another class: the live
// statement's own End then finds it gone, drops its thread part and
// counts Performance_schema_thread_events_lost, so it is missing from
// events_statements_summary_by_thread/by_account/... (and the stale copy
// is counted in them instead). Waits and stages of the live statement
// also stop nesting in it.
//
// Expected: a statement's identity on the stack does not depend on it
// having a current row (give every pushed level a per-thread sequence
// number, whether or not it has an EVENT_ID).
func TestReview12StaleStatementCopyPopsLiveStatement(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsStatementsCurrent, false))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	a := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
	stale := a
	a.End(StatementResult{})
	b := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET /x", Normalized: true})
	lost0 := status(f.s, "Performance_schema_thread_events_lost")
	stale.End(StatementResult{}) // must not touch b
	b.End(StatementResult{})

	if n := r11Count(t, f.s, "events_statements_summary_by_thread_by_event_name",
		map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.req.Name()}); n != 1 {
		t.Errorf("by_thread COUNT_STAR of the live statement %d, want 1: a stale copy popped it off the stack", n)
	}
	if lost := status(f.s, "Performance_schema_thread_events_lost") - lost0; lost != 0 {
		t.Errorf("thread_events_lost grew by %d: the live statement's End found it gone", lost)
	}
}

// Defect: the same for transactions. With events_transactions_current
// OFF, a transaction's identity is t.trx.id == 0, so a stale copy of an
// ended Transaction ends the thread's next transaction: its access mode,
// time and thread-level statistics are replaced by the stale copy's, and
// the real transaction's End is dropped to the unthreaded totals. Here
// the live transaction is READ ONLY and the stale one READ WRITE: the
// by-thread summary shows one more read-write and no read-only
// transaction.
//
// Expected: a stale Transaction never ends another transaction.
func TestReview12StaleTransactionCopyEndsLiveTransaction(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsTransactionsCurrent, false))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	tx := f.s.StartTransaction(th, TransactionInfo{})
	stale := tx
	tx.End(true)
	live := f.s.StartTransaction(th, TransactionInfo{ReadOnly: true})
	stale.End(true) // must not end live
	live.End(true)

	row := r12Row(t, f.s, "events_transactions_summary_by_thread_by_event_name",
		map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": "transaction"})
	if row["COUNT_READ_ONLY"] != uint64(1) || row["COUNT_READ_WRITE"] != uint64(1) {
		t.Errorf("by_thread: READ_ONLY %v READ_WRITE %v, want 1 and 1: a stale copy ended the live transaction",
			row["COUNT_READ_ONLY"], row["COUNT_READ_WRITE"])
	}
}

// Defect: a Transaction copy ended twice counts twice (with
// events_transactions_current on, the second End falls back to the
// unthreaded totals), as statements do.
//
// Expected: one transaction, one count.
func TestReview12TransactionCopyEndedTwiceCountsTwice(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	tx := f.s.StartTransaction(th, TransactionInfo{})
	cp := tx
	tx.End(true)
	cp.End(true)
	if n := count(t, f.s, "events_transactions_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "transaction"}); n != 1 {
		t.Errorf("global COUNT_STAR %d after one transaction ended through two copies, want 1", n)
	}
}

// Defect (memory): TRUNCATE events_statements_summary_by_digest replaces
// the digest table, but every cached statement entry keeps a
// digestBinding whose table field points at the table of its last
// statement. A text not run since the TRUNCATE pins its whole old table:
// the open-addressing index (2*WithDigestsSize pointers: 256 KiB at the
// default 10,000) and every record in it (each with a 450-bucket
// histogram, 3.6 KiB). A tool that truncates the digest table after each
// collection, with a long tail of texts, keeps one old table alive per
// distinct "last collection period" among the up to 4096 cached entries:
// up to 4096 tables, GiBs.
//
// Expected: an old digest table is garbage once no statement in flight
// uses it (bind to a table generation number, or a weak pointer, instead
// of the *digestTable).
func TestReview12OldDigestTablesPinnedByCacheBindings(t *testing.T) {
	f := newStmtFixture(t)
	var live atomic.Int64
	const periods = 20
	for i := range periods {
		tbl := f.s.digests.Load()
		live.Add(1)
		runtime.AddCleanup(tbl, func(n *atomic.Int64) { n.Add(-1) }, &live)
		// A text that runs once in this collection period and never again.
		f.run(nil, f.sel, fmt.Sprintf("SELECT c%d FROM t", i), StatementResult{})
		if err := f.s.Truncate("events_statements_summary_by_digest"); err != nil {
			t.Fatal(err)
		}
	}
	// The schema (and its statement cache) stays in use.
	if !r12Gc(func() bool { return live.Load() == 0 }) {
		t.Errorf("%d of %d truncated digest tables are still reachable (pinned by the statement cache's bindings)", live.Load(), periods)
	}
	f.run(nil, f.sel, "SELECT 1", StatementResult{})
	runtime.KeepAlive(f)
}

// Defect (doc and cost): doc.go says "Digests are computed once per
// distinct text (the statement cache), and only while statements_digest
// is on". StartSQL always goes through stmtCache.lookup, which normalizes
// and hashes the text on a miss whatever the consumer says, and for texts
// over maxCachedText (bulk INSERTs) on every call: the full digest cost
// is paid with statements_digest OFF, where only SQLCommand(text) is
// needed.
//
// Expected: with statements_digest off, StartSQL classifies the text
// without normalizing it (cache the class apart from the digest, or
// compute the digest lazily when the consumer is on).
func TestReview12StartSQLDigestsWithStatementsDigestOff(t *testing.T) {
	s := newTestSchema(t, WithConsumer(ConsumerStatementsDigest, false))
	st := s.StartSQL(nil, StatementInfo{Text: "SELECT a FROM t WHERE id = 7"})
	st.End(StatementResult{})
	for i := range s.stmtCache.slots {
		if e := s.stmtCache.slots[i].Load(); e != nil && e.dg.Load() != nil {
			t.Errorf("statements_digest is off, yet the text was normalized and digested: %q -> %q", e.text, e.dg.Load().text)
		}
	}
}

// Defect: maybeSample's age test is end-cur.seen > maxAge on uint64. A
// statement whose end is before the current sample's (two goroutines
// ending statements of one digest: the later-ending one sampled first;
// or statements of one digest measured by different timers, e.g. an
// untimed one whose end is read on CYCLE and a timed one on a coarser
// timer) underflows to ~2^64 and is taken for "the sample is older than
// max_digest_sample_age": a shorter statement replaces a fresh sample of a
// longer one. MySQL's rule replaces only on a longer wait or a sample
// older than the age.
//
// Expected: a sample seen after this statement's end is never "old"
// (compare end > cur.seen && end-cur.seen > maxAge).
func TestReview12QuerySampleAgeUnderflow(t *testing.T) {
	var d digestStats
	d.init()
	const sec = uint64(1e12)
	const age = 60 * sec
	d.maybeSample("SELECT slow", true, 5*sec, 100*sec, age, 1024, nil)
	// Ended 1 ps before the sample's statement, waited 1 ps.
	d.maybeSample("SELECT fast", true, 1, 100*sec-1, age, 1024, nil)
	if q := d.sample.Load(); q.text != "SELECT slow" {
		t.Errorf("QUERY_SAMPLE_TEXT %q: a shorter statement replaced a fresh sample of a longer one (age underflow)", q.text)
	}
}

// Defect: SQL_TEXT's "..." differs from MySQL's format_sqltext
// (table_helper.cc): MySQL removes the last three CHARACTERS of the
// clipped text, and only when it has more than three, then appends "...".
// showText removes three BYTES (and the character they split): with
// multi-byte text it keeps one character too many, and a clip of three
// characters or fewer becomes "..." alone where MySQL shows the
// characters.
//
// Expected: "日本語日本" (15 bytes, 5 characters) shows as "日本..."; "SE"
// as "SE"; with performance_schema_max_sql_text_length 0 nothing is kept
// and SQL_TEXT is NULL, not "...".
func TestReview12SQLTextEllipsisCountsCharacters(t *testing.T) {
	for _, tc := range []struct {
		max        int
		text, want string
	}{
		{15, "日本語日本語日本語", "日本..."},
		{2, "SELECT 1", "SE"},
		{0, "SELECT 1", ""}, // nothing kept: NULL, as MySQL shows an empty text
	} {
		f := newStmtFixture(t, WithMaxSQLTextLength(tc.max))
		th := f.s.NewThread(f.thread, ThreadOptions{})
		f.run(th, f.req, tc.text, StatementResult{})
		h := f.s.EventsStatementsHistory()
		if len(h) != 1 || h[0].SQLText != tc.want {
			t.Errorf("max_sql_text_length %d, %q: SQL_TEXT %q, want %q (MySQL's format_sqltext)", tc.max, tc.text, h[0].SQLText, tc.want)
		}
		th.End()
	}
}

// Defect: SQLCommand mislabels common statements, or names classes MySQL
// does not have (statement/sql/<name> is MySQL's com_status_vars name,
// sql/mysqld.cc):
//   - WITH ... UPDATE/DELETE/INSERT (MySQL 8 and PostgreSQL CTE DML) is
//     "select";
//   - SHOW GLOBAL|SESSION STATUS|VARIABLES, SHOW FULL PROCESSLIST|TABLES|
//     COLUMNS, SHOW TABLE STATUS, SHOW ENGINE ... STATUS are "show_other";
//   - SHOW COLUMNS/FIELDS is "show_columns" (MySQL: show_fields), SHOW
//     ENGINES "show_engines" (MySQL: show_storage_engines), every SHOW
//     CREATE "show_create_table" (MySQL: show_create_db, _proc, _func,
//     _trigger, _event, _user);
//   - DESCRIBE/DESC <table> is "explain_other" (MySQL: show_fields);
//   - CREATE DEFINER=... PROCEDURE/TRIGGER/FUNCTION/EVENT is "create_view";
//   - SHOW SCHEMAS is "show_other" (MySQL: show_databases), DROP PREPARE
//     "other" (MySQL: dealloc_sql), RENAME TABLE "other" (MySQL:
//     rename_table);
//   - a mysqldump-style versioned comment /*!40101 SET ... */, which MySQL
//     executes, is "empty_query".
//
// Expected: the MySQL names below.
func TestReview12SQLCommandMySQLNames(t *testing.T) {
	for text, want := range map[string]string{
		"WITH c AS (SELECT id FROM t) UPDATE t SET a = 1 WHERE id IN (SELECT id FROM c)": "update",
		"WITH c AS (SELECT id FROM t) DELETE FROM t WHERE id IN (SELECT id FROM c)":      "delete",
		"WITH c AS (SELECT 1 AS a) INSERT INTO t (a) SELECT a FROM c":                    "insert_select",
		"SHOW GLOBAL STATUS":                               "show_status",
		"SHOW SESSION VARIABLES LIKE 'max%'":               "show_variables",
		"SHOW FULL PROCESSLIST":                            "show_processlist",
		"SHOW FULL TABLES":                                 "show_tables",
		"SHOW COLUMNS FROM t":                              "show_fields",
		"SHOW FULL COLUMNS FROM t":                         "show_fields",
		"SHOW TABLE STATUS":                                "show_table_status",
		"SHOW ENGINE INNODB STATUS":                        "show_engine_status",
		"SHOW ENGINES":                                     "show_storage_engines",
		"SHOW CREATE DATABASE d":                           "show_create_db",
		"SHOW CREATE PROCEDURE p":                          "show_create_proc",
		"DESCRIBE t":                                       "show_fields",
		"CREATE DEFINER=`root`@`%` PROCEDURE p() SELECT 1": "create_procedure",
		"CREATE DEFINER=CURRENT_USER TRIGGER trg BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1": "create_trigger",
		"SHOW SCHEMAS":                  "show_databases",
		"DESC t":                        "show_fields",
		"DROP PREPARE s":                "dealloc_sql",
		"RENAME TABLE a TO b":           "rename_table",
		"/*!40101 SET NAMES utf8mb4 */": "set_option",
	} {
		if got := sqlCommand(text); got != want {
			t.Errorf("sqlCommand(%q) = %q, want %q", text, got, want)
		}
	}
}

// Documented difference (doc.go, "Differences from MySQL"): the
// statement and transaction summaries keep their MIN/MAX in the threads'
// epoch group, with the wait and stage summaries by thread, account, user
// and host, so a TRUNCATE of one of those (or of a wait or stage global
// summary) restarts the statement and transaction extremes too, widened to
// AVG; counts and sums never move. MySQL's TRUNCATE of a wait summary
// leaves them alone. This test pins what the documentation says: the
// counts and sums survive, and MIN <= AVG <= MAX still holds.
func TestReview12WaitTruncateRestartsStatementExtremes(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	f.run(th, f.sel, "SELECT 1", StatementResult{})
	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2"})
	tx := f.s.StartTransaction(th, TransactionInfo{})
	time.Sleep(3 * time.Millisecond)
	tx.End(true)
	st.End(StatementResult{})
	tx = f.s.StartTransaction(th, TransactionInfo{})
	tx.End(true)

	read := func() [2]map[string]Value {
		return [2]map[string]Value{
			r12Row(t, f.s, "events_statements_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name()}),
			r12Row(t, f.s, "events_transactions_summary_global_by_event_name", map[string]Value{"EVENT_NAME": "transaction"}),
		}
	}
	before := read()
	if err := f.s.Truncate("events_waits_summary_global_by_event_name"); err != nil {
		t.Fatal(err)
	}
	after := read()
	for i := range after {
		for _, c := range []string{"COUNT_STAR", "SUM_TIMER_WAIT"} {
			if before[i][c] != after[i][c] {
				t.Errorf("%s went from %v to %v after a wait TRUNCATE", c, before[i][c], after[i][c])
			}
		}
		lo, avg, hi := after[i]["MIN_TIMER_WAIT"].(uint64), after[i]["AVG_TIMER_WAIT"].(uint64), after[i]["MAX_TIMER_WAIT"].(uint64)
		if !(lo <= avg && avg <= hi) {
			t.Errorf("not MIN <= AVG <= MAX after a wait TRUNCATE: %d %d %d", lo, avg, hi)
		}
	}
}

// Defect: MySQL's digest array has performance_schema_digests_size
// records, record 0 being the NULL row (pfs_digest.cc: index 0 is
// reserved, new digests take indexes 1..size-1), so
// events_statements_summary_by_digest never has more than digests_size
// rows. Here WithDigestsSize(n) admits n distinct digests and the NULL row
// on top: n+1 rows, although its doc says it "bounds the rows of
// events_statements_summary_by_digest".
//
// Expected: at most n rows, the NULL row included (n-1 digests).
func TestReview12DigestsSizeCountsTheNullRow(t *testing.T) {
	f := newStmtFixture(t, WithDigestsSize(2))
	for _, q := range []string{"SELECT 1", "SELECT a FROM t", "SELECT b FROM t"} {
		f.run(nil, f.sel, q, StatementResult{})
	}
	if rows := f.s.EventsStatementsSummaryByDigest(); len(rows) > 2 {
		t.Errorf("WithDigestsSize(2) gave %d rows of events_statements_summary_by_digest", len(rows))
	}
}

// Defect (memory): clipText copies a text only when it cuts it; a short
// SQL_TEXT is stored in the current row, the history rings and the
// digest's QUERY_SAMPLE_TEXT as the caller's string itself. When that
// string is a slice of a larger one (statements split from a script, a
// query sliced out of a request body or a log line), every ring row and
// the sample pin the whole backing array: here 9 MiB for an 8-byte
// statement, for as long as events_statements_history_long keeps the row
// (10,000 rows by default) or the digest keeps the sample. clipText's
// comment says it copies "so that a long statement is not kept whole".
// Since 353ea88 ("the cache keeps the caller's text") the statement
// cache's entry pins it too, for as long as the entry stays in the cache
// (up to 4096 entries, each possibly pinning an arbitrarily large buffer).
//
// Expected: the engine keeps its own copy of the bytes it shows: the cache
// entry clones its text once (at most maxCachedText bytes, once per
// distinct text), and SQL_TEXT and QUERY_SAMPLE_TEXT point at e.text when
// e.text == text (a clone otherwise).
func TestReview12ShortTextPinsCallersBuffer(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	var freed atomic.Bool
	func() {
		script := strings.Repeat("SELECT 1;", 1<<20) // 9 MiB, read from a file say
		runtime.AddCleanup(unsafe.StringData(script), func(b *atomic.Bool) { b.Store(true) }, &freed)
		first := script[:8] // "SELECT 1"
		st := f.s.StartSQL(th, StatementInfo{Text: first, Schema: "app"})
		st.End(StatementResult{})
	}()
	// Push the statement out of the thread's current row and history, so
	// that only history_long and the digest sample hold it.
	for range 20 {
		f.run(th, f.sel, "SELECT 2", StatementResult{})
	}
	if !r12Gc(freed.Load) {
		t.Errorf("a 9 MiB buffer is still alive because an 8-byte SQL_TEXT sliced from it sits in history_long, QUERY_SAMPLE_TEXT and the statement cache")
	}
}

// Defect (memory): a Normalized statement's DIGEST_TEXT is its whole text,
// unclipped by max_digest_length (or anything): each digest record, cache
// entry and current/history row keeps it. MySQL bounds DIGEST_TEXT by
// max_digest_length bytes of token stream, so the by-digest table's memory
// is bounded by digests_size x max_digest_length; here an application
// that passes a long route, GraphQL document or RPC payload as the
// normalized text makes each of the 10,000 digest rows as large as that
// text.
//
// Expected: DIGEST_TEXT (and the bytes hashed into DIGEST) bounded by
// WithMaxDigestLength, as for SQL texts.
func TestReview12NormalizedDigestTextUnbounded(t *testing.T) {
	f := newStmtFixture(t, WithMaxDigestLength(64))
	route := "POST /graphql " + strings.Repeat("query { a b c } ", 4096) // 64 KiB
	st := f.s.StartStatement(nil, f.req, StatementInfo{Text: route, Normalized: true})
	st.End(StatementResult{})
	rows := f.s.EventsStatementsSummaryByDigest()
	if len(rows) != 1 {
		t.Fatalf("rows: %d", len(rows))
	}
	if n := len(rows[0].DigestText); n > 4*64 {
		t.Errorf("DIGEST_TEXT of a normalized statement is %d bytes with max_digest_length 64", n)
	}
}

// Defect (crash): a statement row's qMisc packs the timer at bit
// miscTimer = 24 (uint64(st.timer) << miscTimer, as the wait rows do), and
// the statement flags qfHasDigest, qfTextCut and qfHasTrace are bits 24,
// 25 and 26: the same byte. With the default statement timer, NANOSECOND
// (1), every timed statement's row says qfHasDigest, so pushStatement
// reads st.entry.digest for a statement that has no digest entry and
// dereferences nil: StartSQL/StartStatement with a thread panic whenever
// statements_digest is OFF, the text is empty, or WithMaxDigestLength(0).
// Since 353ea88 the write section is no longer closed by a defer, so the
// panic also leaves the thread's guard busy for good: every later event
// of the thread is dropped (thread_events_lost), and Thread.End spins in
// its Gosched loop forever (a probe with a deferred th.End hung the test
// binary until the 10-minute timeout).
//
// Expected: no panic; flags and timer in disjoint bits (e.g. timer in the
// low byte as the comment on qMisc says, or the flags above bit 32).
func TestReview12StatementWithoutDigestPanics(t *testing.T) {
	for name, opts := range map[string][]Option{
		"statements_digest off": {WithConsumer(ConsumerStatementsDigest, false)},
		"max_digest_length 0":   {WithMaxDigestLength(0)},
		"empty text":            nil,
	} {
		f := newStmtFixture(t, opts...)
		th := f.s.NewThread(f.thread, ThreadOptions{})
		text := "SELECT 1"
		if name == "empty text" {
			text = ""
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: StartSQL with a thread panics: %v", name, r)
				}
			}()
			st := f.s.StartSQL(th, StatementInfo{Text: text})
			st.End(StatementResult{})
		}()
		if th.guard.Load()&guardBusy != 0 {
			t.Errorf("%s: the thread's guard is left busy: Thread.End would spin forever, every later event is lost", name)
			continue // do not call End: it never returns
		}
		th.End()
	}
}

// Defect: the same overlap read the other way. The timer's bits turn into
// flags, and the flags into timer bits:
//   - setup_timers statement=MICROSECOND (2) sets qfTextCut on every row:
//     SQL_TEXT "SELECT 1" shows as "SELEC...";
//   - TICK (4) sets qfHasTrace: TRACE_ID/SPAN_ID show zeros instead of NULL;
//   - a statement with a trace id (every statement once the bridge
//     installs its trace hook) has timer 1|4 = 5 >= NumTimers in its row,
//     so an in-progress row gets no TIMER_END, and TIMER_WAIT = 0 -
//     TIMER_START wraps to ~2^64;
//   - a text with no tokens ("/* ping */", a health check) has an entry
//     without a digest, yet NANOSECOND's bit says qfHasDigest: DIGEST shows
//     64 zeros instead of NULL.
//
// Expected: each column as if the timer were not there.
func TestReview12StatementMiscTimerCollidesWithFlags(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()

	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Microsecond)
	f.run(th, f.sel, "SELECT 1", StatementResult{})
	if h := f.s.EventsStatementsHistory(); len(h) == 0 || h[len(h)-1].SQLText != "SELECT 1" {
		t.Errorf("statement timer MICROSECOND: SQL_TEXT %q, want %q", h[len(h)-1].SQLText, "SELECT 1")
	}
	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Tick)
	f.run(th, f.sel, "SELECT 2", StatementResult{})
	if h := f.s.EventsStatementsHistory(); h[len(h)-1].TraceID != "" || h[len(h)-1].SpanID != "" {
		t.Errorf("statement timer TICK: TRACE_ID %q SPAN_ID %q for a statement without a trace, want NULL", h[len(h)-1].TraceID, h[len(h)-1].SpanID)
	}
	f.s.SetupTimers().SetTimer(hwclock.ClassStatement, hwclock.Nanosecond)

	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3", TraceID: [16]byte{1}, SpanID: [8]byte{2}})
	time.Sleep(time.Millisecond)
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 1 || cur[0].TimerEnd < cur[0].TimerStart || cur[0].TimerWait > uint64(time.Hour/time.Nanosecond)*1000 {
		t.Errorf("a traced statement in progress: TIMER_START %d TIMER_END %d TIMER_WAIT %d", cur[0].TimerStart, cur[0].TimerEnd, cur[0].TimerWait)
	}
	st.End(StatementResult{})

	f.run(th, f.sel, "/* ping */", StatementResult{})
	if h := f.s.EventsStatementsHistory(); h[len(h)-1].Digest != "" || h[len(h)-1].DigestText != "" {
		t.Errorf("a statement without tokens: DIGEST %q DIGEST_TEXT %q, want NULL", h[len(h)-1].Digest, h[len(h)-1].DigestText)
	}
}

// Defect: a statement abandoned by an out-of-order End (its enclosing
// statement ended first, which the engine survives by design) keeps its
// current slot with END_EVENT_ID NULL. The stack's depth counts levels
// pushed without a current row too (events_statements_current switched
// off between two statements), so a later nested statement without a row
// makes the reader show the abandoned statement's stale slot as a
// statement IN PROGRESS, nested in a statement it never ran in. MySQL
// pushes no stack entry for a statement without STATE_FLAG_EVENT, and a
// reader never sees another statement's slot.
//
// Expected: events_statements_current shows only statements that are in
// progress now (clear the slot's class when a level is abandoned, or when a
// level is pushed without a row).
func TestReview12AbandonedStatementShowsAsGhost(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	a := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
	b := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT ghost"})
	a.End(StatementResult{}) // out of order: b is abandoned
	b.End(StatementResult{})
	c := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3"})
	f.s.SetConsumer(ConsumerEventsStatementsCurrent, false)
	d := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 4"})
	f.s.SetConsumer(ConsumerEventsStatementsCurrent, true)
	for _, e := range f.s.EventsStatementsCurrent() {
		if e.SQLText == "SELECT ghost" {
			t.Errorf("a statement that ended long ago shows as in progress: %+v", e)
		}
	}
	d.End(StatementResult{})
	c.End(StatementResult{})
}

// Defect: digestTable.find reserves a record (n.Add(1)) before it knows
// whether another goroutine is making the same key; the loser of that race
// gives its reservation back (n.Add(-1)) only after its CAS fails. In
// between, a third goroutine's new key sees the table full and gets the
// NULL row, and digestRecord stores that as the entry's binding: from then
// on, every statement of that text goes to the NULL row and counts in
// Performance_schema_digest_lost for the whole life of the table, though a
// record is free (the reservation came back a moment later). Here the
// table has room for exactly the 4 digests in use, 16 goroutines start
// them at once, and in a few percent of the rounds one digest has no row
// at all (all its ~80 statements in the NULL row).
//
// Expected: no NULL row while the table has room for every key: never
// bind an entry to the NULL row (the next statement retries find, which is
// cheap once the table is really full), or retry once before falling back.
func TestReview12DigestNullRowWithRoomConcurrentSafe(t *testing.T) {
	for round := range 300 {
		f := newStmtFixture(t, WithDigestsSize(5)) // 4 rows and the NULL row
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 20 {
					f.run(nil, f.sel, fmt.Sprintf("SELECT c%d FROM t", (i+g)%4), StatementResult{})
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			if r.Digest == "" {
				for _, r2 := range f.s.EventsStatementsSummaryByDigest() {
					t.Logf("row %q %q %d", r2.Digest, r2.DigestText, r2.CountStar)
				}
				t.Fatalf("round %d: 4 digests, room for 4, yet the NULL row counts %d statements (digest_lost %d)",
					round, r.CountStar, status(f.s, "Performance_schema_digest_lost"))
			}
		}
	}
}

// Defect (robustness): WithDigestsSize and WithStatementCacheSize have no
// upper bound, and New sizes their arrays eagerly (newDigestTable: 2*n
// pointers, rounded up to a power of two; newStmtCache likewise): a large
// value panics in make ("len out of range") or exhausts memory inside
// New, where the history sizes return an error (rings.ErrSize) and New's
// doc promises errors. MySQL bounds performance_schema_digests_size to
// 1048576. Every TRUNCATE of the by-digest table allocates the index
// again.
//
// Expected: New returns an error (and clamps) for sizes past a documented
// maximum, as for events_statements_history_long.
func TestReview12HugeDigestSizesPanicInNew(t *testing.T) {
	for name, o := range map[string]Option{
		"WithDigestsSize(1<<47)":        WithDigestsSize(1 << 47),
		"WithStatementCacheSize(1<<60)": WithStatementCacheSize(1 << 60),
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New(%s) panics: %v", name, r)
				}
			}()
			if _, err := New(WithoutEnvironment(), o); err == nil {
				t.Errorf("New(%s): no error", name)
			}
		}()
	}
}
