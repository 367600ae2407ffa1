package pfscore

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func newTestSchema(t testing.TB, opts ...Option) *Schema {
	t.Helper()
	s, err := New(append([]Option{WithoutEnvironment()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseInstrumentName(t *testing.T) {
	for name, kind := range map[string]Kind{
		"wait/synch/mutex/app/cache":      KindMutex,
		"wait/synch/rwlock/app/table.map": KindRWLock,
		"wait/synch/cond/app/queue-ready": KindCond,
		"wait/io/file/app/wal":            KindFile,
		"wait/io/socket/http/client_conn": KindSocket,
		"idle":                            KindIdle,
		"stage/app/parsing":               KindStage,
		"statement/sql/select":            KindStatement,
		"statement/abstract/new_packet":   KindStatement,
		"statement/com/Query":             KindStatement,
		"transaction":                     KindTransaction,
		"memory/app/buffers":              KindMemory,
	} {
		got, err := ParseInstrumentName(name)
		if err != nil || got != kind {
			t.Errorf("ParseInstrumentName(%q) = %v, %v; want %v", name, got, err, kind)
		}
	}
	for _, bad := range []string{
		"", "wait", "wait/synch/mutex/app", "wait/synch/mutex/app/x/y", "wait/synch/spin/a/b",
		"wait/io/table/a/b", "stage/sql/Opening tables", "wait/synch/mutex/app/LOCK::open",
		"idle/x", "transaction/x", "memory/app", "statement/sql", "nosuch/a/b",
		"wait/synch/mutex//x", "/wait", "wait/synch/mutex/app/" + strings.Repeat("x", 120),
	} {
		if _, err := ParseInstrumentName(bad); !errors.Is(err, ErrBadInstrumentName) {
			t.Errorf("ParseInstrumentName(%q) error = %v, want ErrBadInstrumentName", bad, err)
		}
	}
}

func TestRegister(t *testing.T) {
	s := newTestSchema(t)
	a := s.MustRegister("wait/synch/mutex/app/a", WithDocumentation("guards a"))
	b := s.MustRegister("wait/io/file/app/b")
	again := s.MustRegister("wait/synch/mutex/app/a")
	if a != again {
		t.Errorf("registering a name twice gave two classes")
	}
	if b.Index() != a.Index()+1 || a.Kind() != KindMutex || b.Kind() != KindFile {
		t.Errorf("indexes %d %d, kinds %v %v", a.Index(), b.Index(), a.Kind(), b.Kind())
	}
	if on, timed := a.Flags(); !on || !timed {
		t.Errorf("a new class should be enabled and timed by default: %v %v", on, timed)
	}
	if _, err := s.Register("wait/synch/mutex/bad name/x"); !errors.Is(err, ErrBadInstrumentName) {
		t.Errorf("bad name: %v", err)
	}
	m := s.MustRegister("memory/app/buf")
	if m.Timed() {
		t.Errorf("a memory class cannot be timed")
	}
	rows := s.SetupInstruments()[2:] // after the built-in transaction and idle
	if len(rows) != 3 || rows[0].Name != "wait/synch/mutex/app/a" || rows[0].Documentation != "guards a" || rows[2].Timed != nil {
		t.Errorf("setup_instruments = %+v", rows)
	}
}

func TestRegisterTooMany(t *testing.T) {
	s := newTestSchema(t, WithMaxClasses(4)) // the built-in transaction and idle classes take two
	s.MustRegister("wait/synch/mutex/app/a")
	s.MustRegister("wait/synch/mutex/app/b")
	if _, err := s.Register("wait/synch/mutex/app/c"); !errors.Is(err, ErrTooManyClasses) {
		t.Fatalf("third class: %v", err)
	}
	if s.classesLost.Load() != 1 {
		t.Errorf("classes lost = %d", s.classesLost.Load())
	}
	if s.MustRegister("wait/synch/mutex/app/a").Index() != 2 {
		t.Errorf("existing classes must stay reachable when full")
	}
}

func TestUpdateInstruments(t *testing.T) {
	s := newTestSchema(t)
	mu := s.MustRegister("wait/synch/mutex/app/a")
	rw := s.MustRegister("wait/synch/rwlock/app/b")
	file := s.MustRegister("wait/io/file/app/log")
	no, yes := false, true
	n, err := s.UpdateInstruments("wait/synch/%", &no, nil)
	if err != nil || n != 2 {
		t.Fatalf("UpdateInstruments = %d, %v", n, err)
	}
	if mu.On() || rw.On() || !file.On() {
		t.Errorf("after disabling wait/synch/%%: mutex %v rwlock %v file %v", mu.On(), rw.On(), file.On())
	}
	if !mu.Timed() {
		t.Errorf("TIMED changed though only ENABLED was updated")
	}
	if _, err := s.UpdateInstruments("%", nil, &no); err != nil {
		t.Fatal(err)
	}
	if on, timed := file.Flags(); !on || timed {
		t.Errorf("file after TIMED=NO: on %v timed %v", on, timed)
	}
	if _, err := s.UpdateInstruments("WAIT/SYNCH/MUTEX/APP/A", &yes, &yes); err != nil {
		t.Fatal(err)
	}
	if on, timed := mu.Flags(); !on || !timed {
		t.Errorf("exact, case-insensitive update missed")
	}
	if n, _ := s.UpdateInstruments("nothing/%", &yes, nil); n != 0 {
		t.Errorf("matched %d rows with a pattern that matches none", n)
	}
	for _, bad := range []string{"", "wait/\x00", strings.Repeat("%", 300)} {
		if _, err := s.UpdateInstruments(bad, &yes, nil); !errors.Is(err, ErrBadPattern) {
			t.Errorf("pattern %q: err = %v", bad, err)
		}
	}
}

func TestStartupRules(t *testing.T) {
	t.Setenv(EnvInstrument, "wait/synch/%=OFF; wait/synch/mutex/%=COUNTED")
	t.Setenv(EnvConsumer, "events-waits-current=ON,events_waits_history=on")
	s, err := New(
		WithInstrument("wait/synch/mutex/app/exact=ON"),
		WithInstrument("%=OFF"),                  // shortest: loses to every longer match
		WithInstrument("wait/io/file/app/%=yes"), // later and equally long as below: wins
		WithInstrument("wait/io/file/app/%=no"),
	)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, enabled, timed bool) {
		t.Helper()
		c := s.MustRegister(name)
		if c.Enabled() != enabled || c.Timed() != timed {
			t.Errorf("%s: enabled %v timed %v, want %v %v", name, c.Enabled(), c.Timed(), enabled, timed)
		}
	}
	check("wait/synch/mutex/app/exact", true, true) // exact name beats patterns
	check("wait/synch/mutex/app/other", true, false)
	check("wait/synch/cond/app/c", false, false)
	check("wait/io/file/app/f", false, false)
	check("stage/app/s", false, false)
	if !s.ConsumerEnabled(ConsumerEventsWaitsCurrent) || !s.ConsumerEnabled(ConsumerEventsWaitsHistory) {
		t.Errorf("consumers from the environment not applied")
	}

	// Bad rules are reported and skipped.
	t.Setenv(EnvInstrument, "wait/synch/%=MAYBE")
	t.Setenv(EnvConsumer, "events_waits_everything=ON")
	s, err = New(WithInstrument("no-equals-sign"))
	if err == nil || !strings.Contains(err.Error(), "MAYBE") || !strings.Contains(err.Error(), "no-equals-sign") ||
		!errors.Is(err, ErrUnknownConsumer) {
		t.Errorf("bad rules: err = %v", err)
	}
	if s == nil || !s.MustRegister("wait/synch/mutex/x/y").Enabled() {
		t.Errorf("a Schema with bad rules should still work, without them")
	}
}

func TestConsumers(t *testing.T) {
	s := newTestSchema(t)
	want := map[Consumer]bool{
		ConsumerEventsStatementsCurrent: true, ConsumerEventsStatementsHistory: true,
		ConsumerEventsTransactionsCurrent: true, ConsumerEventsTransactionsHistory: true,
		ConsumerGlobalInstrumentation: true, ConsumerThreadInstrumentation: true, ConsumerStatementsDigest: true,
	}
	rows := s.SetupConsumers()
	if len(rows) != 16 {
		t.Fatalf("%d consumers", len(rows))
	}
	for _, r := range rows {
		if r.Enabled != want[r.Name] {
			t.Errorf("default %s = %v, want %v (MySQL 8.0)", r.Name, r.Enabled, want[r.Name])
		}
	}
	n, err := s.UpdateConsumers("%waits%", true)
	if err != nil || n != 3 {
		t.Errorf("UpdateConsumers(%%waits%%) = %d, %v", n, err)
	}
	c := s.MustRegister("wait/synch/mutex/app/a")
	s.SetConsumer(ConsumerGlobalInstrumentation, false)
	if c.On() || !c.Enabled() {
		t.Errorf("global_instrumentation off: class on %v, ENABLED %v; want off, YES", c.On(), c.Enabled())
	}
	late := s.MustRegister("wait/synch/mutex/app/late")
	if late.On() {
		t.Errorf("a class registered while global_instrumentation is off must be off")
	}
	s.SetConsumer(ConsumerGlobalInstrumentation, true)
	if !c.On() || !late.On() {
		t.Errorf("global_instrumentation back on: classes still off")
	}
	if _, err := ParseConsumer("events_waits_now"); !errors.Is(err, ErrUnknownConsumer) {
		t.Errorf("ParseConsumer: %v", err)
	}
}

func TestSetupActors(t *testing.T) {
	s := newTestSchema(t)
	if en, hist := s.lookupActor("alice", "web1"); !en || !hist {
		t.Errorf("default setup_actors should instrument everyone with history")
	}
	no, yes := false, true
	if err := s.insertSetupActor(SetupActorsRow{Host: "web1", User: "alice", Enabled: true, History: false}); err != nil {
		t.Fatal(err)
	}
	if err := s.insertSetupActor(SetupActorsRow{Host: "web1", User: "alice", Role: "%"}); !errors.Is(err, ErrDuplicateRow) {
		t.Errorf("duplicate key: %v", err)
	}
	if err := s.insertSetupActor(SetupActorsRow{User: "bob"}); err != nil { // bob@% : not instrumented
		t.Fatal(err)
	}
	if err := s.insertSetupActor(SetupActorsRow{User: strings.Repeat("u", 33)}); !errors.Is(err, ErrBadValue) {
		t.Errorf("long USER: %v", err)
	}
	for _, tc := range []struct {
		user, host     string
		enabled, histo bool
	}{
		{"alice", "web1", true, false}, // (user, host)
		{"alice", "web2", true, true},  // falls to (%, %)
		{"bob", "web1", false, false},  // (user, %) beats (%, %)
		{"carol", "db", true, true},
	} {
		en, hist := s.lookupActor(tc.user, tc.host)
		if en != tc.enabled || hist != tc.histo {
			t.Errorf("%s@%s: enabled %v history %v, want %v %v", tc.user, tc.host, en, hist, tc.enabled, tc.histo)
		}
	}
	if n, err := s.Update("setup_actors", []string{"HOST = '%'", "USER = '%'", "ROLE = '%'"}, map[string]Value{"ENABLED": no, "HISTORY": no}); err != nil || n != 1 {
		t.Errorf("update matched %d rows, %v", n, err)
	}
	if en, _ := s.lookupActor("carol", "db"); en {
		t.Errorf("carol still instrumented after (%%,%%) ENABLED=NO")
	}
	if n, err := s.Delete("setup_actors", []string{"USER = 'bob'"}); err != nil || n != 1 {
		t.Errorf("delete bob: %d rows, %v", n, err)
	}
	if _, err := s.Update("setup_actors", nil, map[string]Value{"ENABLED": yes}); err != nil {
		t.Fatal(err)
	}
	if len(s.SetupActors()) != 2 {
		t.Errorf("rows: %+v", s.SetupActors())
	}
	s.truncateSetupActors()
	if en, hist := s.lookupActor("alice", "web1"); en || hist {
		t.Errorf("empty setup_actors must instrument nobody")
	}
}

func TestSetupObjects(t *testing.T) {
	s := newTestSchema(t)
	if en, timed := s.lookupObject(ObjectFile, "/var/log", "app.log"); !en || !timed {
		t.Errorf("files enabled by default")
	}
	if en, _ := s.lookupObject(ObjectTable, "mysql", "user"); en {
		t.Errorf("MySQL's default disables the mysql schema")
	}
	v0 := s.objectsVersion.Load()
	if err := s.insertSetupObject(SetupObjectsRow{ObjectType: ObjectFile, ObjectSchema: "/tmp", Enabled: true, Timed: false}); err != nil {
		t.Fatal(err)
	}
	if err := s.insertSetupObject(SetupObjectsRow{ObjectType: ObjectFile, ObjectSchema: "/tmp", ObjectName: "hot.db", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if s.objectsVersion.Load() == v0 {
		t.Errorf("setup_objects version not bumped")
	}
	for _, tc := range []struct {
		schema, name string
		en, timed    bool
	}{
		{"/tmp", "hot.db", false, false},
		{"/tmp", "cold.db", true, false},
		{"/var", "x", true, true},
	} {
		if en, timed := s.lookupObject(ObjectFile, tc.schema, tc.name); en != tc.en || timed != tc.timed {
			t.Errorf("%s/%s: %v %v, want %v %v", tc.schema, tc.name, en, timed, tc.en, tc.timed)
		}
	}
	if err := s.insertSetupObject(SetupObjectsRow{ObjectType: ObjectFile, ObjectSchema: "/tmp"}); !errors.Is(err, ErrDuplicateRow) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := ParseObjectType("VIEW"); !errors.Is(err, ErrBadValue) {
		t.Errorf("ParseObjectType(VIEW): %v", err)
	}
	if typ, _ := ParseObjectType("file"); typ != ObjectFile {
		t.Errorf("ParseObjectType(file) = %v", typ)
	}
	if n, err := s.Delete("setup_objects", []string{"OBJECT_TYPE = 'FILE'", "OBJECT_SCHEMA = '/tmp'"}); err != nil || n != 2 {
		t.Errorf("deleted %d, %v", n, err)
	}
	s.truncateSetupObjects()
	if en, _ := s.lookupObject(ObjectFile, "/var", "x"); en {
		t.Errorf("empty setup_objects must disable objects")
	}
}

func TestSetupThreads(t *testing.T) {
	s := newTestSchema(t, WithInstrument("thread/app/batch=OFF"))
	web := s.MustRegister("thread/app/web", WithProperties(PropUser))
	batch := s.MustRegister("thread/app/batch")
	rows := s.SetupThreads()
	if len(rows) != 2 || !rows[0].Enabled || !rows[0].History || rows[1].Enabled || rows[0].Properties.String() != "user" {
		t.Errorf("setup_threads = %+v", rows)
	}
	no := false
	if n, err := s.UpdateThreads("thread/app/w%", nil, &no); err != nil || n != 1 {
		t.Errorf("UpdateThreads = %d, %v", n, err)
	}
	if en, hist := threadClassDefaults(web); !en || hist {
		t.Errorf("web: %v %v", en, hist)
	}
	if en, _ := threadClassDefaults(batch); en {
		t.Errorf("batch enabled")
	}
	for _, r := range s.SetupInstruments() {
		if strings.HasPrefix(r.Name, "thread/") && r.Timed != nil {
			t.Errorf("thread class %s has TIMED non-NULL", r.Name)
		}
	}
	if got := (PropSingleton | PropGlobalStatistics).String(); got != "singleton,global_statistics" {
		t.Errorf("Properties.String() = %q", got)
	}
}

// TestDocListsEveryTable keeps doc.go's table catalog and the defined
// tables in step.
func TestDocListsEveryTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(doc), "// # Tables")
	j := strings.Index(string(doc), "// # Differences from MySQL")
	if i < 0 || j < i {
		t.Fatal("doc.go lacks its # Tables section")
	}
	listed := map[string]bool{}
	for _, w := range strings.FieldsFunc(string(doc[i:j]), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z')
	}) {
		listed[w] = true
	}
	s := newTestSchema(t)
	for _, name := range s.TableNames() {
		if !listed[name] {
			t.Errorf("table %s is not listed in doc.go", name)
		}
		delete(listed, name)
	}
	for w := range listed {
		if strings.Contains(w, "_") && !strings.HasPrefix(w, "_") && !strings.HasSuffix(w, "_") && w != "performance_schema" {
			if _, err := s.Select(w); err != nil {
				t.Errorf("doc.go lists %s, which is not a table", w)
			}
		}
	}
}

func TestClassAndSizeOptions(t *testing.T) {
	s := newTestSchema(t, WithWaitsHistorySize(3), WithConsumer(ConsumerEventsWaitsCurrent, true),
		WithConsumer(ConsumerEventsWaitsHistory, true))
	off := s.MustRegister("wait/synch/mutex/test/off", WithDefault(false, false), WithVolatility(4))
	if off.Enabled() || off.Timed() {
		t.Errorf("WithDefault(false, false): enabled %v timed %v", off.Enabled(), off.Timed())
	}
	for _, r := range s.SetupInstruments() {
		if r.Name == off.Name() && r.Volatility != 4 {
			t.Errorf("VOLATILITY %d, want 4", r.Volatility)
		}
	}
	m := s.MustRegister("wait/synch/mutex/test/m")
	inst := s.NewSyncInstance(m, "")
	th := s.NewThread(s.MustRegister("thread/test/t"), ThreadOptions{})
	for range 5 {
		waitOnce(inst, th)
	}
	if h := s.EventsWaitsHistory(); len(h) != 3 || h[0].EventID != 3 {
		t.Errorf("history of size 3 after 5 waits: %+v", h)
	}
}

// TestCountedRuleKeepsThreadHistory: a start-up rule's TIMED part does not
// reach a thread class, which has no TIMED (its second flag is
// setup_threads.HISTORY): '%=COUNTED' leaves threads with HISTORY=YES, so
// their untimed events still reach the history tables, as in MySQL. (It
// turned HISTORY off, and history_long stayed empty.)
func TestCountedRuleKeepsThreadHistory(t *testing.T) {
	s, err := New(WithoutEnvironment(), WithInstrument("%=COUNTED"),
		WithConsumer(ConsumerEventsWaitsCurrent, true), WithConsumer(ConsumerEventsWaitsHistoryLong, true))
	if err != nil {
		t.Fatal(err)
	}
	tc := s.MustRegister("thread/app/worker")
	for _, r := range s.SetupThreads() {
		if r.Name == "thread/app/worker" && (!r.Enabled || !r.History) {
			t.Errorf("setup_threads %+v, want ENABLED and HISTORY", r)
		}
	}
	th := s.NewThread(tc, ThreadOptions{})
	defer th.End()
	m := s.NewSyncInstance(s.MustRegister("wait/synch/mutex/app/m"), "")
	var w WaitState
	if m.BeginWait(&w, th, OpLock) {
		w.EndWait(-1)
	}
	h := s.EventsWaitsHistoryLong()
	if len(h) != 1 || h[0].Timed {
		t.Errorf("history_long %+v, want the one untimed wait", h)
	}
}
