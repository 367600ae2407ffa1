package instrument_test

import (
	"context"
	"fmt"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// StartThread starts a request's thread in one line and returns a context
// that carries it, as OpenTelemetry's tracer.Start does with a span; the
// …Ctx calls given that context are the thread's waits.
func ExampleStartThread() {
	// A real service uses pfscore.Default(), whose history consumers are
	// off until setup_consumers turns them on.
	s, _ := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	in := instrument.WithSchema(s)
	config := instrument.NewRWMutex("wait/synch/rwlock/app/config", in)
	cache := instrument.NewMutex("wait/synch/mutex/app/cache", in)

	handle := func(ctx context.Context, user, host string) {
		ctx, t := instrument.StartThread(ctx, "thread/app/request", in,
			instrument.WithUser(user), instrument.WithHost(host))
		defer t.End()

		config.RLockCtx(ctx)
		config.RUnlock()
		if cache.TryLockCtx(ctx) {
			cache.Unlock()
		}

		res, _ := s.Select("threads")
		for _, row := range res.Rows { // THREAD_ID, NAME, TYPE, PROCESSLIST_ID, PROCESSLIST_USER, …
			if row[0] == t.ID() {
				fmt.Println(row[1], row[2], row[4])
			}
		}
		for _, e := range s.EventsWaitsHistory() {
			if e.ThreadID == t.ID() {
				fmt.Println(" ", e.EventName, e.Operation)
			}
		}
	}
	handle(context.Background(), "alice", "10.0.0.7")
	// Output:
	// thread/app/request FOREGROUND alice
	//   wait/synch/rwlock/app/config read_lock
	//   wait/synch/mutex/app/cache try_lock
}
