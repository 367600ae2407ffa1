package pfscore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelpfs/otelpfs/hwclock"
	"github.com/otelpfs/otelpfs/internal/store"
	"github.com/otelpfs/otelpfs/memsum"
	"github.com/otelpfs/otelpfs/rings"
)

// A Schema is one performance schema: its setup tables, instrument classes,
// threads, instances, events and summaries. A process normally has one,
// Default; tests make their own with New.
//
// All methods are safe for concurrent use.
type Schema struct {
	// Setup: the configuration and the setup tables. setupMu serializes
	// setup-table updates and class registration; the provider never takes
	// it.
	cfg       config
	setupMu   sync.Mutex
	consumers atomic.Uint32 // setup_consumers, one bit per Consumer
	// capture is the trace capture's configuration while it is on, and
	// traceQueue its queue, made by its first EnableTraceCapture
	// (capture.go).
	capture    atomic.Pointer[capturer]
	traceQueue atomic.Pointer[traceQueue]
	// dbSystems maps CURRENT_SCHEMA to db.system.name (dbsystem.go),
	// copy-on-write under setupMu.
	dbSystems atomic.Pointer[map[string]string]
	timers    *hwclock.SetupTimers
	// setup_actors and setup_objects, copy-on-write under setupMu.
	actors         atomic.Pointer[[]SetupActorsRow]
	objects        atomic.Pointer[[]SetupObjectsRow]
	objectsVersion atomic.Uint64 // bumped on every setup_objects change
	// policy is the run-time instrument policy (setup_rules.go), under setupMu.
	policy InstrumentPolicy

	// Classes: the registry, copy-on-write: readers load the slice and
	// iterate it without a lock; Register appends under setupMu.
	classes          atomic.Pointer[[]*Class]
	byName           sync.Map      // string -> *Class, for lock-free lookups
	kindCount        [numKinds]int // under setupMu
	idle             *Class        // the built-in idle class
	classesLost      atomic.Uint64
	instrumentErrors atomic.Uint64                 // Performance_schema_instrument_errors: see CountInstrumentError
	extraStatus      atomic.Pointer[[]extraStatus] // AddStatus's rows, in name order; copied on write under setupMu

	// Threads: slots in a container, and the Thread objects by slot index
	// for readers (records hold no pointers; Thread does).
	threads    *store.Container[threadRecord]
	threadObjs []atomic.Pointer[Thread]
	threadIDs  atomic.Uint64
	// Ended threads' storage, reused while no reader is active: see
	// takeCore for the invariant readers and coresMu keep.
	readers   atomic.Int64 // readers that may reach thread storage
	coresMu   sync.Mutex
	freeCores []*threadCore // under coresMu
	// Actors: accounts, users, hosts: maps under actorsMu; each row has its
	// own lock (see accounts.go).
	actorsMu                           sync.Mutex
	accounts                           map[accountKey]*actorRow
	users                              map[accountKey]*actorRow
	hosts                              map[accountKey]*actorRow
	accountsLost, usersLost, hostsLost atomic.Uint64

	// Instances: a container per family, and the names they point to.
	mutexes, rwlocks, conds *store.Container[syncInstance]
	fileInsts, socketInsts  *store.Container[ioInstance]
	files                   sync.Map // path -> *IOInstance
	filesMu                 sync.Mutex
	instanceIDs             atomic.Uint64
	// instMu serializes destroying an instance (its roll-up and free)
	// with the readers that sum live and destroyed instances.
	instMu sync.Mutex
	names  *strtab // object names and SOURCE locations
	// lastReclaim is the UnixNano of the last reclamation pass over the
	// containers, the threads' included.
	lastReclaim atomic.Int64

	// Events: the global history and what the wait path drops.
	waitsLong  *rings.Global // events_waits_history_long; nil when its size is 0
	stagesLong *rings.Global // events_stages_history_long; nil when its size is 0
	stmtsLong  *rings.Global // events_statements_history_long; nil when its size is 0
	trxLong    *rings.Global // events_transactions_history_long; nil when its size is 0
	trxClass   *Class        // the built-in transaction class
	// Transactions' statistics, read-write and read-only: of ended
	// threads (under endMu) and of transactions without a thread.
	trxEnded, trxUnthreaded [2]sharedStat
	// Statements: the text cache, the digest table (replaced by TRUNCATE),
	// the global histogram.
	stmtCache           *stmtCache
	digests             atomic.Pointer[digestTable]
	stmtHist            histogram
	nestedStatementLost atomic.Uint64
	digestLost          atomic.Uint64
	digestGen           atomic.Uint64 // digest tables made: digestTable.gen
	sampleAgePicos      uint64        // performance_schema_max_digest_sample_age
	// threadEventsLost counts events whose per-thread part was dropped:
	// their thread was being written by another goroutine, or had ended.
	threadEventsLost atomic.Uint64
	nestedWaitLost   atomic.Uint64

	// Summaries and truncation: the roll-ups of what is gone, which the
	// summaries computed on read add to the live records, and the epochs
	// TRUNCATE advances.
	//
	// endMu makes a thread's leaving threadObjs and its roll-up into
	// threadsEnded one step for the global summary (see endedAndLive).
	endMu        sync.Mutex
	threadsEnded atomic.Pointer[[]sharedStat]   // by class: statistics of ended threads
	stmtEnded    atomic.Pointer[[]sharedCounts] // by statement kind index: their statement counters
	// Statistics of destroyed instances, by class index, so global summaries
	// keep them (MySQL's per-class "global" stats).
	destroyed   []sharedStat
	destroyedIo []ioSummary
	// extTags holds, per truncation group, the epoch tag of MIN and MAX
	// (see stat.go and table_summary.go).
	extTags [numTruncGroups]atomic.Uint64

	// Memory (memory.go): the statistics of allocations counted without a
	// thread, and what thread ends carried or left there, by memory class
	// kind index; the TRUNCATE epoch the threads' Stats rebase by; and
	// the moves' lock and sequence word.
	memGlobal pages[memsum.Shared]
	memEpoch  atomic.Uint64
	memMoves  atomic.Uint64 // odd while a move is in progress
	memMoveMu sync.Mutex    // taken before actorsMu, the actor rows' mu and endMu
	memGo     goMemory      // the Go runtime's rows (table_memory.go)
	// coresMade and coresDropped count the thread storages made and let go
	// and the most held at once (memory/performance_schema/threads.history).
	coresMade, coresDropped, coresHigh atomic.Uint64

	// Reading: the readers' own state, TRUNCATE's baselines and marks,
	// guarded by readMu: TRUNCATE holds it, a summary read holds it
	// read-locked.
	readMu    sync.RWMutex
	baselines map[string]any    // table -> *summaryBase[S]: TRUNCATE baselines
	curMarks  map[uint64]uint64 // events_waits_current TRUNCATE: thread -> last hidden EVENT_ID
	// stageMarks and stmtMarks are curMarks for events_stages_current and
	// events_statements_current.
	stageMarks, stmtMarks, trxMarks map[uint64]uint64
	// Histogram baselines: events_statements_histogram_global's, and
	// events_statements_histogram_by_digest's by record.
	histGlobalBase *histCounts
	histDigestBase map[*digestRecord]*histBase
}

