package pfshttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
)

// review22b: adversarial tests of the per-request allocation (perf14).

// context.WithCancel and context.AfterFunc on the request's context start
// no goroutine (they must find the cancelable parent through threadCtx),
// and cancellation and Cause propagate.
func TestReview22bDerivedContexts(t *testing.T) {
	s := newSchema(t)
	const n = 50
	var delta int
	var cause error
	var afterRan bool
	h := pfshttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := propagateGoroutines()
		var cancels []context.CancelFunc
		for range n {
			_, c := context.WithCancel(r.Context())
			cancels = append(cancels, c)
		}
		ran := make(chan struct{})
		stop := context.AfterFunc(r.Context(), func() { close(ran) })
		defer stop()
		delta = propagateGoroutines() - before
		child, cc := context.WithCancel(r.Context())
		defer cc()
		cancelReq := r.Context().Value(cancelKey{}).(context.CancelCauseFunc)
		cancelReq(errBoom)
		<-child.Done()
		<-ran
		afterRan = true
		cause = context.Cause(child)
		for _, c := range cancels {
			c()
		}
	}), pfshttp.WithSchema(s))
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	parent = context.WithValue(parent, cancelKey{}, cancel)
	req := httptest.NewRequest("GET", "/", nil).WithContext(parent)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if delta > 0 {
		t.Errorf("%d context.WithCancel + 1 AfterFunc on the request's context started %d goroutines", n, delta)
	}
	if !afterRan || !errors.Is(cause, errBoom) {
		t.Errorf("AfterFunc ran %v, Cause %v", afterRan, cause)
	}
}

type cancelKey struct{}

// propagateGoroutines counts the goroutines the context package started
// to carry a parent's cancellation to a child of a type it does not know.
// It counts them by their stacks, not by runtime.NumGoroutine, which
// other goroutines of the test binary move.
func propagateGoroutines() int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	// The profile begins with a "goroutine profile: total N" line, then
	// the stacks, largest count first: without the line, the first record
	// (the cancellation goroutines, when they are the most) is counted.
	_, recs, _ := strings.Cut(b.String(), "\n")
	n := 0
	for _, rec := range strings.Split(recs, "\n\n") {
		if !strings.Contains(rec, "context.(*cancelCtx).propagateCancel") {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(rec, "%d @", &k); err == nil {
			n += k
		}
	}
	return n
}

var errBoom = errors.New("boom")

// A thread the parent context carries is hidden when the request finds
// the thread table full (no thread), as ContextWithThread(ctx, nil) does.
func TestReview22bNilThreadHidesParent(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithMaxThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pt := instrument.StartThread(context.Background(), "thread/test/outer", instrument.WithSchema(s))
	defer pt.End()
	if pt == nil {
		t.Fatal("no outer thread")
	}
	for i := 0; ; i++ { // fill the thread table
		_, f := instrument.StartThread(context.Background(), "thread/test/filler", instrument.WithSchema(s))
		if f == nil {
			break
		}
		defer f.End()
		if i > 100000 {
			t.Fatal("thread table never full")
		}
	}
	var got *instrument.Thread
	seen := false
	h := pfshttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = instrument.ThreadFromContext(r.Context())
		seen = true
	}), pfshttp.WithSchema(s))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(pctx))
	if !seen || got != nil {
		t.Errorf("request without a thread (table full) sees thread %p (outer %p)", got, pt)
	}
}

// A handler that keeps its request and writer past its return (a
// goroutine reading them while later requests run) sees its own request:
// nothing of it is reused.
func TestReview22bKeptRequest(t *testing.T) {
	s := newSchema(t)
	type key struct{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /u/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		th := instrument.ThreadFromContext(r.Context())
		io.WriteString(w, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				runtime.Gosched()
				if r.PathValue("id") != id || r.Pattern != "GET /u/{id}" || r.Context().Value(key{}) != id ||
					instrument.ThreadFromContext(r.Context()) != th {
					mu.Lock()
					bad = append(bad, id+" saw "+r.PathValue("id")+" "+r.Pattern)
					mu.Unlock()
					return
				}
			}
		}()
	})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), pfshttp.WithContext(func(r *http.Request) context.Context {
		return context.WithValue(r.Context(), key{}, r.URL.Path[len("/u/"):])
	}))
	var cw sync.WaitGroup
	for c := range 4 {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for i := range 25 {
				id := string(rune('a'+c)) + string(rune('a'+i))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/u/"+id, nil))
				if rec.Body.String() != id {
					t.Errorf("body %q want %q", rec.Body.String(), id)
				}
			}
		}()
	}
	cw.Wait()
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("kept requests changed: %q", bad)
	}
}

// http.ResponseController reaches every control of net/http's writer
// through the wrapper.
func TestReview22bResponseController(t *testing.T) {
	s := newSchema(t)
	var errs []error
	mux := http.NewServeMux()
	mux.HandleFunc("POST /dup", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		errs = append(errs, rc.EnableFullDuplex(),
			rc.SetReadDeadline(time.Now().Add(time.Minute)),
			rc.SetWriteDeadline(time.Now().Add(time.Minute)))
		io.WriteString(w, "x")
		errs = append(errs, rc.Flush())
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	sv := startServer(t, s, mux, false, false)
	resp, err := sv.Client().Post(sv.URL+"/dup", "text/plain", stringsReader("yz"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "xyz" {
		t.Errorf("body %q", body)
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("control %d: %v", i, e)
		}
	}
}

type strReader struct{ s string }

func (r *strReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, nil
}

func stringsReader(s string) io.Reader { return &strReader{s} }
