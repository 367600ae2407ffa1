// Package workload is the instrumented service the end-to-end tests (and
// cmd/otlpload) run: each request is an HTTP request served by
// pfshttp.Handler around an http.ServeMux (a thread of its own and a
// statement/http/request statement named by its route), handed to the
// handler in-process (no socket), in which the handler takes a mutex,
// holds a buffer of counted memory, and, inside a stage, runs SQL
// statements against SQLite through pfssql. Every instrument reports to
// the Schema it is given, so two Services on two Schemas are two service
// instances in one process.
//
// Importing the package installs bridge.TraceContext as the trace hook
// (exporter.StartOTLP would install it too): a request whose context
// carries an OpenTelemetry span records it, and its spans are placed
// inside that trace.
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"

	_ "modernc.org/sqlite" // the driver "sqlite"
)

// The instrument names the workload uses.
const (
	MutexName  = "wait/synch/mutex/e2e/cache"
	MemoryName = "memory/e2e/buffer"
	// StageName is the stage each request runs its SQL in.
	StageName = "stage/e2e/query"
	// ThreadName and RequestName are pfshttp's classes of a request's
	// thread and statement.
	ThreadName  = "thread/http/request"
	RequestName = "statement/http/request"
	// Method and Route are the requests' method and http.ServeMux
	// pattern; RouteDigest is their statement's text (DIGEST_TEXT,
	// pfs.digest_text) and their server span's name.
	Method      = "GET"
	Route       = "/kv/{k}"
	RouteDigest = Method + " " + Route
	// User and Host are the requests' threads' user and host.
	User = "e2e"
	Host = "localhost"
	// BufferSize is the bytes each request allocates on MemoryName.
	BufferSize = 4096
	// Held is how many requests' buffers stay allocated after their
	// request, so that the memory in use is not zero.
	Held = 4
)

// The digest texts of the workload's SQL statements (DIGEST_TEXT, exported
// as pfs.digest_text), and their summaries by the database conventions
// (db.query.summary, and their spans' names).
const (
	SelectDigest  = "SELECT `v` FROM `kv` WHERE `k` = ?"
	InsertDigest  = "INSERT INTO `kv` ( `k` , `v` ) VALUES (...)"
	SelectSummary = "SELECT kv"
	InsertSummary = "INSERT kv"
	// DBSystem is db.system.name of the workload's SQL (pfssql tells it
	// from the driver).
	DBSystem = "sqlite"
)

func init() { instrument.SetTraceHook(bridge.TraceContext) }

// NewSchema returns a Schema for the workload: the environment ignored, and
// its mutex, memory and stage classes enabled and timed. Spans need nothing
// more: exporter.StartOTLP turns on the trace capture and the consumers it
// reads.
func NewSchema(opts ...pfscore.Option) (*pfscore.Schema, error) {
	return pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment(),
		pfscore.WithInstrument("wait/synch/mutex/e2e/%=ON"),
		pfscore.WithInstrument("memory/e2e/%=ON"),
		pfscore.WithInstrument("stage/e2e/%=ON")}, opts...)...)
}

// A Service is one instrumented service instance on one Schema.
type Service struct {
	s       *pfscore.Schema
	in      instrument.SharedOption
	cache   *instrument.Mutex
	bufs    *instrument.MemoryClass
	stage   *instrument.StageClass
	db      *sql.DB
	handler http.Handler

	mu   sync.Mutex // guards held and n (a plain mutex: not part of the workload)
	held []instrument.Memory
	n    int
}

// New creates the service's SQLite database in dir (a file of its own)
// with Keys rows, uninstrumented, and opens it through pfssql.
func New(s *pfscore.Schema, dir string) (*Service, error) {
	if s == nil {
		return nil, errors.New("workload: nil Schema")
	}
	path := filepath.Join(dir, fmt.Sprintf("kv-%p.db", s))
	if err := seed(path); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	in := instrument.WithSchema(s)
	db, err := pfssql.Open("sqlite", path, pfssql.WithSchema(s))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // SQLite: one writer
	w := &Service{s: s, in: in, db: db,
		cache: instrument.NewMutex(MutexName, in),
		bufs:  instrument.NewMemoryClass(MemoryName, in),
		stage: instrument.NewStageClass(StageName, in)}
	mux := http.NewServeMux()
	mux.HandleFunc(RouteDigest, w.get)
	w.handler = pfshttp.Handler(mux, pfshttp.WithSchema(s),
		pfshttp.WithUser(func(*http.Request) string { return User }),
		pfshttp.WithHost(func(*http.Request) string { return Host }))
	return w, nil
}

// Keys is how many rows the table starts with; requests read them.
const Keys = 10

// seed creates the table and its first Keys rows, before the statements
// count.
func seed(path string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		return err
	}
	for k := range Keys {
		if _, err := db.Exec("INSERT INTO kv (k, v) VALUES (?, ?)", k, fmt.Sprintf("value %d", k)); err != nil {
			return err
		}
	}
	return db.Close()
}

// Schema returns the Schema the service reports to.
func (w *Service) Schema() *pfscore.Schema { return w.s }

// Request serves one request, GET /kv/<n mod Keys> for the n-th, with ctx
// (and the span it may carry) as the request's context: pfshttp starts a
// thread and a RouteDigest statement, in which the handler takes the cache
// mutex, allocates a BufferSize buffer and, in a StageName stage, INSERTs a
// new key every fourth request and SELECTs one of the first Keys rows. An
// error is the handler's 500.
func (w *Service) Request(ctx context.Context) error {
	w.mu.Lock()
	w.n++
	n := w.n
	w.mu.Unlock()
	r := httptest.NewRequestWithContext(ctx, Method, "/kv/"+strconv.Itoa(n%Keys)+"?n="+strconv.Itoa(n), nil)
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("workload: GET %s: %d %s", r.URL, rec.Code, rec.Body)
	}
	return nil
}

// get is the handler of RouteDigest.
func (w *Service) get(rw http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	w.cache.LockCtx(ctx)
	w.cache.Unlock()

	buf := w.bufs.Alloc(ctx, BufferSize)
	w.stage.Start(ctx)
	err := w.query(ctx, n, r.PathValue("k"))
	instrument.EndStage(ctx)

	w.mu.Lock()
	w.held = append(w.held, buf)
	var old []instrument.Memory
	if len(w.held) > Held {
		old = append(old, w.held[:len(w.held)-Held]...)
		w.held = append(w.held[:0], w.held[len(w.held)-Held:]...)
	}
	w.mu.Unlock()
	for i := range old {
		old[i].Free()
	}
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(rw, "ok")
}

// query runs the n-th request's SQL: an INSERT every fourth request, and
// the SELECT of key k.
func (w *Service) query(ctx context.Context, n int, k string) error {
	if n%4 == 1 {
		// The literals are in the text on purpose: the digest drops them.
		if _, err := w.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv (k, v) VALUES (%d, 'value %d')", Keys+n, n)); err != nil {
			return err
		}
	}
	key, err := strconv.Atoi(k)
	if err != nil {
		return err
	}
	var v string
	return w.db.QueryRowContext(ctx, fmt.Sprintf("SELECT v FROM kv WHERE k = %d", key)).Scan(&v)
}

// Requests returns how many requests have started.
func (w *Service) Requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close frees the held buffers and closes the database.
func (w *Service) Close() error {
	w.mu.Lock()
	held := w.held
	w.held = nil
	w.mu.Unlock()
	for i := range held {
		held[i].Free()
	}
	return w.db.Close()
}