// advanceEpoch starts a new extremes epoch for truncation group g (see
// stat.go). s.readMu is held.
func (s *Schema) advanceEpoch(g int) {
	e := s.extTags[g].Load()>>extBits + 1
	if e >= 1<<(64-extBits) {
		e = 1 // tag 0 is never current
	}
	s.extTags[g].Store(e << extBits)
}

// destroyedWaits returns the roll-up of destroyed instances of class i.
func (s *Schema) destroyedWaits(i int) *sharedStat { return &s.destroyed[i] }

// destroyedIO returns the I/O roll-up of destroyed instances of class i.
func (s *Schema) destroyedIO(i int) *ioSummary { return &s.destroyedIo[i] }

// New returns a Schema configured by defaults, then the OTELPFS_*
// environment, then opts. Bad start-up rules, from the environment or from
// options, are reported as an error; the Schema is usable anyway, without
// them.
func New(opts ...Option) (*Schema, error) {
	cfg := newConfig(opts)
	s := &Schema{
		cfg:    cfg,
		timers: hwclock.NewSetupTimers(),
		policy: cfg.instrumentPolicy,
	}
	empty := []*Class{}
	s.classes.Store(&empty)
	actors := append([]SetupActorsRow(nil), defaultActors...)
	s.actors.Store(&actors)
	objects := defaultObjects()
	s.objects.Store(&objects)
	bits := uint32(defaultConsumers)
	for c, on := range cfg.consumers {
		bits = setBit(bits, 1<<c, on)
	}
	s.consumers.Store(bits)

	s.names = newStrtab(cfg.maxNames)
	s.baselines = map[string]any{}
	s.curMarks = map[uint64]uint64{}
	s.accounts = map[accountKey]*actorRow{}
	s.users = map[accountKey]*actorRow{}
	s.hosts = map[accountKey]*actorRow{}
	noStats := []sharedStat{}
	s.threadsEnded.Store(&noStats)
	noCounts := []sharedCounts{}
	s.stmtEnded.Store(&noCounts)
	for g := range s.extTags {
		s.extTags[g].Store(1 << extBits)
	}
	s.destroyed = make([]sharedStat, cfg.maxClasses)
	s.destroyedIo = make([]ioSummary, cfg.maxClasses)
	var errs []error
	errs = append(errs, cfg.errs...)
	// The statement tables' sizes, bounded before anything is made of them.
	if cfg.digestsSize > maxDigests {
		errs = append(errs, fmt.Errorf("events_statements_summary_by_digest size %d: at most %d rows", cfg.digestsSize, maxDigests))
		cfg.digestsSize = maxDigests
	}
	if cfg.stmtCacheSize > maxStatementCache {
		errs = append(errs, fmt.Errorf("statement cache size %d: at most %d texts", cfg.stmtCacheSize, maxStatementCache))
		cfg.stmtCacheSize = maxStatementCache
	}
	const maxSampleAge = 100 * 24 * time.Hour // picoseconds wrap after 213 days
	if cfg.sampleAge > maxSampleAge {
		errs = append(errs, fmt.Errorf("digest sample age %v: at most %v", cfg.sampleAge, maxSampleAge))
		cfg.sampleAge = maxSampleAge
	}
	s.sampleAgePicos = uint64(cfg.sampleAge.Nanoseconds()) * 1000
	s.stmtCache = newStmtCache(s, cfg.stmtCacheSize, cfg.maxDigestLength)
	s.digests.Store(newDigestTable(s.digestGen.Add(1), cfg.digestsSize, &s.digestLost))
	container := func(max int) store.ContainerConfig { // pages of 256 records, enough of them for max
		const page = 256
		return store.ContainerConfig{PageSize: page, MaxPages: max/page + min(max%page, 1), ReclaimIdle: cfg.reclaimIdle}
	}
	s.threads = store.MustNewContainer[threadRecord]("thread_container", container(cfg.maxThreads))
	s.threadObjs = make([]atomic.Pointer[Thread], s.threads.PageSize()*(cfg.maxThreads/256+min(cfg.maxThreads%256, 1)))
	s.mutexes = store.MustNewContainer[syncInstance]("mutex_container", container(cfg.maxInstances[KindMutex]))
	s.rwlocks = store.MustNewContainer[syncInstance]("rwlock_container", container(cfg.maxInstances[KindRWLock]))
	s.conds = store.MustNewContainer[syncInstance]("cond_container", container(cfg.maxInstances[KindCond]))
	s.fileInsts = store.MustNewContainer[ioInstance]("file_container", container(cfg.maxInstances[KindFile]))
	s.socketInsts = store.MustNewContainer[ioInstance]("socket_container", container(cfg.maxInstances[KindSocket]))
	// Per-thread history rings are made with each thread's storage, where
	// an error has nowhere to go: their sizes are checked here, against
	// MySQL's own bound.
	for _, h := range []struct {
		size *int
		name string
	}{{&cfg.waitsHistorySize, "events_waits_history"}, {&cfg.stagesHistory, "events_stages_history"},
		{&cfg.stmtHistory, "events_statements_history"}, {&cfg.trxHistory, "events_transactions_history"}} {
		if *h.size > maxHistoryPerThread {
			errs = append(errs, fmt.Errorf("%s size %d: at most %d rows per thread", h.name, *h.size, maxHistoryPerThread))
			*h.size = maxHistoryPerThread
		}
	}
	s.cfg = cfg // with the sizes bounded
	if cfg.waitsLongSize > 0 {
		g, err := rings.NewGlobal(cfg.waitsLongSize, waitWidth)
		if err != nil {
			errs = append(errs, fmt.Errorf("events_waits_history_long size %d: %w", cfg.waitsLongSize, err))
		}
		s.waitsLong = g
	}
	if cfg.stagesLong > 0 {
		g, err := rings.NewGlobal(cfg.stagesLong, stageWidth)
		if err != nil {
			errs = append(errs, fmt.Errorf("events_stages_history_long size %d: %w", cfg.stagesLong, err))
		}
		s.stagesLong = g
	}
	if cfg.stmtLong > 0 {
		g, err := rings.NewGlobalRefs(cfg.stmtLong, stmtWidth, stmtRefs)
		if err != nil {
			errs = append(errs, fmt.Errorf("events_statements_history_long size %d: %w", cfg.stmtLong, err))
		}
		s.stmtsLong = g
	}
	if cfg.trxLong > 0 {
		g, err := rings.NewGlobal(cfg.trxLong, trxWidth)
		if err != nil {
			errs = append(errs, fmt.Errorf("events_transactions_history_long size %d: %w", cfg.trxLong, err))
		}
		s.trxLong = g
	}
	s.trxClass = s.MustRegister("transaction", WithDocumentation("A transaction: from its start to its commit or rollback."))
	s.idle = s.MustRegister("idle", WithDocumentation("A thread waiting for its next unit of work."))
	return s, errors.Join(errs...)
}

