package pfscore

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// A Kind is the family of an instrument class, decided by its name.
type Kind uint8

const (
	KindMutex       Kind = iota + 1 // wait/synch/mutex/<component>/<name>
	KindRWLock                      // wait/synch/rwlock/<component>/<name>
	KindCond                        // wait/synch/cond/<component>/<name>
	KindFile                        // wait/io/file/<component>/<name>
	KindSocket                      // wait/io/socket/<component>/<name>
	KindIdle                        // idle
	KindStage                       // stage/<component>/<name>
	KindStatement                   // statement/<component>/<name>
	KindTransaction                 // transaction
	KindMemory                      // memory/<component>/<name>
	KindThread                      // thread/<component>/<name>: a thread class (setup_threads)
	numKinds
)

var kindNames = [numKinds]string{"", "mutex", "rwlock", "cond", "file", "socket", "idle", "stage", "statement", "transaction", "memory", "thread"}

func (k Kind) String() string {
	if k < numKinds && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IsWait reports whether events of this kind are wait events.
func (k Kind) IsWait() bool { return k >= KindMutex && k <= KindIdle }

// Timed reports whether classes of this kind can be timed; setup_instruments
// shows TIMED as NULL for those that cannot (memory, thread).
func (k Kind) Timed() bool { return k != KindMemory && k != KindThread }

// Errors of instrument registration.
var (
	ErrBadInstrumentName = errors.New("pfs: bad instrument name")
	ErrTooManyClasses    = errors.New("pfs: too many instrument classes")
)

// maxNameLength is setup_instruments.NAME's VARCHAR(128).
const maxNameLength = 128

// ParseInstrumentName checks an instrument name against the performance_schema
// taxonomy and returns its kind. A valid name is also a valid OpenTelemetry
// instrument name: ASCII letters, digits, '_', '.', '-' in '/'-separated
// segments, at most 128 bytes.
//
//	wait/synch/mutex/<component>/<name>   wait/synch/rwlock/…   wait/synch/cond/…
//	wait/io/file/<component>/<name>       wait/io/socket/<component>/<name>
//	idle   transaction   stage/<component>/<name>   memory/<component>/<name>
//	statement/<component>/<name> (more segments allowed: statement/sql/select)
//	thread/<component>/<name> (a thread class, see setup_threads)
func ParseInstrumentName(name string) (Kind, error) {
	bad := func(why string) (Kind, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrBadInstrumentName, name, why)
	}
	if len(name) == 0 {
		return bad("empty")
	}
	if len(name) > maxNameLength {
		return bad(fmt.Sprintf("longer than %d bytes", maxNameLength))
	}
	segs := strings.Split(name, "/")
	for _, s := range segs {
		if s == "" {
			return bad("empty segment")
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
				return bad(fmt.Sprintf("character %q not allowed (letters, digits, '_', '.', '-')", c))
			}
		}
	}
	want := func(k Kind, n int, form string) (Kind, error) {
		if len(segs) != n {
			return bad("want " + form)
		}
		return k, nil
	}
	switch segs[0] {
	case "idle":
		return want(KindIdle, 1, "idle")
	case "transaction":
		return want(KindTransaction, 1, "transaction")
	case "stage":
		return want(KindStage, 3, "stage/<component>/<name>")
	case "memory":
		return want(KindMemory, 3, "memory/<component>/<name>")
	case "thread":
		return want(KindThread, 3, "thread/<component>/<name>")
	case "statement":
		if len(segs) < 3 {
			return bad("want statement/<component>/<name>")
		}
		return KindStatement, nil
	case "wait":
		if len(segs) < 2 {
			break
		}
		switch segs[1] + "/" + safeSeg(segs, 2) {
		case "synch/mutex":
			return want(KindMutex, 5, "wait/synch/mutex/<component>/<name>")
		case "synch/rwlock":
			return want(KindRWLock, 5, "wait/synch/rwlock/<component>/<name>")
		case "synch/cond":
			return want(KindCond, 5, "wait/synch/cond/<component>/<name>")
		case "io/file":
			return want(KindFile, 5, "wait/io/file/<component>/<name>")
		case "io/socket":
			return want(KindSocket, 5, "wait/io/socket/<component>/<name>")
		}
		return bad("unknown wait family (wait/synch/{mutex,rwlock,cond}, wait/io/{file,socket})")
	}
	return bad("unknown class (wait, idle, stage, statement, transaction, memory, thread)")
}

func safeSeg(segs []string, i int) string {
	if i < len(segs) {
		return segs[i]
	}
	return ""
}

