package instrument

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// instrumentErrors returns s's Performance_schema_instrument_errors.
func instrumentErrors(t testing.TB, s *pfscore.Schema) uint64 {
	t.Helper()
	for _, v := range s.Status() {
		if v.Name == "Performance_schema_instrument_errors" {
			return v.Value
		}
	}
	t.Fatal("global_status has no Performance_schema_instrument_errors")
	return 0
}

// collectErrors installs a handler that keeps what it is given, until the
// test ends.
func collectErrors(t *testing.T) func() []error {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	SetErrorHandler(ErrorHandlerFunc(func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}))
	t.Cleanup(func() { SetErrorHandler(nil) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		out := errs
		errs = nil
		return out
	}
}

// logTo sends slog.Default() to w until the test ends, and gives the default
// error handler a fresh memory.
func logTo(t *testing.T, w io.Writer) {
	t.Helper()
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(w, nil)))
	defaultHandler.reset()
	t.Cleanup(func() {
		slog.SetDefault(old)
		defaultHandler.reset()
	})
}

// guarded is what the test locks guard.
var guarded int

// constructorCases builds one instrument of each constructor with name in
// schema s and reports whether it came out instrumented.
var constructorCases = []struct {
	ctor string
	good string // a valid name of the constructor's kind
	make func(name string, s *pfscore.Schema) (instrumented bool)
}{
	{"NewMutex", "wait/synch/mutex/app/m", func(name string, s *pfscore.Schema) bool {
		m := NewMutex(name, WithSchema(s))
		m.Lock()
		guarded++
		m.Unlock()
		return m.class != nil
	}},
	{"(*Mutex).Init", "wait/synch/mutex/app/m", func(name string, s *pfscore.Schema) bool {
		var m Mutex
		m.Init(name, WithSchema(s))
		m.Lock()
		guarded++
		m.Unlock()
		return m.class != nil
	}},
	{"NewRWMutex", "wait/synch/rwlock/app/rw", func(name string, s *pfscore.Schema) bool {
		rw := NewRWMutex(name, WithSchema(s))
		rw.RLock()
		_ = guarded
		rw.RUnlock()
		return rw.class != nil
	}},
	{"(*RWMutex).Init", "wait/synch/rwlock/app/rw", func(name string, s *pfscore.Schema) bool {
		var rw RWMutex
		rw.Init(name, WithSchema(s))
		rw.Lock()
		guarded++
		rw.Unlock()
		return rw.class != nil
	}},
	{"NewCond", "wait/synch/cond/app/c", func(name string, s *pfscore.Schema) bool {
		c := NewCond(name, &sync.Mutex{}, WithSchema(s))
		c.Signal()
		return c.class != nil
	}},
	{"(*Cond).Init", "wait/synch/cond/app/c", func(name string, s *pfscore.Schema) bool {
		var c Cond
		c.Init(name, &sync.Mutex{}, WithSchema(s))
		c.Signal()
		return c.class != nil
	}},
	{"NewFileClass", "wait/io/file/app/f", func(name string, s *pfscore.Schema) bool {
		return NewFileClass(name, WithSchema(s)).Class() != nil
	}},
	{"NewSocketClass", "wait/io/socket/app/s", func(name string, s *pfscore.Schema) bool {
		return NewSocketClass(name, WithSchema(s)).Class() != nil
	}},
	{"NewThreadClass", "thread/app/t", func(name string, s *pfscore.Schema) bool {
		tc := NewThreadClass(name, WithSchema(s))
		t := tc.Start("", "")
		t.End()
		return tc.class != nil && t != nil
	}},
	{"NewThread", "thread/app/t", func(name string, s *pfscore.Schema) bool {
		t := NewThread(name, WithSchema(s))
		t.End()
		return t != nil
	}},
	{"StartThread", "thread/app/t", func(name string, s *pfscore.Schema) bool {
		ctx, t := StartThread(context.Background(), name, WithSchema(s))
		t.End()
		return t != nil && ThreadFromContext(ctx) == t
	}},
}

