package mysqlpfs

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// ErSpecificAccessDenied is ER_SPECIFIC_ACCESS_DENIED_ERROR: SET GLOBAL
// (or PERSIST) of a system variable, which needs a privilege the account
// does not have. The engine keeps its global variables in the process, so
// one client's SET GLOBAL would reach every engine in the service.
const ErSpecificAccessDenied = 1227

// guardID names the analyzer rule guard.
const guardID analyzer.RuleId = 1_000

// guard is an analyzer rule that refuses what would reach past the
// tables: a SET of a system variable at any scope but the session's (the
// engine's globals are the process's), ALTER USER (the account is the
// service's), SELECT ... INTO OUTFILE or
// DUMPFILE and LOAD DATA (the service's files), and DROP TABLE and DROP
// DATABASE (with ER_TABLEACCESS_DENIED_ERROR, not the engine's generic
// error). The engine checks no FILE
// privilege for them; MySQL refuses them to an account without it with
// ER_SPECIFIC_ACCESS_DENIED_ERROR, and so does this rule. (LOAD_FILE,
// the other way to a file, is shadowed by a function that refuses it:
// see functions.go.)
func guard(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if hasGroupConcat(n) {
		if err := groupConcatTooLong(ctx); err != nil {
			return n, transform.SameTree, err
		}
	}
	var err error
	transform.Inspect(n, func(n sql.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *plan.Into:
			if x.Outfile != "" || x.Dumpfile != "" {
				err = fileDenied("SELECT ... INTO OUTFILE")
			}
		case *plan.LoadData:
			err = fileDenied("LOAD DATA")
		case *plan.DropTable:
			// The account holds DROP on performance_schema for TRUNCATE.
			err = denied(ctx, "DROP", PerformanceSchema, "")
		case *plan.DropDB:
			err = denied(ctx, "DROP", x.DbName, "")
		case *plan.AlterUser:
			// The engine lets an account change its own password; this
			// server's one account is the service's configuration
			// (WithUser), which no client may change for the others.
			err = mysql.NewSQLError(ErSpecificAccessDenied, mysql.SSClientError,
				"Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation (ALTER USER: this server's account is the service's, set with mysqlpfs.WithUser)")
		}
		set, ok := n.(*plan.Set)
		if !ok || err != nil {
			return err == nil
		}
		for _, e := range set.Exprs {
			sf, ok := e.(*expression.SetField)
			if !ok {
				continue
			}
			sv, ok := sf.LeftChild.(*expression.SystemVar)
			if !ok {
				continue
			}
			if strings.EqualFold(sv.Name, "max_allowed_packet") {
				// The bound of what a statement builds (caps.go): MySQL's
				// session value is read-only too.
				err = mysql.NewSQLError(ErVariableIsReadonly, mysql.SSUnknownSQLState,
					"SESSION variable 'max_allowed_packet' is read-only (this server's is mysqlpfs.WithMaxAllowedPacket)")
				return false
			}
			if sc, ok := sv.Scope.(*sql.MysqlScope); !ok || sc.Type != sql.SystemVariableScope_Session {
				err = mysql.NewSQLError(ErSpecificAccessDenied, mysql.SSClientError,
					"Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation (SET GLOBAL %s: this server lets a client set session variables only)", sv.Name)
				return false
			}
		}
		return true
	})
	return n, transform.SameTree, err
}

// ErVariableIsReadonly is ER_VARIABLE_IS_READONLY.
const ErVariableIsReadonly = 1621

// groupConcatTooLong refuses a GROUP_CONCAT in n when the session's
// group_concat_max_len, which the engine's GROUP_CONCAT takes as its
// bound, passes max_allowed_packet: the engine does not stop there, and
// the plan's GROUP_CONCAT took the session's value when it was built,
// just before this rule.
func groupConcatTooLong(ctx *sql.Context) error {
	gc, err1 := ctx.GetSessionVariable(ctx, "group_concat_max_len")
	mp, err2 := ctx.GetSessionVariable(ctx, "max_allowed_packet")
	if err1 != nil || err2 != nil {
		return errors.Join(err1, err2)
	}
	g, _, _ := types.Uint64.Convert(ctx, gc)
	m, _, _ := types.Uint64.Convert(ctx, mp)
	if g, ok := g.(uint64); ok {
		if m, ok := m.(uint64); ok && g <= m {
			return nil
		}
	}
	return mysql.NewSQLError(mysql.ERNetPacketTooLarge, mysql.SSNetError,
		"GROUP_CONCAT: group_concat_max_len (%v) is larger than max_allowed_packet (%v): lower it", gc, mp)
}

// hasGroupConcat reports whether n, its subqueries included, has a
// GROUP_CONCAT.
func hasGroupConcat(n sql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e sql.Expression) bool {
		switch x := e.(type) {
		case *aggregation.GroupConcat:
			found = true
		case *plan.Subquery:
			found = found || x.Query != nil && hasGroupConcat(x.Query)
		}
		return !found
	})
	return found
}

// fileDenied is MySQL's refusal of a statement that needs the FILE
// privilege.
func fileDenied(what string) error {
	return mysql.NewSQLError(ErSpecificAccessDenied, mysql.SSClientError,
		"Access denied; you need (at least one of) the FILE privilege(s) for this operation (%s: this server reads and writes no file)", what)
}

// anyUserAuth is the engine's authentication, but for two things: an
// unknown user gets ER_ACCESS_DENIED_ERROR (1045), as from MySQL, rather
// than a handshake error that tells a client the name is wrong; and a
// connection's handshake deadline (see trackingListener.Accept) is lifted
// once its client has authenticated.
type anyUserAuth struct{ mysql.AuthServer }

func (a anyUserAuth) AuthMethods() []mysql.AuthMethod {
	ms := a.AuthServer.AuthMethods()
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		if m.Name() == mysql.MysqlNativePassword {
			m = anyUserMethod{m}
		}
		out[i] = authedMethod{m}
	}
	return out
}

// anyUserMethod is mysql_native_password for every user name: the check
// of the name happens with the password's.
type anyUserMethod struct{ mysql.AuthMethod }

func (anyUserMethod) HandleUser(*mysql.Conn, string) bool { return true }

func (m anyUserMethod) HandleAuthPluginData(c *mysql.Conn, user string, server, client []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, server, client, addr)
	if err != nil || g == nil {
		return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
	}
	return g, nil
}

// authedMethod is an authentication method that lifts the connection's
// handshake deadline when its client has authenticated.
type authedMethod struct{ mysql.AuthMethod }

func (m authedMethod) HandleAuthPluginData(c *mysql.Conn, user string, server, client []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, server, client, addr)
	if err == nil && g != nil && c.Conn != nil {
		c.Conn.SetDeadline(time.Time{})
	}
	return g, err
}
