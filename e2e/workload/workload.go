// Package workload is the instrumented service the end-to-end tests (and
// cmd/otlpload) run: each request is a statement of its own (a route, on a
// thread of its own) that takes a mutex, holds a buffer of counted memory,
// and runs SQL statements against SQLite through pfssql. Every instrument
// reports to the Schema it is given, so two Services on two Schemas are two
// service instances in one process.
//
// Importing the package installs bridge.TraceContext as instrument's trace
// hook: a request whose context carries an OpenTelemetry span records it,
// and its statement's span is placed inside that trace.
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"

	_ "modernc.org/sqlite" // the driver "sqlite"
)

// The instrument names the workload uses.
const (
	MutexName  = "wait/synch/mutex/e2e/cache"
	MemoryName = "memory/e2e/buffer"
	ThreadName = "thread/e2e/request"
	// RequestName is the class of the request statements, and RouteDigest
	// their text (DIGEST_TEXT, and their spans' name).
	RequestName = "statement/e2e/request"
	RouteDigest = "GET /kv/{k}"
	// BufferSize is the bytes each request allocates on MemoryName.
	BufferSize = 4096
	// Held is how many requests' buffers stay allocated after their
	// request, so that the memory in use is not zero.
	Held = 4
)

// The digest texts of the workload's statements (DIGEST_TEXT, exported as
// db.query.summary).
const (
	SelectDigest = "SELECT `v` FROM `kv` WHERE `k` = ?"
	InsertDigest = "INSERT INTO `kv` ( `k` , `v` ) VALUES (...)"
)

func init() { instrument.SetTraceHook(bridge.TraceContext) }

// NewSchema returns a Schema for the workload: the environment ignored, its
// mutex and memory classes enabled and timed, and the consumers on that
// make history into spans (statements, with their waits as events).
func NewSchema() (*pfscore.Schema, error) {
	return pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithInstrument("wait/synch/mutex/e2e/%=ON"),
		pfscore.WithInstrument("memory/e2e/%=ON"),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))
}

// A Service is one instrumented service instance on one Schema.
type Service struct {
	s     *pfscore.Schema
	in    instrument.SharedOption
	cache *instrument.Mutex
	bufs  *instrument.MemoryClass
	reqs  *instrument.StatementClass
	db    *sql.DB

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
	return &Service{s: s, in: in, db: db,
		cache: instrument.NewMutex(MutexName, in),
		bufs:  instrument.NewMemoryClass(MemoryName, in),
		reqs:  instrument.NewStatementClass(RequestName, in)}, nil
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

// Request serves one request: a thread for it and a RouteDigest statement
// in which it takes the cache mutex, allocates a BufferSize buffer, INSERTs
// a new key every fourth request and SELECTs one of the first Keys rows.
func (w *Service) Request(ctx context.Context) (err error) {
	ctx, t := instrument.StartThread(ctx, ThreadName, w.in, instrument.WithUser("e2e"), instrument.WithHost("localhost"))
	defer t.End()
	st := w.reqs.Start(ctx, RouteDigest)
	defer func() {
		var res instrument.StatementResult
		if err != nil {
			res.Errors, res.Message = 1, err.Error()
		}
		st.End(res)
	}()

	w.cache.LockCtx(ctx)
	w.mu.Lock()
	w.n++
	n := w.n
	w.mu.Unlock()
	w.cache.Unlock()

	buf := w.bufs.Alloc(ctx, BufferSize)
	if n%4 == 1 {
		// The literals are in the text on purpose: the digest drops them.
		if _, err := w.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO kv (k, v) VALUES (%d, 'value %d')", Keys+n, n)); err != nil {
			buf.Free()
			return err
		}
	}
	var v string
	err = w.db.QueryRowContext(ctx, fmt.Sprintf("SELECT v FROM kv WHERE k = %d", n%Keys)).Scan(&v)

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
	return err
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
