package pfssql

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelpfs/otelpfs/instrument"
)

// kind is the driver call a statement began with, for matching a retry to
// the statement it repeats.
type kind uint8

const (
	kExec kind = iota
	kQuery
	kPrepare
	kBegin
)

// run is a statement in progress and what the driver calls made for it
// have added up so far.
type run struct {
	st        instrument.Statement
	driver    uint64 // ps inside the driver's calls
	fetch     uint64 // ps the application spent between Next calls
	pool      uint64 // ps waiting for a connection (the DB level only)
	retries   uint64
	affected  uint64
	sent      uint64
	errs      uint64
	msg       string
	cancelled bool
	end       uint64 // ps: when it ended, if it waited in the stash; 0: at finish
}

// fail records err, the statement's first error, and whether ctx was done.
func (r *run) fail(ctx context.Context, err error) {
	if r.errs == 0 {
		r.errs = 1
		r.msg = err.Error()
	}
	if (ctx != nil && ctx.Err() != nil) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		r.cancelled = true
	}
}

// retried forgets the error of the attempt that failed with
// driver.ErrBadConn, and the end it reached in the stash (the statement
// goes on in the retry and ends with it), and counts the retry.
func (r *run) retried() {
	r.retries++
	r.errs, r.msg, r.cancelled, r.end = 0, "", false, 0
}

// finish ends the statement now.
func (r *run) finish() { r.finishAt(0) }

// finishAt ends the statement at now, a reading of its clock the caller
// took as the driver's call returned (0: read it here), or at the end it
// reached in the stash.
func (r *run) finishAt(now uint64) {
	end := r.end
	if end == 0 {
		end = now
	}
	if end == 0 {
		end = r.st.Now()
	}
	r.st.EndAt(end, instrument.StatementResult{
		RowsAffected: r.affected,
		RowsSent:     r.sent,
		Errors:       r.errs,
		Message:      r.msg,
		PoolTime:     r.pool,
		DriverTime:   r.driver,
		FetchTime:    r.fetch,
		Retries:      r.retries,
		Cancelled:    r.cancelled,
	})
}

func isBadConn(err error) bool { return err != nil && errors.Is(err, driver.ErrBadConn) }

// settle is what follows a driver call that made no rows: the DB level's
// statement learns how the attempt ended (its caller ends it); a
// statement of this level whose attempt failed with driver.ErrBadConn waits
// for database/sql's retry in the stash; any other ends.
//
// A statement in a transaction is not kept: database/sql retries no
// statement of a *sql.Tx.
func (c *config) settle(ctx context.Context, k kind, text string, r *run, o *op, err error, now uint64, inTx bool) {
	if o != nil {
		o.left(now, err)
		return
	}
	if isBadConn(err) && !inTx {
		r.end = now
		c.retry.put(ctx, k, text, r)
		return
	}
	r.finishAt(now)
}

// opCtx is the context the DB level passes to database/sql for one call:
// the caller's context, and the statement the DB level began before
// database/sql took a connection (op). The driver level finds the op by a
// type assertion on the context it is given (opOf), and adds its time,
// rows and errors to it instead of beginning a statement of its own.
//
// An opCtx is allocated per call (32 bytes) and never reused: database/sql
// and drivers may keep it past the call (a Rows' awaitDone goroutine reads
// its Err after Close has returned; a Tx keeps a context derived from it,
// and so does the driver level's tx, for its COMMIT), but they use only
// its Context methods, which read the caller's context and nothing else.
// The op, which holds the statement, comes from a pool (see op).
type opCtx struct {
	context.Context
	op     *op             // nil once the DB level's call has returned (see done)
	doneCh <-chan struct{} // the caller's context's Done, asked once
}

// Done returns the caller's context's Done channel, which startOp asked
// for: the driver asks for it at every step of its rows (modernc's sqlite
// does), and each ask would otherwise go down the chain of contexts. A
// context's Done returns the same channel on every call, so the copy is
// its answer; and asking early allocates nothing that would not be: the
// database/sql call that gets this context asks for it first thing.
func (oc *opCtx) Done() <-chan struct{} { return oc.doneCh }

// opOf returns the DB level's statement ctx carries, or nil.
func opOf(ctx context.Context) *op {
	if oc, ok := ctx.(*opCtx); ok {
		return oc.op
	}
	return nil
}

// done ends the op after database/sql's call returned err, unless driver
// rows own it, and detaches it from oc: a driver call that got oc after
// this (none does: database/sql calls the driver with a call's context
// only inside the call) would begin a statement of its own rather than
// write into an op that may be another call's by then.
func (oc *opCtx) done(err error) {
	o := oc.op
	oc.op = nil
	o.done(err)
}

// op is a statement of the DB level in progress. Its fields are written by
// one goroutine at a time: the caller's, inside database/sql's call, then,
// if driver rows took it, the rows' (see rows.Close).
//
// Ops are pooled (opPool), which saves the DB level all but the opCtx of
// its allocation per call. The invariants that make reuse safe:
//
//   - An op is reachable only from its opCtx (until done detaches it), the
//     caller's frame, and the driver rows that own it (rows.o).
//   - Without rows, the DB level's call is its only holder: done ends it
//     and puts it back, with no atomic operation.
//   - Rows that take it (own, inside the driver call) make two holders,
//     which refs counts: the call, released by done, and the rows,
//     released by rows.Close. database/sql may close the rows on another
//     goroutine (its awaitDone, when the context is done) before the call
//     has returned, so from then on refs changes atomically, and whichever
//     lets go last puts the op back; neither touches it after letting go.
//     own's plain write is safe: database/sql hands the rows to anyone
//     else only after the driver call has returned.
//   - recycle clears every field before the op goes back, so nothing of a
//     statement (error, message, rows, retries, cancellation, times)
//     reaches the next: TestOpReuse holds this.
type op struct {
	run
	ctx     context.Context // the caller's, for Cancelled at the end
	mark    uint64          // ps: when it began waiting for a connection
	waiting bool            // it waits for a connection since mark
	badConn bool            // its last attempt failed with driver.ErrBadConn
	owned   bool            // driver rows took it: they end it
	refs    int32           // holders once owned (see above); atomic from then on
}

