package pfscore

import (
	"fmt"
	"slices"
	"testing"
)

// TestReview25EndWithTextIsSetTextThenEnd runs the same statements twice,
// ending them once with SetText then End and once with EndWithText, under
// several consumer settings (toggled while the statements run, too), and
// compares every statement table but their times: nested statements, a
// statement ended below an open one, a stale copy ended again, a text
// clipped by the SQL text length.
func TestReview25EndWithTextIsSetTextThenEnd(t *testing.T) {
	type setting struct {
		name   string
		opts   []Option
		toggle func(s *Schema) // between the statements' starts and ends
	}
	settings := []setting{
		{name: "all"},
		{name: "current off", opts: []Option{WithConsumer(ConsumerEventsStatementsCurrent, false)}},
		{name: "history off", opts: []Option{WithConsumer(ConsumerEventsStatementsHistory, false)}},
		{name: "long off", opts: []Option{WithConsumer(ConsumerEventsStatementsHistoryLong, false)}},
		{name: "digest off", opts: []Option{WithConsumer(ConsumerStatementsDigest, false)}},
		{name: "text clipped", opts: []Option{WithMaxSQLTextLength(6)}},
		{name: "digest toggled off", toggle: func(s *Schema) { s.SetConsumer(ConsumerStatementsDigest, false) }},
		{name: "current toggled off", toggle: func(s *Schema) { s.SetConsumer(ConsumerEventsStatementsCurrent, false) }},
		{name: "history toggled off", toggle: func(s *Schema) {
			s.SetConsumer(ConsumerEventsStatementsHistory, false)
			s.SetConsumer(ConsumerEventsStatementsHistoryLong, false)
		}},
	}
	run := func(t *testing.T, st setting, withText bool) []string {
		f := newStmtFixture(t, st.opts...)
		end := func(x *Statement, text string, r StatementResult) {
			if withText {
				x.EndWithText(text, true, r)
			} else {
				x.SetText(text, true)
				x.End(r)
			}
		}
		th := f.s.NewThread(f.thread, ThreadOptions{User: "u", Host: "h"})
		defer th.End()
		a := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET", Normalized: true})
		b := f.s.StartStatement(th, f.req, StatementInfo{Text: "B", Normalized: true})
		stale := b
		c := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
		if st.toggle != nil {
			st.toggle(f.s)
		}
		end(&b, "GET /b/{id}", StatementResult{RowsSent: 2}) // below an open one: ends in place
		end(&stale, "GET /stale", StatementResult{RowsSent: 9})
		end(&c, "SELECT 2", StatementResult{Errors: 1, Message: "boom"})
		end(&a, "GET /users/{id}", StatementResult{RowsAffected: 1})
		d := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET", Normalized: true})
		end(&d, "", StatementResult{})
		var out []string
		row := func(tag string, e StatementEvent) {
			e.TimerStart, e.TimerEnd, e.TimerWait = 0, 0, 0
			out = append(out, fmt.Sprintf("%s %+v", tag, e))
		}
		for _, e := range f.s.EventsStatementsCurrent() {
			row("current", e)
		}
		for _, e := range f.s.EventsStatementsHistory() {
			row("history", e)
		}
		for _, e := range f.s.EventsStatementsHistoryLong() {
			row("long", e)
		}
		var dg []string
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			dg = append(dg, fmt.Sprintf("digest %s %q count %d sent %d affected %d errors %d",
				r.Digest, r.DigestText, r.CountStar, r.SumRowsSent, r.SumRowsAffected, r.SumErrors))
		}
		slices.Sort(dg)
		return append(out, dg...)
	}
	for _, st := range settings {
		t.Run(st.name, func(t *testing.T) {
			want := run(t, st, false)
			got := run(t, st, true)
			if !slices.Equal(got, want) {
				t.Errorf("EndWithText:\n%s\nSetText then End:\n%s", join(got), join(want))
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}
