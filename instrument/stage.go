package instrument

import (
	"context"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A StageClass is a stage/<component>/<name> instrument: a phase of a
// thread's work ("reading request", "waiting for the pool", "rendering").
// A thread is in one stage at a time, as a MySQL thread is: starting a
// stage ends the one in progress. Its stages show in events_stages_current,
// _history and _history_long, their times in the events_stages_summary_*
// tables, and the waits that begin during a stage nest in it.
//
//	var (
//		parsing   = instrument.NewStageClass("stage/app/parsing")
//		rendering = instrument.NewStageClass("stage/app/rendering")
//	)
//
//	func handle(ctx context.Context, …) {
//		parsing.Start(ctx)
//		…
//		rendering.Start(ctx) // parsing ends here
//		…
//		instrument.EndStage(ctx)
//	}
//
// As in MySQL 8.0, the events_stages_* consumers are off by default; the
// summaries count stages without them.
type StageClass struct {
	class  *pfscore.Class // nil: an invalid name or a full schema
	source string
}

// NewStageClass registers the stage class name. It takes WithSchema,
// WithDocumentation and WithSource (the SOURCE of its stages: by default
// where NewStageClass was called). An invalid name gives a class whose
// stages record nothing.
func NewStageClass(name string, opts ...Option) *StageClass {
	c := newConfig(opts)
	sc := &StageClass{class: c.registerAs(name, "NewStageClass", pfscore.KindStage), source: c.source}
	if sc.source == "" {
		sc.source = pfscore.Source(1)
	}
	return sc
}

// Start begins a stage of the class on the thread ctx carries, ending the
// stage in progress. Without a thread it does nothing.
func (c *StageClass) Start(ctx context.Context) { c.StartOn(ThreadFromContext(ctx)) }

// StartOn is Start on thread t.
func (c *StageClass) StartOn(t *Thread) {
	if c == nil || c.class == nil {
		t.EndStage() // the stage in progress ends all the same
		return
	}
	t.StartStage(c.class, c.source)
}

// EndStage ends the stage in progress of the thread ctx carries, if any.
func EndStage(ctx context.Context) { ThreadFromContext(ctx).EndStage() }

// SetStageProgress sets WORK_COMPLETED and WORK_ESTIMATED of the stage in
// progress of the thread ctx carries: how much of the stage's work is done,
// and how much there is.
func SetStageProgress(ctx context.Context, completed, estimated uint64) {
	ThreadFromContext(ctx).SetStageProgress(completed, estimated)
}
