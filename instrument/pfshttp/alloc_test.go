package pfshttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Handler allocates one object per request of its own (the request copy,
// its context and the ResponseWriter together), besides what starting
// the request's thread allocates.
func TestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector mean nothing")
	}
	s := newSchema(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	})
	w := &nopWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/users/42", nil)
	tc := instrument.NewThreadClass("thread/test/alloc", instrument.WithSchema(s))
	for _, c := range []struct {
		name string
		opts []pfshttp.Option
	}{
		{"plain", nil},
		{"WithContext", []pfshttp.Option{pfshttp.WithContext(func(r *http.Request) context.Context { return r.Context() })}},
	} {
		h := pfshttp.Handler(mux, append(c.opts, pfshttp.WithSchema(s), pfshttp.WithUser(func(*http.Request) string { return "app" }))...)
		h.ServeHTTP(w, r) // registers the digest
		bare := testing.AllocsPerRun(200, func() { mux.ServeHTTP(w, r) })
		thread := testing.AllocsPerRun(200, func() { tc.Start("app", "192.0.2.1").End() })
		got := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) })
		if want := bare + thread + 1; got > want {
			t.Errorf("%s: %v allocations per request under Handler; want at most %v (the mux's %v, the thread's %v, and one)",
				c.name, got, want, bare, thread)
		}
	}
}

// A request whose thread could not start (the thread table is full)
// carries no thread, not the thread of the context it was derived from,
// as instrument.ContextWithThread's context with a nil thread does.
func TestNoThreadHidesParents(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, outer := instrument.StartThread(context.Background(), "thread/test/outer", instrument.WithSchema(s))
	if outer == nil {
		t.Fatal("no outer thread")
	}
	defer outer.End()
	// Fill the table (its pages may hold more than asked for).
	tc := instrument.NewThreadClass("thread/test/filler", instrument.WithSchema(s))
	var fillers []*instrument.Thread
	for th := tc.Start("", ""); th != nil; th = tc.Start("", "") {
		fillers = append(fillers, th)
	}
	seen := make(chan *instrument.Thread, 1)
	h := pfshttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- instrument.ThreadFromContext(r.Context())
	}), pfshttp.WithSchema(s), pfshttp.WithContext(func(*http.Request) context.Context { return ctx }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if th := <-seen; th != nil {
		t.Errorf("the handler's context carries thread %d with the thread table full; want none", th.ID())
	}
	// With room, the request's own thread, not the outer one.
	for _, th := range fillers {
		th.End()
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if th := <-seen; th == nil || th == outer {
		t.Errorf("the handler's context carries %v; want the request's thread", th)
	}
}

// What a handler keeps of its request past its return (a goroutine that
// waits for the context, a log line written later) stays that request's:
// the next requests reuse none of it.
func TestRequestKeptPastReturn(t *testing.T) {
	s := newSchema(t)
	type kept struct {
		r      *http.Request
		thread *instrument.Thread
		ctx    context.Context
	}
	var all []kept
	h := pfshttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		all = append(all, kept{r, instrument.ThreadFromContext(r.Context()), r.Context()})
	}), pfshttp.WithSchema(s))
	parent, cancel := context.WithCancel(context.Background())
	for _, path := range []string{"/a", "/b", "/c"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(parent, "GET", path, nil))
	}
	// A context derived from a kept one still follows its parent.
	derived, stop := context.WithCancel(all[0].ctx)
	defer stop()
	cancel()
	<-derived.Done()
	for i, k := range all {
		if want := "/" + string(rune('a'+i)); k.r.URL.Path != want {
			t.Errorf("request %d: path %q after later requests; want %q", i, k.r.URL.Path, want)
		}
		if k.thread == nil || instrument.ThreadFromContext(k.r.Context()) != k.thread || k.r.Context() != k.ctx {
			t.Errorf("request %d: its context changed after later requests", i)
		}
		if k.r.Context().Err() == nil {
			t.Errorf("request %d: its context is not cancelled with its parent", i)
		}
		for j := range i {
			if all[j].thread == k.thread {
				t.Errorf("requests %d and %d share a thread", j, i)
			}
		}
	}
}
