package pfshttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
	"go.opentelemetry.io/otel/trace"
)

// requestAs returns a request of user (X-User) from host.
func requestAs(path, user, host string) *http.Request {
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("X-User", user)
	r.RemoteAddr = host + ":4711"
	return r
}

var userHeader = pfshttp.WithUser(func(r *http.Request) string { return r.Header.Get("X-User") })

// A pooled thread serves request after request of its user and host: one
// THREAD_ID, its history spanning the requests, its account counting it
// while it is idle; another user or host gets another thread.
func TestThreadPoolReuse(t *testing.T) {
	s := newSchema(t)
	var seen []*instrument.Thread
	var ctxs []context.Context
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, instrument.ThreadFromContext(r.Context()))
		ctxs = append(ctxs, r.Context())
	})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(8))
	for _, who := range [][2]string{{"alice", "10.0.0.1"}, {"alice", "10.0.0.1"}, {"bob", "10.0.0.1"}, {"alice", "10.0.0.2"}, {"alice", "10.0.0.1"}} {
		h.ServeHTTP(httptest.NewRecorder(), requestAs("/a", who[0], who[1]))
	}
	if seen[0] == nil || seen[1] != seen[0] || seen[4] != seen[0] {
		t.Errorf("alice@10.0.0.1's requests ran on threads %v, %v, %v; want one pooled thread", seen[0], seen[1], seen[4])
	}
	if seen[2] == seen[0] || seen[3] == seen[0] || seen[2] == seen[3] {
		t.Errorf("bob@10.0.0.1 and alice@10.0.0.2 share a thread with alice@10.0.0.1 or each other")
	}
	for i, ctx := range ctxs {
		if th := instrument.ThreadFromContext(ctx); th != nil {
			t.Errorf("request %d's context still carries thread %d after the request", i, th.ID())
		}
	}
	id := seen[0].ID()
	if n := len(findRows(t, s, "threads", "NAME = 'thread/http/request'")); n != 3 {
		t.Errorf("%d request threads; want the 3 pooled ones, idle", n)
	}
	hist := findRows(t, s, "events_statements_history_long", fmt.Sprintf("THREAD_ID = %d", id))
	if len(hist) != 3 {
		t.Errorf("thread %d's statements: %d, want its three requests': %v", id, len(hist), hist)
	}
	acct := findRow(t, s, "accounts", "USER = 'alice'", "HOST = '10.0.0.1'")
	if acct["CURRENT_CONNECTIONS"] != int64(1) || acct["TOTAL_CONNECTIONS"] != uint64(1) {
		t.Errorf("alice@10.0.0.1 with a pooled thread: %v", acct)
	}
	sum := findRow(t, s, "events_statements_summary_by_account_by_event_name",
		"USER = 'alice'", "HOST = '10.0.0.1'", "EVENT_NAME = 'statement/http/request'")
	if sum["COUNT_STAR"] != uint64(3) {
		t.Errorf("alice@10.0.0.1's request statements: %v, want COUNT_STAR 3", sum["COUNT_STAR"])
	}
	h.(interface{ CloseIdleThreads() }).CloseIdleThreads()
	if r := findRows(t, s, "threads", "NAME = 'thread/http/request'"); len(r) != 0 {
		t.Errorf("request threads after CloseIdleThreads: %v", r)
	}
	sum = findRow(t, s, "events_statements_summary_by_account_by_event_name",
		"USER = 'alice'", "HOST = '10.0.0.1'", "EVENT_NAME = 'statement/http/request'")
	if sum["COUNT_STAR"] != uint64(3) {
		t.Errorf("alice@10.0.0.1's request statements once its thread ended: %v, want COUNT_STAR 3", sum["COUNT_STAR"])
	}
	// The handler still serves, on a new thread.
	h.ServeHTTP(httptest.NewRecorder(), requestAs("/a", "alice", "10.0.0.1"))
	if last := seen[len(seen)-1]; last == nil || last.ID() == id || last.Ended() {
		t.Errorf("after CloseIdleThreads a request ran on %v; want a new thread", last)
	}
}