// Every constructor reports a misspelled name, a name of another kind and a
// full class table to the handler, with an error that names it and the
// name and wraps pfscore's sentinel, counts it, and still returns a working
// object.
func TestRegisterErrors(t *testing.T) {
	for _, tc := range constructorCases {
		t.Run(tc.ctor, func(t *testing.T) {
			errs := collectErrors(t)
			s := syncSchema(t)

			// A name of another kind: two cases on, past the Init twin.
			var other string
			for i, c := range constructorCases {
				if c.good == tc.good {
					other = constructorCases[(i+2)%len(constructorCases)].good
				}
			}
			misspelled := strings.Replace(tc.good, "/app/", "/app//", 1)
			full, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxClasses(2))
			if err != nil {
				t.Fatal(err)
			}

			for _, bad := range []struct {
				name   string
				schema *pfscore.Schema
				want   error
			}{
				{misspelled, s, pfscore.ErrBadInstrumentName},
				{other, s, pfscore.ErrBadInstrumentName},
				{tc.good, full, pfscore.ErrTooManyClasses},
			} {
				before := instrumentErrors(t, bad.schema)
				if tc.make(bad.name, bad.schema) {
					t.Errorf("%s(%q) is instrumented", tc.ctor, bad.name)
				}
				got := errs()
				if len(got) != 1 {
					t.Fatalf("%s(%q): handler got %d errors %v, want 1", tc.ctor, bad.name, len(got), got)
				}
				err := got[0]
				if !errors.Is(err, bad.want) {
					t.Errorf("%s(%q): error %v is not %v", tc.ctor, bad.name, err, bad.want)
				}
				var re *RegisterError
				if !errors.As(err, &re) || re.Constructor != tc.ctor || re.Name != bad.name {
					t.Errorf("%s(%q): error %#v, want a *RegisterError naming both", tc.ctor, bad.name, err)
				}
				if msg, want := err.Error(), fmt.Sprintf("instrument.%s(%q)", tc.ctor, bad.name); !strings.HasPrefix(msg, want) {
					t.Errorf("error %q does not start with %q", msg, want)
				}
				if n := instrumentErrors(t, bad.schema); n != before+1 {
					t.Errorf("%s(%q): Performance_schema_instrument_errors went %d -> %d, want +1", tc.ctor, bad.name, before, n)
				}
			}
			if s.Class(other) != nil {
				t.Errorf("%s(%q) registered a class of the wrong kind", tc.ctor, other)
			}

			// A good name, new or known, reports nothing.
			for range 2 {
				if !tc.make(tc.good, s) {
					t.Errorf("%s(%q) is uninstrumented", tc.ctor, tc.good)
				}
			}
			if got := errs(); len(got) != 0 {
				t.Errorf("%s(%q): handler got %v", tc.ctor, tc.good, got)
			}
			if n := instrumentErrors(t, s); n != 2 {
				t.Errorf("Performance_schema_instrument_errors = %d, want 2", n)
			}
		})
	}
}

// A known class of another kind is refused too, without a second
// registration.
func TestRegisterKnownClassOfOtherKind(t *testing.T) {
	errs := collectErrors(t)
	s := syncSchema(t)
	NewCond("wait/synch/cond/app/c", &sync.Mutex{}, WithSchema(s))
	if m := NewMutex("wait/synch/cond/app/c", WithSchema(s)); m.class != nil {
		t.Error("NewMutex accepted a cond class")
	}
	got := errs()
	if len(got) != 1 || !errors.Is(got[0], pfscore.ErrBadInstrumentName) {
		t.Fatalf("handler got %v, want one ErrBadInstrumentName", got)
	}
	if msg := got[0].Error(); !strings.Contains(msg, "a cond name, want wait/synch/mutex/<component>/<name>") {
		t.Errorf("error %q does not say the kinds", msg)
	}
}

// The default handler logs one Warn line per distinct name; the counter
// counts every failure.
func TestDefaultHandlerLogsOncePerName(t *testing.T) {
	var buf bytes.Buffer
	logTo(t, &buf)
	s := syncSchema(t)
	for range 3 {
		NewMutex("wait/synch/mutx/app/a", WithSchema(s))
		NewMutex("wait/synch/mutex/app/b c", WithSchema(s))
		NewFileClass("wait/synch/mutx/app/a", WithSchema(s)) // a name already logged
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, name := range []string{`name=wait/synch/mutx/app/a`, `name="wait/synch/mutex/app/b c"`} {
		for _, want := range []string{"level=WARN", "constructor=instrument.NewMutex", name, "err="} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("line %q lacks %q", lines[i], want)
			}
		}
	}
	if n := instrumentErrors(t, s); n != 9 {
		t.Errorf("Performance_schema_instrument_errors = %d, want 9", n)
	}
}

