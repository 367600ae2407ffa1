package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// An IdleWait is an idle event in progress: a thread waiting for its next
// unit of work (a request on a kept-alive connection, a job from a queue).
// Start one with StartIdleCtx or StartIdle and end it with End. A server
// connection marks its wait for the next request with Conn.SetIdle
// instead, which times the Read that waits (package pfshttp does it for
// net/http servers).
type IdleWait struct {
	w  pfscore.WaitState
	ok bool
}

// StartIdleCtx starts an idle wait of the thread ctx carries. Idle waits
// belong to a thread: with none, nothing is recorded. The idle timer is
// setup_timers' idle row.
//
//	iw := instrument.StartIdleCtx(ctx)
//	job := <-queue
//	iw.End()
func StartIdleCtx(ctx context.Context) IdleWait { return StartIdle(ThreadFromContext(ctx)) }

// StartIdle starts an idle wait of thread t; with a nil t nothing is
// recorded. See StartIdleCtx.
func StartIdle(t *Thread) IdleWait {
	var iw IdleWait
	if s := t.Schema(); s != nil {
		iw.ok = s.BeginIdle(&iw.w, t)
	}
	return iw
}

// End ends the idle wait. A second End does nothing.
func (iw *IdleWait) End() {
	if iw.ok {
		iw.ok = false
		iw.w.EndWait(-1)
	}
}
