package instrument

// Errors: an instrument that cannot be registered is reported, never fatal.
//
// A constructor (NewMutex, NewRWMutex, NewCond, Mutex.Init, RWMutex.Init,
// Cond.Init, NewFileClass, NewSocketClass, NewThreadClass, NewThread,
// StartThread) whose name is malformed, names another kind of instrument (a
// cond name given to NewMutex), or finds the schema's class table full still
// returns a working object, uninstrumented (a thread: nil): the
// instrumentation never stops the service. What went wrong goes to the
// error handler, as OpenTelemetry Go's otel.Handle does, and counts in the
// schema's global_status variable
// Performance_schema_instrument_errors (see pfscore.Schema.CountInstrumentError).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otelpfs/otelpfs/pfscore"
)

// An ErrorHandler handles the errors package instrument reports instead of
// returning: today a *RegisterError, an instrument its constructor could not
// register. It has the method of OpenTelemetry Go's otel.ErrorHandler, so an
// otel.ErrorHandler (otel.GetErrorHandler(), say) can be installed as is.
//
// Handle is called synchronously by the constructor that failed, from any
// goroutine, so it must be safe for concurrent use, and should be quick. It
// must not itself construct an instrument that fails (that would call it
// again).
type ErrorHandler interface {
	Handle(error)
}

// ErrorHandlerFunc is an ordinary function used as an ErrorHandler.
type ErrorHandlerFunc func(error)

// Handle calls f(err).
func (f ErrorHandlerFunc) Handle(err error) { f(err) }

// handlerBox holds the installed handler: atomic.Pointer needs a concrete
// type, and an interface value is two words.
type handlerBox struct{ h ErrorHandler }

var errorHandler atomic.Pointer[handlerBox] // nil: the default, logHandler

// SetErrorHandler makes h the handler of package instrument's errors, for
// every schema; SetErrorHandler(nil) restores the default. It is safe to
// call at any time, concurrently with constructors: each error goes to the
// handler installed when it occurred.
//
// The default handler logs through log/slog's default logger, at level
// Warn, one line per distinct bad name; after 1024 distinct names it logs
// once that it stops. The schema's Performance_schema_instrument_errors
// counts every error whatever the handler.
//
// Instruments declared as package-level variables are built during program
// initialization, before main can install a handler: their errors go to
// the default handler, and so to slog.Default() as it is then (the standard
// logger, on standard error, unless an init function has changed it).
func SetErrorHandler(h ErrorHandler) {
	if h == nil {
		errorHandler.Store(nil)
		return
	}
	errorHandler.Store(&handlerBox{h})
}

// handle passes err to the installed handler.
func handle(err error) {
	if b := errorHandler.Load(); b != nil {
		b.h.Handle(err)
		return
	}
	defaultHandler.Handle(err)
}

// A RegisterError reports an instrument its constructor could not register;
// the constructor returned it working, uninstrumented. errors.Is(err,
// pfscore.ErrBadInstrumentName) holds for a malformed name and for a name of
// another kind than the constructor's; errors.Is(err,
// pfscore.ErrTooManyClasses) for a full class table.
type RegisterError struct {
	Constructor string // the function called: "NewMutex", "(*Mutex).Init", …
	Name        string // the instrument name it was given
	Err         error  // why; wraps pfscore.ErrBadInstrumentName or pfscore.ErrTooManyClasses
}

func (e *RegisterError) Error() string {
	return "instrument." + e.Constructor + "(" + strconv.Quote(e.Name) + ") is uninstrumented: " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *RegisterError) Unwrap() error { return e.Err }

// kindForms are the name forms of the kinds a constructor wants.
var kindForms = map[pfscore.Kind]string{
	pfscore.KindMutex:     "wait/synch/mutex/<component>/<name>",
	pfscore.KindRWLock:    "wait/synch/rwlock/<component>/<name>",
	pfscore.KindCond:      "wait/synch/cond/<component>/<name>",
	pfscore.KindFile:      "wait/io/file/<component>/<name>",
	pfscore.KindSocket:    "wait/io/socket/<component>/<name>",
	pfscore.KindThread:    "thread/<component>/<name>",
	pfscore.KindStage:     "stage/<component>/<name>",
	pfscore.KindStatement: "statement/<component>/<name>",
	pfscore.KindMemory:    "memory/<component>/<name>",
}

// fail counts and reports a registration that failed.
func (c *config) fail(ctor, name string, err error) {
	c.schema.CountInstrumentError()
	handle(&RegisterError{Constructor: ctor, Name: name, Err: err})
}

// wrongKind is the error of a valid name of another kind than want.
func wrongKind(name string, kind, want pfscore.Kind) error {
	return fmt.Errorf("%w %q: a %s name, want %s", pfscore.ErrBadInstrumentName, name, kind, kindForms[want])
}

// The default handler's bounds: it remembers maxLoggedNames names, each
// truncated to maxKeyLen bytes (a valid name has at most 128), so a service
// that invents names cannot grow it without bound.
const (
	maxLoggedNames = 1024
	maxKeyLen      = 256
)

// logHandler is the default ErrorHandler: a Warn line on slog.Default() per
// distinct bad name, then, past maxLoggedNames names, one line saying so and
// silence.
//
// Warn, not Error: nothing the service was asked to do failed (the mutex
// locks, the file opens); what is lost is observability. Warn still shows
// under slog's default level, Info, and does not page whoever watches a
// service's Error lines for failed requests.
type logHandler struct {
	mu   sync.Mutex
	seen map[string]struct{}
	done bool // the "no longer logged" line was logged
}

var defaultHandler = &logHandler{}

func (h *logHandler) Handle(err error) {
	var re *RegisterError
	key := ""
	if errors.As(err, &re) {
		key = re.Name
	} else {
		key = err.Error()
	}
	if len(key) > maxKeyLen {
		key = strings.Clone(key[:maxKeyLen]) // not a window on the long name
	}
	logIt, last := false, false
	h.mu.Lock()
	if _, dup := h.seen[key]; !dup {
		switch {
		case len(h.seen) < maxLoggedNames:
			if h.seen == nil {
				h.seen = make(map[string]struct{})
			}
			h.seen[key] = struct{}{}
			logIt = true
		case !h.done:
			h.done = true
			last = true
		}
	}
	h.mu.Unlock()

	// Log outside the lock: a slog handler that builds an instrument with
	// a bad name comes back here, and finds the name seen.
	ctx := context.Background()
	switch {
	case logIt && re != nil:
		slog.Default().LogAttrs(ctx, slog.LevelWarn, "otelpfs: instrument not registered, works uninstrumented",
			slog.String("constructor", "instrument."+re.Constructor),
			slog.String("name", re.Name),
			slog.String("err", re.Err.Error()))
	case logIt:
		slog.Default().LogAttrs(ctx, slog.LevelWarn, "otelpfs: instrument error", slog.String("err", err.Error()))
	case last:
		slog.Default().LogAttrs(ctx, slog.LevelWarn, "otelpfs: further instrument errors not logged",
			slog.Int("distinct_names_logged", maxLoggedNames),
			slog.String("counted_in", "global_status.Performance_schema_instrument_errors"))
	}
}

// reset forgets the names seen, for tests.
func (h *logHandler) reset() {
	h.mu.Lock()
	h.seen, h.done = nil, false
	h.mu.Unlock()
}
