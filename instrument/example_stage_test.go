package instrument_test

import (
	"context"
	"fmt"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A request goes through stages; the one in progress ends when the next
// starts, and the waits in between nest in it.
func ExampleStageClass() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistory, true))
	in := instrument.WithSchema(s)
	var (
		reading   = instrument.NewStageClass("stage/app/reading_request", in)
		querying  = instrument.NewStageClass("stage/app/querying", in)
		rendering = instrument.NewStageClass("stage/app/rendering", in)
	)

	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", in)
	reading.Start(ctx)
	querying.Start(ctx)
	for done := range uint64(3) {
		instrument.SetStageProgress(ctx, done+1, 3) // three queries
	}
	rendering.Start(ctx)
	instrument.EndStage(ctx)
	t.End()

	res, _ := s.Query("events_stages_summary_global_by_event_name", pfscore.Query{
		Where: []string{"COUNT_STAR > 0"}, Order: "EVENT_NAME"})
	rows, _ := pfscore.Scan[struct {
		pfscore.ByEventName
		pfscore.WaitStats
	}](res)
	for _, r := range rows {
		fmt.Println(r.EventName, r.CountStar)
	}
	// Output:
	// stage/app/querying 1
	// stage/app/reading_request 1
	// stage/app/rendering 1
}
