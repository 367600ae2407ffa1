package pfssql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/instrument/pfssql"
	"github.com/otelpfs/otelpfs/pfscore"
	_ "modernc.org/sqlite" // the driver "sqlite"
)

// Statements through the wrapped driver count in
// events_statements_summary_by_digest: those that differ only in their
// literals share a row.
func ExampleOpen() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	dir, _ := os.MkdirTemp("", "pfssql")
	defer os.RemoveAll(dir)

	db, err := pfssql.Open("sqlite", filepath.Join(dir, "shop.db"), pfssql.WithSchema(s))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	// A request handler's thread, carried by the context.
	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", instrument.WithSchema(s))
	defer t.End()

	db.ExecContext(ctx, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL)")
	for id := 1; id <= 3; id++ {
		db.ExecContext(ctx, fmt.Sprintf("INSERT INTO users (id, email) VALUES (%d, 'user%d@example.com')", id, id))
	}
	var email string
	for id := 1; id <= 2; id++ {
		db.QueryRowContext(ctx, "SELECT email FROM users WHERE id = ?", id).Scan(&email)
	}
	db.ExecContext(ctx, "INSERT INTO users (id, email) VALUES (1, 'again@example.com')") // a duplicate key

	res, _ := s.Query("events_statements_summary_by_digest", pfscore.Query{Order: "DIGEST_TEXT"})
	rows, _ := pfscore.Scan[pfscore.DigestSummary](res)
	for _, r := range rows {
		fmt.Printf("%s %-52s count %d, affected %d, sent %d, errors %d\n",
			r.SchemaName, r.DigestText, r.CountStar, r.SumRowsAffected, r.SumRowsSent, r.SumErrors)
	}
	// Output:
	// main CREATE TABLE `users` ( `id` INTEGER PRIMARY KEY , `email` TEXT NOT NULL ) count 1, affected 0, sent 0, errors 0
	// main INSERT INTO `users` ( `id` , `email` ) VALUES (...)  count 4, affected 3, sent 0, errors 1
	// main SELECT `email` FROM `users` WHERE `id` = ?           count 2, affected 0, sent 2, errors 0
}
