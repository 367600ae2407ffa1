package mysqlpfs

import (
	"time"
)

// Defaults of the options.
const (
	// DefaultAddr is where Listen serves when given no address: loopback,
	// the port ProxySQL's admin interface made familiar for a MySQL-protocol
	// side door.
	DefaultAddr = "127.0.0.1:6033"
	// DefaultUser is the account Listen creates unless WithUser names another.
	DefaultUser = "pfs"
	// DefaultQueryTimeout bounds each statement unless WithQueryTimeout says
	// otherwise.
	DefaultQueryTimeout = 10 * time.Second
	// DefaultRowLimit bounds each result unless WithRowLimit says otherwise:
	// ten history_long tables' worth.
	DefaultRowLimit = 100_000
	// DefaultMaxConnections bounds the connections served at once unless
	// WithMaxConnections says otherwise.
	DefaultMaxConnections = 16
	// DefaultMaxAllowedPacket bounds each value a statement builds unless
	// WithMaxAllowedPacket says otherwise: 16 MiB.
	DefaultMaxAllowedPacket = 16 << 20
	// DefaultQueryMemoryLimit bounds the heap the running statements may
	// grow unless WithQueryMemoryLimit says otherwise: 256 MiB.
	DefaultQueryMemoryLimit = 256 << 20
)

// An Option configures Listen.
type Option interface {
	apply(config) config
}

type config struct {
	user, password string
	changes        bool
	timeout        time.Duration
	rowLimit       int
	remote         bool
	maxConns       int
	maxPacket      int64
	memLimit       int64
}

func newConfig(opts []Option) config {
	c := config{
		user:      DefaultUser,
		timeout:   DefaultQueryTimeout,
		rowLimit:  DefaultRowLimit,
		maxConns:  DefaultMaxConnections,
		maxPacket: DefaultMaxAllowedPacket,
		memLimit:  DefaultQueryMemoryLimit,
	}
	for _, o := range opts {
		if o != nil {
			c = o.apply(c)
		}
	}
	return c
}

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

// WithUser sets the one account the server accepts, with its password
// (mysql_native_password; clients that ask for caching_sha2_password are
// switched to it). An empty password is accepted only on a loopback
// address: Listen refuses it with WithRemoteAccess. By default, the user
// is DefaultUser ("pfs") with an empty password.
func WithUser(user, password string) Option {
	return optionFunc(func(c config) config { c.user, c.password = user, password; return c })
}

// WithSetupChanges allows (true) the statements MySQL allows on
// performance_schema: UPDATE of the setup tables' ENABLED, TIMED, HISTORY
// and TIMER_NAME columns and of threads' INSTRUMENTED and HISTORY; INSERT
// and DELETE on setup_actors and setup_objects; TRUNCATE TABLE on the
// tables MySQL truncates. By default the server only reads, and refuses
// them with ER_TABLEACCESS_DENIED_ERROR (1142), as the HTTP handler
// refuses its changes without exporter.WithSetupChanges.
func WithSetupChanges(allowed bool) Option {
	return optionFunc(func(c config) config { c.changes = allowed; return c })
}

// WithQueryTimeout bounds the time one statement may run; a statement
// that runs longer is cancelled with ER_QUERY_TIMEOUT (3024). Zero or less
// means no bound. By default, DefaultQueryTimeout (10 s).
func WithQueryTimeout(d time.Duration) Option {
	return optionFunc(func(c config) config { c.timeout = d; return c })
}

// WithRowLimit bounds the rows one result may carry; a result with more
// is cut off with ER_TOO_BIG_SELECT (1104), the rows sent so far
// discarded by the client. Zero or less means no bound. By default,
// DefaultRowLimit (100,000).
func WithRowLimit(n int) Option {
	return optionFunc(func(c config) config { c.rowLimit = n; return c })
}

// WithMaxConnections bounds the connections served at once; more wait a
// moment and are then refused. Zero or less means no bound. By default,
// DefaultMaxConnections (16).
func WithMaxConnections(n int) Option {
	return optionFunc(func(c config) config { c.maxConns = n; return c })
}

// WithRemoteAccess lets Listen serve on any address, not only loopback,
// provided the account has a password (see WithUser). The tables, and with
// WithSetupChanges the service's instrumentation, then reach whoever has
// the password and reaches the address; the protocol is not encrypted.
// By default, Listen serves only on loopback addresses.
func WithRemoteAccess(allowed bool) Option {
	return optionFunc(func(c config) config { c.remote = allowed; return c })
}

// WithMaxAllowedPacket bounds, in bytes, the values a statement builds,
// and is the server's max_allowed_packet: a string function (REPEAT,
// LPAD, RPAD, SPACE, REPLACE, REGEXP_REPLACE, CONCAT, CONCAT_WS, JSON_ARRAY
// ...) whose result would be longer is NULL, with warning 1301
// (ER_WARN_ALLOWED_PACKET_OVERFLOWED), as in MySQL, and the server never
// builds it; GROUP_CONCAT with a group_concat_max_len past it is refused.
// n is taken between 1 KiB and 1 GiB (MySQL's bounds). By default,
// DefaultMaxAllowedPacket (16 MiB).
func WithMaxAllowedPacket(n int64) Option {
	return optionFunc(func(c config) config { c.maxPacket = min(max(n, 1024), 1<<30); return c })
}

// WithQueryMemoryLimit bounds, in bytes, how far the statements running
// at once may grow the Go heap: while statements run, the server samples
// the heap every 5 ms, and cancels each statement under which the heap
// has grown more than n bytes past its garbage collection goal when the
// statement began (but no more than n past its size then), with
// ER_QUERY_INTERRUPTED (1317). The engine holds the rows it sorts, groups
// and deduplicates in memory, so a sort of a large join would otherwise
// grow the heap until the query timeout. The heap is the process's, so a
// statement is also cancelled when the service itself grows the heap
// that much while it runs. Zero or less means no bound. By default,
// DefaultQueryMemoryLimit (256 MiB).
func WithQueryMemoryLimit(n int64) Option {
	return optionFunc(func(c config) config { c.memLimit = n; return c })
}