// A request that leaves an event in progress on its thread (a statement,
// a transaction, a wait) does not give the thread back: the thread ends,
// and the next request gets a new one. A stage in progress ends with the
// request, and the thread goes back.
func TestThreadPoolUnsettled(t *testing.T) {
	s := newSchema(t)
	in := instrument.WithSchema(s)
	stage := instrument.NewStageClass("stage/test/phase", in)
	var last *instrument.Thread
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stage", func(w http.ResponseWriter, r *http.Request) {
		last = instrument.ThreadFromContext(r.Context())
		stage.Start(r.Context())
	})
	mux.HandleFunc("GET /statement", func(w http.ResponseWriter, r *http.Request) {
		last = instrument.ThreadFromContext(r.Context())
		instrument.StartSQL(r.Context(), s, "", "SELECT 1") // never ended
	})
	mux.HandleFunc("GET /transaction", func(w http.ResponseWriter, r *http.Request) {
		last = instrument.ThreadFromContext(r.Context())
		s.StartTransaction(last, pfscore.TransactionInfo{}) // never ended
	})
	var held pfscore.WaitState
	mux.HandleFunc("GET /wait", func(w http.ResponseWriter, r *http.Request) {
		last = instrument.ThreadFromContext(r.Context())
		if !s.BeginIdle(&held, last) { // never ended by the request
			t.Error("BeginIdle refused the wait")
		}
	})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(8))
	serve := func(path string) *instrument.Thread {
		h.ServeHTTP(httptest.NewRecorder(), requestAs(path, "alice", "10.0.0.1"))
		return last
	}
	first := serve("/stage")
	if again := serve("/stage"); again != first || first.Ended() {
		t.Errorf("a request that left a stage in progress: next request on %v, want the pooled %v", again, first)
	}
	if r := findRows(t, s, "events_stages_current", fmt.Sprintf("THREAD_ID = %d", first.ID()), "END_EVENT_ID IS NULL"); len(r) != 0 {
		t.Errorf("a stage still in progress on the idle pooled thread: %v", r)
	}
	for _, path := range []string{"/statement", "/transaction", "/wait"} {
		th := serve(path)
		if !th.Ended() {
			t.Errorf("%s: the thread the request left an event in progress on was not ended", path)
		}
		if next := serve("/stage"); next == th || next.Ended() {
			t.Errorf("%s: the next request ran on %v; want a new live thread", path, next)
		}
	}
	held.EndWait(0)
}

// The pool keeps at most max idle threads, ending the others, however many
// requests ran at once.
func TestThreadPoolBound(t *testing.T) {
	s := newSchema(t)
	const concurrent, max = 12, 5
	var arrived sync.WaitGroup
	arrived.Add(concurrent)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
	})
	mux.HandleFunc("GET /quick", func(w http.ResponseWriter, r *http.Request) {})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(max))
	var done sync.WaitGroup
	for i := range concurrent {
		done.Add(1)
		go func() {
			defer done.Done()
			h.ServeHTTP(httptest.NewRecorder(), requestAs("/hold", []string{"alice", "bob"}[i%2], "10.0.0.1"))
		}()
	}
	arrived.Wait()
	if n := len(findRows(t, s, "threads", "NAME = 'thread/http/request'")); n != concurrent {
		t.Errorf("%d request threads while %d requests run", n, concurrent)
	}
	close(release)
	done.Wait()
	if n := len(findRows(t, s, "threads", "NAME = 'thread/http/request'")); n != max {
		t.Errorf("%d request threads idle after the requests; want the pool's bound, %d", n, max)
	}
	// Many actors, one request each: the pool stays bounded and keeps
	// serving (its empty lists are dropped as they pile up).
	for i := range 500 {
		h.ServeHTTP(httptest.NewRecorder(), requestAs("/quick", "carol", fmt.Sprintf("10.1.%d.%d", i/256, i%256)))
	}
	if n := len(findRows(t, s, "threads", "NAME = 'thread/http/request'")); n != max {
		t.Errorf("%d request threads idle after 500 actors; want %d", n, max)
	}
}

// Pooled threads under load: requests of a few users on several
// goroutines, each leaving a goroutine that records through the request's
// context after the request (which must find no thread), while readers
// read the threads, accounts and summaries; every cumulative column read
// never goes down, and each request counts once.
func TestThreadPoolConcurrent(t *testing.T) {
	s := newSchema(t)
	in := instrument.WithSchema(s)
	mu := instrument.NewMutex("wait/synch/mutex/test/pool", in)
	stage := instrument.NewStageClass("stage/test/pool", in)
	var late sync.WaitGroup
	var lateWithThread atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		stage.Start(ctx)
		mu.LockCtx(ctx)
		mu.Unlock()
		st := instrument.StartSQL(ctx, s, "", "SELECT ?")
		st.End(instrument.StatementResult{RowsSent: 1})
		late.Add(1)
		go func() {
			defer late.Done()
			<-ctx.Done() // pfshttp's context ends with the test's request context below
			if instrument.ThreadFromContext(ctx) != nil {
				lateWithThread.Add(1)
			}
			mu.LockCtx(ctx)
			mu.Unlock()
		}()
	})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(4))
	const workers, each = 4, 300
	users := []string{"alice", "bob", "carol"}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := map[string]uint64{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, r := range findRows(t, s, "events_statements_summary_by_account_by_event_name", "EVENT_NAME = 'statement/http/request'") {
					k := fmt.Sprint(r["USER"], "@", r["HOST"])
					n := r["COUNT_STAR"].(uint64)
					if n < last[k] {
						t.Errorf("%s's request count went down: %d after %d", k, n, last[k])
					}
					last[k] = n
				}
				findRows(t, s, "threads")
				findRows(t, s, "events_waits_summary_by_thread_by_event_name")
			}
		}()
	}
	var ws sync.WaitGroup
	for w := range workers {
		ws.Add(1)
		go func() {
			defer ws.Done()
			for i := range each {
				ctx, cancel := context.WithCancel(context.Background())
				r := requestAs("/work", users[(w+i)%len(users)], "10.0.0.1").WithContext(ctx)
				h.ServeHTTP(httptest.NewRecorder(), r)
				cancel()
			}
		}()
	}
	ws.Wait()
	late.Wait()
	close(stop)
	readers.Wait()
	if n := lateWithThread.Load(); n != 0 {
		t.Errorf("%d goroutines found a thread in a request's context after the request", n)
	}
	var total uint64
	for _, r := range findRows(t, s, "events_statements_summary_by_account_by_event_name", "EVENT_NAME = 'statement/http/request'") {
		total += r["COUNT_STAR"].(uint64)
	}
	if total != workers*each {
		t.Errorf("request statements by account: %d, want %d", total, workers*each)
	}
	g := findRow(t, s, "events_waits_summary_global_by_event_name", "EVENT_NAME = 'wait/synch/mutex/test/pool'")
	if g["COUNT_STAR"] != uint64(2*workers*each) {
		t.Errorf("mutex waits: %v, want %d (the requests' and the late goroutines')", g["COUNT_STAR"], 2*workers*each)
	}
	var byThread uint64
	for _, r := range findRows(t, s, "events_waits_summary_by_thread_by_event_name", "EVENT_NAME = 'wait/synch/mutex/test/pool'") {
		byThread += r["COUNT_STAR"].(uint64)
	}
	if byThread > workers*each {
		t.Errorf("mutex waits by thread: %d; the late goroutines' %d must be on no thread", byThread, workers*each)
	}
}

