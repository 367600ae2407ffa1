package mysqlpfs

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/sirupsen/logrus"

	"github.com/otelpfs/otelpfs/pfscore"
)

// Errors of Listen.
var (
	// ErrNotLoopback is returned for an address that is not a loopback
	// address, unless WithRemoteAccess allows it.
	ErrNotLoopback = errors.New("mysqlpfs: refusing to serve on a non-loopback address")
	// ErrNoPassword is returned for WithRemoteAccess with an account that
	// has no password.
	ErrNoPassword = errors.New("mysqlpfs: refusing remote access to an account without a password")
	// ErrBadOption is returned for an option value that cannot work: an
	// empty user name, or a nil schema.
	ErrBadOption = errors.New("mysqlpfs: bad option")
)

// serverVersion is what the handshake and VERSION() report: the MySQL
// version whose performance_schema otelpfs follows.
const serverVersion = "8.0.36-otelpfs"

// versionComment is @@version_comment, which MySQL's client shows after
// the version.
const versionComment = "otelpfs performance_schema"

// A Server serves a schema's performance_schema and sys over the MySQL
// protocol. Listen starts it; Close stops it.
type Server struct {
	ln      *trackingListener
	srv     *server.Server
	done    chan struct{}
	closeMu sync.Mutex
	closed  bool
	// closeStatements cancels every running statement's context.
	closeStatements context.CancelFunc
	dog             *watchdog
}

// Listen serves tables (a *pfscore.Schema, usually pfscore.Default()) over
// the MySQL protocol on addr ("" means DefaultAddr; port 0 picks a free
// port), in goroutines of its own, and returns at once. Without
// WithRemoteAccess it refuses (ErrNotLoopback) an address that is not
// loopback, an empty or unspecified host included; with it, it refuses an
// account without a password (ErrNoPassword). Stop the server with Close.
//
//	srv, err := mysqlpfs.Listen("", pfscore.Default(), mysqlpfs.WithSetupChanges(true))
func Listen(addr string, tables pfscore.Tables, opts ...Option) (*Server, error) {
	cfg := newConfig(opts)
	if tables == nil {
		return nil, fmt.Errorf("%w: no tables to serve", ErrBadOption)
	}
	if cfg.user == "" || strings.ContainsAny(cfg.user, "'`\x00") {
		return nil, fmt.Errorf("%w: user name %q", ErrBadOption, cfg.user)
	}
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mysqlpfs: listen address %q: %w", addr, err)
	}
	if !cfg.remote {
		if ip := net.ParseIP(host); host == "" || ip != nil && !ip.IsLoopback() {
			return nil, fmt.Errorf("%w: %q (use 127.0.0.1, [::1] or localhost, or mysqlpfs.WithRemoteAccess)", ErrNotLoopback, addr)
		}
	} else if cfg.password == "" {
		return nil, fmt.Errorf("%w: give one with mysqlpfs.WithUser", ErrNoPassword)
	}

	pro, err := newProvider(tables, cfg.changes, cfg.maxPacket)
	if err != nil {
		return nil, err
	}
	engine := sqle.New(analyzer.NewBuilder(pro).AddPreAnalyzeRule(guardID, guard).AddPreAnalyzeRule(exactSumsID, exactSums).Build(), &sqle.Config{})
	addAccount(engine.Analyzer.Catalog.MySQLDb, cfg.user, cfg.password)

	nl, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mysqlpfs: %w", err)
	}
	if ta, ok := nl.Addr().(*net.TCPAddr); !cfg.remote && (!ok || !ta.IP.IsLoopback()) {
		nl.Close()
		return nil, fmt.Errorf("%w: %q is %s", ErrNotLoopback, addr, nl.Addr())
	}
	ln := &trackingListener{Listener: nl, conns: map[net.Conn]struct{}{}}

	scfg := server.Config{
		Protocol:                  "tcp",
		Address:                   ln.Addr().String(),
		Listener:                  ln,
		Version:                   serverVersion,
		MaxConnections:            uint64(max(cfg.maxConns, 0)),
		MaxWaitConnections:        uint32(max(cfg.maxConns, 0)),
		MaxWaitConnectionsTimeout: 5 * time.Second,
		ProtocolListenerFactory: func(c server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
			lc.AuthServer = anyUserAuth{lc.AuthServer}
			return server.MySQLProtocolListenerFactory(c, lc, sel)
		},
	}
	closing, closeStatements := context.WithCancel(context.Background())
	lh := &limitHandler{timeout: cfg.timeout, rowLimit: cfg.rowLimit, engine: engine, closing: closing,
		dog: newWatchdog(cfg.memLimit), memLimit: cfg.memLimit}
	srv, err := server.NewServerWithHandler(scfg, engine, sql.NewContext, sessionBuilder(cfg.maxPacket), nil,
		func(h mysql.Handler) (mysql.Handler, error) { lh.inner = h; return lh, nil })
	if err != nil {
		closeStatements()
		ln.Close()
		return nil, fmt.Errorf("mysqlpfs: %w", err)
	}
	lh.sm = srv.SessionManager() // before the first connection: Accept starts below
	s := &Server{ln: ln, srv: srv, done: make(chan struct{}), closeStatements: closeStatements, dog: lh.dog}
	go func() {
		defer close(s.done)
		srv.Listener.Accept() // returns when the listener is closed
	}()
	return s, nil
}

