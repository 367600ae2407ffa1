package pfscore

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/otelpfs/otelpfs/digest"
)

// stmtFixture is a schema with every statement and stage consumer on, two
// statement classes, a stage class, a mutex and a thread class.
type stmtFixture struct {
	*fixture
	sel, req, stage *Class
}

func newStmtFixture(t testing.TB, opts ...Option) *stmtFixture {
	f := newFixture(t, append([]Option{
		WithConsumer(ConsumerEventsStatementsCurrent, true), WithConsumer(ConsumerEventsStatementsHistory, true),
		WithConsumer(ConsumerEventsStatementsHistoryLong, true), WithConsumer(ConsumerEventsStagesCurrent, true),
		WithConsumer(ConsumerEventsStagesHistory, true)}, opts...)...)
	return &stmtFixture{fixture: f,
		sel:   f.s.MustRegister("statement/sql/select", WithDefault(true, true)),
		req:   f.s.MustRegister("statement/http/request", WithDefault(true, true)),
		stage: f.s.MustRegister("stage/test/handler", WithDefault(true, true))}
}

// run runs one statement of class c with text on th.
func (f *stmtFixture) run(th *Thread, c *Class, text string, r StatementResult) {
	st := f.s.StartStatement(th, c, StatementInfo{Text: text, Schema: "app"})
	st.End(r)
}

func TestStatementEvents(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{User: "alice", Host: "web1"})
	defer th.End()

	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT * FROM t WHERE id = 42", Schema: "app", Source: "db.go:7",
		TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{9}})
	cur := f.s.EventsStatementsCurrent()
	if len(cur) != 1 || !cur[0].InProgress || cur[0].SQLText != "SELECT * FROM t WHERE id = 42" ||
		cur[0].DigestText != "SELECT * FROM `t` WHERE `id` = ?" || cur[0].Digest != digest.StatementDigest("SELECT * FROM t WHERE id = 1").Hex() ||
		cur[0].CurrentSchema != "app" || cur[0].Source != "db.go:7" || cur[0].NestingEventLevel != 0 || cur[0].NestingEventID != 0 ||
		cur[0].TraceID != "01020300000000000000000000000000" || cur[0].SpanID != "0900000000000000" {
		t.Fatalf("events_statements_current during the statement: %+v", cur)
	}
	st.End(StatementResult{RowsSent: 1, RowsExamined: 3, Warnings: 1})

	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT * FROM t WHERE id = 43", Schema: "app"})
	st.End(StatementResult{Errors: 1, Message: "no such table: t"})

	hist := f.s.EventsStatementsHistory()
	if len(hist) != 2 || hist[0].RowsSent != 1 || hist[0].RowsExamined != 3 || hist[0].Warnings != 1 ||
		hist[1].Errors != 1 || hist[1].MessageText != "no such table: t" || hist[0].InProgress || !hist[0].Timed ||
		hist[0].TimerWait != hist[0].TimerEnd-hist[0].TimerStart || hist[0].Digest != hist[1].Digest || hist[1].SQLText != "SELECT * FROM t WHERE id = 43" {
		t.Errorf("events_statements_history: %+v", hist)
	}
	if long := f.s.EventsStatementsHistoryLong(); len(long) != 2 {
		t.Errorf("events_statements_history_long: %+v", long)
	}
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 1 || cur[0].InProgress || cur[0].EventID != hist[1].EventID {
		t.Errorf("events_statements_current after: %+v", cur)
	}

	// Both statements share one digest row.
	rows := f.s.EventsStatementsSummaryByDigest()
	if len(rows) != 1 || rows[0].CountStar != 2 || rows[0].SchemaName != "app" || rows[0].SumErrors != 1 || rows[0].SumRowsSent != 1 ||
		rows[0].SumRowsExamined != 3 || rows[0].SumWarnings != 1 || rows[0].DigestText != "SELECT * FROM `t` WHERE `id` = ?" ||
		rows[0].FirstSeen == 0 || rows[0].LastSeen < rows[0].FirstSeen || rows[0].QuerySampleText == "" ||
		rows[0].MinTimerWait > rows[0].MaxTimerWait || rows[0].Quantile95 == 0 || rows[0].Quantile999 < rows[0].Quantile95 {
		t.Errorf("events_statements_summary_by_digest: %+v", rows)
	}
	if d := time.Since(rows[0].LastSeen.Time()); d < 0 || d > time.Hour {
		t.Errorf("LAST_SEEN %v is not about now", rows[0].LastSeen)
	}

	for table, where := range map[string]map[string]Value{
		"events_statements_summary_global_by_event_name":     {"EVENT_NAME": f.sel.Name()},
		"events_statements_summary_by_thread_by_event_name":  {"THREAD_ID": th.ID(), "EVENT_NAME": f.sel.Name()},
		"events_statements_summary_by_account_by_event_name": {"USER": "alice", "HOST": "web1", "EVENT_NAME": f.sel.Name()},
		"events_statements_summary_by_user_by_event_name":    {"USER": "alice", "EVENT_NAME": f.sel.Name()},
		"events_statements_summary_by_host_by_event_name":    {"HOST": "web1", "EVENT_NAME": f.sel.Name()},
	} {
		rows := findRows(t, f.s, table, where)
		if len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(2) || rows[0]["SUM_ERRORS"] != uint64(1) || rows[0]["SUM_ROWS_SENT"] != uint64(1) {
			t.Errorf("%s: %v", table, rows)
		}
	}
}

