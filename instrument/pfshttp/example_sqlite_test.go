package pfshttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// An HTTP handler queries SQLite through the wrapped driver. Afterwards the
// by-digest summary has one row for the route, whatever the ids, and one
// for the query, whatever its literals; the SQL nests in the request.
func Example_sqlite() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))
	dir, _ := os.MkdirTemp("", "pfshttp-example")
	defer os.RemoveAll(dir)
	db, err := pfssql.Open("sqlite", filepath.Join(dir, "app.db"), pfssql.WithSchema(s))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	db.ExecContext(ctx, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
	db.ExecContext(ctx, "INSERT INTO users VALUES (1, 'ada@example.com'), (2, 'bob@example.com')")

	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		var email string
		// The literal is in the text on purpose: the digest drops it.
		q := "SELECT email FROM users WHERE id = " + r.PathValue("id")
		if err := db.QueryRowContext(r.Context(), q).Scan(&email); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		fmt.Fprintln(w, email)
	})
	ts := httptest.NewServer(pfshttp.Handler(mux, pfshttp.WithSchema(s)))
	defer ts.Close()
	for _, path := range []string{"/users/1", "/users/2", "/users/2"} {
		resp, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	res, err := s.Query("events_statements_summary_by_digest", pfscore.Query{
		Where: []string{"DIGEST_TEXT NOT LIKE 'CREATE%' AND DIGEST_TEXT NOT LIKE 'INSERT%'"},
		Order: "DIGEST_TEXT",
	})
	if err != nil {
		panic(err)
	}
	rows, _ := pfscore.Scan[pfscore.DigestSummary](res)
	for _, r := range rows {
		fmt.Printf("%-44s %d statements, %d rows sent\n", r.DigestText, r.CountStar, r.SumRowsSent)
	}
	// The request threads have ended: their statements are in the global
	// history.
	hist, err := s.Query("events_statements_history_long", pfscore.Query{
		Where: []string{"DIGEST_TEXT LIKE 'SELECT%'"}, Limit: 1})
	if err != nil {
		panic(err)
	}
	events, _ := pfscore.Scan[pfscore.StatementEvent](hist)
	fmt.Println("the query's NESTING_EVENT_LEVEL:", events[0].NestingEventLevel)
	// Output:
	// GET /users/{id}                              3 statements, 0 rows sent
	// SELECT `email` FROM `users` WHERE `id` = ?   3 statements, 3 rows sent
	// the query's NESTING_EVENT_LEVEL: 1
}
