//lint:file-ignore SA1019 database/sql still uses the deprecated driver interfaces a driver may have, and so does the wrapper that mirrors them.

package pfssql

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Every connection type has exactly the optional interfaces of its mask.
func TestComboConnInterfaces(t *testing.T) {
	for mask := range uint(256) {
		c := comboConn(conn{}, mask)
		has := []bool{}
		_, ok := c.(driver.ExecerContext)
		has = append(has, ok)
		_, ok = c.(driver.QueryerContext)
		has = append(has, ok)
		_, ok = c.(driver.ConnPrepareContext)
		has = append(has, ok)
		_, ok = c.(driver.ConnBeginTx)
		has = append(has, ok)
		_, ok = c.(driver.SessionResetter)
		has = append(has, ok)
		_, ok = c.(driver.Validator)
		has = append(has, ok)
		_, ok = c.(driver.NamedValueChecker)
		has = append(has, ok)
		_, ok = c.(driver.Pinger)
		has = append(has, ok)
		for bit, ok := range has {
			if ok != (mask&(1<<bit) != 0) {
				t.Errorf("mask %08b: interface bit %d is %v", mask, bit, ok)
			}
		}
		if _, ok := c.(driver.Execer); ok {
			t.Errorf("mask %08b: has the deprecated Execer", mask)
		}
		if w, ok := c.(interface{ base() *conn }); !ok || w.base() == nil {
			t.Errorf("mask %08b: no base", mask)
		}
	}
}

// The optional methods reach the base the combo embeds, not a copy.
func TestComboConnSharesBase(t *testing.T) {
	c := comboConn(conn{}, 255)
	b := c.(interface{ base() *conn }).base()
	b.hasPending = true
	if !(*conn)(c.(*conn255).ExecerContext.(*connOpt)).hasPending {
		t.Fatal("the optional methods work on another conn than base")
	}
}

func TestComboStmtInterfaces(t *testing.T) {
	for mask := range uint(4) {
		s := comboStmt(stmt{}, mask)
		_, nvc := s.(driver.NamedValueChecker)
		_, cc := s.(driver.ColumnConverter)
		_, ex := s.(driver.StmtExecContext)
		_, qu := s.(driver.StmtQueryContext)
		if nvc != (mask&1 != 0) || cc != (mask&2 != 0) || !ex || !qu {
			t.Errorf("mask %02b: NamedValueChecker %v, ColumnConverter %v, StmtExecContext %v, StmtQueryContext %v", mask, nvc, cc, ex, qu)
		}
	}
}

// combos.go is what gen_combos.go writes.
func TestCombosUpToDate(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "combos.go")
	if b, err := exec.Command(goCmd, "run", "gen_combos.go", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_combos.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("combos.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("combos.go is out of date: run go generate")
	}
}

func TestSchemaFromDSN(t *testing.T) {
	for _, c := range []struct{ dialect, dsn, want string }{
		{"mysql", "user:pw@tcp(127.0.0.1:3306)/shop?parseTime=true", "shop"},
		{"mysql", "/shop", "shop"},
		{"mysql", "user@unix(/tmp/mysql.sock)/shop", "shop"},
		{"mysql", "user:pw@tcp(host)/", ""},
		{"postgres", "postgres://u:p@host:5432/shop?sslmode=disable", "shop"},
		{"postgres", "host=h user=u dbname=shop sslmode=disable", "shop"},
		{"postgres", "host=h user=u", ""},
		{"sqlite", "file:/tmp/x.db?cache=shared", "main"},
		{"", "anything", ""},
	} {
		if got := schemaFromDSN(c.dialect, c.dsn); got != c.want {
			t.Errorf("schemaFromDSN(%q, %q) = %q, want %q", c.dialect, c.dsn, got, c.want)
		}
	}
	for name, want := range map[string]string{
		"sqlite": "sqlite", "sqlite3": "sqlite", "mysql": "mysql", "postgres": "postgres",
		"pgx": "postgres", "pq": "postgres", "*pq.Driver github.com/lib/pq": "postgres",
		"*stdlib.Driver github.com/jackc/pgx/v5/stdlib": "postgres", "*mysql.MySQLDriver github.com/go-sql-driver/mysql": "mysql",
		"*sqlite.Driver modernc.org/sqlite": "sqlite", "fake": "",
	} {
		if got := dialectOf(name); got != want {
			t.Errorf("dialectOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestIsolation(t *testing.T) {
	for l, want := range map[sql.IsolationLevel]pfscore.IsolationLevel{
		sql.LevelDefault:         pfscore.IsolationDefault,
		sql.LevelReadUncommitted: pfscore.IsolationReadUncommitted,
		sql.LevelReadCommitted:   pfscore.IsolationReadCommitted,
		sql.LevelWriteCommitted:  pfscore.IsolationWriteCommitted,
		sql.LevelRepeatableRead:  pfscore.IsolationRepeatableRead,
		sql.LevelSnapshot:        pfscore.IsolationSnapshot,
		sql.LevelSerializable:    pfscore.IsolationSerializable,
		sql.LevelLinearizable:    pfscore.IsolationLinearizable,
		sql.IsolationLevel(99):   pfscore.IsolationDefault,
	} {
		if got := isolation(driver.IsolationLevel(l)); got != want {
			t.Errorf("isolation(%v) = %v, want %v", l, got, want)
		}
	}
}

// TestOpCtxDone checks that the DB level's context answers Done with its
// caller's channel, asked once when the call began: nil for a context
// that is never done, and for one that can be, the channel that closes
// when it is cancelled.
func TestOpCtxDone(t *testing.T) {
	release := func(oc *opCtx) { oc.done(nil) }
	oc := startOp(context.Background(), instrument.Statement{})
	if oc.Done() != nil {
		t.Fatal("Done of a background call is not nil")
	}
	release(oc)

	ctx, cancel := context.WithCancel(context.Background())
	oc = startOp(ctx, instrument.Statement{})
	defer release(oc)
	if oc.Done() == nil || oc.Done() != ctx.Done() {
		t.Fatal("Done is not the caller's channel")
	}
	select {
	case <-oc.Done():
		t.Fatal("done before the cancel")
	default:
	}
	cancel()
	select {
	case <-oc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close with the caller's cancel")
	}
	if oc.Err() == nil {
		t.Fatal("Err is nil after the cancel")
	}
}
