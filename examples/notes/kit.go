package notes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A kit is what the service is built of: the same handlers run on the
// plain kit (Go's own types, no otelpfs call anywhere) and on the
// instrumented one, so the two differ by the instrumentation alone.
type kit struct {
	db          db
	cacheLock   locker
	configLock  rwLocker
	journalLock locker
	journal     writer
	bufs        buffers
	cacheMem    accountant
	stages      func(ctx context.Context, s stage) // marks a phase of the request
	wrap        func(http.Handler) http.Handler    // the middleware around the mux
	close       func() error
	dsn         string // the database's, for NewWithHooks
}

// db is what the handlers use of *sql.DB; *pfssql.DB has it too.
type db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

type locker interface {
	LockCtx(ctx context.Context)
	Unlock()
}

type rwLocker interface {
	locker
	RLockCtx(ctx context.Context)
	RUnlock()
}

// writer writes for the request ctx carries.
type writer interface {
	WriteCtx(ctx context.Context, p []byte) (int, error)
	Close() error
}

// buffers is a pool of response buffers: get returns a buffer of len 0 and
// a handle, put takes both back (b may have grown).
type buffers interface {
	get(ctx context.Context, n int) (b []byte, h any)
	put(h any, b []byte)
}

// accountant counts the cache's memory.
type accountant interface {
	alloc(ctx context.Context, n int) instrument.Memory
	free(m *instrument.Memory)
}

// stage names a phase of a request.
type stage int

const (
	stageCacheLookup stage = iota
	stageQuerying
	stageRendering
	stageJournaling
	numStages
)

var stageNames = [numStages]string{
	"stage/demo/cache_lookup",
	"stage/demo/querying",
	"stage/demo/rendering",
	"stage/demo/journaling",
}

// The instrument names of the service.
const (
	cacheLockName   = "wait/synch/mutex/demo/note_cache"
	configLockName  = "wait/synch/rwlock/demo/config"
	journalLockName = "wait/synch/mutex/demo/journal"
	journalName     = "wait/io/file/demo/journal"
	buffersName     = "memory/demo/response_buffers"
	cacheMemName    = "memory/demo/note_cache"
)

// ---- the plain kit ----

type plainLock struct{ sync.Mutex }

func (l *plainLock) LockCtx(context.Context) { l.Lock() }

type plainRWLock struct{ sync.RWMutex }

func (l *plainRWLock) LockCtx(context.Context)  { l.Lock() }
func (l *plainRWLock) RLockCtx(context.Context) { l.RLock() }

type plainFile struct{ *os.File }

func (f plainFile) WriteCtx(_ context.Context, p []byte) (int, error) { return f.Write(p) }

type plainBuffers struct{ pool sync.Pool } // of *[]byte

func (p *plainBuffers) get(_ context.Context, n int) ([]byte, any) {
	bp, _ := p.pool.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, n)
		bp = &b
	}
	if cap(*bp) < n {
		*bp = make([]byte, 0, n)
	}
	return (*bp)[:0], bp
}

func (p *plainBuffers) put(h any, b []byte) {
	bp := h.(*[]byte)
	*bp = b[:0]
	p.pool.Put(bp)
}

type plainAccountant struct{}

func (plainAccountant) alloc(context.Context, int) instrument.Memory { return instrument.Memory{} }
func (plainAccountant) free(*instrument.Memory)                      {}

func plainKit(dsn, journalPath string) (*kit, error) {
	d, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		d.Close()
		return nil, err
	}
	return &kit{
		db:          d,
		cacheLock:   new(plainLock),
		configLock:  new(plainRWLock),
		journalLock: new(plainLock),
		journal:     plainFile{f},
		bufs:        new(plainBuffers),
		cacheMem:    plainAccountant{},
		stages:      func(context.Context, stage) {},
		wrap:        func(h http.Handler) http.Handler { return h },
		close:       func() error { return closeBoth(d.Close(), f.Close()) },
		dsn:         dsn,
	}, nil
}

// ---- the plain kit, instrumented by another module ----

// Hooks instrument the plain service some other way than otelpfs's, from
// another module: bench/ builds the service as a Go team would with the
// OpenTelemetry SDK alone (otelsql around database/sql, otelhttp around
// the handler). The handlers, Go's own locks, buffer pool and journal file
// are the plain service's; the database handle and the middleware are the
// hooks'.
type Hooks struct {
	// OpenDB, if not nil, opens the database the handlers use, in place of
	// sql.Open(driverName, dsn); driverName is "sqlite" (modernc.org/sqlite's
	// driver).
	OpenDB func(driverName, dsn string) (*sql.DB, error)
	// Wrap, if not nil, wraps the service's handler (the ServeMux).
	Wrap func(http.Handler) http.Handler
}

