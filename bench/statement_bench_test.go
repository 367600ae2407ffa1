package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Statement events on the provider path, through instrument.StartSQL and a
// context as a request handler runs them: the class and digest from the
// statement cache, the statement ended with rows and an error count, the
// by-event-name and by-digest summaries and both histograms updated.
// events_statements_current is on (MySQL's default), the histories off.

func statementSchema(b *testing.B, opts ...pfscore.Option) *pfscore.Schema {
	s, err := pfscore.New(append([]pfscore.Option{pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, false),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, false)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// corpus returns the benchmark corpus's statements.
func corpus(b *testing.B) []string {
	data, err := os.ReadFile("testdata/queries.txt")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// BenchmarkStatement: the corpus's 42 texts in turn, each seen before.
func BenchmarkStatement(b *testing.B) {
	s := statementSchema(b)
	texts := corpus(b)
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/request", instrument.WithSchema(s))
	defer t.End()
	for _, q := range texts { // warm the cache and the digest table
		st := instrument.StartSQL(ctx, s, "app", q)
		st.End(instrument.StatementResult{})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st := instrument.StartSQL(ctx, s, "app", texts[i%len(texts)])
		st.End(instrument.StatementResult{RowsSent: 1, RowsExamined: 1, Errors: uint64(i & 1)})
		i++
	}
}

// BenchmarkStatementUncached: a 200-byte text never seen before on every
// op (a literal changes; its digest row exists), so each statement is
// normalized and its entry published. 1<<16 texts go round a cache of
// 4096: a text is long evicted when it comes back.
func BenchmarkStatementUncached(b *testing.B) {
	s := statementSchema(b)
	const n = 1 << 16
	texts := make([]string, n)
	for i := range texts {
		q := fmt.Sprintf("SELECT o.id, o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= '2024-01-01' AND o.total > %d ORDER BY o.created_at DESC LIMIT 50", 1000000+i)
		texts[i] = q + strings.Repeat(" ", max(200-len(q), 0))
	}
	if len(texts[0]) != 200 {
		b.Fatalf("text of %d bytes", len(texts[0]))
	}
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/request", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st := instrument.StartSQL(ctx, s, "app", texts[i%n])
		st.End(instrument.StatementResult{RowsSent: 1})
		i++
	}
}

// BenchmarkStatementHistory is BenchmarkStatement with both histories on.
func BenchmarkStatementHistory(b *testing.B) {
	s := statementSchema(b, pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))
	texts := corpus(b)
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/request", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st := instrument.StartSQL(ctx, s, "app", texts[i%len(texts)])
		st.End(instrument.StatementResult{RowsSent: 1})
		i++
	}
}
