package bench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/XSAM/otelsql"
	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	_ "modernc.org/sqlite" // registers the pure-Go driver "sqlite"
)

// The database/sql benchmarks run one primary-key SELECT per iteration,
//
//	SELECT id, name, email FROM users WHERE id = ?
//
// with the id varying over sqlUsers rows, through database/sql and the
// pure-Go driver modernc.org/sqlite (no cgo, so the driver's own cost is the
// same Go code in every benchmark), on a file database in b.TempDir() with a
// pool of one connection. BenchmarkSQLRaw is the baseline; BenchmarkSQLOtelsql
// adds XSAM/otelsql with tracing and metrics on. A wrapper's cost per query is
// its ns/op and allocs/op minus BenchmarkSQLRaw's in the same run (DESIGN.md's
// budget: otelpfs's wrapper adds at most 1/4 of what otelsql adds). A third
// benchmark for otelpfs's own wrapper reuses openSQLite, sqlQuery and sqlBench
// unchanged, so that all of them run the same statement on the same data.

// sqlUsers is how many rows openSQLite puts in the users table.
const sqlUsers = 1000

// sqlSelect is the statement every iteration runs.
const sqlSelect = "SELECT id, name, email FROM users WHERE id = ?"

// openSQLite creates a SQLite database file in b.TempDir() holding the table
// users(id INTEGER PRIMARY KEY, name TEXT, email TEXT) with sqlUsers rows
// (ids 1..sqlUsers), written through a plain database/sql handle that it
// closes again, and returns the DSN to open it with driver name "sqlite" —
// through sql.Open or any wrapper under test. A file (not :memory:) is what an
// application has: each autocommit SELECT takes and drops SQLite's shared
// file lock, as it would in production; that cost is in every benchmark alike.
func openSQLite(b *testing.B) (dsn string) {
	b.Helper()
	dsn = filepath.Join(b.TempDir(), "users.db")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE users (
		id    INTEGER PRIMARY KEY,
		name  TEXT NOT NULL,
		email TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare("INSERT INTO users (id, name, email) VALUES (?, ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	for id := 1; id <= sqlUsers; id++ {
		name := fmt.Sprintf("user%04d", id)
		if _, err := ins.Exec(id, name, name+"@example.com"); err != nil {
			b.Fatal(err)
		}
	}
	if err := ins.Close(); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return dsn
}

// sqlQuery is one iteration: sqlSelect for id (1..sqlUsers) under ctx, the
// one row scanned into variables (QueryRowContext's Scan closes the rows),
// and the row checked. It is what a request handler's lookup by key does.
func sqlQuery(ctx context.Context, db *sql.DB, id int64) error {
	var (
		gotID       int64
		name, email string
	)
	if err := db.QueryRowContext(ctx, sqlSelect, id).Scan(&gotID, &name, &email); err != nil {
		return err
	}
	if gotID != id || name == "" || email == "" {
		return fmt.Errorf("id %d: got row (%d, %q, %q)", id, gotID, name, email)
	}
	return nil
}

// sqlBench is the timed loop every database/sql benchmark shares. It limits
// db to one open connection (so every query reuses the same one and results
// are stable), runs one untimed sqlQuery so that connecting is not timed,
// then times b.N sqlQuery calls under ctx, cycling the id over 1..sqlUsers,
// with allocations reported. The caller opens db on openSQLite's DSN with the
// wrapper under test, and passes the context a request handler's query would
// carry (for a tracing wrapper, one holding a parent span). The timer is
// stopped when it returns, so the caller's checks and cleanup are not timed.
func sqlBench(b *testing.B, ctx context.Context, db *sql.DB) {
	b.Helper()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := sqlQuery(ctx, db, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sqlQuery(ctx, db, int64(i%sqlUsers)+1); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// BenchmarkSQLRaw is the baseline: the query through database/sql and the
// driver alone.
func BenchmarkSQLRaw(b *testing.B) {
	db, err := sql.Open("sqlite", openSQLite(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sqlBench(b, context.Background(), db)
}

// BenchmarkSQLInstrumented is otelpfs's wrapper: the same query through
// pfssql.Open, the driver level (each query a statement event with its
// digest, rows and driver and fetch times), with every statement consumer
// on (events_statements_current, _history, _history_long,
// statements_digest) and the transaction consumers too, under a context
// carrying an instrument thread, as a request handler's queries run. The
// digest row is checked to have counted every query.
func BenchmarkSQLInstrumented(b *testing.B) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerStatementsDigest, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistoryLong, true))
	if err != nil {
		b.Fatal(err)
	}
	db, err := pfssql.Open("sqlite", openSQLite(b), pfssql.WithSchema(s))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/request", instrument.WithSchema(s))
	defer t.End()

	sqlBench(b, ctx, db)

	want, d := uint64(b.N)+1, digest.StatementDigest(sqlSelect).Hex()
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if r.Digest == d {
			if r.CountStar != want || r.SumRowsSent != want {
				b.Fatalf("digest row: %d statements, %d rows sent; want %d", r.CountStar, r.SumRowsSent, want)
			}
			return
		}
	}
	b.Fatalf("no digest row for %q", sqlSelect)
}

// countingExporter is an exporter that does no I/O: it counts the spans it
// is handed, so the benchmark can check that none were dropped.
type countingExporter struct{ spans atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error { return nil }

// BenchmarkSQLOtelsql is the peer: the same query through XSAM/otelsql
// wrapping the same driver, set up as its README shows for production, with
// the OpenTelemetry SDK behind it:
//
//   - tracing: a TracerProvider that samples every span (AlwaysSample) with
//     the SDK's batch span processor at its defaults, as with an OTLP
//     exporter, but over an exporter that only counts (no I/O). The batch
//     processor is what production uses; a simple processor over an
//     in-memory exporter would export synchronously under a lock and keep
//     every span in a growing slice, which no production setup does. Its
//     queue is drained by a goroutine of its own, whose CPU and allocations
//     count in allocs/op but may run on another core than the timed loop.
//   - metrics: an SDK MeterProvider with a ManualReader (the instruments
//     record into the SDK's aggregations; nothing is exported during the
//     loop, as with a periodic reader between its ticks), and
//     RegisterDBStatsMetrics for the pool's statistics.
//   - otelsql's default span options: a span per driver call
//     (sql.conn.query, sql.rows, ...), the query text as db.query.text.
//
// Every query runs under one context carrying a started root span, as a
// request handler's queries do. It is started once, outside the loop: a
// child span's cost does not depend on how long its parent has lived, and a
// root span per iteration would charge the handler's own span to otelsql.
// spans/op is the number of spans exported per query: 3 with otelsql's
// defaults (sql.conn.reset_session, sql.conn.query, sql.rows), fewer if the
// batch processor dropped some (it logs how many).
func BenchmarkSQLOtelsql(b *testing.B) {
	ctx := context.Background()
	exp := &countingExporter{}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exp),
	)
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	opts := []otelsql.Option{
		otelsql.WithTracerProvider(tp),
		otelsql.WithMeterProvider(mp),
		otelsql.WithAttributes(semconv.DBSystemNameSQLite),
	}
	db, err := otelsql.Open("sqlite", openSQLite(b), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	reg, err := otelsql.RegisterDBStatsMetrics(db, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Unregister()

	ctx, root := tp.Tracer("bench/handler").Start(ctx, "GET /users/{id}")
	defer root.End()

	// One query to connect (its spans include the connect), then one to
	// count the spans of a query on an open connection: every later query,
	// sqlBench's untimed one and its b.N timed ones, makes that many.
	exported := func() int64 {
		if err := tp.ForceFlush(ctx); err != nil {
			b.Fatal(err)
		}
		return exp.spans.Swap(0)
	}
	for range 2 {
		if err := sqlQuery(ctx, db, 1); err != nil {
			b.Fatal(err)
		}
	}
	exported()
	if err := sqlQuery(ctx, db, 1); err != nil {
		b.Fatal(err)
	}
	perQuery := exported()

	sqlBench(b, ctx, db)

	queries := int64(b.N) + 1
	got, want := exported(), perQuery*queries
	if perQuery == 0 || got > want {
		b.Fatalf("%d spans exported for %d queries of %d spans each", got, queries, perQuery)
	}
	if got < want {
		// The batch processor drops a span when its queue is full, as
		// it would in production; seen at -cpu 1, where its goroutine
		// shares the one P with the loop. Fewer spans, less work.
		b.Logf("batch span processor dropped %d of %d spans", want-got, want)
	}
	b.ReportMetric(float64(got)/float64(queries), "spans/op")

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		b.Fatal(err)
	}
	if !hasMetric(rm, "db.client.operation.duration") || !hasMetric(rm, "db.sql.connection.open") {
		b.Fatalf("otelsql's metrics were not recorded: %+v", rm.ScopeMetrics)
	}
}

func hasMetric(rm metricdata.ResourceMetrics, name string) bool {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return true
			}
		}
	}
	return false
}
