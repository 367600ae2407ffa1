package pfshttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfshttp"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A server whose requests are statements named by their route: the two
// requests for different users share the digest row of their pattern.
func Example() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	in := instrument.WithSchema(s)
	listenSockets := instrument.NewSocketClass("wait/io/socket/app/server_tcpip_socket", in)
	connSockets := instrument.NewSocketClass("wait/io/socket/app/client_connection", in)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		// SQL run with r.Context() nests in the request's statement.
		q := instrument.StartSQL(r.Context(), s, "app", "SELECT email FROM users WHERE id = "+r.PathValue("id"))
		q.End(instrument.StatementResult{RowsSent: 1})
		fmt.Fprintln(w, "user", r.PathValue("id"))
	})

	ts := httptest.NewUnstartedServer(mux)
	ts.Listener = listenSockets.WrapListener(ts.Listener, connSockets) // for the idle waits
	pfshttp.Server(ts.Config, pfshttp.WithSchema(s))
	ts.Start()
	defer ts.Close()

	for _, path := range []string{"/users/1", "/users/2"} {
		resp, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	res, _ := s.Query("events_statements_summary_by_digest", pfscore.Query{Order: "DIGEST_TEXT"})
	rows, _ := pfscore.Scan[pfscore.DigestSummary](res)
	for _, r := range rows {
		fmt.Printf("%-44s %d statements\n", r.DigestText, r.CountStar)
	}
	// Output:
	// GET /users/{id}                              2 statements
	// SELECT `email` FROM `users` WHERE `id` = ?   2 statements
}