// Past maxLoggedNames distinct names the default handler says once that it
// stops, and stops; the counter goes on.
func TestDefaultHandlerBounded(t *testing.T) {
	var buf bytes.Buffer
	logTo(t, &buf)
	s := syncSchema(t)
	const names = maxLoggedNames + 10
	for range 2 {
		for i := range names {
			NewMutex(fmt.Sprintf("wait/synch/mutx/app/m%d", i), WithSchema(s))
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != maxLoggedNames+1 {
		t.Fatalf("logged %d lines, want %d", len(lines), maxLoggedNames+1)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "further instrument errors not logged") {
		t.Errorf("last line %q does not say the rest is not logged", last)
	}
	if n := instrumentErrors(t, s); n != 2*names {
		t.Errorf("Performance_schema_instrument_errors = %d, want %d", n, 2*names)
	}
}

// The default handler remembers at most maxKeyLen bytes of a name.
func TestDefaultHandlerLongNames(t *testing.T) {
	var buf bytes.Buffer
	logTo(t, &buf)
	long := strings.Repeat("x", 4*maxKeyLen)
	NewMutex(long+"a", WithSchema(syncSchema(t)))
	NewMutex(long+"b", WithSchema(syncSchema(t)))
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("logged %d lines, want 1", n)
	}
	for k := range defaultHandler.seen {
		if len(k) > maxKeyLen {
			t.Errorf("remembered a %d-byte name", len(k))
		}
	}
}

// SetErrorHandler may swap the handler while constructors fail in other
// goroutines: go test -race finds no race, and every error is counted.
func TestSetErrorHandlerConcurrent(t *testing.T) {
	logTo(t, io.Discard)
	t.Cleanup(func() { SetErrorHandler(nil) })
	s := syncSchema(t)
	const workers, each = 4, 500
	var handled [2]atomic.Int64
	handlers := []ErrorHandler{
		ErrorHandlerFunc(func(error) { handled[0].Add(1) }),
		ErrorHandlerFunc(func(error) { handled[1].Add(1) }),
		nil, // the default
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				NewMutex(fmt.Sprintf("wait/synch/mutx/app/w%d-%d", w, i%50), WithSchema(s))
			}
		})
	}
	for i := 0; i < 1000; i++ {
		SetErrorHandler(handlers[i%len(handlers)])
	}
	wg.Wait()
	if n := instrumentErrors(t, s); n != workers*each {
		t.Errorf("Performance_schema_instrument_errors = %d, want %d", n, workers*each)
	}
	if n := handled[0].Load() + handled[1].Load(); n > workers*each {
		t.Errorf("custom handlers got %d errors of %d", n, workers*each)
	}
}

// Building a mutex costs one short stack walk more than before; see how
// much.
func BenchmarkNewMutex(b *testing.B) {
	s := syncSchema(b)
	in := WithSchema(s)
	NewMutex("wait/synch/mutex/app/bench", in)
	b.ReportAllocs()
	for b.Loop() {
		NewMutex("wait/synch/mutex/app/bench", in)
	}
}

// Every constructor's wrong-kind error names the form it wants (review: the
// memory, stage and statement constructors said "want" and nothing).
func TestWrongKindNamesTheWantedForm(t *testing.T) {
	for _, c := range []struct {
		make func(s *pfscore.Schema)
		want string
	}{
		{func(s *pfscore.Schema) { NewMemoryClass("wait/synch/mutex/app/m", WithSchema(s)) }, "want memory/<component>/<name>"},
		{func(s *pfscore.Schema) { NewStageClass("wait/synch/mutex/app/m", WithSchema(s)) }, "want stage/<component>/<name>"},
		{func(s *pfscore.Schema) { NewStatementClass("wait/synch/mutex/app/m", WithSchema(s)) }, "want statement/<component>/<name>"},
	} {
		errs := collectErrors(t)
		c.make(syncSchema(t))
		got := errs()
		if len(got) != 1 || !strings.Contains(got[0].Error(), c.want) {
			t.Errorf("handler got %v, want one error saying %q", got, c.want)
		}
	}
}