// Addr returns the address the server listens on, as host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server at once: it stops accepting, closes every
// connection (a statement running on one is cancelled), and waits for the
// accepting goroutine. Closing twice is a no-op.
func (s *Server) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.closeStatements()
	s.srv.Listener.Close()
	s.ln.closeAll()
	<-s.done
	return nil
}

// addAccount gives the engine its one account: SELECT on
// performance_schema and sys (and CREATE VIEW on sys, see below), and on
// performance_schema the privileges a change needs (the tables refuse what the server does not allow, with
// MySQL's errors). Nothing global: no FILE, no SUPER, no other database.
func addAccount(db *mysql_db.MySQLDb, user, password string) {
	db.SetEnabled(true)
	// Nothing is persisted: without a persister, a statement that edits
	// the accounts panics after its edit (the guard refuses them all).
	db.SetPersister(&mysql_db.NoopPersister{})
	ed := db.Editor()
	defer ed.Close()
	ps := mysql_db.NewPrivilegeSet()
	ps.AddDatabase(PerformanceSchema, sql.PrivilegeType_Select, sql.PrivilegeType_Insert,
		sql.PrivilegeType_Update, sql.PrivilegeType_Delete, sql.PrivilegeType_Drop)
	// SHOW VIEW lists the views in information_schema.VIEWS; CREATE VIEW
	// the engine checks when it reads a view's definition, which is a
	// CREATE VIEW statement. sys takes no view (sysDatabase.CreateView
	// refuses), so it grants nothing more.
	ps.AddDatabase(Sys, sql.PrivilegeType_Select, sql.PrivilegeType_ShowView, sql.PrivilegeType_CreateView)
	ed.PutUser(&mysql_db.User{
		User:                user,
		Host:                "%",
		PrivilegeSet:        ps,
		Plugin:              string(mysql.MysqlNativePassword),
		AuthString:          nativePasswordHash(password),
		PasswordLastChanged: time.Now().UTC(),
		IsEphemeral:         true,
	})
}

// nativePasswordHash is mysql_native_password's stored form of a
// password: "*" and the upper-case hex of SHA1(SHA1(password)); "" for no
// password.
func nativePasswordHash(password string) string {
	if password == "" {
		return ""
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// quietLogger is the engine's logger for this server's sessions: the
// engine logs every failed statement at warning level, which is the
// client's business, not the service's log's.
var quietLogger = func() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.PanicLevel)
	return logrus.NewEntry(l)
}()

// sessionBuilder makes a connection's session: its client's account and
// address, performance_schema as its database unless the client names
// one, the quiet logger, the server's version, and its max_allowed_packet.
func sessionBuilder(maxPacket int64) server.SessionBuilder {
	return func(ctx context.Context, c *mysql.Conn, addr string) (sql.Session, error) {
		var client sql.Client
		if u, ok := c.UserData.(sql.MysqlConnectionUser); ok {
			client.User, client.Address = u.User, u.Host
		}
		client.Capabilities = c.Capabilities
		s := sql.NewBaseSessionWithClientServer(addr, client, c.ConnectionID)
		s.SetLogger(quietLogger)
		s.SetCurrentDatabase(PerformanceSchema)
		// VERSION() and @@version say what the handshake says, not the
		// engine's own version.
		sctx := sql.NewContext(ctx, sql.WithSession(s))
		for name, v := range map[string]any{"version": serverVersion, "version_comment": versionComment, "max_allowed_packet": maxPacket} {
			if err := s.InitSessionVariable(sctx, name, v); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
}

// handshakeTimeout bounds the time from a connection's accept to its
// client's authentication: MySQL's connect_timeout default.
const handshakeTimeout = 10 * time.Second

// A trackingListener remembers the connections it accepted, so that Close
// can close them.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	// A client must authenticate within handshakeTimeout (the deadline is
	// lifted when it has, see authedMethod): one that connects and stays
	// silent would otherwise hold one of WithMaxConnections' slots for
	// ever, before any password.
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	tc := &trackedConn{Conn: c, l: l}
	l.conns[tc] = struct{}{}
	return tc, nil
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	l.closed = true
	conns := make([]net.Conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	l.Listener.Close()
	for _, c := range conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}
