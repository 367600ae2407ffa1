package pfscore

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Environment variables read by New, in the spirit of my.cnf's
// performance-schema-instrument and performance-schema-consumer-* options.
const (
	// EnvInstrument holds start-up instrument rules separated by ';':
	// OTELPFS_INSTRUMENT='wait/synch/%=ON;wait/io/file/%=COUNTED'.
	EnvInstrument = "OTELPFS_INSTRUMENT"
	// EnvConsumer holds consumer settings separated by ',' or ';':
	// OTELPFS_CONSUMER='events_waits_current=ON,events-waits-history=ON'.
	EnvConsumer = "OTELPFS_CONSUMER"
)

// config is the Schema configuration: defaults, then the environment, then
// options, as the OpenTelemetry SDK does it. It is read at construction only.
type config struct {
	maxClasses       int
	waitsHistorySize int // events_waits_history rows per thread
	waitsLongSize    int // events_waits_history_long rows
	stagesHistory    int // events_stages_history rows per thread
	stagesLong       int // events_stages_history_long rows
	stmtHistory      int // events_statements_history rows per thread
	stmtLong         int // events_statements_history_long rows
	digestsSize      int // events_statements_summary_by_digest rows
	maxDigestLength  int // max_digest_length and performance_schema_max_digest_length
	maxSQLText       int // performance_schema_max_sql_text_length
	sampleAge        time.Duration
	stmtCacheSize    int // statement texts whose digest is cached
	trxHistory       int // events_transactions_history rows per thread
	trxLong          int // events_transactions_history_long rows
	maxThreads       int
	accountsSize     int
	usersSize        int
	hostsSize        int
	maxInstances     [numKinds]int
	maxNames         int
	reclaimIdle      time.Duration
	instrumentRules  []instrumentRule
	instrumentPolicy InstrumentPolicy // setup_rules.go
	consumers        map[Consumer]bool
	errs             []error
	readEnv          bool
}

func newConfig(opts []Option) config {
	c := config{
		maxClasses:       1024,
		waitsHistorySize: 10,
		waitsLongSize:    10_000,
		stagesHistory:    10,
		stagesLong:       10_000,
		stmtHistory:      10,
		stmtLong:         10_000,
		digestsSize:      10_000,
		maxDigestLength:  1024,
		maxSQLText:       1024,
		sampleAge:        time.Minute,
		stmtCacheSize:    4096,
		trxHistory:       10,
		trxLong:          10_000,
		maxThreads:       8192,
		accountsSize:     256,
		usersSize:        256,
		hostsSize:        256,
		maxNames:         65536,
		reclaimIdle:      time.Minute,
		consumers:        map[Consumer]bool{},
		readEnv:          true,
	}
	c.maxInstances[KindMutex] = 1 << 18
	c.maxInstances[KindRWLock] = 1 << 16
	c.maxInstances[KindCond] = 1 << 16
	c.maxInstances[KindFile] = 1 << 14
	c.maxInstances[KindSocket] = 1 << 14
	for _, o := range opts { // WithoutEnvironment must act before the environment is read
		if _, ok := o.(noEnvOption); ok {
			c.readEnv = false
		}
	}
	if c.readEnv {
		if v := os.Getenv(EnvInstrument); v != "" {
			for _, r := range strings.Split(v, ";") {
				if r = strings.TrimSpace(r); r != "" {
					c.addInstrumentRule(r, EnvInstrument)
				}
			}
		}
		if v := os.Getenv(EnvConsumer); v != "" {
			for _, r := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
				if r = strings.TrimSpace(r); r != "" {
					c.addConsumerSetting(r, EnvConsumer)
				}
			}
		}
	}
	for _, o := range opts {
		c = o.apply(c)
	}
	return c
}

func (c *config) addInstrumentRule(spec, from string) {
	r, err := parseInstrumentRule(spec, len(c.instrumentRules))
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: %w", from, err))
		return
	}
	c.instrumentRules = append(c.instrumentRules, r)
}

func (c *config) addConsumerSetting(spec, from string) {
	name, val, ok := strings.Cut(spec, "=")
	if !ok {
		c.errs = append(c.errs, fmt.Errorf("%s: %q: want consumer=ON|OFF", from, spec))
		return
	}
	cons, err := ParseConsumer(strings.ReplaceAll(strings.TrimSpace(name), "-", "_"))
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: %w", from, err))
		return
	}
	on, err := parseOnOff(val)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: consumer %s: %w", from, cons, err))
		return
	}
	c.consumers[cons] = on
}

// An Option configures a Schema.
type Option interface {
	apply(config) config
}

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

