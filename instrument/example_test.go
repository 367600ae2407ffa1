package instrument_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A service wraps a mutex and a file, runs a request on a thread, switches
// an instrument off and on at run time, and reads what happened: the
// thread's current and recent waits, and a summary by event name.
func Example() {
	// A real service uses pfscore.Default(); the example keeps its own
	// schema, with the wait-event consumers on (MySQL ships them off).
	s, _ := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	in := instrument.WithSchema(s)

	cache := instrument.NewMutex("wait/synch/mutex/app/cache", in)
	logs := instrument.NewFileClass("wait/io/file/app/log", in)
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	// One request, on one thread, carried in its context.
	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", in,
		instrument.WithUser("alice"), instrument.WithHost("10.0.0.7"))
	defer t.End()

	cache.LockCtx(ctx)
	cache.Unlock()
	f, _ := logs.OpenFileCtx(ctx, filepath.Join(dir, "app.log"), os.O_CREATE|os.O_WRONLY, 0o644)
	f.For(t).WriteString("GET /\n")
	f.For(t).Close()

	// UPDATE setup_instruments SET ENABLED='NO' WHERE NAME LIKE 'wait/synch/%'
	off, on := false, true
	s.UpdateInstruments("wait/synch/%", &off, nil)
	cache.LockCtx(ctx) // not recorded
	cache.Unlock()
	s.UpdateInstruments("wait/synch/%", &on, nil)
	cache.LockCtx(ctx)
	cache.Unlock()

	fmt.Println("events_waits_current:")
	for _, e := range s.EventsWaitsCurrent() {
		fmt.Println(" ", e.EventID, e.EventName, e.Operation)
	}
	fmt.Println("events_waits_history:")
	for _, e := range s.EventsWaitsHistory() {
		object := "" // OBJECT_NAME: the file's path for file waits, NULL for a mutex
		if e.ObjectName != "" {
			object = " " + filepath.Base(e.ObjectName)
		}
		fmt.Printf("  %d %s %s%s\n", e.EventID, e.EventName, e.Operation, object)
	}
	fmt.Println("events_waits_summary_by_user_by_event_name, alice:")
	res, _ := s.Select("events_waits_summary_by_user_by_event_name")
	for _, row := range res.Rows {
		if row[0] == "alice" && row[2].(uint64) > 0 { // USER, EVENT_NAME, COUNT_STAR, …
			fmt.Println(" ", row[1], "COUNT_STAR", row[2])
		}
	}
	// Output:
	// events_waits_current:
	//   5 wait/synch/mutex/app/cache lock
	// events_waits_history:
	//   1 wait/synch/mutex/app/cache lock
	//   2 wait/io/file/app/log create app.log
	//   3 wait/io/file/app/log write app.log
	//   4 wait/io/file/app/log close app.log
	//   5 wait/synch/mutex/app/cache lock
	// events_waits_summary_by_user_by_event_name, alice:
	//   wait/synch/mutex/app/cache COUNT_STAR 2
	//   wait/io/file/app/log COUNT_STAR 3
}

// A misspelled instrument name gives a working, uninstrumented mutex; the
// error handler is told, and global_status counts it. By default the error
// is logged once per name through log/slog.
func ExampleSetErrorHandler() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	instrument.SetErrorHandler(instrument.ErrorHandlerFunc(func(err error) {
		var re *instrument.RegisterError
		if errors.As(err, &re) {
			fmt.Println(re.Constructor, re.Name, errors.Is(err, pfscore.ErrBadInstrumentName))
		}
	}))
	defer instrument.SetErrorHandler(nil) // the default again

	mu := instrument.NewMutex("wait/synch/mutx/app/cache", instrument.WithSchema(s))
	cache := map[string]string{}
	mu.Lock() // a plain sync.Mutex
	cache["k"] = "v"
	mu.Unlock()

	for _, v := range s.Status() {
		if v.Name == "Performance_schema_instrument_errors" {
			fmt.Println(v.Name, v.Value)
		}
	}
	// Output:
	// NewMutex wait/synch/mutx/app/cache true
	// Performance_schema_instrument_errors 1
}