var (
	defaultOnce   sync.Once
	defaultSchema *Schema
)

// Default returns the process's Schema, created on first use from the
// environment. A bad OTELPFS_* setting is reported once on standard error
// and otherwise ignored: a service must not fail to start over its
// instrumentation.
func Default() *Schema {
	defaultOnce.Do(func() {
		s, err := New()
		if err != nil {
			fmt.Fprintf(os.Stderr, "otelpfs: ignoring bad start-up configuration: %v\n", err)
		}
		defaultSchema = s
	})
	return defaultSchema
}

// SetupTimers returns setup_timers.
func (s *Schema) SetupTimers() *hwclock.SetupTimers { return s.timers }

// Register returns the instrument class named name, creating it on first
// use; registering a name again returns the same class (options are then
// ignored). The name must follow the taxonomy (see ParseInstrumentName).
// A new class starts as the instrument policy says (SetInstrumentPolicy),
// or the start-up rules, or WithDefault, or enabled and timed.
func (s *Schema) Register(name string, opts ...ClassOption) (*Class, error) {
	if c := s.lookupClass(name); c != nil {
		return c, nil
	}
	kind, err := ParseInstrumentName(name)
	if err != nil {
		return nil, err
	}
	var cc classConfig
	for _, o := range opts {
		o.apply(&cc)
	}
	// Memory classes start off, as most of MySQL's: an accounted allocation
	// costs more than the allocation it counts.
	enabled, timed := kind != KindMemory, true
	if cc.enabled != nil {
		enabled, timed = *cc.enabled, *cc.timed
	}
	// A thread class's second flag is setup_threads.HISTORY, which only
	// WithDefault sets: start-up rules and the policy set ENABLED and TIMED,
	// and a thread class has no TIMED (NULL in setup_instruments), so
	// 'thread/%=COUNTED' leaves HISTORY as it was, as in MySQL.
	history := timed
	enabled, timed = startupFlags(s.cfg.instrumentRules, name, enabled, timed)

	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	if c := s.lookupClass(name); c != nil {
		return c, nil
	}
	enabled, timed = s.policyFlags(name, kind, enabled, timed)
	old := *s.classes.Load()
	if len(old) >= s.cfg.maxClasses {
		s.classesLost.Add(1)
		return nil, fmt.Errorf("%w: %q would be class %d of at most %d", ErrTooManyClasses, name, len(old)+1, s.cfg.maxClasses)
	}
	c := &Class{
		name:       name,
		kind:       kind,
		index:      len(old),
		kindIndex:  s.kindCount[kind],
		props:      cc.props,
		volatility: cc.volatility,
		doc:        cc.doc,
	}
	if kind == KindStatement {
		c.stmt = &stmtShared{}
	}
	var f uint32
	f = setBit(f, flagSetEnabled, enabled)
	f = setBit(f, flagSetTimed, timed && kind.Timed())
	f = setBit(f, flagHistory, history && kind == KindThread)
	c.flags.Store(deriveClassFlags(f, s.consumerOn(ConsumerGlobalInstrumentation)))
	s.kindCount[kind]++
	s.byName.Store(name, c)
	next := make([]*Class, len(old)+1)
	copy(next, old)
	next[len(old)] = c
	s.classes.Store(&next)
	return c, nil
}