// WithInstrument adds a start-up instrument rule, as my.cnf's
// performance-schema-instrument='wait/synch/%=ON': a name or LIKE pattern,
// '=', and ON (enabled and timed), OFF (neither) or COUNTED (enabled, not
// timed); TRUE/YES/1 and FALSE/NO/0 mean ON and OFF. Rules apply to every
// class when it registers, whenever that is. An exact name beats any
// pattern; of several matching patterns the longest wins, and of equally
// long ones the last given. By default there are none, and the environment
// variable OTELPFS_INSTRUMENT adds rules before options do.
func WithInstrument(rule string) Option {
	return optionFunc(func(c config) config {
		c.addInstrumentRule(rule, "WithInstrument")
		return c
	})
}

// WithConsumer sets a consumer's start-up value (setup_consumers.ENABLED).
// By default consumers are as in MySQL 8.0 (see Consumer), and the
// environment variable OTELPFS_CONSUMER overrides them before options do.
func WithConsumer(consumer Consumer, enabled bool) Option {
	return optionFunc(func(c config) config {
		c.consumers[consumer] = enabled
		return c
	})
}

// builtinClasses are the classes every schema registers: transaction and
// idle.
const builtinClasses = 2

// WithMaxClasses bounds the number of instrument classes, the built-in idle
// and transaction classes included (so at least 2). By default 1024.
// Registering past it fails with ErrTooManyClasses and counts in the
// status variable Performance_schema_classes_lost.
func WithMaxClasses(n int) Option {
	return optionFunc(func(c config) config {
		c.maxClasses = max(n, builtinClasses)
		return c
	})
}

// WithWaitsHistorySize sets events_waits_history's rows per thread
// (performance_schema_events_waits_history_size). By default 10, at most
// 1024.
func WithWaitsHistorySize(n int) Option {
	return optionFunc(func(c config) config {
		c.waitsHistorySize = max(n, 0)
		return c
	})
}

// WithWaitsHistoryLongSize sets events_waits_history_long's rows
// (performance_schema_events_waits_history_long_size). By default 10,000.
func WithWaitsHistoryLongSize(n int) Option {
	return optionFunc(func(c config) config {
		c.waitsLongSize = max(n, 0)
		return c
	})
}

// maxHistoryPerThread bounds a per-thread history's rows, as MySQL bounds
// performance_schema_events_*_history_size.
const maxHistoryPerThread = 1024

// WithStagesHistorySize sets events_stages_history's rows per thread
// (performance_schema_events_stages_history_size). By default 10, at most
// 1024.
func WithStagesHistorySize(n int) Option {
	return optionFunc(func(c config) config {
		c.stagesHistory = max(n, 0)
		return c
	})
}

// WithStagesHistoryLongSize sets events_stages_history_long's rows
// (performance_schema_events_stages_history_long_size). By default 10,000.
func WithStagesHistoryLongSize(n int) Option {
	return optionFunc(func(c config) config {
		c.stagesLong = max(n, 0)
		return c
	})
}

// WithStatementsHistorySize sets events_statements_history's rows per
// thread (performance_schema_events_statements_history_size). By default
// 10, at most 1024.
func WithStatementsHistorySize(n int) Option {
	return optionFunc(func(c config) config {
		c.stmtHistory = max(n, 0)
		return c
	})
}

// WithStatementsHistoryLongSize sets events_statements_history_long's rows
// (performance_schema_events_statements_history_long_size). By default
// 10,000.
func WithStatementsHistoryLongSize(n int) Option {
	return optionFunc(func(c config) config {
		c.stmtLong = max(n, 0)
		return c
	})
}

// WithDigestsSize bounds the rows of events_statements_summary_by_digest
// (performance_schema_digests_size). By default 10,000. Statements of a new
// digest once it is full count in the row whose SCHEMA_NAME and DIGEST are
// NULL, and in Performance_schema_digest_lost, until a TRUNCATE empties the
// table.
func WithDigestsSize(n int) Option {
	return optionFunc(func(c config) config {
		c.digestsSize = max(n, 1)
		return c
	})
}

// WithMaxDigestLength sets the bytes of normalized token stream a digest
// covers (max_digest_length, and performance_schema_max_digest_length: one
// setting here). By default 1024; 0 turns digests off. Statements that differ
// only past it share a digest, as in MySQL.
func WithMaxDigestLength(n int) Option {
	return optionFunc(func(c config) config {
		c.maxDigestLength = max(n, 0)
		return c
	})
}