// NewWithHooks is New for the plain service (cfg.Schema must be nil) with
// the database h.OpenDB opens and the handler h.Wrap wraps. The database
// is created and seeded through a plain handle first, which is closed
// before OpenDB is called, so the seeding is not instrumented.
func NewWithHooks(cfg Config, h Hooks) (*Service, error) {
	if cfg.Schema != nil {
		return nil, errors.New("notes: NewWithHooks builds the plain service: cfg.Schema must be nil")
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	k := s.k
	if h.OpenDB != nil {
		if err := k.db.(*sql.DB).Close(); err != nil {
			k.journal.Close()
			return nil, err
		}
		d, err := h.OpenDB("sqlite", k.dsn)
		if err != nil {
			k.journal.Close()
			return nil, err
		}
		k.db = d
		k.close = func() error { return closeBoth(d.Close(), k.journal.Close()) }
	}
	if h.Wrap != nil {
		s.handler = h.Wrap(s.handler)
	}
	return s, nil
}

// ---- the instrumented kit ----

type instrumentedFile struct{ *instrument.File }

func (f instrumentedFile) WriteCtx(ctx context.Context, p []byte) (int, error) {
	return f.ForCtx(ctx).Write(p)
}

type instrumentedBuffers struct{ pool *instrument.BufferPool }

func (p instrumentedBuffers) get(ctx context.Context, n int) ([]byte, any) {
	b := p.pool.Get(ctx, n)
	return b.B[:0], b
}

func (p instrumentedBuffers) put(h any, b []byte) {
	buf := h.(*instrument.Buffer)
	buf.B = b
	p.pool.Put(buf)
}

type instrumentedAccountant struct{ class *instrument.MemoryClass }

func (a instrumentedAccountant) alloc(ctx context.Context, n int) instrument.Memory {
	return a.class.Alloc(ctx, n)
}
func (instrumentedAccountant) free(m *instrument.Memory) { m.Free() }

func instrumentedKit(s *pfscore.Schema, dsn, journalPath string, user func(*http.Request) string) (*kit, error) {
	in := instrument.WithSchema(s)
	raw, err := pfssql.Open("sqlite", dsn, pfssql.WithSchema(s), pfssql.WithCurrentSchema("notes"))
	if err != nil {
		return nil, err
	}
	d, err := pfssql.NewDB(raw) // the DB level: pool waits count too
	if err != nil {
		raw.Close()
		return nil, err
	}
	f, err := instrument.NewFileClass(journalName, in).OpenFile(journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		raw.Close()
		return nil, err
	}
	var stages [numStages]*instrument.StageClass
	for i, name := range stageNames {
		stages[i] = instrument.NewStageClass(name, in)
	}
	return &kit{
		db:          d,
		cacheLock:   instrument.NewMutex(cacheLockName, in, instrument.WithDocumentation("The note cache.")),
		configLock:  instrument.NewRWMutex(configLockName, in, instrument.WithDocumentation("The service's settings.")),
		journalLock: instrument.NewMutex(journalLockName, in, instrument.WithDocumentation("Orders the journal's lines.")),
		journal:     instrumentedFile{f},
		bufs:        instrumentedBuffers{instrument.NewBufferPool(buffersName, in)},
		cacheMem:    instrumentedAccountant{instrument.NewMemoryClass(cacheMemName, in)},
		stages:      func(ctx context.Context, st stage) { stages[st].Start(ctx) },
		wrap: func(h http.Handler) http.Handler {
			// Requests run on pooled threads, one pool per tenant
			// (pfshttp.WithThreadPool), and carry the caller's trace
			// context from their traceparent header, as OpenTelemetry's
			// HTTP handler would put it in the request's context
			// (pfshttp.WithTraceContext): with
			// instrument.SetTraceHook(bridge.TraceContext), statements
			// record it, and their spans join the caller's trace.
			return pfshttp.Handler(h, pfshttp.WithSchema(s), pfshttp.WithUser(user),
				pfshttp.WithThreadPool(threadPoolSize), pfshttp.WithTraceContext())
		},
		close: func() error { return closeBoth(raw.Close(), f.Close()) },
	}, nil
}

func closeBoth(a, b error) error {
	if a != nil {
		return a
	}
	if b != nil {
		return fmt.Errorf("journal: %w", b)
	}
	return nil
}

// threadPoolSize bounds the idle request threads the service keeps
// (pfshttp.WithThreadPool): enough for its tenants' concurrent requests.
const threadPoolSize = 64