// TestStatementNesting checks the four levels it has now: a request
// statement, a stage in it, a SQL statement at level 1 in the stage's
// statement, a wait in the SQL statement; and a wait in the stage.
func TestStatementNesting(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()

	req := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET /users/{id}", Normalized: true})
	th.StartStage(f.stage, "")
	waitOnce(f.m, th) // in the stage
	q := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
	cur := f.s.EventsStatementsCurrent()
	if len(cur) != 2 || cur[0].NestingEventLevel != 0 || cur[1].NestingEventLevel != 1 ||
		cur[1].NestingEventID != cur[0].EventID || cur[1].NestingEventType != NestingStatement ||
		cur[0].DigestText != "GET /users/{id}" {
		t.Fatalf("events_statements_current with a nested statement: %+v", cur)
	}
	reqID, selID := cur[0].EventID, cur[1].EventID
	stg := f.s.EventsStagesCurrent()
	if len(stg) != 1 || stg[0].NestingEventID != reqID || stg[0].NestingEventType != NestingStatement {
		t.Errorf("the stage does not nest in the request: %+v", stg)
	}
	q.End(StatementResult{})
	req.End(StatementResult{})

	waits := f.s.EventsWaitsHistory()
	if len(waits) != 1 || waits[0].NestingEventID != stg[0].EventID || waits[0].NestingEventType != NestingStage {
		t.Errorf("the wait does not nest in the stage: %+v", waits)
	}
	// The stage ended with the request.
	if stg := f.s.EventsStagesCurrent(); len(stg) != 1 || stg[0].InProgress {
		t.Errorf("the stage outlived its statement: %+v", stg)
	}
	hist := f.s.EventsStatementsHistory()
	if len(hist) != 2 || hist[0].EventID != selID || hist[1].EventID != reqID || hist[0].EndEventID > hist[1].EndEventID {
		t.Errorf("events_statements_history: %+v", hist)
	}
	// A wait directly in a statement nests in it.
	q = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2"})
	waitOnce(f.m, th)
	q.End(StatementResult{})
	if w := f.s.EventsWaitsCurrent(); len(w) != 1 || w[0].NestingEventType != NestingStatement {
		t.Errorf("a wait in a statement: %+v", w)
	}
	// Statements from the same text, and a route, share digest rows; the
	// route has its own.
	byText := map[string]uint64{}
	for _, r := range f.s.EventsStatementsSummaryByDigest() {
		byText[r.DigestText] = r.CountStar
	}
	if byText["SELECT ?"] != 2 || byText["GET /users/{id}"] != 1 || len(byText) != 2 {
		t.Errorf("digest rows: %v", byText)
	}
}