var opPool = sync.Pool{New: func() any { return new(op) }}

// startOp begins a statement of the DB level.
func startOp(ctx context.Context, st instrument.Statement) *opCtx {
	o := opPool.Get().(*op)
	o.ctx, o.st, o.waiting = ctx, st, true
	o.mark = o.st.Start() // the statement began waiting as it began: no second reading
	return &opCtx{Context: ctx, op: o, doneCh: ctx.Done()}
}

// own is driver rows taking the op, inside the driver call: they end it
// at their Close, and let go of it then.
func (o *op) own() {
	if !o.owned {
		o.owned, o.refs = true, 1 // the call's hold
	}
	o.refs++ // the rows'
}

// release lets go of an owned op; the last holder puts it back.
func (o *op) release() {
	if atomic.AddInt32(&o.refs, -1) == 0 {
		o.recycle()
	}
}

// recycle clears o and puts it back in the pool.
func (o *op) recycle() {
	*o = op{}
	opPool.Put(o)
}

// arrive is a driver call's beginning: the wait for a connection is over,
// and if the last attempt failed with driver.ErrBadConn, this one is a
// retry. It returns the statement's clock now, which the call's timing
// starts from: one reading for both.
func (o *op) arrive() uint64 {
	now := o.st.Now()
	if o.waiting {
		o.pool += now - o.mark
		o.waiting = false
	}
	if o.badConn {
		o.badConn = false
		o.retried()
	}
	return now
}

// left is a driver call's end at now: after driver.ErrBadConn, database/sql
// retries on another connection, so the op waits again.
func (o *op) left(now uint64, err error) {
	if isBadConn(err) {
		o.badConn, o.waiting, o.mark = true, true, now
	}
}

// done ends the op after database/sql's call returned err, unless driver
// rows own it, and lets go of it.
func (o *op) done(err error) {
	if o.owned {
		o.release()
		return
	}
	if o.waiting {
		o.pool += o.st.Now() - o.mark // it never got a connection
	}
	if err != nil {
		o.fail(o.ctx, err)
	}
	o.finish()
	o.recycle() // the call was its only holder
}

// A stash keeps the statements of the driver level whose attempt failed
// with driver.ErrBadConn until database/sql retries them on another
// connection, so the attempts are one statement with COUNT_RETRIES. The
// retry is made at once by the same goroutine, with the same context, so
// it is matched by thread and text. A statement no retry takes is ended
// with its error, at the time its attempt ended: when its thread begins
// another statement, or when any statement begins through the wrapper
// after its thread ended or stashAge passed, or when the stash is full and
// another needs its slot. Only the failure path touches it; others pay an
// atomic load.
type stash struct {
	n     atomic.Int32 // slots in use
	mu    sync.Mutex
	slots [stashSize]stashed
}

const (
	stashSize = 16
	stashAge  = time.Second
)

type stashed struct {
	used bool
	k    kind
	t    *instrument.Thread
	text string
	at   time.Time
	r    run
}

// put keeps r for a retry. A full stash first ends its oldest statement.
func (s *stash) put(ctx context.Context, k kind, text string, r *run) {
	t := instrument.ThreadFromContext(ctx)
	var evicted run
	s.mu.Lock()
	free, oldest := -1, 0
	for i := range s.slots {
		if !s.slots[i].used {
			free = i
			break
		}
		if s.slots[i].at.Before(s.slots[oldest].at) {
			oldest = i
		}
	}
	if free < 0 {
		evicted, free = s.slots[oldest].r, oldest
		s.n.Add(-1)
	}
	s.slots[free] = stashed{used: true, k: k, t: t, text: text, at: time.Now(), r: *r}
	s.n.Add(1)
	s.mu.Unlock()
	if evicted.st.Active() {
		evicted.finish()
	}
}

// take moves the statement a driver call of kind k on text retries into
// dst, counting the retry, and reports whether there was one. Calls other
// than prepares also end what no retry will take.
func (s *stash) take(ctx context.Context, k kind, text string, dst *run) bool {
	if s.n.Load() == 0 {
		return false
	}
	return s.takeSlow(ctx, k, text, dst)
}

func (s *stash) takeSlow(ctx context.Context, k kind, text string, dst *run) bool {
	t := instrument.ThreadFromContext(ctx)
	now := time.Now()
	var stale [stashSize]run
	nstale := 0
	found := false
	s.mu.Lock()
	for i := range s.slots {
		e := &s.slots[i]
		if !e.used {
			continue
		}
		switch {
		case !found && e.t == t && e.k == k && e.text == text:
			*dst = e.r
			found = true
		case k != kPrepare && ((t != nil && e.t == t) || e.t.Ended() || now.Sub(e.at) > stashAge):
			stale[nstale] = e.r
			nstale++
		default:
			continue
		}
		*e = stashed{}
		s.n.Add(-1)
	}
	s.mu.Unlock()
	for i := range nstale {
		stale[i].finish()
	}
	if found {
		dst.retried()
	}
	return found
}
