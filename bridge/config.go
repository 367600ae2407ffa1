package bridge

import "time"

// DefaultTopDigests is how many digests the producer exports by default.
const DefaultTopDigests = 100

// config is a Producer's configuration, read at NewProducer.
type config struct {
	topDigests int
	start      time.Time
	filter     func(table string) bool
	tables     bool // WithTables set filter: views opt no table in
	now        func() time.Time
	views      *viewState // WithViews (views.go)
}

func newConfig(opts []Option) config {
	c := config{topDigests: DefaultTopDigests, filter: DefaultTables, now: time.Now}
	for _, o := range opts {
		c = o.apply(c)
	}
	if c.start.IsZero() {
		c.start = c.now()
	}
	return c
}

// An Option configures a Producer.
type Option interface{ apply(config) config }

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

// WithTopDigests sets how many digests of events_statements_summary_by_digest
// the producer exports as series of their own, ranked by SUM_TIMER_WAIT;
// the rest add up in one overflow series. n < 1 keeps only the overflow
// series. By default, DefaultTopDigests (100).
func WithTopDigests(n int) Option {
	return optionFunc(func(c config) config {
		c.topDigests = max(n, 0)
		return c
	})
}

// WithStartTime sets the StartTime of the cumulative sums the producer
// finds at its first collection: the time the Schema began counting, if
// it began before the producer. By default, the time NewProducer ran.
func WithStartTime(t time.Time) Option {
	return optionFunc(func(c config) config {
		c.start = t
		return c
	})
}

// WithTables sets which tables of the catalog the producer exports (of
// those that have a measure column); keep reports whether to export a
// table. By default, DefaultTables, and the tables of AllTables that a
// view opts in (see doc.go, # Cardinality); with WithTables, keep alone
// decides. WithTables(AllTables) exports every summary.
func WithTables(keep func(table string) bool) Option {
	return optionFunc(func(c config) config {
		if keep != nil {
			c.filter, c.tables = keep, true
		}
		return c
	})
}

// withClock sets the producer's clock, for tests.
func withClock(now func() time.Time) Option {
	return optionFunc(func(c config) config {
		c.now = now
		return c
	})
}
