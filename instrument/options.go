package instrument

import "github.com/otelpfs/otelpfs/pfscore"

// An Option configures an instrument or a thread at construction.
type Option interface {
	apply(*config)
}

type config struct {
	schema *pfscore.Schema
	user   string
	host   string
	doc    string
	source string
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// newConfig applies opts over the defaults.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.schema == nil {
		c.schema = pfscore.Default()
	}
	return c
}

// WithSchema makes the instrument report to s. By default it reports to
// pfscore.Default(), the process's performance schema.
func WithSchema(s *pfscore.Schema) Option {
	return optionFunc(func(c *config) { c.schema = s })
}

// WithUser sets a thread's PROCESSLIST_USER: the account its statistics roll
// up into and the key setup_actors matches. By default a thread has no user
// (a background thread).
func WithUser(user string) Option {
	return optionFunc(func(c *config) { c.user = user })
}

// WithHost sets a thread's PROCESSLIST_HOST (the client's host, say). By
// default none.
func WithHost(host string) Option {
	return optionFunc(func(c *config) { c.host = host })
}

// WithDocumentation sets the instrument class's DOCUMENTATION in
// setup_instruments, the first time the class is registered. By default
// none.
func WithDocumentation(doc string) Option {
	return optionFunc(func(c *config) { c.doc = doc })
}

// WithSource sets the SOURCE the instrument's events show. By default it is
// the file:line that created the instrument, captured once there: a stack
// walk per event would cost more than the event.
func WithSource(source string) Option {
	return optionFunc(func(c *config) { c.source = source })
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
