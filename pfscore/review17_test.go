package pfscore

// Review 17: adversarial reproducers for the engine under the bridge.
// Every test here FAILS on the code it was written against (commit
// 40cfb08); each says what it shows and how it fails.

import "testing"

// TestReview17SampleTraceFromRecycledThread: Statement.EndAt calls
// maybeSample with &st.t.stmtRows[level], "the statement's current row,
// whose owner is the goroutine ending the statement". That holds only
// when endStatement counted the statement on its thread. When the thread
// ended first (stmtDropped: another goroutine called End, or End ran
// before the statement's End), the handle's storage (threadCore) has been
// recycled for another thread, and the row read is that thread's current
// statement: the digest's QUERY_SAMPLE_TRACE_ID/_SPAN_ID, the bridge's
// exemplar, become the trace of an unrelated statement (and, with the
// other thread's goroutine writing its row meanwhile, a mix of two).
// The same read happens when the thread is busy in another goroutine
// (endStatement returns stmtDropped because enter failed).
// Fails: "SELECT a's sample trace 0b0b...: the trace of SELECT b, on another thread".
func TestReview17SampleTraceFromRecycledThread(t *testing.T) {
	s, err := New(WithoutEnvironment(), WithInstrument("%=ON"),
		WithConsumer(ConsumerEventsStatementsCurrent, true))
	if err != nil {
		t.Fatal(err)
	}
	tc := s.MustRegister("thread/app/worker")
	var trA, trB [16]byte
	var spA, spB [8]byte
	for i := range trA {
		trA[i], trB[i] = 0x0a, 0x0b
	}
	for i := range spA {
		spA[i], spB[i] = 0x0a, 0x0b
	}
	th := s.NewThread(tc, ThreadOptions{})
	a := s.StartSQL(th, StatementInfo{Text: "SELECT a FROM t", Schema: "shop", TraceID: trA, SpanID: spA})
	th.End()
	th2 := s.NewThread(tc, ThreadOptions{}) // takes th's storage
	defer th2.End()
	b := s.StartSQL(th2, StatementInfo{Text: "SELECT b FROM u", Schema: "shop", TraceID: trB, SpanID: spB})
	a.End(StatementResult{})
	b.End(StatementResult{})
	for _, r := range s.EventsStatementsSummaryByDigest() {
		if r.DigestText != "SELECT `a` FROM `t`" {
			continue
		}
		if r.QuerySampleTraceID != "" && r.QuerySampleTraceID != hexString(trA[:]) {
			t.Errorf("SELECT a's sample trace %s span %s: the trace of SELECT b, on another thread",
				r.QuerySampleTraceID, r.QuerySampleSpanID)
		}
		return
	}
	t.Fatal("no digest row for SELECT a")
}
