package bridge_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A request statement with two stages, a SQL statement and two mutex
// waits becomes one trace: the request is the root span, its stages and
// its SQL statement are child spans, and each wait is an event of the span
// it happened in.
func ExampleHistory() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("%=ON"),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true))
	in := instrument.WithSchema(s)
	requests := instrument.NewStatementClass("statement/http/request", in)
	parsing := instrument.NewStageClass("stage/app/parsing", in)
	querying := instrument.NewStageClass("stage/app/querying", in)
	cache := instrument.NewMutex("wait/synch/mutex/app/cache", in)
	pool := instrument.NewMutex("wait/synch/mutex/app/pool", in)

	history, _ := bridge.NewHistory(s)

	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", in)
	req := requests.Start(ctx, "GET /users/{id}")
	parsing.Start(ctx)
	cache.LockCtx(ctx)
	cache.Unlock()
	querying.Start(ctx)
	q := instrument.StartSQL(ctx, s, "shop", "SELECT email FROM users WHERE id = 42")
	q.End(instrument.StatementResult{RowsSent: 1})
	instrument.EndStage(ctx)
	pool.LockCtx(ctx)
	pool.Unlock()
	req.End(instrument.StatementResult{})
	t.End()

	spans, _ := history.Read()
	names := map[[8]byte]string{}
	for _, sp := range spans {
		names[sp.SpanID] = sp.Name
	}
	for _, sp := range spans {
		parent := "root"
		if sp.Parent.IsValid() {
			parent = "child of " + names[sp.Parent]
		}
		var waits []string
		for _, ev := range sp.Events {
			waits = append(waits, ev.Name)
		}
		fmt.Printf("%s (%s) waits: [%s]\n", sp.Name, parent, strings.Join(waits, " "))
	}
	// Output:
	// GET /users/{id} (root) waits: [wait/synch/mutex/app/pool]
	// stage/app/parsing (child of GET /users/{id}) waits: [wait/synch/mutex/app/cache]
	// stage/app/querying (child of GET /users/{id}) waits: []
	// SELECT users (child of GET /users/{id}) waits: []
}
