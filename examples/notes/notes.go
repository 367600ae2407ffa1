// Package notes is the demo's service: a small multi-tenant notes API on
// Go's http.ServeMux, backed by SQLite (modernc.org/sqlite, pure Go)
// through database/sql, with a note cache behind a mutex, settings behind
// a read-write lock, a pool of response buffers and a journal file.
//
// New builds it either plain (Go's own types: no otelpfs call anywhere)
// or instrumented (instrument's Mutex, RWMutex, File, BufferPool and
// MemoryClass, pfssql's database/sql wrapper, pfshttp's request handler,
// stages for the phases of a request), with the same handlers, so that the
// two differ by the instrumentation alone: examples/demo runs the
// instrumented one, and bench/ compares the two (BenchmarkDemoRaw,
// BenchmarkDemoInstrumented).
//
// The API, for tenant T named in the X-Tenant header:
//
//	GET    /notes/{id}        a note of T (cached), 404 if T has none of that id
//	GET    /notes?tag=X       T's newest notes with tag X, a page of them
//	POST   /notes             add a note ({"tag":…,"title":…,"body":…}); 201
//	DELETE /notes/{id}        delete a note of T; 204, or 404
//	GET    /stats             T's note count by tag
//	PUT    /config/page_size  set the page size (body: a number)
//
// The instrumented service takes its caller's trace from the W3C
// traceparent header (pfshttp.WithTraceContext, which does what
// OpenTelemetry's propagation does), so that with
// instrument.SetTraceHook(bridge.TraceContext) its statements join the
// caller's trace. Its requests run on pooled threads, a pool per tenant
// (pfshttp.WithThreadPool), as a connection pool's clients run on its
// connections.
//
// A title longer than 80 bytes fails the table's CHECK constraint: the
// insert's error is a 500, as a service's bug would be.
package notes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// Tenants are the tenants Seed creates notes for.
var Tenants = []string{"alice", "bob", "carol"}

// Tags are the tags of the seeded notes.
var Tags = []string{"work", "home", "ideas", "todo"}

// SeedNotes is how many notes Seed creates: ids 1 to SeedNotes, note i
// belonging to Tenants[(i-1)%len(Tenants)].
const SeedNotes = 600 // a multiple of 100, the seed's rows per INSERT

// A Config says how to build a Service.
type Config struct {
	// Dir is where the database and the journal live; it must exist.
	Dir string
	// Schema, if not nil, instruments the service into it; nil builds the
	// plain service.
	Schema *pfscore.Schema
	// CacheEntries bounds the note cache (default 256).
	CacheEntries int
}

// A Service is the notes API. Its Handler is safe for concurrent use.
type Service struct {
	k        *kit
	handler  http.Handler
	cache    *noteCache
	pageSize int // guarded by k.configLock
}

