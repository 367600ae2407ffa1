package instrument

import "github.com/otelpfs/otelpfs/pfscore"

// An IdleWait is an idle event in progress: a thread waiting for its next
// unit of work (a request on a kept-alive connection, a job from a queue).
// Start one with StartIdle and end it with End.
type IdleWait struct {
	w  pfscore.WaitState
	ok bool
}

// StartIdle starts an idle wait of thread t. Idle waits belong to a thread;
// with a nil t nothing is recorded. The idle timer is setup_timers' idle row.
//
//	iw := instrument.StartIdle(t)
//	job := <-queue
//	iw.End()
func StartIdle(t *Thread) IdleWait {
	var iw IdleWait
	if s := t.Schema(); s != nil {
		iw.ok = s.BeginIdle(&iw.w, t)
	}
	return iw
}

// End ends the idle wait.
func (iw *IdleWait) End() {
	if iw.ok {
		iw.ok = false
		iw.w.EndWait(-1)
	}
}
