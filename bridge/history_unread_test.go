package bridge

import (
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// hidingSource is a source whose inProgress, while hide is set, cannot read
// thread's current rows: it leaves its events out and reports it unread, as
// pfscore does when a row is rewritten through every retry.
type hidingSource struct {
	source
	thread uint64
	hide   bool
}

func (s *hidingSource) inProgress() ([]key, map[uint64]bool, error) {
	keys, unread, err := s.source.inProgress()
	if !s.hide || err != nil {
		return keys, unread, err
	}
	kept := keys[:0]
	for _, k := range keys {
		if k.thread != s.thread {
			kept = append(kept, k)
		}
	}
	if unread == nil {
		unread = map[uint64]bool{}
	}
	unread[s.thread] = true
	return kept, unread, nil
}

// TestHistoryUnreadThread: a Read that could not read a thread's current
// rows decides nothing about that thread. A statement in progress, whose
// stage the History already has, is neither counted lost nor left as an
// orphan; its span arrives when it ends. Counting the unread thread's
// missing statement as lost, once it had been seen in progress, made its
// span never arrive.
func TestHistoryUnreadThread(t *testing.T) {
	opts := []pfscore.Option{pfscore.WithoutEnvironment()}
	for _, c := range []pfscore.Consumer{
		pfscore.ConsumerEventsStagesCurrent, pfscore.ConsumerEventsStagesHistoryLong,
		pfscore.ConsumerEventsStatementsCurrent, pfscore.ConsumerEventsStatementsHistoryLong,
	} {
		opts = append(opts, pfscore.WithConsumer(c, true))
	}
	// Every event with an id gets a history_long row: gaps count as lost.
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

	st := s.StartStatement(th, req, pfscore.StatementInfo{Text: "GET /notes", Normalized: true})
	th.StartStage(stage, "")
	th.EndStage()
	if spans := read(false); len(spans) != 0 { // the stage waits for its statement
		t.Fatalf("while the request runs: %d spans", len(spans))
	}
	read(false) // the statement, below the stage's id, is in progress: open
	for range 3 {
		if spans := read(true); len(spans) != 0 {
			t.Fatalf("with the thread unread: %d spans", len(spans))
		}
	}
	st.End(pfscore.StatementResult{})
	spans := read(false)
	if len(spans) != 2 || spans[0].Name != "GET /notes" || spans[1].Parent != spans[0].SpanID {
		t.Errorf("after the end: %+v", spans)
	}
	if st := h.Stats(); st.Lost != 0 || st.Orphans != 0 || st.Pending != 0 {
		t.Errorf("stats %v", st)
	}
}

// TestHistoryUnreadCapped: a thread no Read can read is decided about all
// the same after maxUnreadRuns Reads in a row, so the ids read meanwhile
// (its cursor's ahead set) do not pile up for as long as it stays unread.
func TestHistoryUnreadCapped(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsStagesHistoryLong, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, false),
		pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, false))
	if err != nil {
		t.Fatal(err)
	}
	stage := s.MustRegister("stage/app/handler", pfscore.WithDefault(true, true))
	th := s.NewThread(s.MustRegister("thread/app/request"), pfscore.ThreadOptions{})
	defer th.End()
	h, err := NewHistory(s)
	if err != nil {
		t.Fatal(err)
	}
	src := &hidingSource{source: h.src, thread: th.ID(), hide: true}
	h.src = src
	sent := 0
	for range 8 * maxUnreadRuns {
		for range 10 {
			th.StartStage(stage, "")
			th.EndStage()
		}
		spans, err := h.Read()
		if err != nil {
			t.Fatal(err)
		}
		sent += len(spans)
		// The first cursor takes in the ring's backlog, then at most
		// maxUnreadRuns Reads of ten ids each wait.
		if ts := h.threads[th.ID()]; ts != nil && len(ts.ahead) > 10*(2*maxUnreadRuns+2) {
			t.Fatalf("%d ids held for a thread never read", len(ts.ahead))
		}
	}
	if sent != 80*maxUnreadRuns {
		t.Errorf("%d spans sent, want %d", sent, 80*maxUnreadRuns)
	}
	if st := h.Stats(); st.Lost != 0 {
		t.Errorf("stats %v", st)
	}
}
