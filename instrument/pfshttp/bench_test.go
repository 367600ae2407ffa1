package pfshttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
)

// nopWriter is a ResponseWriter that keeps nothing, so that the
// benchmark measures the handlers, not a recorder.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkHandler compares a ServeMux with a pattern route, bare and
// under Handler: a request thread and statement, no SQL.
func BenchmarkHandler(b *testing.B) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	})
	user := pfshttp.WithUser(func(*http.Request) string { return "app" })
	run := func(b *testing.B, h http.Handler) {
		w := &nopWriter{h: http.Header{}}
		r := httptest.NewRequest("GET", "/users/42", nil)
		h.ServeHTTP(w, r) // the first request registers the digest
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, r)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, mux) })
	b.Run("pfshttp", func(b *testing.B) { run(b, pfshttp.Handler(mux, pfshttp.WithSchema(s), user)) })
	b.Run("pfshttp-pooled", func(b *testing.B) {
		h := pfshttp.Handler(mux, pfshttp.WithSchema(s), user, pfshttp.WithThreadPool(8))
		defer h.(interface{ CloseIdleThreads() }).CloseIdleThreads()
		run(b, h)
	})
	b.Run("pfshttp-pooled-traced", func(b *testing.B) {
		h := pfshttp.Handler(mux, pfshttp.WithSchema(s), user, pfshttp.WithThreadPool(8), pfshttp.WithTraceContext())
		defer h.(interface{ CloseIdleThreads() }).CloseIdleThreads()
		w := &nopWriter{h: http.Header{}}
		r := httptest.NewRequest("GET", "/users/42", nil)
		r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		h.ServeHTTP(w, r)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, r)
		}
	})
	b.Run("pfshttp-disabled", func(b *testing.B) {
		s.UpdateInstruments("statement/http/%", boolp(false), nil)
		s.UpdateInstruments("thread/http/%", boolp(false), nil)
		defer s.UpdateInstruments("%", boolp(true), nil)
		run(b, pfshttp.Handler(mux, pfshttp.WithSchema(s), user))
	})
	b.Run("mux.Handler", func(b *testing.B) {
		r := httptest.NewRequest("GET", "/users/42", nil)
		b.ReportAllocs()
		for b.Loop() {
			mux.Handler(r)
		}
	})
	b.Run("thread-only", func(b *testing.B) {
		tc := instrument.NewThreadClass("thread/http/request", instrument.WithSchema(s))
		b.ReportAllocs()
		for b.Loop() {
			tc.Start("app", "192.0.2.1").End()
		}
	})
}

func boolp(v bool) *bool { return &v }
