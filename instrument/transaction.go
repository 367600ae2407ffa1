package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A Transaction is a transaction in progress: what StartTransaction
// returns, ended by its End (committed or not). Keep it in a local
// variable; the zero Transaction does nothing.
type Transaction = pfscore.Transaction

// TransactionInfo describes a transaction as it begins: its access mode,
// isolation level and whether it is an autocommit statement's.
type TransactionInfo = pfscore.TransactionInfo

// StartTransaction begins a transaction (the built-in "transaction"
// instrument) on the thread ctx carries, in schema s (nil:
// pfscore.Default()). Statements at level 0 that begin before its End nest
// in it. It shows in events_transactions_current, _history and
// _history_long, and counts in the events_transactions_summary_* tables.
//
//	tx := instrument.StartTransaction(ctx, nil, instrument.TransactionInfo{})
//	…
//	tx.End(err == nil) // committed, or rolled back
func StartTransaction(ctx context.Context, s *pfscore.Schema, info TransactionInfo) Transaction {
	if s == nil {
		s = pfscore.Default()
	}
	return s.StartTransaction(ThreadFromContext(ctx), info)
}
