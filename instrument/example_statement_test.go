package instrument_test

import (
	"context"
	"fmt"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A request is a statement named by its route; the SQL it runs nests in it.
// Statements that differ only in their literals share a digest row, and the
// route has its own.
func ExampleStartSQL() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	in := instrument.WithSchema(s)
	requests := instrument.NewStatementClass("statement/http/request", in)

	for _, id := range []int{7, 42} {
		ctx, t := instrument.StartThread(context.Background(), "thread/app/request", in)
		req := requests.Start(ctx, "GET /users/{id}")
		q := instrument.StartSQL(ctx, s, "app", fmt.Sprintf("SELECT email FROM users WHERE id = %d", id))
		q.End(instrument.StatementResult{RowsSent: 1})
		req.End(instrument.StatementResult{})
		t.End()
	}

	res, _ := s.Query("events_statements_summary_by_digest", pfscore.Query{Order: "DIGEST_TEXT"})
	rows, _ := pfscore.Scan[pfscore.DigestSummary](res)
	for _, r := range rows {
		fmt.Printf("%-44s %d statements, %d rows sent\n", r.DigestText, r.CountStar, r.SumRowsSent)
	}
	// Output:
	// GET /users/{id}                              2 statements, 0 rows sent
	// SELECT `email` FROM `users` WHERE `id` = ?   2 statements, 2 rows sent
}
