package instrument

import "github.com/otelpfs/otelpfs/pfscore"

// Options come in three kinds, one per kind of constructor, so that an
// option a constructor would ignore does not compile:
//
//	Option             NewMutex, NewRWMutex, NewCond, their Init methods,
//	                   NewFileClass, NewSocketClass
//	ThreadOption       NewThread, StartThread
//	ThreadClassOption  NewThreadClass
//
// WithSchema and WithDocumentation return a SharedOption, which is all
// three. WithSource is an Option only (a thread has no SOURCE); WithUser and
// WithHost are ThreadOptions only (they belong to each thread, so a
// ThreadClass takes them at Start).

// An Option configures an instrument at construction: a lock, a condition
// variable, a file class or a socket class.
type Option interface {
	applyOption(*config)
}

// A ThreadOption configures a thread at its start (NewThread, StartThread).
type ThreadOption interface {
	applyThreadOption(*config)
}

// A ThreadClassOption configures a thread class (NewThreadClass).
type ThreadClassOption interface {
	applyThreadClassOption(*config)
}

// A SharedOption is an option every constructor takes: an Option, a
// ThreadOption and a ThreadClassOption. WithSchema and WithDocumentation
// return one, so one value serves them all:
//
//	in := instrument.WithSchema(s)
//	mu := instrument.NewMutex("wait/synch/mutex/app/cache", in)
//	t := instrument.NewThread("thread/app/worker", in, instrument.WithUser("app"))
//
// The zero SharedOption does nothing.
type SharedOption struct{ set func(*config) }

func (o SharedOption) apply(c *config) {
	if o.set != nil {
		o.set(c)
	}
}

func (o SharedOption) applyOption(c *config)            { o.apply(c) }
func (o SharedOption) applyThreadOption(c *config)      { o.apply(c) }
func (o SharedOption) applyThreadClassOption(c *config) { o.apply(c) }

// instrumentOption is an Option only.
type instrumentOption func(*config)

func (f instrumentOption) applyOption(c *config) { f(c) }

// threadOption is a ThreadOption only.
type threadOption func(*config)

func (f threadOption) applyThreadOption(c *config) { f(c) }

type config struct {
	schema *pfscore.Schema
	user   string
	host   string
	doc    string
	source string
}

// newConfig applies the options of an instrument over the defaults.
func newConfig(opts []Option) config { return configure(opts, Option.applyOption) }

// configure applies opts, each with apply, over the defaults.
func configure[O any](opts []O, apply func(O, *config)) config {
	var c config
	for _, o := range opts {
		apply(o, &c)
	}
	if c.schema == nil {
		c.schema = pfscore.Default()
	}
	return c
}

// WithSchema makes the instrument or thread report to s. By default it
// reports to pfscore.Default(), the process's performance schema.
func WithSchema(s *pfscore.Schema) SharedOption {
	return SharedOption{func(c *config) { c.schema = s }}
}

// WithDocumentation sets the instrument class's DOCUMENTATION in
// setup_instruments, the first time the class is registered. By default
// none.
func WithDocumentation(doc string) SharedOption {
	return SharedOption{func(c *config) { c.doc = doc }}
}

// WithSource sets the SOURCE the instrument's events show. By default it is
// the file:line that created the instrument (the lock, or the file or
// socket class), captured once there: a stack walk per event would cost
// more than the event.
func WithSource(source string) Option {
	return instrumentOption(func(c *config) { c.source = source })
}

// WithUser sets a thread's PROCESSLIST_USER: the account its statistics roll
// up into and the key setup_actors matches. By default a thread has no user
// (a background thread).
func WithUser(user string) ThreadOption {
	return threadOption(func(c *config) { c.user = user })
}

// WithHost sets a thread's PROCESSLIST_HOST (the client's host, say). By
// default none.
func WithHost(host string) ThreadOption {
	return threadOption(func(c *config) { c.host = host })
}

// registerAs returns the class name, registered in the configured schema,
// or nil if the name is invalid, of another kind than want (0 wants any), or
// the schema is full; instruments built on a nil class work uninstrumented.
// A nil return is counted in the schema's Performance_schema_instrument_errors
// and reported to the error handler (see SetErrorHandler) as an error of
// constructor ctor. A name of the wrong kind is not registered: it would
// show in setup_instruments a class nothing uses.
func (c *config) registerAs(name, ctor string, want pfscore.Kind) *pfscore.Class {
	class := c.schema.Class(name)
	if class == nil {
		kind, err := pfscore.ParseInstrumentName(name)
		if err == nil && want != 0 && kind != want {
			err = wrongKind(name, kind, want)
		}
		if err == nil {
			var copts []pfscore.ClassOption
			if c.doc != "" {
				copts = append(copts, pfscore.WithDocumentation(c.doc))
			}
			class, err = c.schema.Register(name, copts...)
		}
		if err != nil {
			c.fail(ctor, name, err)
			return nil
		}
	}
	if want != 0 && class.Kind() != want {
		c.fail(ctor, name, wrongKind(name, class.Kind(), want))
		return nil
	}
	return class
}
