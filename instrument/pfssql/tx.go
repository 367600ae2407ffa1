package pfssql

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// tx wraps a driver's transaction: its transaction event, and the context
// it began with, whose thread its COMMIT or ROLLBACK statement runs on
// (driver.Tx's methods take none).
type tx struct {
	tx  driver.Tx
	cfg *config
	ctx context.Context
	trx instrument.Transaction
	c   *conn // the connection it runs on (conn.inTx)
}

func (t *tx) Commit() error   { return t.end(true) }
func (t *tx) Rollback() error { return t.end(false) }

// end commits or rolls back: a COMMIT or ROLLBACK statement, in which the
// transaction ends, COMMITTED only if the commit succeeded.
func (t *tx) end(commit bool) error {
	text := textRollback
	if commit {
		text = textCommit
	}
	t.c.inTx = false
	st := instrument.StartSQL(t.ctx, t.cfg.schema, t.cfg.schemaName, text)
	t0 := st.Start()
	var err error
	if commit {
		err = t.tx.Commit()
	} else {
		err = t.tx.Rollback()
	}
	t1 := st.Now()
	t.trx.End(commit && err == nil)
	r := run{st: st, driver: t1 - t0}
	if err != nil {
		r.fail(t.ctx, err)
	}
	r.finishAt(t1)
	return err
}

// isolation maps database/sql's isolation level to ISOLATION_LEVEL.
func isolation(l driver.IsolationLevel) pfscore.IsolationLevel {
	switch sql.IsolationLevel(l) {
	case sql.LevelReadUncommitted:
		return pfscore.IsolationReadUncommitted
	case sql.LevelReadCommitted:
		return pfscore.IsolationReadCommitted
	case sql.LevelWriteCommitted:
		return pfscore.IsolationWriteCommitted
	case sql.LevelRepeatableRead:
		return pfscore.IsolationRepeatableRead
	case sql.LevelSnapshot:
		return pfscore.IsolationSnapshot
	case sql.LevelSerializable:
		return pfscore.IsolationSerializable
	case sql.LevelLinearizable:
		return pfscore.IsolationLinearizable
	}
	return pfscore.IsolationDefault
}
