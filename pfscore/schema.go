package pfscore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/hwclock"
)

// A Schema is one performance schema: its setup tables, instrument classes,
// threads, instances, events and summaries. A process normally has one,
// Default; tests make their own with New.
//
// All methods are safe for concurrent use.
type Schema struct {
	cfg config

	// consumers holds setup_consumers, one bit per Consumer.
	consumers atomic.Uint32

	// setupMu serializes setup-table updates and class registration; the
	// provider never takes it.
	setupMu sync.Mutex
	// classes is the registry, copy-on-write: readers load the slice and
	// iterate it without a lock; Register appends under setupMu.
	classes   atomic.Pointer[[]*Class]
	byName    sync.Map      // string -> *Class, for lock-free lookups
	kindCount [numKinds]int // under setupMu

	timers *hwclock.SetupTimers

	// setup_actors and setup_objects, copy-on-write under setupMu.
	actors         atomic.Pointer[[]SetupActorsRow]
	objects        atomic.Pointer[[]SetupObjectsRow]
	objectsVersion atomic.Uint64 // bumped on every setup_objects change

	classesLost atomic.Uint64
}

// New returns a Schema configured by defaults, then the OTELPFS_*
// environment, then opts. Bad start-up rules, from the environment or from
// options, are reported as an error; the Schema is usable anyway, without
// them.
func New(opts ...Option) (*Schema, error) {
	cfg := newConfig(opts)
	s := &Schema{
		cfg:    cfg,
		timers: hwclock.NewSetupTimers(),
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
	return s, errors.Join(cfg.errs...)
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
// A new class starts as the start-up rules say, or as WithDefault says, or
// enabled and timed.
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
	enabled, timed := true, true
	if cc.enabled != nil {
		enabled, timed = *cc.enabled, *cc.timed
	}
	enabled, timed = startupFlags(s.cfg.instrumentRules, name, enabled, timed)

	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	if c := s.lookupClass(name); c != nil {
		return c, nil
	}
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
	var f uint32
	f = setBit(f, flagSetEnabled, enabled)
	f = setBit(f, flagSetTimed, timed && kind.Timed())
	f = setBit(f, flagHistory, timed && kind == KindThread) // a thread class's second flag is HISTORY
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