// MustRegister is Register for names known to be valid; it panics on error.
func (s *Schema) MustRegister(name string, opts ...ClassOption) *Class {
	c, err := s.Register(name, opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// lookupClass finds a registered class without taking a lock.
func (s *Schema) lookupClass(name string) *Class {
	if c, ok := s.byName.Load(name); ok {
		return c.(*Class)
	}
	return nil
}

// Class returns the class named name, or nil.
func (s *Schema) Class(name string) *Class { return s.lookupClass(name) }

// Classes returns every registered class in registration order. The slice
// is shared: do not modify it.
func (s *Schema) Classes() []*Class { return *s.classes.Load() }

// owns reports whether c is one of s's classes: a class of another schema
// indexes another schema's class list.
func (s *Schema) owns(c *Class) bool {
	cs := s.Classes()
	return c.index < len(cs) && cs[c.index] == c
}

// maybeReclaim returns the memory of container pages that stayed empty (see
// store.Container.Reclaim), at most every half WithReclaimIdle. The slow paths call
// it: thread ends, instance destruction, table reads.
func (s *Schema) maybeReclaim() {
	if s.cfg.reclaimIdle <= 0 {
		return
	}
	now := time.Now()
	last := s.lastReclaim.Load()
	if now.UnixNano()-last < int64(s.cfg.reclaimIdle/2) || !s.lastReclaim.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	s.threads.Reclaim(now)
	for _, c := range []*store.Container[syncInstance]{s.mutexes, s.rwlocks, s.conds} {
		c.Reclaim(now)
	}
	s.fileInsts.Reclaim(now)
	s.socketInsts.Reclaim(now)
}