// New opens (creating if needed) the service's database and journal in
// cfg.Dir, seeds the database if it is new, and returns the service.
func New(cfg Config) (*Service, error) {
	if cfg.CacheEntries <= 0 {
		cfg.CacheEntries = 256
	}
	// WAL lets readers run beside the writer; busy_timeout makes a writer
	// wait for another instead of failing; _txlock=immediate takes the
	// write lock at BEGIN, so two transactions cannot deadlock upgrading.
	dsn := "file:" + filepath.Join(cfg.Dir, "notes.db") +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	journal := filepath.Join(cfg.Dir, "journal.log")
	var k *kit
	var err error
	if cfg.Schema == nil {
		k, err = plainKit(dsn, journal)
	} else {
		k, err = instrumentedKit(cfg.Schema, dsn, journal, tenantOf)
	}
	if err != nil {
		return nil, err
	}
	svc := &Service{k: k, pageSize: 20}
	svc.cache = newNoteCache(cfg.CacheEntries, k)
	if err := svc.seed(context.Background()); err != nil {
		k.close()
		return nil, fmt.Errorf("seeding the database: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /notes/{id}", svc.getNote)
	mux.HandleFunc("GET /notes", svc.listNotes)
	mux.HandleFunc("POST /notes", svc.addNote)
	mux.HandleFunc("DELETE /notes/{id}", svc.deleteNote)
	mux.HandleFunc("GET /stats", svc.stats)
	mux.HandleFunc("PUT /config/page_size", svc.setPageSize)
	svc.handler = k.wrap(mux)
	return svc, nil
}

// Handler returns the service's HTTP handler.
func (s *Service) Handler() http.Handler { return s.handler }

// Close closes the database and the journal.
func (s *Service) Close() error { return s.k.close() }

// tenantOf returns the request's X-Tenant header. The handlers call it, and
// so does pfshttp for every request (the thread's user): the key is given
// in its canonical form, as http.Header stores it, which Get would
// otherwise work out on every call.
func tenantOf(r *http.Request) string {
	if v := r.Header["X-Tenant"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

const schemaSQL = `
CREATE TABLE IF NOT EXISTS tenants (name TEXT PRIMARY KEY, notes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS notes (
	id      INTEGER PRIMARY KEY,
	tenant  TEXT NOT NULL,
	tag     TEXT NOT NULL,
	title   TEXT NOT NULL CHECK (length(title) <= 80),
	body    TEXT NOT NULL,
	created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_by_tenant_tag ON notes (tenant, tag, id);`

// seed creates the tables and, in a new database, the seeded notes.
func (s *Service) seed(ctx context.Context) error {
	for _, stmt := range strings.Split(strings.TrimSpace(schemaSQL), ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := s.k.db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	var n int
	if err := s.k.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM notes").Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	tx, err := s.k.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range Tenants {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tenants (name, notes) VALUES (?, ?)", t, SeedNotes/len(Tenants)); err != nil {
			return err
		}
	}
	now := time.Now().Unix()
	const batch = 100 // rows per INSERT
	for first := 1; first <= SeedNotes; first += batch {
		q := "INSERT INTO notes (id, tenant, tag, title, body, created) VALUES " +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", batch), ", ")
		args := make([]any, 0, 6*batch)
		for i := first; i < first+batch; i++ {
			args = append(args, i, Tenants[(i-1)%len(Tenants)], Tags[i%len(Tags)], fmt.Sprintf("note %d", i),
				strings.Repeat(fmt.Sprintf("line %d of a seeded note. ", i), 1+i%8), now)
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// getNote: the cache first, then the database.
func (s *Service) getNote(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	tenant := tenantOf(r)
	s.k.stages(ctx, stageCacheLookup)
	body, owner, gen, ok := s.cache.get(ctx, id)
	if !ok {
		s.k.stages(ctx, stageQuerying)
		var n note
		err := s.k.db.QueryRowContext(ctx, "SELECT id, tenant, tag, title, body, created FROM notes WHERE id = ?", id).
			Scan(&n.id, &n.tenant, &n.tag, &n.title, &n.body, &n.created)
		if errors.Is(err, sql.ErrNoRows) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.k.stages(ctx, stageRendering)
		b, h := s.k.bufs.get(ctx, 512)
		b = n.appendJSON(b)
		body, owner = s.cache.put(ctx, id, n.tenant, b, gen)
		s.k.bufs.put(h, b)
	}
	if owner != tenant {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// listNotes: a page of the tenant's newest notes with a tag.
func (s *Service) listNotes(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.k.configLock.RLockCtx(ctx)
	page := s.pageSize
	s.k.configLock.RUnlock()
	s.k.stages(ctx, stageQuerying)
	rows, err := s.k.db.QueryContext(ctx,
		"SELECT id, title, created FROM notes WHERE tenant = ? AND tag = ? ORDER BY id DESC LIMIT ?",
		tenantOf(r), r.URL.Query().Get("tag"), page)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	b, h := s.k.bufs.get(ctx, 2048)
	defer func() { s.k.bufs.put(h, b) }()
	b = append(b, '[')
	for i := 0; rows.Next(); i++ {
		var id, created int64
		var title string
		if err := rows.Scan(&id, &title, &created); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if i == 0 {
			s.k.stages(ctx, stageRendering)
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"title":`...)
		b = appendJSONString(b, title)
		b = append(b, `,"created":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, '}')
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, "]\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// addNote: a transaction, then a line in the journal.
func (s *Service) addNote(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tenant := tenantOf(r)
	if tenant == "" {
		http.Error(w, "no X-Tenant", http.StatusBadRequest)
		return
	}
	n, err := parseNote(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.k.stages(ctx, stageQuerying)
	id, err := s.insert(ctx, tenant, n)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.k.stages(ctx, stageJournaling)
	if err := s.journalf(ctx, "add", tenant, id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Location", "/notes/"+strconv.FormatInt(id, 10))
	w.WriteHeader(http.StatusCreated)
}

func (s *Service) insert(ctx context.Context, tenant string, n note) (int64, error) {
	tx, err := s.k.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "INSERT INTO notes (tenant, tag, title, body, created) VALUES (?, ?, ?, ?, ?)",
		tenant, n.tag, n.title, n.body, time.Now().Unix())
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE tenants SET notes = notes + 1 WHERE name = ?", tenant); err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// deleteNote: the row, the cache entry, a line in the journal.
func (s *Service) deleteNote(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	tenant := tenantOf(r)
	s.k.stages(ctx, stageQuerying)
	res, err := s.k.db.ExecContext(ctx, "DELETE FROM notes WHERE id = ? AND tenant = ?", id, tenant)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		http.NotFound(w, r)
		return
	}
	s.cache.remove(ctx, id)
	s.k.stages(ctx, stageJournaling)
	if err := s.journalf(ctx, "delete", tenant, id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// stats: the tenant's notes by tag.
func (s *Service) stats(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.k.stages(ctx, stageQuerying)
	rows, err := s.k.db.QueryContext(ctx, "SELECT tag, COUNT(*) FROM notes WHERE tenant = ? GROUP BY tag ORDER BY tag", tenantOf(r))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	b, h := s.k.bufs.get(ctx, 256)
	defer func() { s.k.bufs.put(h, b) }()
	b = append(b, '{')
	for i := 0; rows.Next(); i++ {
		var tag string
		var n int64
		if err := rows.Scan(&tag, &n); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, tag)
		b = append(b, ':')
		b = strconv.AppendInt(b, n, 10)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// setPageSize changes a setting under the write lock.
func (s *Service) setPageSize(w http.ResponseWriter, r *http.Request) {
	var buf [16]byte
	n, _ := r.Body.Read(buf[:])
	size, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || size < 1 || size > 100 {
		http.Error(w, "page size: a number from 1 to 100", http.StatusBadRequest)
		return
	}
	s.k.configLock.LockCtx(r.Context())
	s.pageSize = size
	s.k.configLock.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// journalf appends a line to the journal: time, operation, tenant, id.
func (s *Service) journalf(ctx context.Context, op, tenant string, id int64) error {
	var line [128]byte
	b := time.Now().UTC().AppendFormat(line[:0], time.RFC3339Nano)
	b = append(b, ' ')
	b = append(b, op...)
	b = append(b, ' ')
	b = append(b, tenant...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id, 10)
	b = append(b, '\n')
	s.k.journalLock.LockCtx(ctx)
	_, err := s.k.journal.WriteCtx(ctx, b)
	s.k.journalLock.Unlock()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}