// Properties are setup_instruments.PROPERTIES.
type Properties uint8

const (
	PropSingleton        Properties = 1 << iota // one instance only
	PropProgress                                // reports WORK_COMPLETED/WORK_ESTIMATED
	PropUser                                    // a user (foreground) thread class
	PropGlobalStatistics                        // aggregated globally only, never per thread
	PropMutable                                 // a statement that may be re-typed
)

var propNames = []string{"singleton", "progress", "user", "global_statistics", "mutable"}

// String returns the SET value as MySQL prints it: comma-separated names.
func (p Properties) String() string {
	var b strings.Builder
	for i, n := range propNames {
		if p&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// Class flag bits. setEnabled and setTimed are what setup_instruments shows;
// on is the effective switch the provider reads, setEnabled AND
// global_instrumentation, kept in the same word so that the disabled path is
// one atomic load.
// flagHistory is setup_threads.HISTORY, for thread classes only.
const (
	flagSetEnabled uint32 = 1 << iota
	flagSetTimed
	flagOn
	flagHistory
)

// A Class is an instrument class: one row of setup_instruments. Classes are
// created by Schema.Register and live as long as their Schema.
//
// Flags is the hot-path read: one atomic load says whether events of the
// class are collected and timed.
type Class struct {
	flags atomic.Uint32
	// source caches the SOURCE last given to the class's stages, interned
	// (see Thread.StartStage): a stage class is started with the same
	// source again and again.
	source atomic.Pointer[internedSource]

	name       string
	kind       Kind
	index      int // dense, in registration order: summaries are slices indexed by it
	kindIndex  int // dense within its kind
	props      Properties
	volatility int
	doc        string
	// stmt holds a statement class's statistics of statements counted
	// without a thread; nil for other kinds.
	stmt *stmtShared
}

// Name returns the instrument name (setup_instruments.NAME).
func (c *Class) Name() string { return c.name }

// Kind returns the class family.
func (c *Class) Kind() Kind { return c.kind }

// Index returns the class's dense index in its Schema, 0-based in
// registration order.
func (c *Class) Index() int { return c.index }

// Documentation returns setup_instruments.DOCUMENTATION.
func (c *Class) Documentation() string { return c.doc }

// Properties returns setup_instruments.PROPERTIES.
func (c *Class) Properties() Properties { return c.props }

// On reports whether events of the class are collected now: ENABLED and
// global_instrumentation both on. One atomic load.
func (c *Class) On() bool { return c.flags.Load()&flagOn != 0 }

// Flags returns (on, timed) with one atomic load: on as On; timed as
// setup_instruments.TIMED. An event samples them once at its start and keeps
// them to its end.
func (c *Class) Flags() (on, timed bool) {
	f := c.flags.Load()
	return f&flagOn != 0, f&flagSetTimed != 0
}

// Enabled returns setup_instruments.ENABLED.
func (c *Class) Enabled() bool { return c.flags.Load()&flagSetEnabled != 0 }

// Timed returns setup_instruments.TIMED (false for classes that cannot be
// timed).
func (c *Class) Timed() bool { return c.flags.Load()&flagSetTimed != 0 }

// ClassOption configures a class at registration.
type ClassOption interface {
	apply(*classConfig)
}

type classConfig struct {
	doc        string
	props      Properties
	volatility int
	enabled    *bool
	timed      *bool
}

type classOptionFunc func(*classConfig)

func (f classOptionFunc) apply(c *classConfig) { f(c) }

// WithDocumentation sets setup_instruments.DOCUMENTATION. By default it is
// empty (NULL).
func WithDocumentation(doc string) ClassOption {
	return classOptionFunc(func(c *classConfig) { c.doc = doc })
}

// WithProperties sets setup_instruments.PROPERTIES. By default none.
func WithProperties(p Properties) ClassOption {
	return classOptionFunc(func(c *classConfig) { c.props = p })
}

// WithVolatility sets setup_instruments.VOLATILITY. By default 0 (unknown).
func WithVolatility(v int) ClassOption {
	return classOptionFunc(func(c *classConfig) { c.volatility = v })
}

// WithDefault sets the class's ENABLED and TIMED (for a thread class:
// ENABLED and HISTORY) before start-up rules apply. By default every class is enabled and timed: a service wraps what
// it wants measured.
func WithDefault(enabled, timed bool) ClassOption {
	return classOptionFunc(func(c *classConfig) { c.enabled, c.timed = &enabled, &timed })
}