// WithMaxSQLTextLength bounds SQL_TEXT and QUERY_SAMPLE_TEXT, in bytes
// (performance_schema_max_sql_text_length). By default 1024. A longer text
// shows its first bytes, the last three replaced by "...".
func WithMaxSQLTextLength(n int) Option {
	return optionFunc(func(c config) config {
		c.maxSQLText = max(n, 0)
		return c
	})
}

// WithMaxDigestSampleAge sets performance_schema_max_digest_sample_age: a
// digest's query sample older than this is replaced by the next statement
// of the digest; 0 replaces it only by a statement that waited longer. By
// default one minute.
func WithMaxDigestSampleAge(d time.Duration) Option {
	return optionFunc(func(c config) config {
		c.sampleAge = max(d, 0)
		return c
	})
}

// WithStatementCacheSize sets how many distinct statement texts keep their
// digest in the statement cache, so that the digest of a text seen before
// costs a lookup rather than a normalization. By default 4096; 0 turns the
// cache off. The cache also indexes its texts by the callers' addresses
// for them (an array as long again), and keeps no text that left its n.
func WithStatementCacheSize(n int) Option {
	return optionFunc(func(c config) config {
		c.stmtCacheSize = max(n, 0)
		return c
	})
}

// WithTransactionsHistorySize sets events_transactions_history's rows per
// thread (performance_schema_events_transactions_history_size). By default
// 10, at most 1024.
func WithTransactionsHistorySize(n int) Option {
	return optionFunc(func(c config) config {
		c.trxHistory = max(n, 0)
		return c
	})
}

// WithTransactionsHistoryLongSize sets events_transactions_history_long's
// rows (performance_schema_events_transactions_history_long_size). By
// default 10,000.
func WithTransactionsHistoryLongSize(n int) Option {
	return optionFunc(func(c config) config {
		c.trxLong = max(n, 0)
		return c
	})
}

// WithMaxThreads bounds the threads instrumented at once
// (performance_schema_max_thread_instances). By default 8192. NewThread past
// it returns nil and counts in Performance_schema_thread_instances_lost.
func WithMaxThreads(n int) Option {
	return optionFunc(func(c config) config {
		c.maxThreads = max(n, 1)
		return c
	})
}

// WithAccountsSize bounds the rows of accounts
// (performance_schema_accounts_size). By default 256. A thread whose account
// has no row and finds the table full gets none: its statistics roll up
// into its user and host instead, and Performance_schema_accounts_lost
// counts it. 0 keeps no accounts.
func WithAccountsSize(n int) Option {
	return optionFunc(func(c config) config {
		c.accountsSize = max(n, 0)
		return c
	})
}

// WithUsersSize bounds the rows of users (performance_schema_users_size).
// By default 256. Past it, Performance_schema_users_lost counts the threads
// left without a user row.
func WithUsersSize(n int) Option {
	return optionFunc(func(c config) config {
		c.usersSize = max(n, 0)
		return c
	})
}

// WithHostsSize bounds the rows of hosts (performance_schema_hosts_size).
// By default 256. Past it, Performance_schema_hosts_lost counts the threads
// left without a host row.
func WithHostsSize(n int) Option {
	return optionFunc(func(c config) config {
		c.hostsSize = max(n, 0)
		return c
	})
}

// WithMaxInstances bounds the instances of one kind (KindMutex, KindRWLock,
// KindCond, KindFile, KindSocket), as performance_schema_max_*_instances
// does. By default 262,144 mutexes, 65,536 rwlocks and conds, 16,384 files
// and sockets; memory is taken a 256-instance page at a time, as used.
func WithMaxInstances(kind Kind, n int) Option {
	return optionFunc(func(c config) config {
		if kind < numKinds {
			c.maxInstances[kind] = max(n, 1)
		}
		return c
	})
}

// WithReclaimIdle sets how long a page of records (threads, instances) must
// stay empty before its memory is returned; 0 keeps every page. By default
// one minute. Reclamation runs, at most every half of this, when threads end,
// instances are destroyed and tables are read: the schema starts no
// goroutine.
func WithReclaimIdle(d time.Duration) Option {
	return optionFunc(func(c config) config {
		c.reclaimIdle = max(d, 0)
		return c
	})
}

type noEnvOption struct{}

func (noEnvOption) apply(c config) config { return c }

// WithoutEnvironment makes New ignore OTELPFS_* environment variables, for
// tests and for services that configure otelpfs only in code. By default the
// environment is read.
func WithoutEnvironment() Option { return noEnvOption{} }

// parseOnOff parses a consumer value.
func parseOnOff(v string) (bool, error) {
	on, err := ParseFlag(v)
	if err != nil {
		return false, fmt.Errorf("value %q: want ON or OFF", v)
	}
	return on, nil
}