// WithTraceContext gives the handler the caller's span from the request's
// traceparent, on the context WithContext derived.
func TestWithTraceContext(t *testing.T) {
	s := newSchema(t)
	type key struct{}
	var got trace.SpanContext
	var derived any
	h := pfshttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = trace.SpanContextFromContext(r.Context())
		derived = r.Context().Value(key{})
	}), pfshttp.WithSchema(s), pfshttp.WithTraceContext(),
		pfshttp.WithContext(func(r *http.Request) context.Context { return context.WithValue(r.Context(), key{}, "kept") }))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || got.SpanID().String() != "b7ad6b7169203331" ||
		!got.IsSampled() || !got.IsRemote() {
		t.Errorf("the handler's span context: %+v", got)
	}
	if derived != "kept" {
		t.Errorf("WithContext's value: %v", derived)
	}
	r.Header.Set("traceparent", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01") // upper case: invalid
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.IsValid() {
		t.Errorf("an invalid traceparent gave %+v", got)
	}
}

// A request whose actor's idle list was dropped while it ran (the pool
// forgets empty lists when many actors have come and gone) gives its
// thread back to a list the pool still has, where the actor's next request
// finds it.
func TestThreadPoolListDroppedDuringRequest(t *testing.T) {
	s := newSchema(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var last *instrument.Thread
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { last = instrument.ThreadFromContext(r.Context()) })
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	mux.HandleFunc("GET /leak", func(w http.ResponseWriter, r *http.Request) {
		instrument.StartSQL(r.Context(), s, "", "SELECT 1") // never ended: the thread ends
	})
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(2))
	serve := func(path, user string) {
		h.ServeHTTP(httptest.NewRecorder(), requestAs(path, user, "10.0.0.1"))
	}
	serve("/ok", "x")
	pooled := last
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve("/hold", "x") // takes x's thread, leaving x's list empty
	}()
	<-entered
	// Actors that come and go, each leaving an empty list, until the pool
	// drops the empty lists, x's among them.
	for i := range 40 {
		u := fmt.Sprint("u", i)
		serve("/ok", u)
		serve("/leak", u)
	}
	close(release)
	<-done
	serve("/ok", "x")
	if last != pooled || pooled.Ended() {
		t.Errorf("x's next request ran on %v; want its pooled thread %v, given back to a list the pool has", last, pooled)
	}
}

// A request on a pooled thread, with the caller's trace context, makes one
// allocation of its own: the request copy with its context (which carries
// the caller's span) and its ResponseWriter.
func TestThreadPoolAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector mean nothing")
	}
	s := newSchema(t)
	mux := http.NewServeMux()
	var sc trace.SpanContext
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		sc = trace.SpanContextFromContext(r.Context())
		w.Write([]byte("ok"))
	})
	w := &nopWriter{h: http.Header{}}
	r := requestAs("/users/42", "app", "192.0.2.1")
	r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h := pfshttp.Handler(mux, pfshttp.WithSchema(s), userHeader, pfshttp.WithThreadPool(4), pfshttp.WithTraceContext())
	h.ServeHTTP(w, r) // starts the thread, registers the digest
	bare := testing.AllocsPerRun(200, func() { mux.ServeHTTP(w, r) })
	got := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) })
	if got > bare+1 {
		t.Errorf("%v allocations per pooled request; want at most the mux's %v and one", got, bare)
	}
	if !sc.IsValid() || !sc.IsRemote() {
		t.Errorf("the handler's span context: %+v", sc)
	}
}
