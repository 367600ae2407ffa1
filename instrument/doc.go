// Package instrument is the provider API a Go service imports: drop-in
// Mutex, RWMutex and Cond, wrapped files and sockets, idle waits, stages
// (StageClass: the phases of a thread's work), statements (StartSQL for SQL
// text, StatementClass for units of work the application names, such as
// routes), transactions (StartTransaction), memory (MemoryClass, and the
// BufferPool and Cache built on it), and explicit threads (actors) carried
// in a context.Context. Each instrument reports its events to a
// performance schema (package pfscore), which keeps what MySQL's
// performance_schema keeps: the current and recent events of every thread,
// and summaries by event name, thread, account, user, host, object instance
// and statement digest. Package pfssql wraps a database/sql driver, and
// package pfshttp a net/http handler and server, so that their queries and
// requests are statements without code at each call.
//
// # Quick start
//
//	var cache = instrument.NewMutex("wait/synch/mutex/app/cache")
//	var wal   = instrument.NewFileClass("wait/io/file/app/wal")
//
//	func handle(ctx context.Context, user string) {
//		ctx, t := instrument.StartThread(ctx, "thread/app/request", instrument.WithUser(user))
//		defer t.End() // an actor: a request
//
//		cache.LockCtx(ctx) // a wait of this thread
//		...
//		cache.Unlock()
//	}
//
// Then read pfscore.Default()'s tables: Select("events_waits_current"),
// Select("events_waits_summary_global_by_event_name"), … (package exporter
// serves them over HTTP; cmd/pfs prints them).
//
// # Names
//
// Instrument names follow the performance_schema taxonomy and are also
// valid OpenTelemetry instrument names: wait/synch/mutex/<component>/<name>,
// wait/synch/rwlock/…, wait/synch/cond/…, wait/io/file/…, wait/io/socket/…,
// stage/<component>/<name>, statement/<component>/<name>, transaction,
// memory/<component>/<name>, thread/<component>/<name> (MySQL's stage names
// hold spaces, "stage/sql/Sending data"; OpenTelemetry's names cannot, so
// here an underscore takes a space's place). A class registers on first use. An invalid
// name, a name of another kind than the constructor's, or a full schema,
// gives a working but uninstrumented object: the instrumentation never stops
// the service. The failure is reported to the error handler
// (SetErrorHandler; by default one log/slog Warn line per distinct bad name)
// and counted in global_status's Performance_schema_instrument_errors.
// Instruments declared as package-level variables register during
// package initialization, before main can install a handler: theirs go to
// the default.
//
// # Threads
//
// Go has no goroutine-local storage, so a Thread is explicit: start one per
// actor (a request, a worker, a connection), carry it in a context or bind
// it to an instrument, and End it. One goroutine drives a thread at a time.
// An instrument used without a thread still feeds the per-instance and
// global summaries; a thread adds its current event, its history, and the
// per-thread, per-account, per-user and per-host summaries.
//
// # The shape of every instrument
//
// Every instrument follows the same rules:
//
//   - Constructors take the name first, then what the instrument needs,
//     then options: NewMutex(name, opts...), NewCond(name, l, opts...),
//     NewFileClass(name, opts...), NewThread(name, opts...). A type that
//     may be declared as a value (a struct field) has an Init method with
//     the same parameters: (*Mutex).Init(name, opts...), (*Cond).Init(name,
//     l, opts...). A bad name gives a working, uninstrumented object (see
//     Names).
//   - Options are typed by what they configure, so that an option a
//     constructor would ignore does not compile: an Option configures an
//     instrument (WithSource), a ThreadOption a thread (WithUser, WithHost),
//     a ThreadClassOption a thread class; WithSchema and WithDocumentation
//     are all three.
//   - A method without a context or a bound thread attributes its wait to
//     no thread (a socket's, to its owner: see below); the global and
//     per-instance summaries count it all the same.
//   - Every call that waits has a Ctx variant, which takes a
//     context.Context as its first parameter, as Go's APIs do, and
//     attributes the wait to the thread the context carries: LockCtx,
//     TryLockCtx, RLockCtx, TryRLockCtx, WaitCtx, OpenCtx, CreateCtx,
//     OpenFileCtx, RemoveCtx, StartIdleCtx, and DialContext (net's name).
//     The exceptions are the methods of File, Conn and Listener, which keep
//     the signatures of *os.File, net.Conn and net.Listener so that they fit
//     io's and net's interfaces: a File's or Conn's take their thread from
//     For or ForCtx, a Listener's from its owner. A Ctx variant reads only
//     the thread: it does not return early when the context is done, unless
//     the call it wraps takes a context itself (DialContext).
//   - Every instrument whose methods wait has For(t) and ForCtx(ctx): a
//     small bound value (BoundMutex, BoundRWMutex, BoundCond, BoundFile,
//     BoundConn) whose methods are the instrument's, attributed to the
//     thread; binding allocates nothing. It is the way for the methods
//     whose signature an interface fixes (io.Writer's Write, sync.Locker's
//     Lock), and for several calls on one thread:
//     fmt.Fprintf(f.ForCtx(ctx), …).
//   - A thread starts with StartThread(ctx, name, opts...), or
//     ThreadClass.StartCtx(ctx, user, host) for one class started often,
//     which return a copy of ctx that carries the new thread, and the
//     thread, as OpenTelemetry's tracer.Start returns a span; it ends with
//     t.End(), deferred. NewThread and ThreadClass.Start return the thread
//     alone, for ContextWithThread or For.
//   - A nil *Thread is valid everywhere and means "no thread": a thread
//     that cannot start (a bad name, a full thread table) is nil, and the
//     context StartThread returns then carries no thread.
//
// In short, four ways to attribute a wait to a thread:
//
//	m.LockCtx(ctx)        the thread in ctx (a context lookup per call)
//	m.For(t).Lock()       a bound handle: a small value, no allocation
//	m.ForCtx(ctx).Lock()  a handle bound to the thread in ctx
//	conn.SetThread(t)     sockets: the owner thread, as socket_instances has it
//
// A socket (Conn, Listener) has an owner thread, as in MySQL: the thread
// that serves the connection, socket_instances.THREAD_ID, set by
// SetThread. Its unbound methods attribute their waits to the owner, if
// any: a Listener's accept loop runs on one goroutine for the listener's
// life, and takes its thread that way. Conn.For and Conn.ForCtx attribute a
// call's wait to another thread (a pooled connection used by one request)
// without changing the owner.
//
// # Switching at run time
//
// Every instrument reads its class's switch with one atomic load per
// operation; setup_instruments, setup_consumers, setup_actors,
// setup_objects and setup_threads (pfscore) change what is collected while
// the service runs. OTELPFS_INSTRUMENT and OTELPFS_CONSUMER set them at
// start-up, in the spirit of my.cnf:
//
//	OTELPFS_INSTRUMENT='wait/synch/%=ON;wait/io/socket/%=COUNTED'
//	OTELPFS_CONSUMER='events_waits_current=ON,events_waits_history=ON'
//
// # Cost
//
// A disabled instrument costs a few nanoseconds over the raw operation
// (about 7 ns for a Mutex's Lock and Unlock on a 2.8 GHz VM: two calls that
// are not inlined and one atomic load of the class's switch). An
// enabled, timed wait with a thread (current row, per-thread, per-instance
// and global summaries) costs about 25 ns over it on a 2.6 GHz machine
// (about 65 TSC cycles), and about 55 ns with both history consumers on;
// nothing allocates. An OpenTelemetry histogram Record costs about 200 ns.
// See bench/ for the figures and their peers.
//
// # Concurrency
//
// Instruments are safe for concurrent use exactly as the types they wrap.
// A Mutex's statistics are written by its holder; files and sockets, which
// several goroutines may use at once, update theirs with atomic adds.
//
// # Imports
//
// instrument imports pfscore and the standard library, never OpenTelemetry;
// trace and span ids will reach it as [16]byte and [8]byte.
package instrument