func TestStatementStackBounded(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	var sts []Statement
	for range statementStackDepth + 2 {
		sts = append(sts, f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"}))
	}
	if n := len(f.s.EventsStatementsCurrent()); n != statementStackDepth {
		t.Errorf("%d current rows, want %d", n, statementStackDepth)
	}
	for i := len(sts) - 1; i >= 0; i-- {
		sts[i].End(StatementResult{})
	}
	if n := status(f.s, "Performance_schema_nested_statement_lost"); n != 2 {
		t.Errorf("nested_statement_lost %d, want 2", n)
	}
	// Every statement counts in the summaries, shown or not.
	if n := count(t, f.s, "events_statements_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name()}); n != statementStackDepth+2 {
		t.Errorf("COUNT_STAR %d, want %d", n, statementStackDepth+2)
	}
	// Ending an enclosing statement first (two result sets open at once,
	// closed in the order they opened) ends it in place; the inner one's
	// End pops both, and each counts in the thread's summary and history.
	byThread := func() uint64 {
		return count(t, f.s, "events_statements_summary_by_thread_by_event_name", map[string]Value{"THREAD_ID": th.ID(), "EVENT_NAME": f.sel.Name()})
	}
	before := byThread()
	outer := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
	inner := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2"})
	outer.End(StatementResult{})
	next := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3"}) // nests in inner, still open
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 2 || cur[1].NestingEventLevel != 2 {
		t.Errorf("events_statements_current with an ended statement below: %+v", cur)
	}
	next.End(StatementResult{})
	inner.End(StatementResult{})
	if n := byThread() - before; n != 3 {
		t.Errorf("by thread: %d more statements, want 3", n)
	}
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 1 || cur[0].InProgress {
		t.Errorf("events_statements_current: %+v", cur)
	}
	h := f.s.EventsStatementsHistory()
	var texts []string
	for _, e := range h[len(h)-3:] {
		texts = append(texts, e.SQLText)
	}
	if strings.Join(texts, ",") != "SELECT 1,SELECT 3,SELECT 2" {
		t.Errorf("history: %v", texts)
	}
	// A statement begun after both ended is at level 0 again.
	f.run(th, f.sel, "SELECT 4", StatementResult{})
	if h := f.s.EventsStatementsHistory(); h[len(h)-1].NestingEventLevel != 0 {
		t.Errorf("level after the stack emptied: %+v", h[len(h)-1])
	}
}

func status(s *Schema, name string) uint64 {
	for _, v := range s.Status() {
		if v.Name == name {
			return v.Value
		}
	}
	return ^uint64(0)
}

func TestDigestTableFull(t *testing.T) {
	f := newStmtFixture(t, WithDigestsSize(3)) // two rows, and the NULL row
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	for _, q := range []string{"SELECT 1", "SELECT a FROM t", "SELECT b FROM t", "SELECT c FROM t", "SELECT 2", "SELECT c FROM t"} {
		f.run(th, f.sel, q, StatementResult{})
	}
	rows := f.s.EventsStatementsSummaryByDigest()
	got := map[string]uint64{}
	for _, r := range rows {
		key := r.DigestText
		if r.Digest == "" {
			if r.SchemaName != "" || r.DigestText != "" {
				t.Errorf("the NULL row has a key: %+v", r)
			}
			key = "NULL"
		}
		got[key] = r.CountStar
	}
	want := map[string]uint64{"SELECT ?": 2, "SELECT `a` FROM `t`": 1, "NULL": 3}
	if len(got) != len(want) || got["SELECT ?"] != 2 || got["SELECT `a` FROM `t`"] != 1 || got["NULL"] != 3 {
		t.Errorf("rows %v, want %v", got, want)
	}
	if n := status(f.s, "Performance_schema_digest_lost"); n != 3 {
		t.Errorf("digest_lost %d, want 3", n)
	}
	// TRUNCATE empties the table: new digests get rows again; the lost
	// counter keeps counting up.
	if err := f.s.Truncate("events_statements_summary_by_digest"); err != nil {
		t.Fatal(err)
	}
	if rows := f.s.EventsStatementsSummaryByDigest(); len(rows) != 0 {
		t.Errorf("rows after TRUNCATE: %+v", rows)
	}
	f.run(th, f.sel, "SELECT c FROM t", StatementResult{})
	if rows := f.s.EventsStatementsSummaryByDigest(); len(rows) != 1 || rows[0].DigestText != "SELECT `c` FROM `t`" {
		t.Errorf("rows after TRUNCATE and a statement: %+v", rows)
	}
	if n := status(f.s, "Performance_schema_digest_lost"); n != 3 {
		t.Errorf("digest_lost %d after TRUNCATE, want 3", n)
	}
}

func TestDigestPerSchema(t *testing.T) {
	f := newStmtFixture(t)
	for _, schema := range []string{"a", "b", "a"} {
		st := f.s.StartStatement(nil, f.sel, StatementInfo{Text: "SELECT 1", Schema: schema})
		st.End(StatementResult{})
	}
	got := map[string]uint64{}
	for _, r := range f.s.EventsStatementsSummaryByDigest() {
		got[r.SchemaName] = r.CountStar
	}
	if len(got) != 2 || got["a"] != 2 || got["b"] != 1 {
		t.Errorf("rows by schema: %v", got)
	}
	// Without a thread, statements still count by event name.
	if n := count(t, f.s, "events_statements_summary_global_by_event_name", map[string]Value{"EVENT_NAME": f.sel.Name()}); n != 3 {
		t.Errorf("COUNT_STAR %d, want 3", n)
	}
}

func TestQuerySample(t *testing.T) {
	f := newStmtFixture(t, WithMaxSQLTextLength(16), WithMaxDigestSampleAge(0))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	sample := func() (string, uint64) {
		rows := f.s.EventsStatementsSummaryByDigest()
		if len(rows) != 1 {
			t.Fatalf("rows: %+v", rows)
		}
		return rows[0].QuerySampleText, rows[0].QuerySampleTimerWait
	}
	f.run(th, f.sel, "SELECT 1", StatementResult{})
	if text, _ := sample(); text != "SELECT 1" {
		t.Errorf("first sample %q", text)
	}
	// A longer wait replaces it; its text is clipped, ending in "...".
	// (The waits are given through EndAt, so that a loaded machine cannot
	// make the shorter statement the longer.)
	const long = uint64(2 * time.Millisecond * 1000) // ps
	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2222222222222222", Schema: "app"})
	st.EndAt(st.Start()+long, StatementResult{})
	text, wait := sample()
	if text != "SELECT 222222..." || wait < long {
		t.Errorf("sample after a longer wait: %q %d", text, wait)
	}
	// A shorter one does not, with no age limit.
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3", Schema: "app"})
	st.EndAt(0, StatementResult{}) // a wait of 0
	if text, _ := sample(); text != "SELECT 222222..." {
		t.Errorf("a shorter wait replaced the sample: %q", text)
	}
	// With an age limit, an old sample is replaced by the next statement.
	f.s.sampleAgePicos = uint64(time.Millisecond/time.Nanosecond) * 1000
	time.Sleep(5 * time.Millisecond) // the sample was seen 2 ms after its start: more than 1 ms ago by then
	f.run(th, f.sel, "SELECT 4", StatementResult{})
	if text, _ := sample(); text != "SELECT 4" {
		t.Errorf("an old sample was kept: %q", text)
	}
	// With events_statements_current off, MySQL takes no sample.
	if err := f.s.Truncate("events_statements_summary_by_digest"); err != nil {
		t.Fatal(err)
	}
	f.s.SetConsumer(ConsumerEventsStatementsCurrent, false)
	f.run(th, f.sel, "SELECT 5", StatementResult{})
	if text, _ := sample(); text != "" {
		t.Errorf("a sample without events_statements_current: %q", text)
	}
}

func TestStatementCacheNormalizesOnce(t *testing.T) {
	c := newStmtCache(nil, 64, 1024)
	a := c.lookup("SELECT * FROM t WHERE id = 1", false)
	b := c.lookup("SELECT * FROM t WHERE id = 1", false)
	if a != b || !a.digestOf().has || a.digestOf() != b.digestOf() || a.digestOf().text != "SELECT * FROM `t` WHERE `id` = ?" {
		t.Errorf("cache: %p %p %+v", a, b, a.digestOf())
	}
	if n := c.lookup("SELECT * FROM t WHERE id = 1", true); n == a || n.digestOf().text != "SELECT * FROM t WHERE id = 1" {
		t.Errorf("a normalized text shares the entry of a SQL text: %+v", n.digestOf())
	}
	if e := c.lookup("   ", false); e.digestOf().has {
		t.Errorf("an empty statement has a digest: %+v", e.digestOf())
	}
	long := "SELECT " + strings.Repeat("1, ", maxCachedText)
	if first, again := c.lookup(long, false), c.lookup(long, false); first == again {
		t.Errorf("a text past maxCachedText was cached")
	}
	off := newStmtCache(nil, 0, 1024)
	if e := off.lookup("SELECT 1", false); !e.digestOf().has || e.digestOf().text != "SELECT ?" {
		t.Errorf("without a cache: %+v", e.digestOf())
	}
}

// Texts that differ only in their literals share one DIGEST_TEXT string;
// texts of other digests keep their own, even when their digests meet in
// one slot of the cache's digest texts.
func TestStatementCacheSharesDigestText(t *testing.T) {
	c := newStmtCache(nil, 64, 1024)
	a := c.lookup("SELECT * FROM t WHERE id = 1", false).digestOf()
	b := c.lookup("SELECT * FROM t WHERE id = 22", false).digestOf()
	if a == b || a.digest != b.digest || unsafe.StringData(a.text) != unsafe.StringData(b.text) {
		t.Errorf("same digest, texts not shared: %p %q, %p %q", unsafe.StringData(a.text), a.text, unsafe.StringData(b.text), b.text)
	}
	d := &digestInfo{}
	allocs := testing.AllocsPerRun(100, func() {
		*d = digestInfo{}
		c.compute(d, "SELECT * FROM t WHERE id = 333", false)
	})
	if raceBuild {
		allocs = 0 // sync.Pool drops Puts at random under -race: the normalizer is made again
	}
	if allocs != 0 || d.text != a.text {
		t.Errorf("a known digest's text: %v allocations, want 0", allocs)
	}
	// Two other digests in one slot: each keeps its own text, and the
	// slot's last comer wins it.
	var first *digestInfo
	for i := 0; ; i++ {
		d := c.lookup(fmt.Sprintf("SELECT c%d FROM u WHERE id = 1", i), false).digestOf()
		if binary.LittleEndian.Uint64(d.digest[:8])%digestTextSlots != binary.LittleEndian.Uint64(a.digest[:8])%digestTextSlots {
			continue
		}
		if first == nil {
			first = d
			continue
		}
		want := fmt.Sprintf("SELECT `c%d` FROM `u` WHERE `id` = ?", i)
		if d.text != want || d.digest == first.digest {
			t.Errorf("colliding digest: text %q, want %q", d.text, want)
		}
		again := c.lookup(fmt.Sprintf("SELECT c%d FROM u WHERE id = 2", i), false).digestOf()
		if again.text != want || unsafe.StringData(again.text) != unsafe.StringData(d.text) {
			t.Errorf("after a collision: %q", again.text)
		}
		break
	}
	if first.text == "" || !strings.HasPrefix(first.text, "SELECT `c") {
		t.Errorf("first colliding digest's text: %q", first.text)
	}
}

// TestStatementRowsNotTornConcurrentSafe runs statements whose every
// column derives from one number n (SQL_TEXT "SELECT n FROM t<n%3>",
// ROWS_SENT n, ERRORS n%2, MESSAGE_TEXT "m<n>", CURRENT_SCHEMA "s<n%5>")
// on threads, some of them shared by two goroutines (a misuse the engine
// must survive), while readers check every row of the three statement
// tables: a row mixing two statements' words or strings fails.
func TestStatementRowsNotTornConcurrentSafe(t *testing.T) {
	if old := runtime.GOMAXPROCS(0); old < 4 { // writers and readers preempt one another mid-row too
		runtime.GOMAXPROCS(4)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	f := newStmtFixture(t, WithStatementsHistoryLongSize(64), WithStatementsHistorySize(4))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	shared := f.s.NewThread(f.thread, ThreadOptions{User: "u"})
	defer shared.End()
	// 64 texts, so that the cache knows them all and a statement costs
	// little: write sections follow one another closely, and readers meet
	// them often.
	const texts = 64
	var sqls, schemas, msgs [texts]string
	for n := range texts {
		sqls[n], schemas[n], msgs[n] = fmt.Sprintf("SELECT %d FROM t%d", n, n%3), fmt.Sprintf("s%d", n%5), fmt.Sprintf("m%d", n)
	}
	write := func(g int, th *Thread) {
		defer wg.Done()
		for i := g; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n, n1 := i%texts, (i+1)%texts
			st := f.s.StartSQL(th, StatementInfo{Text: sqls[n], Schema: schemas[n]})
			if i%4 == 0 { // a nested one
				in := f.s.StartSQL(th, StatementInfo{Text: sqls[n1], Schema: schemas[n1]})
				in.End(StatementResult{RowsSent: uint64(n1), Errors: uint64(n1 % 2), Message: msgs[n1]})
			}
			st.End(StatementResult{RowsSent: uint64(n), Errors: uint64(n % 2), Message: msgs[n]})
		}
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			write(g+1, th)
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go write(g+3, shared)
	}
	check := func(table string, e StatementEvent) {
		var n, tn int
		if _, err := fmt.Sscanf(e.SQLText, "SELECT %d FROM t%d", &n, &tn); err != nil || tn != n%3 {
			t.Errorf("%s: SQL_TEXT %q", table, e.SQLText)
			return
		}
		if e.CurrentSchema != fmt.Sprintf("s%d", n%5) || e.DigestText != fmt.Sprintf("SELECT ? FROM `t%d`", n%3) {
			t.Errorf("%s: torn row: %q schema %q digest %q", table, e.SQLText, e.CurrentSchema, e.DigestText)
		}
		if !e.InProgress && (e.RowsSent != uint64(n) || e.Errors != uint64(n%2) || e.MessageText != fmt.Sprintf("m%d", n)) {
			t.Errorf("%s: torn row: %q rows %d errors %d message %q", table, e.SQLText, e.RowsSent, e.Errors, e.MessageText)
		}
		if e.InProgress && (e.RowsSent != 0 || e.MessageText != "") {
			t.Errorf("%s: a statement in progress with results: %+v", table, e)
		}
		if e.Timed && e.TimerEnd < e.TimerStart {
			t.Errorf("%s: TIMER_END before TIMER_START: %+v", table, e)
		}
	}
	deadline := time.Now().Add(time.Second)
	reads := 0
	for time.Now().Before(deadline) && !t.Failed() {
		for range 20 { // the current rows change most: read them most
			for _, e := range f.s.EventsStatementsCurrent() {
				check("current", e)
			}
		}
		for _, e := range f.s.EventsStatementsHistory() {
			check("history", e)
		}
		for _, e := range f.s.EventsStatementsHistoryLong() {
			check("history_long", e)
		}
		if reads%50 == 49 {
			f.s.Truncate("events_statements_history_long")
		}
		reads++
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reads; %d thread events lost", reads, status(f.s, "Performance_schema_thread_events_lost"))
}

func TestStatementSetText(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	st := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET /users/42", Normalized: true})
	st.SetText("GET /users/{id}", true)
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 1 || cur[0].SQLText != "GET /users/{id}" || cur[0].DigestText != "GET /users/{id}" {
		t.Errorf("current row after SetText: %+v", cur)
	}
	st.End(StatementResult{})
	if rows := f.s.EventsStatementsSummaryByDigest(); len(rows) != 1 || rows[0].DigestText != "GET /users/{id}" {
		t.Errorf("digest rows: %+v", rows)
	}
}

// TestStatementEndWithText checks that EndWithText is SetText and End: the
// text and its digest reach the history rows and the digest's row, the
// current row shows the first text until the end, and a nested
// statement's EndWithText writes its own row only.
func TestStatementEndWithText(t *testing.T) {
	f := newStmtFixture(t)
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	outer := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET", Normalized: true})
	inner := f.s.StartStatement(th, f.req, StatementInfo{Text: "inner", Normalized: true})
	inner.EndWithText("inner done", true, StatementResult{RowsSent: 3})
	if cur := f.s.EventsStatementsCurrent(); len(cur) != 1 || cur[0].SQLText != "GET" {
		t.Errorf("current row before the end: %+v", cur)
	}
	outer.EndWithText("GET /users/{id}", true, StatementResult{RowsSent: 1})
	outer.EndWithText("GET /again", true, StatementResult{}) // a second end does nothing
	for name, rows := range map[string][]StatementEvent{
		"history": f.s.EventsStatementsHistory(), "history_long": f.s.EventsStatementsHistoryLong(),
	} {
		if len(rows) != 2 || rows[0].SQLText != "inner done" || rows[0].DigestText != "inner done" || rows[0].RowsSent != 3 ||
			rows[1].SQLText != "GET /users/{id}" || rows[1].DigestText != "GET /users/{id}" || rows[1].RowsSent != 1 ||
			rows[1].Digest == "" || rows[0].Digest == rows[1].Digest {
			t.Errorf("%s: %+v", name, rows)
		}
	}
	got := map[string]uint64{}
	for _, r := range f.s.EventsStatementsSummaryByDigest() {
		got[r.DigestText] = r.CountStar
	}
	if len(got) != 2 || got["GET /users/{id}"] != 1 || got["inner done"] != 1 {
		t.Errorf("digest rows: %v", got)
	}
}

// TestDigestInsertConcurrentSafe has goroutines race to make the same new
// digest rows: each (schema, digest) gets one row, whatever the race, and
// every statement counts in it.
func TestDigestInsertConcurrentSafe(t *testing.T) {
	f := newStmtFixture(t, WithDigestsSize(64))
	const workers, digests, rounds = 4, 40, 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for r := range rounds {
				for d := range digests {
					st := f.s.StartSQL(nil, StatementInfo{Text: fmt.Sprintf("SELECT c%d FROM t WHERE r = %d", d, r), Schema: "app"})
					st.End(StatementResult{})
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	rows := f.s.EventsStatementsSummaryByDigest()
	seen := map[string]bool{}
	var total uint64
	for _, r := range rows {
		if seen[r.Digest] {
			t.Errorf("digest %s (%s) has two rows", r.Digest, r.DigestText)
		}
		seen[r.Digest] = true
		total += r.CountStar
		if r.CountStar != workers*rounds {
			t.Errorf("%s: COUNT_STAR %d, want %d", r.DigestText, r.CountStar, workers*rounds)
		}
	}
	if len(rows) != digests || total != workers*rounds*digests {
		t.Errorf("%d rows counting %d statements, want %d rows, %d", len(rows), total, digests, workers*rounds*digests)
	}
	if n := status(f.s, "Performance_schema_digest_lost"); n != 0 {
		t.Errorf("digest_lost %d", n)
	}
}

// TestQuerySampleTrace: the query sample keeps the OpenTelemetry span of
// the statement it is (QUERY_SAMPLE_TRACE_ID, QUERY_SAMPLE_SPAN_ID), NULL
// for a statement outside any; a slower statement in another span replaces
// both with its own.
func TestQuerySampleTrace(t *testing.T) {
	f := newStmtFixture(t, WithMaxDigestSampleAge(0))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	sample := func() (string, string) {
		rows := f.s.EventsStatementsSummaryByDigest()
		if len(rows) != 1 {
			t.Fatalf("rows: %+v", rows)
		}
		return rows[0].QuerySampleTraceID, rows[0].QuerySampleSpanID
	}
	const ms = uint64(time.Millisecond * 1000) // ps
	st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1", Schema: "app"})
	st.EndAt(st.start+ms, StatementResult{}) // exact waits: a loaded machine cannot reorder them
	if tr, sp := sample(); tr != "" || sp != "" {
		t.Errorf("a sample outside any span: trace %q span %q", tr, sp)
	}
	trace := [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 2", Schema: "app", TraceID: trace, SpanID: span})
	st.EndAt(st.start+2*ms, StatementResult{})
	if tr, sp := sample(); tr != "4bf92f3577b34da6a3ce929d0e0e4736" || sp != "00f067aa0ba902b7" {
		t.Errorf("sample of a slower statement in a span: trace %q span %q", tr, sp)
	}
	// A faster statement in another span leaves the sample as it is.
	other := [16]byte{1}
	st = f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 3", Schema: "app", TraceID: other, SpanID: [8]byte{1}})
	st.EndAt(st.start, StatementResult{}) // a wait of 0
	if tr, _ := sample(); tr != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("a faster statement replaced the sample's trace: %q", tr)
	}
	// The columns are in the table, NULL without a span.
	res, err := f.s.Query("events_statements_summary_by_digest", Query{Where: []string{"QUERY_SAMPLE_SPAN_ID = '00f067aa0ba902b7'"}})
	if err != nil || len(res.Rows) != 1 {
		t.Errorf("query by QUERY_SAMPLE_SPAN_ID: %v, %v", res, err)
	}
}

// TestDigestTableNumbers: the index holds record numbers. Records land in
// chunks past the first, every slot finds its own record, and a table out
// of numbers (which takes lost races, see digestTable.next) counts new
// digests in the NULL row instead of failing.
func TestDigestTableNumbers(t *testing.T) {
	var lost atomic.Uint64
	tbl := newDigestTable(1, 3*digestChunk, &lost)
	info := func(i int) *digestInfo {
		d := &digestInfo{has: true, text: fmt.Sprintf("SELECT %d", i)}
		binary.LittleEndian.PutUint64(d.digest[:], uint64(i)*0x9e3779b97f4a7c15)
		return d
	}
	slots := map[int]int{}
	for i := range 2 * digestChunk {
		slot := tbl.find("app", info(i), 1, nil)
		if slot < 0 {
			t.Fatalf("digest %d: table full", i)
		}
		if r := tbl.at(uint64(slot)); r == nil || r.text != info(i).text {
			t.Fatalf("digest %d: slot %d holds %+v", i, slot, r)
		}
		slots[i] = slot
	}
	for i, slot := range slots {
		if again := tbl.find("app", info(i), 2, nil); again != slot {
			t.Errorf("digest %d: found in slot %d, then %d", i, slot, again)
		}
		if r := tbl.lookup("app", &info(i).digest); r == nil || r.text != info(i).text {
			t.Errorf("digest %d: lookup %+v", i, r)
		}
	}
	if n := len(tbl.records(nil)); n != 2*digestChunk {
		t.Errorf("%d records, want %d", n, 2*digestChunk)
	}
	tbl.next.Store(uint32(len(tbl.chunks) * digestChunk)) // every number taken
	if slot := tbl.find("app", info(9999), 3, nil); slot != -1 {
		t.Errorf("out of numbers: slot %d, want -1", slot)
	}
	if slot := tbl.find("app", info(7), 3, nil); slot != slots[7] {
		t.Errorf("out of numbers, a known digest: slot %d, want %d", slot, slots[7])
	}
}

// TestStatementSourceCache: statements and transactions find their
// SOURCE's id through their class's cache of the last one; a change of
// SOURCE, back and forth, always shows the SOURCE each event was given.
func TestStatementSourceCache(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsTransactionsCurrent, true), WithConsumer(ConsumerEventsTransactionsHistory, true))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	srcs := []string{"one.go:1", "one.go:1", "two.go:2", "", "one.go:1"}
	for _, src := range srcs {
		tx := f.s.StartTransaction(th, TransactionInfo{Source: src})
		st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1", Source: src})
		st.End(StatementResult{})
		tx.End(true)
	}
	var stmts, trxs []string
	for _, e := range f.s.EventsStatementsHistory() {
		stmts = append(stmts, e.Source)
	}
	for _, e := range f.s.EventsTransactionsHistory() {
		trxs = append(trxs, e.Source)
	}
	if !slices.Equal(stmts, srcs) || !slices.Equal(trxs, srcs) {
		t.Errorf("statement sources %q, transaction sources %q; want %q", stmts, trxs, srcs)
	}
}

// TestStatementCacheTwoWays: two texts of one set stay cached side by side,
// even when their hashes would pick the same way (the cache placed a new
// entry by its hash's top bit, so such a pair evicted each other at every
// statement and was normalized every time).
func TestStatementCacheTwoWays(t *testing.T) {
	c := newStmtCache(nil, 2, 1024) // one set of two ways
	a := "SELECT 0"
	var b string
	for i := 1; b == ""; i++ { // a text whose hash picks a's way
		if x := fmt.Sprintf("SELECT %d", i); maphash.String(c.seed, x)>>63 == maphash.String(c.seed, a)>>63 {
			b = x
		}
	}
	ea, eb := c.lookup(a, false), c.lookup(b, false)
	for range 4 {
		if c.lookup(a, false) != ea || c.lookup(b, false) != eb {
			t.Fatalf("%q and %q evict each other from a set of two ways", a, b)
		}
	}
	// A third text takes a way at random; the other stays.
	ec := c.lookup("SELECT 'c'", false)
	if got := c.lookup("SELECT 'c'", false); got != ec {
		t.Errorf("the third text was not cached")
	}
	in := func(e *stmtEntry) bool { return c.slots[0].Load() == e || c.slots[1].Load() == e }
	if !in(ec) || in(ea) == in(eb) {
		t.Errorf("a third text should have replaced exactly one of two: a %v, b %v, c %v", in(ea), in(eb), in(ec))
	}
}
