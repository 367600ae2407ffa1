package bench

import (
	"context"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Stage events on the provider path: one stage started (ending the one in
// progress) per op, through instrument.StageClass and a context, as a
// request handler does. Summaries only, then with the current row and both
// histories.
func benchmarkStages(b *testing.B, events bool) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, events),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistory, events),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistoryLong, events))
	if err != nil {
		b.Fatal(err)
	}
	in := instrument.WithSchema(s)
	stages := []*instrument.StageClass{
		instrument.NewStageClass("stage/bench/reading", in),
		instrument.NewStageClass("stage/bench/querying", in),
	}
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/request", in)
	defer t.End()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		stages[i&1].Start(ctx)
		i++
	}
	instrument.EndStage(ctx)
}

func BenchmarkStageSummaries(b *testing.B) { benchmarkStages(b, false) }
func BenchmarkStageHistory(b *testing.B)   { benchmarkStages(b, true) }
