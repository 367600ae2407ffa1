package instrument

import (
	"context"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

func TestStageClass(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistory, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true))
	if err != nil {
		t.Fatal(err)
	}
	in := WithSchema(s)
	parsing := NewStageClass("stage/app/parsing", in)
	rendering := NewStageClass("stage/app/rendering", in, WithSource("render.go:7"))
	bad := NewStageClass("stage/app", in) // too few segments: records nothing
	mu := NewMutex("wait/synch/mutex/app/m", in)

	ctx, th := StartThread(context.Background(), "thread/app/request", in)
	parsing.Start(ctx)
	SetStageProgress(ctx, 1, 4)
	mu.LockCtx(ctx) // nests in parsing
	mu.Unlock()
	rendering.Start(ctx)
	bad.Start(ctx) // ends rendering, begins nothing
	EndStage(ctx)
	parsing.StartOn(nil) // no thread: nothing
	EndStage(context.Background())

	h := s.EventsStagesHistory()
	if len(h) != 2 || h[0].EventName != "stage/app/parsing" || h[1].EventName != "stage/app/rendering" ||
		h[0].WorkCompleted != 1 || h[0].WorkEstimated != 4 || h[1].Source != "render.go:7" ||
		h[0].Source == "" || h[0].Source == "stage.go:45" {
		t.Errorf("events_stages_history: %+v", h)
	}
	if w := s.EventsWaitsCurrent(); len(w) != 1 || w[0].NestingEventType != pfscore.NestingStage || w[0].NestingEventID != h[0].EventID {
		t.Errorf("the lock's wait does not nest in parsing: %+v", w)
	}
	th.End()
	if rows := rowsWhere(t, s, "events_stages_summary_global_by_event_name", "EVENT_NAME", "stage/app/rendering"); len(rows) != 1 || rows[0]["COUNT_STAR"] != uint64(1) {
		t.Errorf("global summary: %v", rows)
	}
}
