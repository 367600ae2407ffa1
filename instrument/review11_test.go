package instrument

// Regression tests from the fresh-eyes review of stages (issue 11).

import (
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// A stage class of schema A started on a thread of schema B: B's tables
// must not show one of B's own classes (found at A's class index) as the
// stage, nor count it under that class.
func TestReview11CrossSchemaStage(t *testing.T) {
	newS := func() *pfscore.Schema {
		s, err := pfscore.New(pfscore.WithoutEnvironment(),
			pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
			pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistory, true))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newS(), newS()
	// Pad A so that its stage class has an index B gives to another class.
	NewMutex("wait/synch/mutex/app/pad1", WithSchema(a))
	NewMutex("wait/synch/mutex/app/pad2", WithSchema(a))
	st := NewStageClass("stage/app/a_stage", WithSchema(a))
	NewMutex("wait/synch/mutex/app/b1", WithSchema(b))
	NewMutex("wait/synch/mutex/app/b2", WithSchema(b))
	NewStageClass("stage/app/b_stage", WithSchema(b))
	NewMutex("wait/synch/mutex/app/b3", WithSchema(b))
	th := NewThread("thread/app/t", WithSchema(b))
	defer th.End()
	st.StartOn(th)
	EndStageOn := func() { th.EndStage() }
	EndStageOn()
	for _, e := range b.EventsStagesHistory() {
		if e.EventName != "stage/app/a_stage" {
			t.Errorf("schema B's history shows a stage of class %q (a class of A started on B's thread)", e.EventName)
		}
	}
	for _, table := range []string{"events_stages_summary_by_thread_by_event_name", "events_waits_summary_by_thread_by_event_name"} {
		res, err := b.Select(table)
		if err != nil {
			t.Fatal(err)
		}
		ci, ni := -1, -1
		for i, c := range res.Columns {
			switch c.Name {
			case "COUNT_STAR":
				ci = i
			case "EVENT_NAME":
				ni = i
			}
		}
		for _, r := range res.Rows {
			if r[ci].(uint64) != 0 {
				t.Errorf("%s of B: %v counted %v (a stage of A's class)", table, r[ni], r[ci])
			}
		}
	}
}
