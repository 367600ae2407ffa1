package bridge

import (
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// TestReview21UnreadAtFirstSight: a thread that existed at NewHistory and
// is unread by the Read that first finds its rows loses the statement it
// had in progress.
//
// account makes a threadState for a thread the first time its rows show,
// with next = the lowest id read, lowered to the ids in progress on that
// thread; it does so whether or not the thread is in unread. On an unread
// thread the ids in progress are unknown, so a statement in progress whose
// stage already ended (a lower id than the stage's) is put below next,
// neither open nor ahead: when its row arrives, isNew drops it, and its
// stage is struck and sent as an orphan. (Busy threads are unread often:
// see pfscore's TestReview21BusyThreadUnread.)
func TestReview21UnreadAtFirstSight(t *testing.T) {
	opts := []pfscore.Option{pfscore.WithoutEnvironment()}
	for _, c := range []pfscore.Consumer{
		pfscore.ConsumerEventsStagesCurrent, pfscore.ConsumerEventsStagesHistoryLong,
		pfscore.ConsumerEventsStatementsCurrent, pfscore.ConsumerEventsStatementsHistoryLong,
	} {
		opts = append(opts, pfscore.WithConsumer(c, true))
	}
	opts = append(opts, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, false),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, false))
	s, err := pfscore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	req := s.MustRegister("statement/http/request", pfscore.WithDefault(true, true))
	stage := s.MustRegister("stage/app/handler", pfscore.WithDefault(true, true))
	th := s.NewThread(s.MustRegister("thread/app/request"), pfscore.ThreadOptions{})
	defer th.End()

	// The request is running when the History starts.
	st := s.StartStatement(th, req, pfscore.StatementInfo{Text: "GET /notes", Normalized: true})
	th.StartStage(stage, "")
	th.EndStage()

	h, err := NewHistory(s)
	if err != nil {
		t.Fatal(err)
	}
	src := &hidingSource{source: h.src, thread: th.ID()}
	h.src = src
	read := func(hide bool) []Span {
		t.Helper()
		src.hide = hide
		spans, err := h.Read()
		if err != nil {
			t.Fatal(err)
		}
		return spans
	}
	if spans := read(true); len(spans) != 0 { // first sight, unread
		t.Fatalf("while the request runs: %d spans", len(spans))
	}
	st.End(pfscore.StatementResult{})
	var spans []Span
	for range 3 {
		spans = append(spans, read(false)...)
	}
	if len(spans) != 2 || spans[0].Name != "GET /notes" || spans[1].Parent != spans[0].SpanID {
		t.Errorf("after the end: %d spans %+v", len(spans), spans)
	}
	if st := h.Stats(); st.Lost != 0 || st.Orphans != 0 || st.Pending != 0 {
		t.Errorf("stats %v", st)
	}
}
